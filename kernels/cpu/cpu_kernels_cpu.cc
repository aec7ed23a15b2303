#include "kernels/cpu/blis_sgemm_cpu.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/int8_products_cpu.h"
#include "kernels/cpu_kernels.h"
#include "kernels/packed_sgemm.h"

namespace rpt::kernels {

std::string CpuKernels::summary() const {
  return "cpu: " + isa + "; float32: " + float32 + "; float32 linear: " + float32_linear +
         "; int8: " + int8;
}

const CpuKernels& cpu_kernels() {
  static const CpuKernels kernels{cpu_features().extensions(), blis_sgemm_description(),
                                  float32_linear_description(), int8_products_description()};
  return kernels;
}

}  // namespace rpt::kernels
