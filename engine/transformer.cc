#include "engine/transformer.h"

#include <algorithm>

#include "engine/device_storage.h"
#include "kernels/errors.h"

namespace rpt {

kernels::ActivationKind kernel_activation(Activation activation) {
  switch (activation) {
    case Activation::kRelu:
      return kernels::ActivationKind::kRelu;
    case Activation::kGelu:
      return kernels::ActivationKind::kGelu;
    case Activation::kGeluTanh:
      return kernels::ActivationKind::kGeluTanh;
    case Activation::kSilu:
      return kernels::ActivationKind::kSilu;
  }
  return kernels::ActivationKind::kIdentity;
}

namespace {

bool pre_norm(const ArchitectureConfig& arch) { return arch.norm_placement == NormPlacement::kPre; }

// The FFN sub-layer with its residual, in place on x:
//   pre-norm:  x = x + W2 act(W1 LN(x))
//   post-norm: x = LN(x + W2 act(W1 x))
// A gated FFN (T5 v1.1) has act(Wg in) * (W1 in) for act(W1 in).
template <class Storage>
void feed_forward(TransformerOps<Storage>& ops, const FeedForwardOf<Storage>& ffn,
                  const ArchitectureConfig& arch, int rows, const ForwardBuffers& buffers) {
  const void* in = buffers.x;
  if (pre_norm(arch)) {
    ops.norm(ffn.norm, buffers.x, rows, buffers.normed);
    in = buffers.normed;
  }
  const LinearCall inner{.in = in,
                         .in_stride = arch.d_model,
                         .rows = rows,
                         .out = buffers.hidden,
                         .out_stride = buffers.hidden_stride,
                         .activation = kernel_activation(arch.activation)};
  if (arch.gated_ffn) {
    ops.linear(ffn.gate, inner);
    LinearCall linear_half = inner;
    linear_half.out = buffers.gate;
    linear_half.activation = kernels::ActivationKind::kIdentity;
    ops.linear(ffn.inner, linear_half);
    ops.multiply(buffers.hidden, buffers.gate, rows, arch.d_ff, buffers.hidden_stride);
  } else {
    ops.linear(ffn.inner, inner);
  }
  ops.linear(ffn.outer, {.in = buffers.hidden,
                         .in_stride = buffers.hidden_stride,
                         .rows = rows,
                         .out = buffers.x,
                         .out_stride = arch.d_model,
                         .accumulate = true});
  if (!pre_norm(arch)) ops.norm(ffn.norm, buffers.x, rows, buffers.x);
}

// One attention sub-layer with its residual, in place on x: `attend(in)` projects `in` and
// writes the attention core's output to buffers.context; its output projection is added to x.
template <class Storage, class Attend>
void attention_sub_layer(TransformerOps<Storage>& ops, const typename Storage::Norm& norm,
                         const typename Storage::Linear& output, const ArchitectureConfig& arch,
                         int rows, const ForwardBuffers& buffers, const Attend& attend) {
  const void* in = buffers.x;
  if (pre_norm(arch)) {
    ops.norm(norm, buffers.x, rows, buffers.normed);
    in = buffers.normed;
  }
  attend(in);
  ops.linear(output, {.in = buffers.context,
                      .in_stride = arch.attention_dim(),
                      .rows = rows,
                      .out = buffers.x,
                      .out_stride = arch.d_model,
                      .accumulate = true});
  if (!pre_norm(arch)) ops.norm(norm, buffers.x, rows, buffers.x);
}

// buffers.qkv [rows, 3 A] = in W_qkv^T + b (A: ArchitectureConfig::attention_dim).
template <class Storage>
void project_qkv(TransformerOps<Storage>& ops, const SelfAttentionOf<Storage>& attention,
                 const ArchitectureConfig& arch, const void* in, int rows,
                 const ForwardBuffers& buffers) {
  ops.linear(attention.qkv, {.in = in,
                             .in_stride = arch.d_model,
                             .rows = rows,
                             .out = buffers.qkv,
                             .out_stride = 3 * arch.attention_dim()});
}

template <class Storage>
void embed(TransformerOps<Storage>& ops, const typename Storage::Table& table,
           const ModelConfig& config, const TokenRows& tokens, void* out) {
  ops.embed(table, tokens.ids, config.position.sinusoidal ? tokens.positions : nullptr, tokens.rows,
            out);
}

}  // namespace

template <class Storage>
void encoder_forward(TransformerOps<Storage>& ops, const TransformerWeightsOf<Storage>& weights,
                     const ModelConfig& config, const TokenRows& tokens,
                     const ForwardBuffers& buffers, const std::vector<MemorySlice>& memory) {
  const ArchitectureConfig& arch = config.architecture;
  const int rows = tokens.rows;
  embed(ops, weights.encoder_embeddings, config, tokens, buffers.x);
  for (const EncoderLayerOf<Storage>& layer : weights.encoder_layers) {
    const SelfAttentionOf<Storage>& attention = layer.self_attention;
    attention_sub_layer(ops, attention.norm, attention.output, arch, rows, buffers,
                        [&](const void* in) {
                          project_qkv(ops, attention, arch, in, rows, buffers);
                          ops.packed_self_attention(attention, buffers.qkv, rows, buffers.context);
                        });
    feed_forward(ops, layer.ffn, arch, rows, buffers);
  }
  if (pre_norm(arch)) ops.norm(weights.encoder_norm, buffers.x, rows, buffers.x);
  const int stride = weights.memory_key_value.out_features();
  const std::size_t row_bytes = static_cast<std::size_t>(arch.d_model) * ops.element_bytes();
  for (const MemorySlice& slice : memory) {
    RPT_CHECK(slice.first_row >= 0 && slice.rows >= 0 && slice.first_row + slice.rows <= rows,
              InvalidArgument, "memory rows ", slice.first_row, "+", slice.rows, " of ", rows);
    ops.linear(weights.memory_key_value,
               {.in = static_cast<const char*>(buffers.x) + slice.first_row * row_bytes,
                .in_stride = arch.d_model,
                .rows = slice.rows,
                .out = slice.out,
                .out_stride = stride});
  }
}

template <class Storage>
void decoder_step_forward(TransformerOps<Storage>& ops,
                          const TransformerWeightsOf<Storage>& weights, const ModelConfig& config,
                          const TokenRows& tokens, const ForwardBuffers& buffers, float* logits) {
  const ArchitectureConfig& arch = config.architecture;
  const int rows = tokens.rows;
  embed(ops, weights.decoder_embeddings, config, tokens, buffers.x);
  for (std::size_t l = 0; l < weights.decoder_layers.size(); ++l) {
    const DecoderLayerOf<Storage>& layer = weights.decoder_layers[l];
    const int index = static_cast<int>(l);
    const SelfAttentionOf<Storage>& self = layer.self_attention;
    attention_sub_layer(ops, self.norm, self.output, arch, rows, buffers, [&](const void* in) {
      project_qkv(ops, self, arch, in, rows, buffers);
      ops.cached_self_attention(self, index, buffers.qkv, rows, buffers.context);
    });
    const CrossAttentionOf<Storage>& cross = layer.cross_attention;
    attention_sub_layer(ops, cross.norm, cross.output, arch, rows, buffers, [&](const void* in) {
      ops.linear(cross.query, {.in = in,
                               .in_stride = arch.d_model,
                               .rows = rows,
                               .out = buffers.qkv,
                               .out_stride = arch.attention_dim()});
      ops.cross_attention(index, buffers.qkv, rows, buffers.context);
    });
    feed_forward(ops, layer.ffn, arch, rows, buffers);
  }
  if (pre_norm(arch)) ops.norm(weights.decoder_norm, buffers.x, rows, buffers.x);
  ops.logits(weights.generator, buffers.x, rows, logits);
}

void check_encoder_input(const Model& model, const std::vector<std::vector<int>>& sources) {
  const int vocab = model.source_vocabulary().size();
  for (const auto& sentence : sources) {
    RPT_CHECK(!sentence.empty(), InvalidArgument, "cannot encode an empty sentence");
    RPT_CHECK(static_cast<long>(sentence.size()) <= model.max_sequence_length(), InvalidArgument,
              "source of ", sentence.size(), " tokens exceeds the model's maximum of ",
              model.max_sequence_length());
    for (const int id : sentence) {
      RPT_CHECK(id >= 0 && id < vocab, InvalidArgument, "source token id ", id,
                " out of range [0, ", vocab, ")");
    }
  }
}

void check_decoder_step_input(const Model& model, const std::vector<int>& tokens,
                              const std::vector<int>& positions) {
  RPT_CHECK(positions.size() == tokens.size(), InvalidArgument, "decoder step with ", tokens.size(),
            " tokens and ", positions.size(), " positions");
  const int vocab = model.target_vocabulary().size();
  for (const int token : tokens) {
    RPT_CHECK(token >= 0 && token < vocab, InvalidArgument, "target token id ", token,
              " out of range");
  }
  if (positions.empty()) return;
  const int highest = *std::max_element(positions.begin(), positions.end());
  RPT_CHECK(highest < model.max_sequence_length(), InvalidArgument, "decoding step ",
            static_cast<long>(highest) + 1, " exceeds the model's maximum length ",
            model.max_sequence_length());
}

// The two devices' instantiations: the CPU's host tensors and an accelerator's device addresses.
template void encoder_forward(TransformerOps<HostStorage>&, const ModelWeights&, const ModelConfig&,
                              const TokenRows&, const ForwardBuffers&,
                              const std::vector<MemorySlice>&);
template void decoder_step_forward(TransformerOps<HostStorage>&, const ModelWeights&,
                                   const ModelConfig&, const TokenRows&, const ForwardBuffers&,
                                   float*);
template void encoder_forward(TransformerOps<DeviceStorage>&,
                              const TransformerWeightsOf<DeviceStorage>&, const ModelConfig&,
                              const TokenRows&, const ForwardBuffers&,
                              const std::vector<MemorySlice>&);
template void decoder_step_forward(TransformerOps<DeviceStorage>&,
                                   const TransformerWeightsOf<DeviceStorage>&, const ModelConfig&,
                                   const TokenRows&, const ForwardBuffers&, float*);

}  // namespace rpt
