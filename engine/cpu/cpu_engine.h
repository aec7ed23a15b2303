// The CPU engine: encoder and decoder steps in float32 (or int8 linear layers) host memory over
// the sub-layers of engine/cpu/transformer_ops.h, the decoding state charged to the engine's
// memory budget. Engine::create makes it for Device::kCpu.
#pragma once

#include <memory>

#include "engine/engine.h"
#include "engine/model.h"

namespace rpt {

std::shared_ptr<const Engine> make_cpu_engine(std::shared_ptr<const Model> model,
                                              const ComputeOptions& options);

}  // namespace rpt
