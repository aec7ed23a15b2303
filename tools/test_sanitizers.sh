#!/usr/bin/env bash
# Builds rpt once with AddressSanitizer + UndefinedBehaviorSanitizer (CPU only: CUDA off, no
# benchmarks) and runs every test of that build: the CPU engine, the server on loopback and the
# fuzz corpora. Any undefined behaviour aborts its test (-fno-sanitize-recover). Leak checking is
# off: gRPC and protobuf keep process-lifetime allocations by design.
#   bash tools/test_sanitizers.sh            # build dir: build-asan (RPT_ASAN_BUILD_DIR)
# About 13 minutes of building on 2 cores, one of tests (2026-11-24: 169 tests, all clean).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
build_dir=${RPT_ASAN_BUILD_DIR:-build-asan}
jobs=${RPT_JOBS:-$(nproc)}
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRPT_WITH_CUDA=OFF \
  -DRPT_BUILD_TESTS=ON -DRPT_BUILD_BENCH=OFF "-DCMAKE_CXX_FLAGS=$sanitize" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" \
  "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined"
cmake --build "$build_dir" -j "$jobs"
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
