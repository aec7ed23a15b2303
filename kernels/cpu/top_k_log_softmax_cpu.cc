#include <algorithm>
#include <utility>
#include <vector>

#include "kernels/cpu/log_sum_exp_cpu.h"
#include "kernels/parallel.h"
#include "kernels/top_k_log_softmax.h"

namespace rpt::kernels {
namespace {

using Entry = std::pair<float, int>;  // (log-prob, token)

// Tokens scanned as one block: most blocks of a trained model's vocabulary hold no candidate.
constexpr int kBlock = 64;

// Greater log-prob first, then the lower token.
bool before(const Entry& a, const Entry& b) {
  return a.first != b.first ? a.first > b.first : a.second < b.second;
}

}  // namespace

void top_k_log_softmax_cpu(const TopKLogSoftmaxArgs& args) {
  // Rows are independent: spread across the CPU threads.
  parallel_for(args.rows, 8, [&](long first, long last) {
    std::vector<Entry> heap;  // min-heap of the best k under before()
    heap.reserve(static_cast<std::size_t>(args.k));
    for (long r = first; r < last; ++r) {
      const float* row = args.logits + static_cast<long>(r) * args.vocab;
      const int blocked = args.blocked_token ? args.blocked_token[r] : -1;
      const float log_normalizer = log_sum_exp_cpu(row, args.vocab);

      heap.clear();
      for (int start = 0; start < args.vocab; start += kBlock) {
        const int end = std::min(args.vocab, start + kBlock);
        // Once the heap is full, a block whose best token cannot beat (or tie) the k-th best is
        // skipped whole: x - normaliser is monotonic, so no token in it could enter.
        if (static_cast<int>(heap.size()) == args.k && (blocked < start || blocked >= end) &&
            max_cpu(row + start, end - start) - log_normalizer < heap.front().first) {
          continue;
        }
        for (int c = start; c < end; ++c) {
          const Entry entry{c == blocked ? args.blocked_log_prob : row[c] - log_normalizer, c};
          if (static_cast<int>(heap.size()) < args.k) {
            heap.push_back(entry);
            std::push_heap(heap.begin(), heap.end(), before);
          } else if (before(entry, heap.front())) {
            std::pop_heap(heap.begin(), heap.end(), before);
            heap.back() = entry;
            std::push_heap(heap.begin(), heap.end(), before);
          }
        }
      }
      std::sort_heap(heap.begin(), heap.end(), before);  // best first
      float* out_log_probs = args.log_probs + static_cast<long>(r) * args.k;
      int* out_ids = args.ids + static_cast<long>(r) * args.k;
      for (std::size_t i = 0; i < heap.size(); ++i) {
        out_log_probs[i] = heap[i].first;
        out_ids[i] = heap[i].second;
      }
    }
  });
}

}  // namespace rpt::kernels
