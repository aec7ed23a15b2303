// The flags rpt-translate and rpt-server share, declared once (CLI11) so that both binaries
// spell, check, parse and document them alike; each binary adds its own besides. Strings become
// enums here, with the parsers that sit beside the enums.
#pragma once

#include <cstddef>
#include <string>

#include "documents/segmenter.h"
#include "engine/beam_search.h"
#include "engine/device.h"
#include "engine/engine.h"
#include "engine/glossary.h"
#include "kernels/precision.h"

// CLI11 is heavy to parse: declared here, included where the flags are added.
namespace CLI {
class App;
}  // namespace CLI

namespace rpt::flags {

// Where and how precisely models compute: --device, --compute-type, --device-index,
// --device-memory-limit, --gpu-gemm, --gpu-graphs, --gpu-attention, --gpu-profile, --threads.
struct ComputeFlags {
  Device device = Device::kCpu;
  kernels::Precision precision = kernels::Precision::kFloat32;
  int device_index = 0;
  double memory_limit_mib = 0;  // the binary's default: see add_compute_flags
  bool batch_invariant = true;  // --gpu-gemm batch-invariant (else fastest)
  bool gpu_graphs = true;       // --gpu-graphs on (else off)
  bool gpu_profile = false;     // --gpu-profile
  kernels::CudaAttentionKernel gpu_attention = kernels::CudaAttentionKernel::kKeySplit;
  int threads = 0;  // CPU threads of each decoder's ops; 0: all

  // The engine's options for a model computing in `precision` (the server's
  // --model-compute-type may differ from --compute-type) within `memory_limit_bytes`.
  ComputeOptions compute_options(kernels::Precision precision,
                                 std::size_t memory_limit_bytes) const;
};

// `memory_limit_help` says what --device-memory-limit's default is for this binary.
void add_compute_flags(CLI::App& app, ComputeFlags& flags, const std::string& memory_limit_help);

// --beam-size, --n-best, --max-length, --min-length, --length-penalty, --length-penalty-type
// (for the server: the defaults of calls that do not say).
void add_decoding_flags(CLI::App& app, DecodingOptions& decoding);

// How texts are cut into segments and glossary terms enforced.
struct TextFlags {
  documents::SplitSentences split_sentences = documents::SplitSentences::kAuto;
  GlossaryMethod glossary_method = GlossaryMethod::kMask;
};

// --split-sentences, --glossary-method.
void add_text_flags(CLI::App& app, TextFlags& flags);

// --max-input-length (source tokens per segment; a longer one is cut) and --admission-group
// (TranslatorOptions::admission_group), where each binary keeps them.
void add_batching_flags(CLI::App& app, int& max_input_length, int& admission_group);

}  // namespace rpt::flags
