#include "kernels/cpu/blis_sgemm_cpu.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/int8_products_cpu.h"
#include "kernels/cpu_kernels.h"

namespace rpt::kernels {

std::string CpuKernels::summary() const {
  return "cpu: " + isa + "; float32: " + float32 + "; int8: " + int8;
}

const CpuKernels& cpu_kernels() {
  static const CpuKernels kernels{cpu_features().extensions(), blis_sgemm_description(),
                                  int8_products_description()};
  return kernels;
}

}  // namespace rpt::kernels
