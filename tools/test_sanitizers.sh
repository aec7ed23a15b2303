#!/usr/bin/env bash
# The sanitized half of the test suite (tools/test.sh runs it after the ordinary build, CI always):
# ONE clang build of the CPU tree (CUDA off, no benchmarks) with AddressSanitizer,
# UndefinedBehaviorSanitizer (any undefined behaviour aborts its test) and libFuzzer's coverage
# instrumentation (-DRPT_BUILD_FUZZERS=ON), then every test of it: the CPU engine, the server on
# loopback, and each libFuzzer target of tests/fuzz/ for RPT_FUZZ_RUNS iterations (or RPT_FUZZ_SECONDS) from its
# committed corpus (which replays the corpus first). One build does both jobs, so CI pays for one
# sanitized tree: about 12 minutes of building and 2 of tests on 2 shared cores (2026-11-25,
# 168 tests), about what the g++ ASan tree alone took to build.
# -O1 with line tables only: the sanitizers' usual setting, and the cheapest to compile that
# still gives stack traces with file:line. Leak checking is off: gRPC and protobuf keep
# process-lifetime allocations by design.
#   bash tools/test_sanitizers.sh            # build dir: build-asan (RPT_ASAN_BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
build_dir=${RPT_ASAN_BUILD_DIR:-build-asan}
jobs=${RPT_JOBS:-$(nproc)}
export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1
start=$SECONDS
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DRPT_BUILD_FUZZERS=ON \
  -DRPT_WITH_CUDA=OFF -DRPT_BUILD_TESTS=ON -DRPT_BUILD_BENCH=OFF
cmake --build "$build_dir" -j "$jobs"
built=$SECONDS
# The deployment files and alert rules hold no C++: the ordinary run has checked them, and the
# forced CPU configurations (label cpu-matrix) run the same code again under other kernels. The
# Python tools' tests (python_tools) spend their time in Python and PyTorch; the engine paths
# they reach through rpt-translate run here in the C++ suites (reference_model_test: T5 too).
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" -E '^(deploy_files|prometheus_rules|python_tools)$' -LE cpu-matrix
echo "test_sanitizers: build $((built - start)) s, tests $((SECONDS - built)) s"
