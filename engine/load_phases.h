// Where loading a model spends its time, phase by phase (rpt-translate --verbose's `load:` line,
// bench/load_time.py): wall seconds, each phase summed over the tensors it touched.
//
// Thread safety: a PhaseTimer adds to its phase from the thread that made it; one loader fills
// one LoadPhases.
#pragma once

#include <chrono>

namespace rpt {

struct LoadPhases {
  double map = 0.0;       // opening and mapping the weights file, parsing its header
  double checksum = 0.0;  // CRC-32 of the tensors' bytes
  double convert = 0.0;   // stored dtype (float16, bfloat16, int8 with scales) to float32
  double quantize = 0.0;  // float32 rows to int8 (ModelLoadOptions::int8)
  double pack = 0.0;      // GEMM layouts: oneDNN's packed float32 and int8 blocks
  double total = 0.0;     // Model::load end to end: the above, vocabularies, tokenizers, the rest
};

// Adds the wall time of its own lifetime to `phase`.
class PhaseTimer {
 public:
  explicit PhaseTimer(double& phase) : phase_(phase), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    phase_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double& phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace rpt
