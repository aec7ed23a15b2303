#include "engine/model.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/process_memory.h"
#include "engine/load_phases.h"
#include "engine/weight_tensors.h"
#include "engine/weights_file.h"
#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "kernels/position.h"

namespace rpt {
namespace {

// Rows converted to float32 at a time for quantizing a stored matrix of another dtype.
constexpr std::size_t kConversionBytes = std::size_t{1} << 20;
// Elements a thread converts at least per parallel call: below that, one thread.
constexpr long kElementsPerThread = 16384;

}  // namespace

// Builds a Model from a weights file: converts to float32, checks every shape against the
// config, fuses projections and lays linear layers out for their GEMM.
class ModelLoader {
 public:
  // How the loaded weights are laid out (ModelLoadOptions).
  struct Layout {
    bool int8 = false;            // linear layers quantized (ModelLoadOptions::int8)
    bool int8_generator = false;  // the generator too
    bool pack_float32 = false;    // float32 linear layers packed (kernels/packed_sgemm.h)
    bool cpu = true;              // ModelLoadOptions::cpu_layout
  };

  // Each linear layer takes its compute layout (int8 with `int8`, packed float32 with
  // `pack_float32`) as soon as it is read, its float32 weight dropped, so the float32 copies of
  // all layers never exist at once (holding them all made loading peak above the float32
  // model's footprint: docs/PERFORMANCE.md "int8 on the CPU, and where rpt-translate's memory
  // went"). A fused member is filled part by part in its layout's rows as the parts are read
  // (int8: each quantized alone, a chunk of rows converted at a time; rows are quantized alone,
  // so this is the stack quantized), never beside float32 copies of its parts; a float32 file's
  // pages are let go once copied. For the CPU engine (`cpu`) embedding tables stay as the
  // weights file holds them (fill_embeddings).
  ModelLoader(const WeightsFile& weights, const ModelConfig& config, Model& model, Layout layout)
      : weights_(weights),
        config_(config),
        arch_(config.architecture),
        model_(model),
        int8_(layout.int8),
        int8_generator_(layout.int8_generator),
        pack_float32_(layout.pack_float32),
        cpu_layout_(layout.cpu) {}

  void load(int max_sequence_length) {
    max_sequence_length_ = max_sequence_length;
    const int source_vocabulary = model_.source_vocabulary_->size();
    const int target_vocabulary = model_.target_vocabulary_->size();
    RPT_CHECK(!arch_.shared_embeddings || source_vocabulary == target_vocabulary, ModelError,
              "shared_embeddings needs one vocabulary size for both sides");
    // The table a tied generator's weight is, known before the table is visited.
    for_each_weight(config_, source_vocabulary, target_vocabulary, [this](const auto& spec) {
      if constexpr (std::is_same_v<std::decay_t<decltype(spec)>, LinearSpec>) {
        if (!spec.shares_weight.empty()) tied_generator_source_ = spec.shares_weight;
      }
    });
    for_each_weight(
        config_, source_vocabulary, target_vocabulary,
        [this](const auto& spec, auto&& member) { fill(spec, member); }, model_.weights_);
    release_transient();
    spare_int8_ = {};
  }

  std::size_t bytes_loaded() const { return bytes_; }

 private:
  // The named tensor as stored, its shape checked.
  Tensor stored(const std::string& name, const Shape& expected) const {
    Tensor out = weights_.get(name);
    RPT_CHECK(out.shape() == expected, ModelError, weights_.path(), ": tensor ", name,
              " has shape ", shape_string(out.shape()), ", the config implies ",
              shape_string(expected));
    return out;
  }

  // The named tensor in float32, its shape checked; not counted in bytes_loaded(). float32 files
  // are used in place (memory-mapped); other dtypes are converted once.
  Tensor read(const std::string& name, const Shape& expected) {
    const Tensor file = stored(name, expected);
    if (file.dtype() == DataType::kFloat32) return file;
    Tensor out = Tensor::empty(expected);
    convert_rows(name, file, 0, file.dim(0), out.data<float>());
    weights_.release(name);  // a copy is made
    return out;
  }

  // read(), counted: a tensor the model keeps as it is.
  Tensor tensor(const std::string& name, const Shape& expected) {
    Tensor out = read(name, expected);
    bytes_ += out.nbytes();
    return out;
  }

  // Rows [begin, end) of the file's tensor `name` (`file`, as stored) in float32 into `out`; int8
  // weights times their per-row `NAME_scale` [rows] (quantizing them again at load gives back the
  // same integers: each row's largest value is 127 steps).
  void convert_rows(const std::string& name, const Tensor& file, std::int64_t begin,
                    std::int64_t end, float* out) {
    const auto timer = phase_timer(model_.load_phases_.convert);
    const std::int64_t cols = file.dim(0) > 0 ? file.numel() / file.dim(0) : 0;
    const long min_rows = std::max<long>(1, kElementsPerThread / std::max<std::int64_t>(cols, 1));
    if (file.dtype() != DataType::kInt8) {
      // Rows in parallel: each element is converted alone, the same bits for any thread count.
      kernels::parallel_for(end - begin, min_rows, [&](long first, long last) {
        file.slice_rows(begin + first, begin + last).to_float32(out + first * cols);
      });
      return;
    }
    const auto* values = file.slice_rows(begin, end).data<std::int8_t>();
    const float* scale = int8_scales(name, file) + begin;
    kernels::parallel_for(end - begin, min_rows, [&](long first, long last) {
      for (std::int64_t r = first; r < last; ++r) {
        for (std::int64_t c = 0; c < cols; ++c) {
          out[r * cols + c] = scale[r] * static_cast<float>(values[r * cols + c]);
        }
      }
    });
  }

  // The per-row scales [rows] of the file's int8 matrix `name` (`file`).
  const float* int8_scales(const std::string& name, const Tensor& file) {
    RPT_CHECK(file.rank() == 2, ModelError, weights_.path(), ": int8 tensor ", name,
              " is not a matrix");
    const Tensor scales = weights_.get(name + "_scale");
    RPT_CHECK(scales.dtype() == DataType::kFloat32 && scales.shape() == Shape{file.dim(0)},
              ModelError, weights_.path(), ": ", name, "_scale must be float32 [", file.dim(0),
              "]");
    return scales.data<float>();
  }

  // A timer of `phase` on the loading thread; none on the others, whose share of a parallel
  // region the loading thread's stands for (phases are wall time).
  std::optional<PhaseTimer> phase_timer(double& phase) const {
    if (std::this_thread::get_id() != loading_thread_) return std::nullopt;
    return std::optional<PhaseTimer>(std::in_place, phase);
  }

  // The visits of for_each_weight (engine/weight_tensors.h), one per member of the weights.
  void fill(const TableSpec& spec, Tensor& table) {
    if (spec.kind == TableKind::kEmbeddings && cpu_layout_ && fill_embeddings(spec, table)) return;
    table = tensor(spec.name, spec.shape);
    if (spec.kind == TableKind::kT5Bias) {
      table = expand_t5_bias(table, spec.bidirectional, max_sequence_length_);
    }
  }
  void fill(const TableSpec&, Shared<Tensor, Tensor> table) { table.member = table.source; }

  // For the CPU engine, an embedding table as the file holds it (float32, float16 or bfloat16):
  // a view of the mapped file, whose pages become resident as rows are looked up, each row
  // converted exactly then (engine/cpu/transformer_ops.cc), not a float32 copy of it all. A tied
  // generator takes its layout from it here, while little else is loaded (its float32 form is a
  // transient), unless it reads the table itself as float32 (neither int8 nor packed): then the
  // table is read in float32 as any other. Returns false when the table is to be read so.
  bool fill_embeddings(const TableSpec& spec, Tensor& table) {
    const bool ties_generator = spec.name == tied_generator_source_;
    const bool generator_laid_out = ties_generator && (int8_generator_ || pack_float32_);
    const Tensor file = stored(spec.name, spec.shape);
    if (file.dtype() == DataType::kInt8 || (ties_generator && !generator_laid_out)) return false;
    table = file;
    bytes_ += table.nbytes();
    if (generator_laid_out) {
      if (int8_generator_) {
        kernels::QuantizedRows rows(static_cast<int>(spec.shape[0]),
                                    static_cast<int>(spec.shape[1]));
        quantize(rows, 0, spec.name, spec.shape);
        tied_generator_.int8 = laid_out(std::move(rows), nullptr);  // the table's size
      } else {
        lay_out_float32(tied_generator_, spec.name, spec.shape);
      }
      weights_.release(spec.name);  // read whole; rows come back as they are looked up
      release_transient();          // the table's size: the layers' matrices are smaller
    }
    return true;
  }

  void fill(const NormSpec& spec, LayerNormWeights& norm) {
    norm.gamma = tensor(spec.gamma_name(), {spec.size});
    if (spec.beta) norm.beta = tensor(spec.beta_name(), {spec.size});
  }

  // A member of one layer takes its layout at once. A fused one (Q/K/V; the memory keys and
  // values, which every decoder layer adds to) is filled part by part in its layout's rows and
  // finished when its last part is read.
  void fill(const LinearSpec& spec, LinearWeights& layer) {
    const bool quantized = int8_layout(spec);
    if (spec.names.size() == 1 && spec.member_rows() == spec.part_rows) {
      const std::string name = spec.weight_name(0);
      if (quantized) {
        kernels::QuantizedRows rows(spec.part_rows, spec.inputs, std::move(spare_int8_));
        quantize(rows, 0, name, spec.weight_shape());
        layer.int8 = laid_out(std::move(rows), &spare_int8_);
      } else {
        lay_out_float32(layer, name, spec.weight_shape());
      }
      layer.bias = bias(spec, 0);
      count(layer, /*weight_counted=*/false);
      return;
    }
    Assembly& assembly = pending_[&layer];
    if (!assembly.started) start(assembly, spec, quantized);
    for (std::size_t part = 0; part < spec.names.size(); ++part) {
      const std::string name = spec.weight_name(part);
      const int first = spec.first_row + static_cast<int>(part) * spec.part_rows;
      if (quantized) {
        quantize(*assembly.quantized, first, name, spec.weight_shape());
      } else {
        convert_rows(name, stored(name, spec.weight_shape()), 0, spec.part_rows,
                     assembly.weight.data<float>() + static_cast<long>(first) * spec.inputs);
        weights_.release(name);  // copied
      }
      const Tensor part_bias = bias(spec, part);
      RPT_CHECK(part_bias.defined() == assembly.bias.defined(), ModelError, weights_.path(), ": ",
                spec.names[part], " and ", spec.names[0], ", fused, must both have a bias or not");
      if (part_bias.defined()) {
        std::memcpy(assembly.bias.data<float>() + first, part_bias.data<float>(),
                    part_bias.nbytes());
      }
    }
    if (!spec.last_part()) return;
    layer.bias = assembly.bias;
    // A fused member larger than the transient is the load's peak: not with the transient beside.
    if (assembly.weight.defined() && assembly.weight.numel() > transient_size_) {
      release_transient();
    }
    if (quantized) {
      // The memory keys and values span the decoder layers, the load's largest int8 storage:
      // not kept as the spare (the load's peak would grow by it).
      const bool one_layer =
          spec.member_rows() == static_cast<int>(spec.names.size()) * spec.part_rows;
      layer.int8 = laid_out(std::move(*assembly.quantized), one_layer ? &spare_int8_ : nullptr);
    } else {
      lay_out_float32(layer, assembly.weight);
    }
    pending_.erase(&layer);
    count(layer, /*weight_counted=*/false);
  }
  // The tied generator: the decoder's embeddings (counted as the table), and a bias of its own.
  void fill(const LinearSpec& spec, Shared<LinearWeights, Tensor> tied) {
    tied.member.bias = bias(spec, 0);
    if (tied_generator_.int8 || tied_generator_.packed) {  // laid out with the table
      tied.member.int8 = std::move(tied_generator_.int8);
      tied.member.packed = std::move(tied_generator_.packed);
    } else if (int8_layout(spec)) {
      kernels::QuantizedRows rows(spec.part_rows, spec.inputs);
      quantize(rows, 0, tied.source.data<float>(), spec.part_rows);
      tied.member.int8 = laid_out(std::move(rows), nullptr);
    } else {
      lay_out_float32(tied.member, tied.source);
    }
    count(tied.member, /*weight_counted=*/true);
  }

  // Whether the spec's member is quantized: the generator only with int8_generator.
  bool int8_layout(const LinearSpec& spec) const {
    return spec.generator ? int8_generator_ : int8_;
  }

  // NAME.bias of the spec's `part`, read but not counted; undefined when the layer has none.
  Tensor bias(const LinearSpec& spec, std::size_t part) {
    return has_bias(spec, part) ? read(spec.bias_name(part), spec.bias_shape()) : Tensor();
  }
  bool has_bias(const LinearSpec& spec, std::size_t part) const {
    return spec.bias == Bias::kRequired ||
           (spec.bias == Bias::kIfPresent && weights_.contains(spec.bias_name(part)));
  }

  // A float32 `weight` [out_features, in_features] in the layout the layer's CPU GEMM reads:
  // packed, or as it is (kept as the layer's weight).
  void lay_out_float32(LinearWeights& layer, const Tensor& weight) {
    if (pack_float32_) {
      layer.packed = packed(weight.data<float>(), weight.shape());
    } else {
      layer.weight = weight;
    }
  }

  // Rows [first, first + its rows) of `rows` quantized from the file's tensor `name`, converted
  // to float32 a chunk of rows at a time: never the whole matrix in float32 beside its int8. One
  // parallel region for the matrix, each thread converting and quantizing rows of its own (a
  // region per chunk waited for the other thread hundreds of times a load: slower than one
  // thread while another process held the second core); the first row that fails is named.
  void quantize(kernels::QuantizedRows& rows, int first, const std::string& name,
                const Shape& shape) {
    const Tensor file = stored(name, shape);
    const int count = static_cast<int>(file.dim(0));
    if (file.dtype() == DataType::kFloat32) {
      quantize(rows, first, file.data<float>(), count);
    } else if (file.dtype() == DataType::kInt8) {  // stored quantized: no float32 round trip
      const float* scales = int8_scales(name, file);
      const auto timer = phase_timer(model_.load_phases_.quantize);
      try {
        rows.take(first, file.data<std::int8_t>(), scales, count);
      } catch (const InvalidArgument& error) {
        RPT_THROW(ModelError, weights_.path(), ": cannot quantize to int8: ", error.message());
      }
    } else {
      const int chunk = std::max(1, static_cast<int>(kConversionBytes / sizeof(float) / shape[1]));
      std::mutex failure_mutex;
      long failed_at = count;
      std::exception_ptr failure;
      kernels::parallel_for(count, chunk, [&](long part_begin, long part_end) {
        try {
          std::vector<float> converted(
              static_cast<std::size_t>(std::min<long>(chunk, part_end - part_begin)) * shape[1]);
          for (long begin = part_begin; begin < part_end; begin += chunk) {
            const long end = std::min(part_end, begin + chunk);
            convert_rows(name, file, begin, end, converted.data());
            quantize(rows, first + static_cast<int>(begin), converted.data(),
                     static_cast<int>(end - begin));
          }
        } catch (...) {
          const std::lock_guard lock(failure_mutex);
          if (part_begin < failed_at) {
            failed_at = part_begin;
            failure = std::current_exception();
          }
        }
      });
      if (failure) std::rethrow_exception(failure);
    }
    weights_.release(name);  // quantized
  }
  // Rows [first, first + count) of `rows` quantized from float32 `weights` [count, cols]; a
  // weight int8 cannot hold names the file.
  void quantize(kernels::QuantizedRows& rows, int first, const float* weights, int count) {
    const auto timer = phase_timer(model_.load_phases_.quantize);
    try {
      rows.quantize(first, weights, count);
    } catch (const InvalidArgument& error) {
      RPT_THROW(ModelError, weights_.path(), ": cannot quantize to int8: ", error.message());
    }
  }

  // The file's matrix `name` [rows, cols] laid out as above, its pages let go once copied. Packed
  // from a float32 transient that the loader keeps from matrix to matrix: converting into fresh
  // memory faulted its pages in and unmapped them again for every matrix, half the time of a
  // float32 load of a float16 file (docs/PERFORMANCE.md "Model load time, CPU").
  void lay_out_float32(LinearWeights& layer, const std::string& name, const Shape& shape) {
    const Tensor file = stored(name, shape);
    if (!pack_float32_ || file.dtype() == DataType::kFloat32) {
      lay_out_float32(layer, read(name, shape));
    } else {
      if (transient_size_ < file.numel()) {
        release_transient();  // before the larger one is allocated
        transient_ =
            std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(file.numel()));
        transient_size_ = file.numel();
      }
      convert_rows(name, file, 0, file.dim(0), transient_.get());
      layer.packed = packed(transient_.get(), shape);
    }
    if (layer.packed) weights_.release(name);  // copied
  }

  // Frees the transient and hands its pages back at once: a hole left in the heap stayed resident
  // beside the next, larger allocation (the load's peak grew by it, 27 MiB on the big shape).
  void release_transient() {
    transient_.reset();
    transient_size_ = 0;
    return_freed_memory();
  }

  // float32 weights [rows, cols] packed for oneDNN's sgemm.
  std::shared_ptr<const kernels::PackedFloat32Weights> packed(const float* weights,
                                                              const Shape& shape) {
    const PhaseTimer timer(model_.load_phases_.pack);
    return kernels::PackedFloat32Weights::pack(weights, static_cast<int>(shape[0]),
                                               static_cast<int>(shape[1]));
  }

  // Quantized rows in the layout their products read; their storage handed back to `spare` when
  // the products copied them (Int8Weights::from_rows).
  std::shared_ptr<const kernels::Int8Weights> laid_out(kernels::QuantizedRows rows,
                                                       std::vector<std::int8_t>* spare) {
    const PhaseTimer timer(model_.load_phases_.pack);
    return kernels::Int8Weights::from_rows(std::move(rows), spare);
  }

  // Counts what a finished layer holds (its weight too unless `weight_counted`: a tied
  // generator's is the embedding table); once a layout replaced its float32 weight, hands the
  // heap's freed pages back.
  void count(const LinearWeights& layer, bool weight_counted) {
    bytes_ += layer.int8       ? layer.int8->bytes()
              : layer.packed   ? layer.packed->bytes()
              : weight_counted ? 0
                               : layer.weight.nbytes();
    bytes_ += layer.bias.defined() ? layer.bias.nbytes() : 0;
    if (layer.int8 || layer.packed) return_freed_memory();
  }

  // A fused member's rows, allocated at its first part: int8 rows when quantized, else float32;
  // its bias when the layers have one.
  struct Assembly {
    bool started = false;
    Tensor weight;                                    // [member rows, inputs] float32
    std::optional<kernels::QuantizedRows> quantized;  // [member rows, inputs] int8
    Tensor bias;                                      // [member rows]
  };

  void start(Assembly& assembly, const LinearSpec& spec, bool quantized) {
    assembly.started = true;
    if (quantized) {
      assembly.quantized.emplace(spec.member_rows(), spec.inputs, std::move(spare_int8_));
    } else {
      assembly.weight = Tensor::empty({spec.member_rows(), spec.inputs});
    }
    if (has_bias(spec, 0)) assembly.bias = Tensor::empty({spec.member_rows()});
  }

  // Precomputes, once per model, the bias of every offset: [heads, 2 * max_offset + 1].
  Tensor expand_t5_bias(const Tensor& table, bool bidirectional, int max_offset) {
    const PositionConfig& position = config_.position;
    const int width = 2 * max_offset + 1;
    Tensor expanded = Tensor::empty({arch_.heads, width});
    const float* bias = table.data<float>();
    float* out = expanded.data<float>();
    for (int offset = -max_offset; offset <= max_offset; ++offset) {
      const int bucket =
          kernels::t5_bucket(offset, bidirectional, position.buckets, position.max_distance);
      for (int h = 0; h < arch_.heads; ++h) {
        out[static_cast<long>(h) * width + offset + max_offset] = bias[bucket * arch_.heads + h];
      }
    }
    bytes_ += expanded.nbytes();
    return expanded;
  }

  const WeightsFile& weights_;
  const ModelConfig& config_;
  const ArchitectureConfig& arch_;
  Model& model_;
  const bool int8_;
  const bool int8_generator_;
  const bool pack_float32_;
  const bool cpu_layout_;
  std::size_t bytes_ = 0;
  std::string tied_generator_source_;  // the table a tied generator's weight is; empty: none
  LinearWeights tied_generator_;       // its layout, made with the table (fill_embeddings)
  int max_sequence_length_ = 0;
  std::thread::id loading_thread_ = std::this_thread::get_id();
  // The storage of int8 rows laid out already, for the next matrix's: its pages stay with the
  // load instead of being handed back after each layer and faulted in again.
  std::vector<std::int8_t> spare_int8_;
  // Converted rows packed next (lay_out_float32): [transient_size_] float32, grown as needed.
  std::unique_ptr<float[]> transient_;
  std::int64_t transient_size_ = 0;
  // The fused members not yet complete.
  std::map<const LinearWeights*, Assembly> pending_;
};

namespace {

std::string in_directory(const std::string& directory, const std::string& file) {
  return file.empty() ? file : (std::filesystem::path(directory) / file).string();
}

int required_id(const Vocabulary& vocabulary, const std::string& token, const char* role) {
  RPT_CHECK(vocabulary.contains(token), ModelError, "target vocabulary has no ", role, " token '",
            token, "'");
  return vocabulary.to_id(token);
}

}  // namespace

const std::vector<int>& Model::source_prefix_ids(std::size_t pair) const {
  RPT_CHECK(pair < source_prefix_ids_.size(), InvalidArgument, "language pair ", pair,
            " is not one of the model's ", source_prefix_ids_.size());
  return source_prefix_ids_[pair];
}

void Model::read_source_prefixes(int max_sequence_length) {
  const std::string config_file = (std::filesystem::path(directory_) / "config.json").string();
  const int eos = config_.append_source_eos ? 1 : 0;
  const int unknown = source_vocabulary_->unk_id();
  for (const LanguagePair& pair : config_.language_pairs) {
    std::vector<int>& ids = source_prefix_ids_.emplace_back();
    for (const std::string& piece : source_tokenizer_->encode(pair.prefix)) {
      const int id = source_vocabulary_->to_id(piece);
      // A prefix the model cannot read (a misspelt "<2xx>" token) would translate, wrongly.
      RPT_CHECK(id != unknown || piece == config_.special_tokens.unk, ModelError, config_file,
                ": the prefix '", pair.prefix, "' of language pair ", pair.name(), " has '", piece,
                "', which the source vocabulary does not have");
      ids.push_back(id);
    }
    max_added_source_ids_ = std::max(max_added_source_ids_, static_cast<int>(ids.size()) + eos);
  }
  RPT_CHECK(max_added_source_ids_ < max_sequence_length, ModelError, config_file,
            ": a source prefix of ", max_added_source_ids_ - eos,
            " ids leaves no room for text within the maximum sequence length ",
            max_sequence_length);
}

std::shared_ptr<const Model> Model::load(const std::string& directory,
                                         const ModelLoadOptions& options) {
  RPT_CHECK(std::filesystem::is_directory(directory), ModelError, "model directory ", directory,
            " does not exist");
  RPT_CHECK(options.max_sequence_length > 0, InvalidArgument,
            "max_sequence_length must be positive");
  std::shared_ptr<Model> model(new Model());
  std::optional<PhaseTimer> total(model->load_phases_.total);
  model->directory_ = directory;
  model->config_ = ModelConfig::load(directory);
  const ModelConfig& config = model->config_;
  const SpecialTokens& special = config.special_tokens;
  model->source_vocabulary_ = std::make_shared<const Vocabulary>(
      in_directory(directory, config.source_vocabulary), special.unk);
  model->target_vocabulary_ = std::make_shared<const Vocabulary>(
      in_directory(directory, config.target_vocabulary), special.unk);
  model->source_tokenizer_ =
      std::make_shared<const Tokenizer>(in_directory(directory, config.source_tokenizer));
  model->target_tokenizer_ =
      std::make_shared<const Tokenizer>(in_directory(directory, config.target_tokenizer));
  const Vocabulary& target = *model->target_vocabulary_;
  model->decoder_start_id_ = required_id(target, config.decoder_start_token, "decoder start");
  model->eos_id_ = required_id(target, special.eos, "end-of-sentence");
  model->pad_id_ = target.contains(special.pad) ? target.to_id(special.pad) : -1;
  model->max_sequence_length_ = options.max_sequence_length;
  model->read_source_prefixes(options.max_sequence_length);

  const WeightsFile weights(in_directory(directory, config.weights_file),
                            WeightsFileOptions{.verify_checksums = options.verify_checksums});
  model->load_phases_.map = weights.map_seconds();
  model->load_phases_.checksum = weights.checksum_seconds();
  // The linear layers' dtype names the file (int8 files keep their embeddings in float16).
  const std::string first_linear = "decoder.layer_0.ffn.inner.weight";
  model->stored_dtype_ = std::string(dtype_name(
      weights.get(weights.contains(first_linear) ? first_linear : "decoder.embeddings").dtype()));
  ModelLoader loader(weights, config, *model,
                     {.int8 = options.int8,
                      .int8_generator = options.int8 && options.int8_generator,
                      .pack_float32 = options.cpu_layout && kernels::float32_linear_packed(),
                      .cpu = options.cpu_layout});
  loader.load(options.max_sequence_length);
  return_freed_memory();
  model->int8_ = options.int8;
  model->weights_bytes_ = loader.bytes_loaded();
  total.reset();
  return model;
}

const ModelWeights& Model::weights() const {
  RPT_CHECK(has_weights_, InvalidArgument, "the model ", directory_,
            " was handed to a GPU engine, which keeps its weights on the device only: load it "
            "again for another engine");
  return weights_;
}

std::shared_ptr<const Model> Model::without_weights() const {
  std::shared_ptr<Model> copy(new Model(*this));
  copy->weights_ = ModelWeights();
  copy->has_weights_ = false;
  return copy;
}

}  // namespace rpt
