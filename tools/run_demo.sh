#!/usr/bin/env bash
# The main job on a fresh machine: installs the Debian dependencies, builds rpt (the CUDA path too
# when nvcc is present) and serves every bundled model in models/ over gRPC on port 50051, with
# Prometheus metrics on port 9464. CPU unless RPT_DEVICE=cuda. On the CPU the models compute in
# int8 (BLEU within 0.2 of float32 on both demo test splits, docs/MODELS.md); RPT_COMPUTE_TYPE
# chooses otherwise (float32; on a GPU float32 by default, float16 or bfloat16). Stop with Ctrl-C
# (graceful drain). It listens on 127.0.0.1 (RPT_LISTEN=0.0.0.0:50051 to serve other machines);
# arguments are passed on to rpt-server:
#   bash tools/run_demo.sh --glossary ui=glossary.tsv --api-keys keys.yaml
set -euo pipefail
cd "$(dirname "$0")/.."

RPT_SETUP_TEST_TOOLS=0 bash tools/setup.sh  # the demo needs no test tools
build_dir=${RPT_BUILD_DIR:-build}
# A new build leaves the tests out; an existing one keeps its own choice.
tests_option=()
[ -f "$build_dir/CMakeCache.txt" ] || tests_option=(-DRPT_BUILD_TESTS=OFF)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${tests_option[@]}"
cmake --build "$build_dir" --target rpt-server rpt-client rpt-translate -j "$(nproc)"

models=()
for directory in models/*/; do
  [ -f "$directory/config.json" ] && models+=(--model "$(basename "$directory")=${directory%/}")
done
if [ ${#models[@]} -eq 0 ]; then
  echo "run_demo: no model in models/; serving the small test fixture instead" >&2
  models=(--model shaw-k4=tests/fixtures/shaw_k4/model)
fi

default_compute_type=int8
[ "${RPT_DEVICE:-cpu}" = cpu ] || default_compute_type=float32
echo "run_demo: serving ${models[*]} on ${RPT_LISTEN:-127.0.0.1:50051}, metrics on :${RPT_METRICS_PORT:-9464}/metrics"
exec "$build_dir/server/rpt-server" "${models[@]}" \
  --listen "${RPT_LISTEN:-127.0.0.1:50051}" --metrics-port "${RPT_METRICS_PORT:-9464}" \
  --device "${RPT_DEVICE:-cpu}" --compute-type "${RPT_COMPUTE_TYPE:-$default_compute_type}" \
  "$@"
