#!/usr/bin/env bash
# Runs a test command under one forced CPU configuration, so that this machine exercises the
# kernel paths other CPUs take (ctest label cpu-matrix, tests/CMakeLists.txt):
#   bash tests/cpu_config.sh CONFIG COMMAND [ARGS...]
# Exits 77 (skipped) when this CPU cannot execute CONFIG.
#   blis-arch-generic   BLIS_ARCH_TYPE=25: BLIS's own guess on CPUs it does not know (Zen 4, 5);
#                       rpt must not follow it (it crashed with SIGFPE)
#   blis-arch-skx       BLIS_ARCH_TYPE=0: BLIS's guess on most AVX-512 Xeons (no sup kernels)
#   sup-haswell, sup-zen3, sup-zen2, sup-zen
#                       rpt's sup path on each AVX2 sub-configuration (RPT_BLIS_CONFIG)
#   packed-sandybridge, packed-generic
#                       the packed path, which CPUs without AVX2 or FMA take
#   float32-onednn      float32 linear layers on oneDNN's packed sgemm (RPT_FLOAT32_GEMM=onednn),
#                       the default where oneDNN dispatches to AVX-512
#   onednn-avx2, onednn-sse41
#                       oneDNN held to AVX2 and to SSE4.1, the oldest it packs on: int8 there,
#                       float32 linear layers back on BLIS
#   int8-matmul         int8 through oneDNN's matmul primitive (RPT_INT8_PACKED=0), the fallback
#                       where the packed GEMM is missing
#   int8-7bit           7-bit activations, what CPUs without VNNI use, on a CPU with it too
#   oldest              packed generic BLIS and SSE4.1 oneDNN together
set -euo pipefail
config=$1
shift
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { [[ " $flags " == *" $1 "* ]]; }
needs() {
  for flag in "$@"; do
    if ! has "$flag"; then
      echo "cpu_config $config: this CPU lacks $flag: skipped"
      exit 77
    fi
  done
}
unset RPT_BLIS_CONFIG RPT_FLOAT32_GEMM RPT_INT8_PACKED RPT_INT8_ACTIVATION_BITS ONEDNN_MAX_CPU_ISA \
  BLIS_ARCH_TYPE
case "$config" in
  blis-arch-generic) export BLIS_ARCH_TYPE=25 ;;
  blis-arch-skx) export BLIS_ARCH_TYPE=0 ;;
  sup-haswell | sup-zen3 | sup-zen2 | sup-zen)
    needs avx2 fma
    export RPT_BLIS_CONFIG=${config#sup-} RPT_FLOAT32_GEMM=sup ;;
  packed-sandybridge)
    needs avx
    export RPT_BLIS_CONFIG=sandybridge RPT_FLOAT32_GEMM=packed ;;
  packed-generic) export RPT_BLIS_CONFIG=generic RPT_FLOAT32_GEMM=packed ;;
  float32-onednn)
    needs avx512f avx512bw avx512vl avx512dq
    export RPT_FLOAT32_GEMM=onednn ;;
  onednn-avx2)
    needs avx2
    export ONEDNN_MAX_CPU_ISA=AVX2 ;;
  onednn-sse41)
    needs sse4_1
    export ONEDNN_MAX_CPU_ISA=SSE41 ;;
  int8-matmul) export RPT_INT8_PACKED=0 ;;
  int8-7bit)
    needs avx512_vnni  # elsewhere 7 bits is the default
    export RPT_INT8_ACTIVATION_BITS=7 ;;
  oldest)
    needs sse4_1
    export RPT_BLIS_CONFIG=generic RPT_FLOAT32_GEMM=packed ONEDNN_MAX_CPU_ISA=SSE41 ;;
  *)
    echo "cpu_config: unknown configuration $config" >&2
    exit 2 ;;
esac
echo "cpu_config $config:" $(env | grep -E '^(RPT_BLIS_CONFIG|RPT_FLOAT32_GEMM|RPT_INT8_PACKED|RPT_INT8_ACTIVATION_BITS|ONEDNN_MAX_CPU_ISA|BLIS_ARCH_TYPE)=' | sort)
exec "$@"
