#include "tests/support/reference_transformer.h"

#include <cmath>
#include <filesystem>

#include "engine/model_config.h"
#include "engine/weights_file.h"
#include "kernels/position.h"

namespace rpt::testing {

using Matrix = std::vector<std::vector<double>>;

struct ReferenceTransformer::Impl {
  ModelConfig config;
  WeightsFile weights;

  explicit Impl(const std::string& directory)
      : config(ModelConfig::load(directory)),
        weights((std::filesystem::path(directory) / config.weights_file).string()) {}

  std::vector<double> vector(const std::string& name) const {
    const Tensor t = weights.get(name).to_float32();
    return {t.data<float>(), t.data<float>() + t.numel()};
  }
  bool has(const std::string& name) const { return weights.contains(name); }

  // y = x W^T + b for every row.
  Matrix linear(const Matrix& x, const std::string& name) const {
    const Tensor w = weights.get(name + ".weight").to_float32();
    const auto out = static_cast<std::size_t>(w.dim(0));
    const auto in = static_cast<std::size_t>(w.dim(1));
    const std::vector<double> bias =
        has(name + ".bias") ? vector(name + ".bias") : std::vector<double>(out, 0.0);
    Matrix y(x.size(), std::vector<double>(out));
    for (std::size_t r = 0; r < x.size(); ++r) {
      for (std::size_t o = 0; o < out; ++o) {
        double sum = bias[o];
        for (std::size_t i = 0; i < in; ++i) sum += x[r][i] * w.data<float>()[o * in + i];
        y[r][o] = sum;
      }
    }
    return y;
  }

  Matrix norm(const Matrix& x, const std::string& name) const {
    const auto gamma = vector(name + ".gamma");
    Matrix y = x;
    if (config.architecture.norm == NormType::kRmsNorm) {  // T5: no mean, no beta
      for (auto& row : y) {
        double squares = 0.0;
        for (double v : row) squares += v * v;
        const double inv_rms = 1.0 / std::sqrt(squares / static_cast<double>(row.size()) +
                                               config.architecture.norm_eps);
        for (std::size_t i = 0; i < row.size(); ++i) row[i] = row[i] * inv_rms * gamma[i];
      }
      return y;
    }
    const auto beta = vector(name + ".beta");
    for (auto& row : y) {
      double mean = 0.0, var = 0.0;
      for (double v : row) mean += v;
      mean /= static_cast<double>(row.size());
      for (double v : row) var += (v - mean) * (v - mean);
      var /= static_cast<double>(row.size());
      for (std::size_t i = 0; i < row.size(); ++i) {
        row[i] =
            (row[i] - mean) / std::sqrt(var + config.architecture.norm_eps) * gamma[i] + beta[i];
      }
    }
    return y;
  }

  static Matrix add(const Matrix& a, const Matrix& b) {
    Matrix y = a;
    for (std::size_t r = 0; r < y.size(); ++r) {
      for (std::size_t i = 0; i < y[r].size(); ++i) y[r][i] += b[r][i];
    }
    return y;
  }

  // Multi-head attention of queries (positions 0..) over keys; `self` enables the position
  // terms of `stack_k` and the causal mask when `causal`.
  Matrix attention(const Matrix& query_input, const Matrix& key_input, const std::string& prefix,
                   bool self, bool causal, int stack_k) const {
    const ArchitectureConfig& a = config.architecture;
    const int heads = a.heads;
    const auto dh = static_cast<std::size_t>(a.head_dim());
    const Matrix q = linear(query_input, prefix + "query");
    const Matrix k = linear(key_input, prefix + "key");
    const Matrix v = linear(key_input, prefix + "value");
    const bool relative = self && config.position.type == PositionType::kRelative && stack_k > 0;
    const bool t5 = self && config.position.type == PositionType::kT5Bucket;
    std::vector<double> k_rel, v_rel, t5_bias;
    if (relative) {
      k_rel = vector(prefix + "relative_keys");
      v_rel = has(prefix + "relative_values") ? vector(prefix + "relative_values") : k_rel;
    }
    if (t5) t5_bias = vector(prefix + "relative_bias");
    const std::size_t lq = q.size(), lk = k.size();
    // The explicit index matrix r(i, j), as the paper describes it.
    std::vector<std::vector<int>> index(lq, std::vector<int>(lk));
    for (std::size_t i = 0; i < lq; ++i) {
      for (std::size_t j = 0; j < lk; ++j) {
        index[i][j] = kernels::relative_index(static_cast<int>(i), static_cast<int>(j), stack_k);
      }
    }
    Matrix context(lq, std::vector<double>(static_cast<std::size_t>(a.attention_dim()), 0.0));
    for (int h = 0; h < heads; ++h) {
      const std::size_t base = static_cast<std::size_t>(h) * dh;
      for (std::size_t i = 0; i < lq; ++i) {
        const std::size_t keys = causal ? i + 1 : lk;
        std::vector<double> e(keys);
        double max_e = -1e300;
        for (std::size_t j = 0; j < keys; ++j) {
          double dot = 0.0;
          for (std::size_t c = 0; c < dh; ++c) {
            const double key =
                k[j][base + c] +
                (relative ? k_rel[static_cast<std::size_t>(index[i][j]) * dh + c] : 0.0);
            dot += q[i][base + c] * key;
          }
          e[j] = a.scale_attention ? dot / std::sqrt(static_cast<double>(dh)) : dot;
          if (t5) {
            const int bucket =
                kernels::t5_bucket(static_cast<int>(j) - static_cast<int>(i), !causal,
                                   config.position.buckets, config.position.max_distance);
            e[j] += t5_bias[static_cast<std::size_t>(bucket * heads + h)];
          }
          max_e = std::max(max_e, e[j]);
        }
        double sum = 0.0;
        for (double& x : e) sum += (x = std::exp(x - max_e));
        for (std::size_t j = 0; j < keys; ++j) {
          for (std::size_t c = 0; c < dh; ++c) {
            const double value =
                v[j][base + c] +
                (relative ? v_rel[static_cast<std::size_t>(index[i][j]) * dh + c] : 0.0);
            context[i][base + c] += e[j] / sum * value;
          }
        }
      }
    }
    return linear(context, prefix + "output");
  }

  Matrix feed_forward(const Matrix& x, const std::string& prefix) const {
    const bool gated = config.architecture.gated_ffn;
    Matrix h = linear(x, prefix + (gated ? "gate" : "inner"));
    for (auto& row : h) {
      for (double& v : row) {
        switch (config.architecture.activation) {
          case Activation::kRelu:
            v = std::max(0.0, v);
            break;
          case Activation::kGelu:
            v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
            break;
          case Activation::kGeluTanh:
            v = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
            break;
          case Activation::kSilu:
            v = v / (1.0 + std::exp(-v));
            break;
        }
      }
    }
    if (gated) {  // act(gate x) * (inner x)
      const Matrix linear_half = linear(x, prefix + "inner");
      for (std::size_t r = 0; r < h.size(); ++r) {
        for (std::size_t c = 0; c < h[r].size(); ++c) h[r][c] *= linear_half[r][c];
      }
    }
    return linear(h, prefix + "outer");
  }

  Matrix embed(const std::vector<int>& ids, const std::string& table_name) const {
    const ArchitectureConfig& a = config.architecture;
    const auto table = vector(table_name);
    const auto d = static_cast<std::size_t>(a.d_model);
    const double scale = a.embedding_scale ? std::sqrt(static_cast<double>(d)) : 1.0;
    Matrix x(ids.size(), std::vector<double>(d));
    for (std::size_t t = 0; t < ids.size(); ++t) {
      for (std::size_t i = 0; i < d; ++i) {
        x[t][i] = table[static_cast<std::size_t>(ids[t]) * d + i] * scale;
        if (config.position.sinusoidal) {
          const double angle = static_cast<double>(t) *
                               std::exp(static_cast<double>(i - i % 2) * -std::log(10000.0) / d);
          x[t][i] += i % 2 == 0 ? std::sin(angle) : std::cos(angle);
        }
      }
    }
    return x;
  }

  // A residual sub-layer in either norm placement.
  template <typename Body>
  Matrix sublayer(const Matrix& x, const std::string& norm_name, Body body) const {
    if (config.architecture.norm_placement == NormPlacement::kPre) {
      return add(x, body(norm(x, norm_name)));
    }
    return norm(add(x, body(x)), norm_name);
  }

  Matrix encode(const std::vector<int>& ids) const {
    const ArchitectureConfig& a = config.architecture;
    Matrix x = embed(ids, has("encoder.embeddings") ? "encoder.embeddings" : "decoder.embeddings");
    const int k = config.position.encoder_max_relative_position;
    for (int l = 0; l < a.encoder_layers; ++l) {
      const std::string p = "encoder.layer_" + std::to_string(l) + ".";
      x = sublayer(x, p + "self_attention.norm", [&](const Matrix& n) {
        return attention(n, n, p + "self_attention.", true, false, k);
      });
      x = sublayer(x, p + "ffn.norm", [&](const Matrix& n) { return feed_forward(n, p + "ffn."); });
    }
    return a.norm_placement == NormPlacement::kPre ? norm(x, "encoder.norm") : x;
  }

  Matrix decode(const Matrix& memory, const std::vector<int>& target) const {
    const ArchitectureConfig& a = config.architecture;
    Matrix x = embed(target, "decoder.embeddings");
    const int k = config.position.decoder_max_relative_position;
    for (int l = 0; l < a.decoder_layers; ++l) {
      const std::string p = "decoder.layer_" + std::to_string(l) + ".";
      x = sublayer(x, p + "self_attention.norm", [&](const Matrix& n) {
        return attention(n, n, p + "self_attention.", true, true, k);
      });
      x = sublayer(x, p + "cross_attention.norm", [&](const Matrix& n) {
        return attention(n, memory, p + "cross_attention.", false, false, 0);
      });
      x = sublayer(x, p + "ffn.norm", [&](const Matrix& n) { return feed_forward(n, p + "ffn."); });
    }
    if (a.norm_placement == NormPlacement::kPre) x = norm(x, "decoder.norm");
    Matrix logits = has("generator.weight") ? linear(x, "generator") : Matrix{};
    for (auto& row : logits) {
      double max_v = -1e300, sum = 0.0;
      for (double v : row) max_v = std::max(max_v, v);
      for (double v : row) sum += std::exp(v - max_v);
      for (double& v : row) v -= max_v + std::log(sum);
    }
    return logits;
  }
};

ReferenceTransformer::ReferenceTransformer(const std::string& model_directory)
    : impl_(std::make_unique<Impl>(model_directory)) {}
ReferenceTransformer::~ReferenceTransformer() = default;

Matrix ReferenceTransformer::encode(const std::vector<int>& source_ids) const {
  return impl_->encode(source_ids);
}

Matrix ReferenceTransformer::decode(const std::vector<int>& source_ids,
                                    const std::vector<int>& target_ids) const {
  return impl_->decode(impl_->encode(source_ids), target_ids);
}

}  // namespace rpt::testing
