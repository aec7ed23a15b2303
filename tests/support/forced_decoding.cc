#include "tests/support/forced_decoding.h"

#include <algorithm>

#include "engine/cpu/decoder_state.h"
#include "engine/cpu/encoder.h"
#include "kernels/log_softmax.h"

namespace rpt::testing {

std::vector<ForcedDecoding> forced_decode(const Model& model,
                                          const std::vector<std::vector<int>>& sources,
                                          const std::vector<std::vector<int>>& prefixes) {
  const int d = model.config().architecture.d_model;
  const EncodedBatch encoded = encode(model, sources);
  const auto batch = sources.size();
  std::vector<ForcedDecoding> out(batch);
  const int stride = static_cast<int>(encoded.memory_keys_values.dim(1));
  for (std::size_t b = 0; b < batch; ++b) {
    const float* states = encoded.output.data<float>() + encoded.offsets[b] * d;
    out[b].encoder_output.assign(states, states + encoded.length(static_cast<int>(b)) * d);
  }

  DecoderState state(model);
  std::size_t longest = 0;
  for (const auto& prefix : prefixes) longest = std::max(longest, prefix.size());
  std::vector<std::size_t> rows_of;  // sentence of each row this step
  for (std::size_t t = 0; t < longest; ++t) {
    DecoderStepInput input;
    std::vector<int> parents;
    std::vector<int> lengths;
    std::vector<std::size_t> sentences;
    for (std::size_t b = 0; b < batch; ++b) {
      if (t >= prefixes[b].size()) continue;
      const auto previous = std::find(rows_of.begin(), rows_of.end(), b);
      parents.push_back(previous == rows_of.end() ? -1
                                                  : static_cast<int>(previous - rows_of.begin()));
      lengths.push_back(static_cast<int>(t));
      MemoryGroup group;
      group.keys_values = encoded.memory_keys_values.data<float>() + encoded.offsets[b] * stride;
      group.row_stride = stride;
      group.memory_length = encoded.length(static_cast<int>(b));
      group.first_row = static_cast<int>(input.tokens.size());
      group.rows = 1;
      input.memory.push_back(group);
      input.tokens.push_back(prefixes[b][t]);
      input.positions.push_back(static_cast<int>(t));
      sentences.push_back(b);
    }
    state.reorder(parents, lengths);
    Tensor log_probs = decoder_step(model, input, state);
    const auto vocab = static_cast<std::size_t>(log_probs.dim(1));
    kernels::log_softmax_cpu(log_probs.data<float>(), static_cast<int>(sentences.size()),
                             static_cast<int>(vocab));
    for (std::size_t r = 0; r < sentences.size(); ++r) {
      const float* row = log_probs.data<float>() + r * vocab;
      out[sentences[r]].step_log_probs.emplace_back(row, row + vocab);
    }
    rows_of = sentences;
  }
  return out;
}

}  // namespace rpt::testing
