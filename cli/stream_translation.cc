#include "cli/stream_translation.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine/batch_decoder.h"
#include "engine/errors.h"
#include "engine/text_segments.h"

namespace rpt::tools {

namespace {

// Lines are admitted in blocks of up to this many batches, longest first within a block (what
// Translator::translate does for all its input): the batch's last steps then run the block's
// short sentences instead of a long one decoding nearly alone. A block holds only lines already
// read, so a slow pipe is never waited for, and no line waits longer than its block.
constexpr std::size_t kBlockBatches = 8;

// Adds the seconds since the last call (or construction) to `total`.
class Lap {
 public:
  void to(double& total) {
    const auto now = std::chrono::steady_clock::now();
    total += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }
  // Starts the next lap here, counting the time since the last one nowhere.
  void restart() { last_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Where a segment's result goes: its line and its place among the line's segments.
struct SegmentPlace {
  std::uint64_t line = 0;
  std::size_t index = 0;
};

struct Pending {
  SentenceRequest request;
  PreparedSource source;
  SegmentPlace place;
};

// A line read: its layout and its segments' results as they come.
struct LineState {
  documents::SegmentedText layout;
  std::vector<TranslationResult> results;
  std::size_t missing = 0;
  bool newline = true;  // the input line ended with '\n'
};

// What the decoders share: the input side (the reader and the block read ahead, under
// input_mutex) and the output side (results waiting for an earlier line, under output_mutex).
class Stream {
 public:
  Stream(const Translator& translator, const StreamOptions& options, LineReader& input,
         ProgressLine& progress, const LineWriter& write)
      : translator_(translator),
        options_(options),
        input_(input),
        progress_(progress),
        write_(write),
        batch_(static_cast<std::size_t>(translator.options().max_batch_size)) {}

  // One decoder's loop, until the input has ended (or failed) and its batch is empty.
  void decode() {
    BatchDecoder decoder(translator_.shared_engine());
    // This decoder's active segments.
    std::map<std::uint64_t, std::pair<PreparedSource, SegmentPlace>> sources;
    StageTimes times;  // this thread's
    Lap lap;
    try {
      while (true) {
        std::vector<Pending> admitted;
        const bool more = take(decoder, admitted);
        lap.restart();  // read_block's share of take(), the preparing, is in read_seconds_
        if (!more) break;
        if (!admitted.empty()) {
          std::vector<SentenceRequest> requests;
          for (Pending& pending : admitted) {
            sources.emplace(pending.request.id,
                            std::make_pair(std::move(pending.source), pending.place));
            requests.push_back(std::move(pending.request));
          }
          decoder.add(requests);
          lap.to(times.encode_seconds);
          ++times.encode_calls;
          times.encoded_sentences += static_cast<long>(requests.size());
        }
        if (decoder.empty()) continue;
        ++times.steps;
        times.step_rows += decoder.active_rows();
        std::vector<FinishedSentence> done_now = decoder.step();
        lap.to(times.step_seconds);
        std::vector<std::pair<SegmentPlace, TranslationResult>> finished;
        for (FinishedSentence& done : done_now) {
          auto source = sources.find(done.id);
          finished.emplace_back(
              source->second.second,
              translator_.to_result(std::move(done.hypotheses), source->second.first));
          sources.erase(source);
        }
        lap.to(times.results_seconds);
        deliver(finished);
        lap.to(times.output_seconds);
      }
    } catch (...) {
      fail(std::current_exception());
    }
    const std::lock_guard lock(output_mutex_);
    StageTimes& sum = totals_.times;
    sum.encode_seconds += times.encode_seconds;
    sum.step_seconds += times.step_seconds;
    sum.results_seconds += times.results_seconds;
    sum.output_seconds += times.output_seconds;
    sum.encode_calls += times.encode_calls;
    sum.encoded_sentences += times.encoded_sentences;
    sum.steps += times.steps;
    sum.step_rows += times.step_rows;
    const StepGraphCounts graphs = decoder.graph_counts();
    sum.graphs.eager += graphs.eager;
    sum.graphs.captured += graphs.captured;
    sum.graphs.replayed += graphs.replayed;
    for (const auto& [part, time] : decoder.step_profile()) {
      sum.profile[part].seconds += time.seconds;
      sum.profile[part].calls += time.calls;
    }
  }

  StreamTotals totals() const {
    StreamTotals totals = totals_;
    totals.times.prepare_seconds = read_seconds_;
    return totals;
  }
  std::exception_ptr error() const { return error_; }

 private:
  // Moves what fits into the decoder's batch from the shared block into `admitted`, reading input
  // first when the block is empty (waiting for it only when the decoder has nothing to decode).
  // A decoder with work does not wait for another that is reading. False when this decoder is
  // done: empty, and nothing more will come.
  bool take(const BatchDecoder& decoder, std::vector<Pending>& admitted) {
    std::unique_lock lock(input_mutex_, std::defer_lock);
    if (decoder.empty()) {
      lock.lock();
    } else if (!lock.try_lock()) {
      return true;
    }
    if (block_.empty() && !input_ended_ && !failed_) read_block(decoder.empty());
    const std::size_t count =
        sentences_to_admit(batch_ - static_cast<std::size_t>(decoder.active_sentences()),
                           block_.size(), decoder.empty(), translator_.options().admission_group);
    admitted.insert(admitted.end(), std::make_move_iterator(block_.begin()),
                    std::make_move_iterator(block_.begin() + static_cast<long>(count)));
    block_.erase(block_.begin(), block_.begin() + static_cast<long>(count));
    return !(decoder.empty() && admitted.empty() && block_.empty() && (input_ended_ || failed_));
  }

  // Under input_mutex_: the lines available now (all that have arrived, up to a block of
  // segments; with `wait`, at least one or the end), their segments longest first.
  void read_block(bool wait) {
    Lap lap;
    try {
      for (auto line = input_.next(wait); line; line = input_.next(false)) {
        LineState state;
        state.newline = input_.last_line_terminated();
        state.layout = documents::segment_text(*line, options_.segmentation);
        std::vector<PreparedSource> segments = translator_.prepare_segments(
            state.layout, next_line_, options_.decoding, options_.spans, options_.glossary);
        for (std::size_t i = 0; i < segments.size(); ++i) {
          SentenceRequest request{
              .id = next_id_++,
              .source_ids = segments[i].ids,
              .options = options_.decoding,
              .constraints = segments[i].spans ? segments[i].spans->constraints : nullptr};
          block_.push_back({std::move(request), std::move(segments[i]), {next_line_, i}});
        }
        state.results.resize(segments.size());
        state.missing = segments.size();
        add_line(next_line_++, std::move(state));
        if (block_.size() >= batch_ * kBlockBatches) break;
      }
    } catch (...) {  // the lines before the bad one still decode and are written
      fail(std::current_exception());
    }
    const std::optional<long> total = input_.total();
    input_ended_ = total && static_cast<long>(next_line_) == *total;
    if (input_ended_) total_segments_ = static_cast<long>(next_id_);
    std::stable_sort(block_.begin(), block_.end(), [](const Pending& a, const Pending& b) {
      return a.request.source_ids.size() > b.request.source_ids.size();
    });
    lap.to(read_seconds_);
  }

  // A line read; one without segments (blank) is complete and written as soon as it is its turn.
  void add_line(std::uint64_t line, LineState state) {
    const std::lock_guard lock(output_mutex_);
    lines_.emplace(line, std::move(state));
    write_ready();
  }

  // Writes every line whose segments are all done and whose earlier lines have been written.
  void deliver(std::vector<std::pair<SegmentPlace, TranslationResult>>& finished) {
    const std::lock_guard lock(output_mutex_);
    for (auto& [place, result] : finished) {
      LineState& state = lines_.at(place.line);
      state.results[place.index] = std::move(result);
      --state.missing;
      ++segments_done_;
    }
    write_ready();
  }

  // Under output_mutex_.
  void write_ready() {
    for (auto it = lines_.find(next_to_write_); it != lines_.end() && it->second.missing == 0;
         it = lines_.find(++next_to_write_)) {
      const TranslationResult result =
          join_results(it->second.layout, std::move(it->second.results), options_.decoding.n_best);
      write_(result, it->second.newline);
      ++totals_.lines;
      totals_.sentences += result.segments;
      totals_.protected_spans += result.protected_spans;
      if (!result.hypotheses.empty()) {
        totals_.target_tokens += static_cast<long>(result.hypotheses[0].ids.size());
        totals_.spans_lost += result.hypotheses[0].spans_kept ? 0 : 1;
      }
      for (const GlossaryTermResult& term : result.glossary_terms) {
        ++totals_.glossary_terms;
        totals_.glossary_missed += term.kept ? 0 : 1;
      }
      lines_.erase(it);
    }
    const long total = total_segments_;
    progress_.update(segments_done_, total >= 0 ? std::optional<long>(total) : std::nullopt);
  }

  // The first failure is the one reported; no more input is read after it.
  void fail(std::exception_ptr error) {
    const std::lock_guard lock(error_mutex_);
    if (!error_) error_ = error;
    failed_ = true;
  }

  const Translator& translator_;
  const StreamOptions& options_;
  LineReader& input_;
  ProgressLine& progress_;
  const LineWriter& write_;
  const std::size_t batch_;

  std::mutex input_mutex_;
  std::vector<Pending> block_;   // read, waiting for a decoder's room, longest first
  std::uint64_t next_id_ = 0;    // segments read
  std::uint64_t next_line_ = 0;  // lines read
  bool input_ended_ = false;
  double read_seconds_ = 0;  // in read_block: reading (and waiting for) lines, preparing them
  std::atomic<long> total_segments_ = -1;  // once the input's end has been read (the reader is
                                           // not for other threads)
  std::atomic<bool> failed_ = false;

  std::mutex output_mutex_;
  std::map<std::uint64_t, LineState> lines_;  // read, not yet written
  std::uint64_t next_to_write_ = 0;
  long segments_done_ = 0;
  StreamTotals totals_;

  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace

StreamTotals translate_stream(const Translator& translator, const StreamOptions& options,
                              LineReader& input, ProgressLine& progress, const LineWriter& write) {
  translator.check_options(options.decoding);
  RPT_CHECK(options.decoders >= 1, InvalidArgument, "decoders must be at least 1, got ",
            options.decoders);
  Stream stream(translator, options, input, progress, write);
  {
    std::vector<std::jthread> others;
    for (int i = 1; i < options.decoders; ++i) others.emplace_back([&stream] { stream.decode(); });
    stream.decode();
  }  // joined
  if (stream.error()) std::rethrow_exception(stream.error());
  return stream.totals();
}

}  // namespace rpt::tools
