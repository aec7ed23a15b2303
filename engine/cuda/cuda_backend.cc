#include "engine/cuda/cuda_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>

#include "engine/cuda/cuda_transformer_ops.h"
#include "engine/cuda/profiled_ops.h"
#include "engine/cuda/step_graphs.h"
#include "engine/transformer.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/errors.h"
#include "kernels/top_k_log_softmax.h"

namespace rpt {
namespace {

using kernels::Precision;

constexpr std::size_t kAlignment = 256;

std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// Lays sub-buffers out in one allocation, each aligned; offsets first, addresses once allocated.
class Layout {
 public:
  std::size_t add(std::size_t bytes) {
    const std::size_t at = size_;
    size_ = aligned(size_ + bytes);
    return at;
  }
  std::size_t size() const { return size_; }

 private:
  std::size_t size_ = 0;
};

template <typename T>
T* at(void* base, std::size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

// Encoder memory of one batch: freed on the backend's stream, which it keeps alive, and
// counted in the backend's live encoder-memory bytes while it exists.
struct EncoderMemory {
  EncoderMemory(std::shared_ptr<kernels::CudaStreamOwner> owner,
                std::shared_ptr<std::atomic<std::size_t>> live, std::size_t bytes,
                kernels::MemoryBudget* budget)
      : stream(std::move(owner)),
        live_bytes(std::move(live)),
        buffer(bytes, stream->get(), budget) {
    *live_bytes += buffer.bytes();
  }
  ~EncoderMemory() { *live_bytes -= buffer.bytes(); }
  EncoderMemory(const EncoderMemory&) = delete;
  EncoderMemory& operator=(const EncoderMemory&) = delete;

  std::shared_ptr<kernels::CudaStreamOwner> stream;
  std::shared_ptr<std::atomic<std::size_t>> live_bytes;
  kernels::DeviceBuffer buffer;
};

// `wanted` bytes (room to grow), or just `needed` when the budget or the device cannot hold
// `wanted`: near the memory limit, work that fits is not refused for the sake of headroom.
kernels::DeviceBuffer allocate_with_room(std::size_t needed, std::size_t wanted,
                                         kernels::CudaStream stream,
                                         kernels::MemoryBudget* budget) {
  if (wanted > needed) {
    try {
      return kernels::DeviceBuffer(wanted, stream, budget);
    } catch (const ResourceExhausted&) {
    }
  }
  return kernels::DeviceBuffer(needed, stream, budget);
}

}  // namespace

void* GrowingBuffer::reserve(std::size_t bytes, kernels::CudaStream stream,
                             kernels::MemoryBudget* budget) {
  if (buffer_.bytes() < bytes) {
    buffer_ = kernels::DeviceBuffer();  // release first: the budget counts both otherwise
    buffer_ = allocate_with_room(bytes, bytes + bytes / 4, stream, budget);
  }
  return buffer_.data();
}

CudaBackend::CudaBackend(const CudaEngine& engine)
    : engine_(engine),
      model_(engine.model()),
      weights_(engine.weights()),
      precision_(engine.options().precision),
      budget_(&engine.budget()) {
  kernels::set_current_device(engine.options().device_index);
  stream_ = std::make_shared<kernels::CudaStreamOwner>();
  const kernels::GemmAlgorithm algorithm = engine.options().batch_invariant
                                               ? kernels::GemmAlgorithm::kBatchInvariant
                                               : kernels::GemmAlgorithm::kHeuristic;
  cublas_ = std::make_unique<kernels::CublasHandle>(stream_->get(), algorithm);
  // cuBLAS's own default workspace would be outside the memory limit and the memory reported.
  // Set after the stream, which resets it. (Batch-invariant GEMMs use none.)
  const std::size_t workspace_bytes =
      kernels::cublas_workspace_bytes(engine.options().device_index, algorithm);
  if (workspace_bytes > 0) {
    cublas_workspace_ = kernels::DeviceBuffer(workspace_bytes, stream_->get(), budget_);
    RPT_CUBLAS_CHECK(cublasSetWorkspace(cublas_->get(), cublas_workspace_.data(), workspace_bytes));
  }
  const ArchitectureConfig& arch = model_.config().architecture;
  layout_ = {.layers = arch.decoder_layers, .capacity = 0, .width = arch.attention_dim()};
}

CudaBackend::~CudaBackend() {
  try {
    stream_->synchronize();
  } catch (...) {  // the device failed (or its message could not be built); release regardless
  }
}

std::size_t CudaBackend::device_memory_bytes() const {
  return cublas_workspace_.bytes() + encoder_workspace_.bytes() + step_workspace_.bytes() +
         step_inputs_.bytes() + cache_.bytes() + spare_.bytes() + encoder_memory_bytes_->load();
}

std::vector<EncodedSentence> CudaBackend::encode(const std::vector<std::vector<int>>& sources) {
  kernels::set_current_device(engine_.options().device_index);
  check_encoder_input(model_, sources);
  if (sources.empty()) return {};
  const ArchitectureConfig& arch = model_.config().architecture;
  const int d = arch.d_model;
  const int attention = arch.attention_dim();  // A
  // Packed like the CPU, without padding: sentence b is rows offsets[b] .. offsets[b + 1].
  std::vector<int> offsets{0};
  for (const auto& sentence : sources) {
    offsets.push_back(offsets.back() + static_cast<int>(sentence.size()));
  }
  const int tokens = offsets.back();
  const std::size_t element = kernels::precision_size(precision_);
  const int stride = weights_.memory_key_value.outputs;  // [layers * 2 A] per token

  // Activations [tokens, ...] and the packed inputs, in one workspace.
  Layout layout;
  const std::size_t x_at = layout.add(static_cast<std::size_t>(tokens) * d * element);
  const std::size_t normed_at = layout.add(static_cast<std::size_t>(tokens) * d * element);
  const std::size_t qkv_at = layout.add(static_cast<std::size_t>(tokens) * 3 * attention * element);
  const std::size_t context_at = layout.add(static_cast<std::size_t>(tokens) * attention * element);
  const std::size_t hidden_at = layout.add(static_cast<std::size_t>(tokens) * arch.d_ff * element);
  const std::size_t gate_at =
      layout.add(arch.gated_ffn ? static_cast<std::size_t>(tokens) * arch.d_ff * element : 0);
  const std::size_t inputs_at = layout.size();
  Layout inputs;
  const std::size_t ids_at = inputs.add(sizeof(int) * tokens);
  const std::size_t positions_at = inputs.add(sizeof(int) * tokens);
  const std::size_t lengths_at = inputs.add(sizeof(int) * tokens);
  const std::size_t sentences_at = inputs.add(sizeof(void*) * tokens);
  void* workspace = encoder_workspace_.reserve(inputs_at + inputs.size(), stream(), budget_);
  // Each sentence's memory in a buffer of its own, which its beams share and which is freed when
  // its last beam ends (not with its batch's last sentence, as one batch buffer would be); the
  // forward projects each sentence's rows straight into it. Allocated before anything is
  // launched: a batch past the memory limit throws here.
  std::vector<std::shared_ptr<EncoderMemory>> memories;
  std::vector<MemorySlice> slices;
  for (std::size_t b = 0; b < sources.size(); ++b) {
    memories.push_back(std::make_shared<EncoderMemory>(
        stream_, encoder_memory_bytes_, sources[b].size() * stride * element, budget_));
    slices.push_back({.first_row = offsets[b],
                      .rows = static_cast<int>(sources[b].size()),
                      .out = memories.back()->buffer.data()});
  }

  host_inputs_.assign(inputs.size(), 0);
  void* host = host_inputs_.data();
  for (std::size_t b = 0; b < sources.size(); ++b) {
    const auto& sentence = sources[b];
    const int n = static_cast<int>(sentence.size());
    const void* start = at<char>(
        workspace, qkv_at + static_cast<std::size_t>(offsets[b]) * 3 * attention * element);
    for (int i = 0; i < n; ++i) {
      const int t = offsets[b] + i;
      at<int>(host, ids_at)[t] = sentence[static_cast<std::size_t>(i)];
      at<int>(host, positions_at)[t] = i;
      at<int>(host, lengths_at)[t] = n;
      at<const void*>(host, sentences_at)[t] = start;
    }
  }
  void* device_inputs = at<char>(workspace, inputs_at);
  kernels::copy_host_to_device_async(device_inputs, host_inputs_.data(), host_inputs_.size(),
                                     stream());

  const int* positions = at<int>(device_inputs, positions_at);
  CudaTransformerOps ops(arch, precision_, stream(), cublas_.get(),
                         {.kernel = engine_.options().gpu_attention,
                          .positions = positions,
                          .sentences = at<const void*>(device_inputs, sentences_at),
                          .sentence_lengths = at<int>(device_inputs, lengths_at)});
  encoder_forward(ops, weights_, model_.config(),
                  {.ids = at<int>(device_inputs, ids_at), .positions = positions, .rows = tokens},
                  {.x = at<char>(workspace, x_at),
                   .normed = at<char>(workspace, normed_at),
                   .hidden = at<char>(workspace, hidden_at),
                   .gate = at<char>(workspace, gate_at),
                   .hidden_stride = arch.d_ff,
                   .qkv = at<char>(workspace, qkv_at),
                   .context = at<char>(workspace, context_at)},
                  slices);

  std::vector<EncodedSentence> sentences;
  for (std::size_t b = 0; b < sources.size(); ++b) {
    sentences.push_back({.owner = memories[b],
                         .keys_values = memories[b]->buffer.data(),
                         .length = static_cast<int>(sources[b].size())});
  }
  // The host inputs are reused by the next call: wait until the stream has read them.
  kernels::synchronize(stream());
  return sentences;
}

void CudaBackend::prepare_cache(int rows, int needed_positions, int max_positions) {
  const std::size_t element = kernels::precision_size(precision_);
  if (needed_positions > layout_.capacity) {
    spare_ = kernels::DeviceBuffer();  // of the old layout; freed first to make room
    kernels::CacheLayout grown = layout_;
    const int limit = max_positions > 0 ? std::min(max_positions, model_.max_sequence_length())
                                        : model_.max_sequence_length();
    grown.capacity = kernels::grown_cache_capacity(layout_.capacity, needed_positions, limit);
    if (cache_rows_ > 0) {
      const auto cache_bytes = [&](const kernels::CacheLayout& layout) {
        return static_cast<std::size_t>(cache_rows_) * layout.row_elements() * element;
      };
      kernels::CacheLayout exact = layout_;
      exact.capacity = needed_positions;
      kernels::DeviceBuffer resized =
          allocate_with_room(cache_bytes(exact), cache_bytes(grown), stream(), budget_);
      if (resized.bytes() < cache_bytes(grown)) grown = exact;  // no room to grow ahead
      kernels::cache_resize_cuda({.precision = precision_,
                                  .rows = cache_rows_,
                                  .in_layout = layout_,
                                  .in = cache_.data(),
                                  .out_layout = grown,
                                  .out = resized.data()},
                                 stream());
      cache_ = std::move(resized);
    }
    layout_ = grown;
  }
  const std::size_t row_bytes = static_cast<std::size_t>(layout_.row_elements()) * element;
  // The gather's target, sized to the step's rows: headroom here would be a second copy of the
  // largest cache. Rows come in a few sizes (graph_rows), so it is reallocated rarely.
  if (spare_.bytes() < static_cast<std::size_t>(rows) * row_bytes) {
    spare_ = kernels::DeviceBuffer();
    spare_ = kernels::DeviceBuffer(static_cast<std::size_t>(rows) * row_bytes, stream(), budget_);
  }
}

void CudaBackend::step(const StepInput& input, StepCandidates& out) {
  // Profiled steps run eagerly: the timer's marks go between the launches.
  const bool profile = engine_.options().gpu_profile;
  const auto entered =
      profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  kernels::set_current_device(engine_.options().device_index);
  const bool use_graphs = engine_.options().gpu_graphs && !profile;
  if (profile && !timer_) timer_ = std::make_unique<kernels::StreamTimer>(stream());
  const ArchitectureConfig& arch = model_.config().architecture;
  const int d = arch.d_model;
  const int attention = arch.attention_dim();  // A
  const int rows = static_cast<int>(input.tokens.size());
  const int width = input.width;
  RPT_CHECK(input.positions.size() == input.tokens.size() &&
                input.parents.size() == input.tokens.size() &&
                input.blocked_tokens.size() == input.tokens.size(),
            InvalidArgument, "decoder step inputs of different lengths");
  if (rows == 0) {
    out.log_probs.clear();
    out.ids.clear();
    return;
  }
  check_decoder_step_input(model_, input.tokens, input.positions);
  const int vocab = weights_.generator.outputs;
  int needed = 0;
  for (int r = 0; r < rows; ++r) {
    const int parent = input.parents[static_cast<std::size_t>(r)];
    const int position = input.positions[static_cast<std::size_t>(r)];
    RPT_CHECK(parent < cache_rows_, InvalidArgument, "reorder parent ", parent, " out of ",
              cache_rows_);
    // A row continues the first `position` positions of its parent (none for a new sentence).
    const int held = parent < 0 ? 0 : cached_lengths_[static_cast<std::size_t>(parent)];
    RPT_CHECK(position >= 0 && position <= held, InvalidArgument, "row ", r, " decodes position ",
              position, " but continues a row that holds ", held);
    needed = std::max(needed, position + 1);
  }
  // With graphs, rows [rows, padded) start a dummy sentence (token 0 at position 0, the first
  // group's memory): a captured step serves every row count up to its own.
  const int padded = use_graphs ? graph_rows(rows) : rows;
  prepare_cache(padded, needed, input.max_positions);
  const std::size_t element = kernels::precision_size(precision_);
  const std::size_t row_bytes = static_cast<std::size_t>(layout_.row_elements()) * element;

  Layout layout;
  const std::size_t x_at = layout.add(static_cast<std::size_t>(padded) * d * element);
  const std::size_t normed_at = layout.add(static_cast<std::size_t>(padded) * d * element);
  const std::size_t qkv_at = layout.add(static_cast<std::size_t>(padded) * 3 * attention * element);
  const std::size_t context_at = layout.add(static_cast<std::size_t>(padded) * attention * element);
  const std::size_t hidden_at = layout.add(static_cast<std::size_t>(padded) * arch.d_ff * element);
  const std::size_t gate_at =
      layout.add(arch.gated_ffn ? static_cast<std::size_t>(padded) * arch.d_ff * element : 0);
  const std::size_t logits_at =
      layout.add(static_cast<std::size_t>(padded) * vocab * sizeof(float));
  // The one buffer that comes back: log-probs then ids, [padded, width] each.
  const std::size_t results_at = layout.add(static_cast<std::size_t>(padded) * width * 8);
  void* workspace = step_workspace_.reserve(layout.size(), stream(), budget_);

  Layout inputs;
  const std::size_t tokens_at = inputs.add(sizeof(int) * padded);
  const std::size_t positions_at = inputs.add(sizeof(int) * padded);
  const std::size_t parents_at = inputs.add(sizeof(int) * padded);
  const std::size_t blocked_at = inputs.add(sizeof(int) * padded);
  const std::size_t self_counts_at = inputs.add(sizeof(int) * padded);
  const std::size_t memory_counts_at = inputs.add(sizeof(int) * padded);
  const std::size_t self_rows_at = inputs.add(sizeof(void*) * padded);
  const std::size_t memory_rows_at = inputs.add(sizeof(void*) * padded);
  host_inputs_.assign(inputs.size(), 0);
  void* host = host_inputs_.data();
  for (int r = 0; r < padded; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const bool real = r < rows;
    at<int>(host, tokens_at)[r] = real ? input.tokens[i] : 0;
    at<int>(host, positions_at)[r] = real ? input.positions[i] : 0;
    at<int>(host, parents_at)[r] = real ? input.parents[i] : -1;
    at<int>(host, blocked_at)[r] = real ? input.blocked_tokens[i] : -1;
    at<int>(host, self_counts_at)[r] = real ? input.positions[i] + 1 : 1;
    // After the gather below, spare_ becomes the cache: row r lives at spare_ + r * row_bytes.
    at<const void*>(host, self_rows_at)[r] = at<char>(spare_.data(), i * row_bytes);
  }
  for (const StepRowGroup& group : input.groups) {
    for (int r = group.first_row; r < group.first_row + group.rows; ++r) {
      at<int>(host, memory_counts_at)[r] = group.sentence->length;
      at<const void*>(host, memory_rows_at)[r] = group.sentence->keys_values;
    }
  }
  if (!input.groups.empty()) {
    for (int r = rows; r < padded; ++r) {
      at<int>(host, memory_counts_at)[r] = input.groups.front().sentence->length;
      at<const void*>(host, memory_rows_at)[r] = input.groups.front().sentence->keys_values;
    }
  }
  void* device_inputs = step_inputs_.reserve(inputs.size(), stream(), budget_);
  if (profile) timer_->start();
  kernels::copy_host_to_device_async(device_inputs, host_inputs_.data(), host_inputs_.size(),
                                     stream());
  if (profile) timer_->mark("copy inputs to the device");

  // Everything from here to the top-k reads only the key's buffers: one graph per key.
  void* const old_cache = cache_.data();
  void* const new_cache = spare_.data();
  const auto kernels_of_step = [&] {
    // Beam reordering: row r continues row parents[r] of the previous step.
    kernels::cache_gather_cuda({.precision = precision_,
                                .layout = layout_,
                                .rows = padded,
                                .in = old_cache,
                                .parents = at<int>(device_inputs, parents_at),
                                .lengths = at<int>(device_inputs, positions_at),
                                .out = new_cache},
                               stream());
    if (profile) timer_->mark("cache gather (beam reordering)");
    const int* positions = at<int>(device_inputs, positions_at);
    CudaTransformerOps ops(arch, precision_, stream(), cublas_.get(),
                           {.kernel = engine_.options().gpu_attention,
                            .positions = positions,
                            .layout = layout_,
                            .cache = new_cache,
                            .cache_rows = at<const void*>(device_inputs, self_rows_at),
                            .cache_counts = at<int>(device_inputs, self_counts_at),
                            .memory_rows = at<const void*>(device_inputs, memory_rows_at),
                            .memory_lengths = at<int>(device_inputs, memory_counts_at),
                            .memory_stride = weights_.memory_key_value.outputs});
    auto* logits = at<float>(workspace, logits_at);
    std::optional<ProfiledOps> profiled;
    if (profile) profiled.emplace(ops, *timer_);
    decoder_step_forward(
        profiled ? static_cast<TransformerOps<DeviceStorage>&>(*profiled) : ops, weights_,
        model_.config(),
        {.ids = at<int>(device_inputs, tokens_at), .positions = positions, .rows = padded},
        {.x = at<char>(workspace, x_at),
         .normed = at<char>(workspace, normed_at),
         .hidden = at<char>(workspace, hidden_at),
         .gate = at<char>(workspace, gate_at),
         .hidden_stride = arch.d_ff,
         .qkv = at<char>(workspace, qkv_at),
         .context = at<char>(workspace, context_at)},
        logits);
    auto* log_probs = at<float>(workspace, results_at);
    kernels::top_k_log_softmax_cuda(
        {.logits = logits,
         .rows = padded,
         .vocab = vocab,
         .k = width,
         .blocked_token = at<int>(device_inputs, blocked_at),
         .log_probs = log_probs,
         .ids = reinterpret_cast<int*>(log_probs + static_cast<long>(padded) * width)},
        stream());
    if (profile) timer_->mark("top-k log-softmax");
  };
  if (use_graphs) {
    graphs_.run({.rows = padded,
                 .width = width,
                 .capacity = layout_.capacity,
                 .cache = old_cache,
                 .spare = new_cache,
                 .workspace = workspace,
                 .inputs = device_inputs},
                stream(), kernels_of_step);
  } else {
    kernels_of_step();
  }
  // The step's one device-to-host copy.
  const std::size_t count = static_cast<std::size_t>(rows) * width;
  const std::size_t padded_count = static_cast<std::size_t>(padded) * width;
  host_results_.resize(padded_count * 8);
  kernels::copy_device_to_host_async(host_results_.data(), at<char>(workspace, results_at),
                                     host_results_.size(), stream());
  if (profile) timer_->mark("copy results to the host");
  kernels::synchronize(stream());
  // The step completed: spare_ holds the cache now (a step that threw left cache_ as it was).
  std::swap(cache_, spare_);
  cache_rows_ = rows;
  cached_lengths_.resize(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    cached_lengths_[static_cast<std::size_t>(r)] = input.positions[static_cast<std::size_t>(r)] + 1;
  }
  out.log_probs.resize(count);
  out.ids.resize(count);
  std::memcpy(out.log_probs.data(), host_results_.data(), count * sizeof(float));
  std::memcpy(out.ids.data(), host_results_.data() + padded_count * sizeof(float),
              count * sizeof(int));
  if (profile) {
    for (const auto& [label, milliseconds] : timer_->stretches()) {
      StepProfilePart& part = profile_[label];
      part.seconds += 1e-3 * milliseconds;
      ++part.calls;
    }
    StepProfilePart& wall = profile_["step (host wall)"];
    wall.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - entered).count();
    ++wall.calls;
  }
}

}  // namespace rpt
