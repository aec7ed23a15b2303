#!/usr/bin/env bash
# Everything a GPU session checks, in one command (run on the GPU machine, repository root):
#   1. every CUDA op against its CPU definition (cuda_ops_test),
#   2. the CUDA engine end to end against the CPU engine on the OpenNMT-py fixtures, batch
#      invariance, the memory limit, 1,024-token inputs (cuda_engine_test),
#   3. the cost of relative positions on the GPU (relative_cost_bench, float32 and float16),
#   4. the demo models on their test split: GPU float32 / float16 / bfloat16 translations
#      against the CPU's (token-identical share; the bar is 100% for float32, 99% for float16),
#      with throughput and peak device memory of each run (batch 32 and batch 1, beam 4), and
#      float16 with cuBLAS's fastest GEMMs instead of the batch-invariant ones.
#
#   bash bench/gpu_checks.sh PACK_DIR [OUT_DIR]     (PACK_DIR from tools/device_pack.sh)
set -uo pipefail
PACK="${1:?usage: gpu_checks.sh PACK_DIR [OUT_DIR]}"
OUT="${2:-${OUT:-/tmp/rpt-gpu}}"
mkdir -p "$OUT"
# The pack's Debian libraries, then CUDA 13's runtime and cuBLAS wherever the machine has them
# (the toolkit, or the wheels PyTorch ships).
cuda_dirs=$(find /usr/local/cuda*/lib* /usr/lib/x86_64-linux-gnu /opt -name 'libcublas.so.13*' \
  -printf '%h\n' 2>/dev/null | sort -u | tr '\n' ':')
export LD_LIBRARY_PATH="$PACK/lib:${cuda_dirs}${LD_LIBRARY_PATH:-}"
missing=$(ldd "$PACK/bin/cuda_ops_test" | grep "not found" || true)
[ -z "$missing" ] || { echo "gpu_checks: unresolved libraries: $missing" >&2; exit 1; }
export RPT_SOURCE_DIR="$PWD"  # the tests' fixtures, wherever the binaries were built
BIN="$PACK/bin"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"

status=0
for suite in cuda_ops_test cuda_engine_test; do
  "$BIN/$suite" --gtest_brief=1 > "$OUT/$suite.log" 2>&1 || status=1
  echo "$suite: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/$suite.log" | tr '\n' ' ')"
done
grep -E "token-identical|peak device memory" "$OUT/cuda_engine_test.log"

"$BIN/relative_cost_bench" --benchmark_filter='device:[12]' --benchmark_min_time=1 \
  > "$OUT/relative_cost_gpu.txt" 2>&1 || status=1
grep -E "^BM_" "$OUT/relative_cost_gpu.txt"

threads=$(nproc)
for model in models/*/; do
  pair=$(basename "$model")
  tsv="$PACK/data/ui.$pair.test.tsv"
  [ -f "$tsv" ] || continue
  cut -f1 "$tsv" > "$OUT/$pair.src"
  "$BIN/rpt-translate" --model "$model" --threads "$threads" --batch-size 32 --verbose \
    < "$OUT/$pair.src" > "$OUT/$pair.cpu" 2> "$OUT/$pair.cpu.log" || status=1
  echo "$pair cpu: $(tail -1 "$OUT/$pair.cpu.log")"
  for precision in float32 float16 bfloat16; do
    for batch in 32 1; do
      run="$pair.$precision.b$batch"
      "$BIN/rpt-translate" --model "$model" --device cuda --compute-type "$precision" \
        --batch-size "$batch" --verbose < "$OUT/$pair.src" > "$OUT/$run" 2> "$OUT/$run.log" \
        || { status=1; echo "$run failed: $(tail -2 "$OUT/$run.log")"; continue; }
      same=$(paste -d '\t' "$OUT/$pair.cpu" "$OUT/$run" | awk -F'\t' '$1 == $2' | wc -l)
      total=$(wc -l < "$OUT/$pair.cpu")
      echo "$run: $same/$total identical to the CPU; $(grep -h 'sentences' "$OUT/$run.log" | sed 's/^rpt-translate: //'); $(grep -h 'peak' "$OUT/$run.log" | sed 's/^rpt-translate: //')"
      # The bar: float32 every sentence, the half precisions 99%.
      bar=$total; [ "$precision" = float32 ] || bar=$(( (99 * total + 99) / 100 ))
      [ "$same" -ge "$bar" ] || { status=1; echo "$run: FAIL, below the bar of $bar/$total"; }
    done
  done
  # The cost of batch-invariant GEMMs: cuBLAS's own choice per call, float16, both batches.
  for batch in 32 1; do
    run="$pair.float16.b$batch.fastest"
    "$BIN/rpt-translate" --model "$model" --device cuda --compute-type float16 --gpu-gemm fastest \
      --batch-size "$batch" --verbose < "$OUT/$pair.src" > "$OUT/$run" 2> "$OUT/$run.log" \
      || { status=1; echo "$run failed: $(tail -2 "$OUT/$run.log")"; continue; }
    echo "$run: $(grep -h 'sentences' "$OUT/$run.log" | sed 's/^rpt-translate: //')"
  done
done
exit $status
