#!/usr/bin/env bash
# Sets up a fresh machine (Debian packages), builds everything with the tests, and runs all of
# them through ctest: the GoogleTest suites (GPU tests skip visibly without a GPU), the shell
# end-to-end tests and the Python tool tests. Then the sanitized run (tools/test_sanitizers.sh):
# a clang ASan + UBSan build whose tests and fixed-iteration fuzz runs must pass too. Last,
# deploy/image/test.sh: the container image built and run as deploy/kubernetes/rpt.yaml runs it.
# RPT_SANITIZERS=0 and RPT_IMAGE_TEST=0 skip those locally (CI, .ci/run, always runs both).
# Exit status is non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
build_dir=${RPT_BUILD_DIR:-build}
jobs=${RPT_JOBS:-$(nproc)}
start=$SECONDS
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRPT_BUILD_TESTS=ON
cmake --build "$build_dir" -j "$jobs"
built=$SECONDS
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
echo "test: build $((built - start)) s, tests $((SECONDS - built)) s"
if [ "${RPT_SANITIZERS:-1}" != 0 ]; then
  bash tools/test_sanitizers.sh
fi
# The container image: the Dockerfile built and run as the Deployment runs it (rootful podman).
if [ "${RPT_IMAGE_TEST:-1}" != 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  # The compiler cache the build above filled (this user's, not root's under sudo).
  "${sudo_cmd[@]}" env RPT_BUILD_DIR="$build_dir" \
    RPT_CCACHE_DIR="$(ccache -k cache_dir 2>/dev/null || true)" bash deploy/image/test.sh
fi
