// The kernels chosen for this CPU (kernels/cpu_kernels.h): the CPU's features as the kernel
// reports them, and the path each forced configuration asks for (tests/cpu_config.sh runs this
// suite under each one).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu_kernels.h"

namespace rpt::kernels {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::set<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> out;
  for (std::string word; in >> word;) out.insert(word);
  return out;
}

// The kernel's flags of the first CPU in /proc/cpuinfo (empty where there is none).
std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) == 0) return words(line.substr(line.find(':') + 1));
  }
  return {};
}

TEST(CpuFeatures, AgreeWithTheKernelsFlags) {
  const std::set<std::string> flags = proc_cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags";
  const std::set<std::string> ours = words(cpu_features().extensions());
  for (const char* extension : {"avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw",
                                "avx512vl", "avx512_vnni", "avx512_bf16", "amx_int8"}) {
    EXPECT_EQ(ours.count(extension), flags.count(extension)) << extension;
  }
}

TEST(CpuKernels, NameWhatThisConfigurationAsksFor) {
  const CpuKernels& kernels = cpu_kernels();
  std::printf("%s\n", kernels.summary().c_str());
  EXPECT_EQ(kernels.isa, cpu_features().extensions());
  const CpuFeatures& cpu = cpu_features();
  const std::string forced_config = environment("RPT_BLIS_CONFIG");
  const std::string forced_path = environment("RPT_FLOAT32_GEMM");
  const std::string expected_path = !forced_path.empty() && forced_path != "onednn" ? forced_path
                                    : forced_config == "sandybridge" || forced_config == "generic"
                                        ? "packed"
                                    : forced_config.empty() && !(cpu.avx2 && cpu.fma) ? "packed"
                                                                                      : "sup";
  EXPECT_NE(kernels.float32.find(" " + expected_path + " "), std::string::npos) << kernels.float32;
  if (!forced_config.empty()) {
    EXPECT_EQ(kernels.float32.substr(kernels.float32.rfind(' ') + 1), forced_config);
  } else if (cpu.avx2 && cpu.fma) {
    // BLIS's own guess (BLIS_ARCH_TYPE included) is never what decides.
    EXPECT_EQ(kernels.float32.substr(kernels.float32.rfind(' ') + 1),
              cpu.vendor == "AuthenticAMD" ? "zen3" : "haswell");
  }
  // Linear layers: oneDNN's packed sgemm where it dispatches to AVX-512 and nothing forces BLIS.
  const bool avx512_onednn = cpu.avx512f && cpu.avx512bw && cpu.avx512vl &&
                             (environment("ONEDNN_MAX_CPU_ISA").empty() ||
                              environment("ONEDNN_MAX_CPU_ISA").rfind("AVX512", 0) == 0);
  if ((forced_path.empty() || forced_path == "onednn") && avx512_onednn) {
    EXPECT_EQ(kernels.float32_linear.rfind("onednn-", 0), 0u) << kernels.float32_linear;
    EXPECT_NE(kernels.float32_linear.find(" packed avx512_core"), std::string::npos)
        << kernels.float32_linear;
  } else {
    EXPECT_EQ(kernels.float32_linear, kernels.float32);
  }
  EXPECT_NE(kernels.int8.find(environment("RPT_INT8_PACKED") == "0" ? " matmul " : " packed "),
            std::string::npos)
      << kernels.int8;
  // "onednn-X packed ISA, N-bit activations": held to SSE4.1, no VNNI, so 7 bits.
  if (environment("ONEDNN_MAX_CPU_ISA") == "SSE41") {
    EXPECT_NE(kernels.int8.find(" sse41, 7-bit activations"), std::string::npos) << kernels.int8;
  }
  const std::string bits = environment("RPT_INT8_ACTIVATION_BITS") == "7" ? "7-bit" : "-bit";
  EXPECT_NE(kernels.int8.find(bits + " activations"), std::string::npos) << kernels.int8;
}

}  // namespace
}  // namespace rpt::kernels
