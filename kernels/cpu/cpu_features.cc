#include "kernels/cpu/cpu_features.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace rpt::kernels {
namespace {

#if defined(__x86_64__)
struct Registers {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Registers cpuid(unsigned leaf, unsigned subleaf) {
  Registers r;
  if (__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx) == 0) return Registers{};
  return r;
}

bool bit(unsigned value, int index) { return ((value >> index) & 1u) != 0; }

// XCR0: which register states the OS saves on a context switch.
std::uint64_t saved_state_mask() {
  unsigned low = 0, high = 0;
  __asm__("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (static_cast<std::uint64_t>(high) << 32) | low;
}

CpuFeatures read_features() {
  CpuFeatures f;
  const Registers vendor = cpuid(0, 0);
  char name[13] = {};
  std::memcpy(name, &vendor.ebx, 4);
  std::memcpy(name + 4, &vendor.edx, 4);
  std::memcpy(name + 8, &vendor.ecx, 4);
  f.vendor = name;
  const Registers basic = cpuid(1, 0);
  if (!bit(basic.ecx, 27)) return f;  // no OSXSAVE: no AVX state, nothing below is usable
  const std::uint64_t saved = saved_state_mask();
  const bool ymm = (saved & 0x6) == 0x6;            // SSE and AVX state
  const bool zmm = ymm && (saved & 0xe0) == 0xe0;   // opmask, upper ZMM halves, ZMM16-31
  const bool tiles = (saved & 0x60000) == 0x60000;  // AMX tile configuration and data
  const Registers extended = cpuid(7, 0);
  const Registers extended1 = cpuid(7, 1);
  f.avx = ymm && bit(basic.ecx, 28);
  f.fma = f.avx && bit(basic.ecx, 12);
  f.f16c = f.avx && bit(basic.ecx, 29);
  f.avx2 = f.avx && bit(extended.ebx, 5);
  f.avx_vnni = f.avx2 && bit(extended1.eax, 4);
  f.avx512f = zmm && bit(extended.ebx, 16);
  f.avx512bw = f.avx512f && bit(extended.ebx, 30);
  f.avx512vl = f.avx512f && bit(extended.ebx, 31);
  f.avx512_vnni = f.avx512f && bit(extended.ecx, 11);
  f.avx512_bf16 = f.avx512f && bit(extended1.eax, 5);
  f.amx_int8 = tiles && bit(extended.edx, 24) && bit(extended.edx, 25);
  return f;
}
#else
CpuFeatures read_features() { return CpuFeatures{}; }
#endif

}  // namespace

std::string CpuFeatures::extensions() const {
  std::string out;
  const auto add = [&](bool present, const char* name) {
    if (!present) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(avx, "avx");
  add(avx2, "avx2");
  add(fma, "fma");
  add(f16c, "f16c");
  add(avx_vnni, "avx_vnni");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512vl, "avx512vl");
  add(avx512_vnni, "avx512_vnni");
  add(avx512_bf16, "avx512_bf16");
  add(amx_int8, "amx_int8");
  return out.empty() ? "baseline" : out;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = read_features();
  return features;
}

}  // namespace rpt::kernels
