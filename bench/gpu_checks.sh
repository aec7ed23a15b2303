#!/usr/bin/env bash
# Everything a GPU session checks, in phases that each fit the device tool's 10-minute command
# with margin (run on the GPU machine, repository root):
#   machine    nvidia-smi, the host CPU (lscpu), the CUDA libraries found
#   host_cpu   the host CPU's engine tests (kernels, golden parity, translator, int8) under its
#              own kernels and every forced configuration it can execute (tests/cpu_config.sh),
#              and rpt float32 vs int8 speed there: the CPU paths an AVX-512 / VNNI / AMX host
#              takes. Runs in the background on the upper half of the cores while the GPU
#              phases run on the lower half.
#   tests      every CUDA op against its float64 or hand-written definition (cuda_ops_test: the
#              op tests of tests/kernels on the GPU as Cuda/*, and the CUDA graphs) and the CUDA
#              engine end to end against the CPU engine (cuda_engine_test), with
#              RPT_REQUIRE_GPU=1: a machine whose driver or libraries do not resolve fails
#              instead of skipping
#   float32    both bundled models' test splits: the CPU's translations, then GPU float32 at
#              batch 32 (all lines) and batch 1 (the first $RPT_BATCH1_LINES): identical to the
#              CPU's, every line (the bar)
#   half       float16 (bar: 99% token-identical) and bfloat16 (measured; no bar until one is
#              set from measurements), batch 32 and 1, and float16 at batch 32 with cuBLAS's
#              fastest GEMMs instead of the batch-invariant ones
#   graphs     the decoder step as CUDA graphs (the default) against every kernel launched as it
#              comes (--gpu-graphs off): the same translations, line for line, and the speed of
#              each, alternating, float16 and float32 at batch 32 and float16 at batch 1
#   admission  joiners admitted in groups of 1, 4, 8, 16 (--admission-group): identical output,
#              speed and encoder calls of each, alternating (float16, float32, batch 32)
#   sanitizer  compute-sanitizer memcheck, racecheck and synccheck over the CUDA ops and one
#              small end-to-end engine test
#   int8_bits  the host CPU's int8 activation bits: which oneDNN ISAs sum exactly, BLEU and speed
#              of 7 vs 8 bits (no GPU involved; not in `all`)
#   memory     the process's device memory (nvidia-smi) beside the engine's counted peak
#   server     rpt-server on the GPU: concurrent JSON calls against rpt-translate's output, the
#              metrics, the drain (bench/gpu_server_check.py; rpt-server packed with
#              RPT_PACK_EXTRA=server/rpt-server)
#   bench      relative_cost_bench on the GPU (float32, float16)
#   peer       rpt against CTranslate2 on the same GPU, same input, same call
#              (bench/compare_ctranslate2.py, each engine in its best layout, alternating): en-de
#              float16 at batch 32 and 1, float32 at batch 32, 1,024-token inputs; the wheel
#              packed with RPT_PACK_PEER=1, its cuBLAS 12 served by cuBLAS 13
#              (tools/cublas12_link.py). Not in `all`: it needs its own call (carry limit).
#              At most RPT_PEER_BUDGET (480) seconds; the JSONs (figures and outputs) are in
#              logs.tar.xz under peer/.
#   synthetic  rpt against CTranslate2 on the same GPU at base, big and ~1 B shapes, random
#              weights written on the machine (bench/synthetic_shapes.py), float16, batch 1, 32
#              and 128 (RPT_SYNTHETIC_*): tokens/s, peak device memory, rpt's time split, rpt once
#              per attention kernel (RPT_SYNTHETIC_ATTENTION, default key-split,lane-groups),
#              RPT_SYNTHETIC_INTER=1,2 for each engine's better of one and two decoders/replicas;
#              needs the peer pack like `peer`, and its budget. Not in `all`.
#   attention_ncu  Nsight Compute on the fused attention kernel mid-decode at a synthetic shape
#              (RPT_NCU_SHAPE, default 1b; float16, batch 128, beam 4, 64 tokens, steps launched
#              eagerly): duration, throughput, occupancy and warp stalls of four consecutive
#              launches (a decoder layer's self- then cross-attention, twice), for each kernel of
#              RPT_NCU_ATTENTION (default both: key-split lane-groups); the reports come back as
#              attention_ncu.txt. Not in `all`.
#   cpu_cores  rpt against CTranslate2 on the host CPU at 1, 2 and all cores (RPT_CPU_CORES),
#              float32 and int8, batch 32, each engine's best layout; alone (every core). Needs
#              the peer pack. Not in `all`.
#   peer_cpu   the same comparison on the host CPU (float32, int8; batch 32 and 1), in the
#              background on the upper half of the cores like host_cpu
# Throughput and peak device memory of every translation run are in the summary.
#
#   bash bench/gpu_checks.sh PACK_DIR PHASE... | all     (PACK_DIR from tools/device_pack.sh)
#
# Writes OUT (default /tmp/rpt-gpu): summary.txt (every phase's result lines) and logs.tar.xz
# (every log and translation), refreshed after each phase, so a run stopped at its time limit
# still returns what it did; the device tool brings back at most 8 files. Exit status: 0 when
# every phase run passed.
set -uo pipefail
PACK="${1:?usage: gpu_checks.sh PACK_DIR PHASE... | all}"
shift
PHASES=("$@")
[ "${#PHASES[@]}" -gt 0 ] || { echo "usage: gpu_checks.sh PACK_DIR PHASE... | all" >&2; exit 2; }
[ "${PHASES[0]}" = all ] && PHASES=(machine host_cpu tests float32 half memory server bench sanitizer)
OUT="${OUT:-/tmp/rpt-gpu}"
LOGS="${RPT_CHECKS_LOGS:-/tmp/rpt-gpu-logs}"  # outside OUT: only summary and archive come back
mkdir -p "$LOGS" "$OUT"
SUMMARY="$OUT/summary.txt"
BATCH1_LINES="${RPT_BATCH1_LINES:-200}"
# cpu: a dry run of the translation phases (float32 only) on a machine without a GPU.
DEVICE="${RPT_CHECKS_DEVICE:-cuda}"

# The pack's Debian libraries, then CUDA 13's runtime and cuBLAS wherever the machine has them
# (the toolkit, or the wheels PyTorch ships).
cuda_dirs=$(find /usr/local/cuda*/lib* /usr/lib/x86_64-linux-gnu /opt -name 'libcublas.so.13*' \
  -printf '%h\n' 2>/dev/null | sort -u | tr '\n' ':')
export LD_LIBRARY_PATH="$PACK/lib:${cuda_dirs}${LD_LIBRARY_PATH:-}"
export RPT_SOURCE_DIR="$PWD"  # the tests' fixtures, wherever the binaries were built
export RPT_REQUIRE_GPU=1
BIN="$PACK/bin"
CORES=$(nproc)
HALF=$(( CORES > 1 ? CORES / 2 : 1 ))
# GPU phases on cores [0, HALF), the host CPU phase on [HALF, CORES), where taskset exists:
# command prefixes, e.g. timeout 60 "${GPU_CPUS[@]}" BINARY.
GPU_CPUS=() HOST_CPUS=()
if command -v taskset > /dev/null && [ "$CORES" -gt 1 ]; then
  GPU_CPUS=(taskset -c "0-$((HALF - 1))")
  HOST_CPUS=(taskset -c "$HALF-$((CORES - 1))")
fi
say() { echo "$*" | tee -a "$SUMMARY"; }
save_logs() {
  tar -cJf "$OUT/logs.tar.xz.part" -C "$(dirname "$LOGS")" "$(basename "$LOGS")" 2> /dev/null
  mv "$OUT/logs.tar.xz.part" "$OUT/logs.tar.xz"
}
status=0
fail() { status=1; say "FAIL: $*"; }

# Models: the tree's, and those the pack carries (tools/device_slim.sh).
MODELS=()
for model in models/*/ "$PACK"/models/*/; do
  [ -f "$model/model.bin" ] && MODELS+=("${model%/}")
done

missing=$(ldd "$BIN/cuda_ops_test" "$PACK/lib/librpt_cuda.so" | grep "not found" | sort -u || true)
[ -z "$missing" ] || { fail "unresolved libraries: $missing"; exit 1; }

phase_machine() {
  say "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"
  say "host: $(lscpu | sed -n 's/^Model name: *//p'), $CORES cores"
  say "host flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | \
    grep -E '^(avx|avx2|fma|f16c|avx512[a-z_0-9]*|avx_vnni|amx[a-z_0-9]*)$' | tr '\n' ' ')"
  say "cuda libraries: ${cuda_dirs:-none found}"
  say "cuBLAS 12 (CTranslate2 4.x's): $(find /usr /opt -name 'libcublas.so.12*' 2>/dev/null | head -1)"
  lscpu > "$LOGS/lscpu.txt"
  nvidia-smi > "$LOGS/nvidia-smi.txt" 2>&1
}

# One gtest binary, its result line in the summary.
run_suite() {  # name timeout binary args...
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" --gtest_brief=1 > "$LOGS/$name.log" 2>&1 || fail "$name (exit $?)"
  say "$name: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$LOGS/$name.log" | \
    sed 's/, where GetParam.*//' | tr '\n' ' ')"
}

phase_host_cpu() {
  local configs=(default blis-arch-generic blis-arch-skx sup-haswell sup-zen3 packed-generic
                 onednn-avx2 int8-matmul int8-7bit oldest)
  local suites=("kernels_test --gtest_filter=CpuFeatures.*:CpuKernels.*:*Gemm*:*Int8*:GemvCpu.*:*FusedAttention*"
                "golden_test --gtest_filter=*"
                "engine_test --gtest_filter=TranslatorTest.*:Int8TranslationTest.*:*ReferenceModelTest*:DecoderStateTest.*")
  for config in "${configs[@]}"; do
    for suite in "${suites[@]}"; do
      read -r binary filter <<< "$suite"
      local log="$LOGS/host.$config.$binary.log"
      if [ "$config" = default ]; then
        OMP_NUM_THREADS=2 timeout 240 "$BIN/$binary" "$filter" --gtest_brief=1 > "$log" 2>&1
      else
        OMP_NUM_THREADS=2 timeout 240 bash tests/cpu_config.sh "$config" "$BIN/$binary" "$filter" \
          --gtest_brief=1 > "$log" 2>&1
      fi
      local rc=$?
      case $rc in
        0) echo "host $config $binary: passed" ;;
        77) echo "host $config $binary: skipped ($(head -1 "$log"))" ;;
        *) echo "host $config $binary: FAILED (exit $rc): $(grep -E '^\[  FAILED  \]' "$log" | head -3 | tr '\n' ' ')" ;;
      esac
    done
  done > "$LOGS/host_cpu_tests.txt"
  # rpt float32 vs int8 on this CPU: en-de's first 500 lines at batch 32, 200 at batch 1, with
  # 1 and 2 threads, alternating, twice.
  local model=models/en-de tsv="$PACK/data/ui.en-de.test.tsv"
  [ "${RPT_HOST_SPEED:-1}" = 1 ] || return 0
  for batch in 32 1; do
    head -n "$([ "$batch" = 1 ] && echo 200 || echo 500)" "$tsv" | cut -f1 > "$LOGS/host.src"
    for threads in 2 1; do
      for type in float32 int8 float32 int8; do
        timeout 200 "$BIN/rpt-translate" --model "$model" --compute-type "$type" \
          --batch-size "$batch" --threads "$threads" --verbose < "$LOGS/host.src" \
          > "$LOGS/host.$type.out" 2> "$LOGS/host.$type.b$batch.t$threads.log"
        echo "host speed $type batch $batch threads $threads: $(grep -h 'sentences/s' "$LOGS/host.$type.b$batch.t$threads.log" | sed 's/^rpt-translate: //')"
      done
    done
  done >> "$LOGS/host_cpu_tests.txt"
  grep -h "CPU kernels" "$LOGS"/host.*.log | sort | uniq -c >> "$LOGS/host_cpu_tests.txt"
}

phase_tests() {
  run_suite cuda_ops_test 240 "${GPU_CPUS[@]}" "$BIN/cuda_ops_test"
  run_suite cuda_engine_test 240 "${GPU_CPUS[@]}" "$BIN/cuda_engine_test"
  grep -hE "token-identical|identical to the CPU|peak device memory|graphs captured" "$LOGS/cuda_engine_test.log" | tee -a "$SUMMARY"
}

# One GPU translation run against the CPU's: identical lines, throughput, peak memory.
gpu_run() {  # pair precision batch lines bar_percent(-1: none) [extra rpt-translate args]
  local pair=$1 precision=$2 batch=$3 lines=$4 bar=$5
  shift 5
  # The run's name ends in the extra flags' values: .fastest for --gpu-gemm fastest.
  local model=$MODEL tag run
  tag=$(printf '%s' "$*" | sed -E 's/--[a-z0-9-]+ ?//g; s/ +/./g')
  run="$pair.$precision.b$batch${tag:+.$tag}"
  head -n "$lines" "$LOGS/$pair.src" > "$LOGS/$run.src"
  if ! timeout 150 "${GPU_CPUS[@]}" "$BIN/rpt-translate" --model "$model" --device "$DEVICE" \
      --compute-type "$precision" --batch-size "$batch" --verbose "$@" < "$LOGS/$run.src" \
      > "$LOGS/$run" 2> "$LOGS/$run.log"; then
    fail "$run: $(tail -2 "$LOGS/$run.log" | tr '\n' ' ')"
    return
  fi
  local same total
  same=$(paste -d '\t' <(head -n "$lines" "$LOGS/$pair.cpu") "$LOGS/$run" | awk -F'\t' '$1 == $2' | wc -l)
  total=$(wc -l < "$LOGS/$run.src")
  say "$run: $same/$total identical to the CPU; $(grep -h 'sentences/s' "$LOGS/$run.log" | sed 's/^rpt-translate: //'); $(grep -h 'peak' "$LOGS/$run.log" | sed 's/^rpt-translate: //')"
  grep -hE "time:|GPU steps" "$LOGS/$run.log" | sed 's/^rpt-translate: /  /' | tee -a "$SUMMARY"
  # Batch invariance on the GPU: batch 1 against the same lines at batch 32.
  local batched="$LOGS/$pair.$precision.b32${tag:+.$tag}"
  if [ "$batch" = 1 ] && [ -s "$batched" ]; then
    local alike
    alike=$(paste -d '\t' <(head -n "$lines" "$batched") "$LOGS/$run" | awk -F'\t' '$1 == $2' | wc -l)
    say "$run: $alike/$total identical to batch 32 (the bar: all)"
    [ "$alike" -eq "$total" ] || fail "$run: depends on the batch"
  fi
  if [ "$bar" -ge 0 ]; then
    local needed=$(( (bar * total + 99) / 100 ))
    [ "$same" -ge "$needed" ] || fail "$run: $same/$total, below the bar of $needed"
  fi
}

# The CPU's translations of a model's test split (float32, every core the GPU phases use).
cpu_reference() {  # pair
  local pair=$1
  [ -s "$LOGS/$pair.cpu" ] && return
  cut -f1 "$PACK/data/ui.$pair.test.tsv" > "$LOGS/$pair.src"
  timeout 240 "${GPU_CPUS[@]}" "$BIN/rpt-translate" --model "$MODEL" --threads "$HALF" --batch-size 32 \
    --verbose < "$LOGS/$pair.src" > "$LOGS/$pair.cpu" 2> "$LOGS/$pair.cpu.log" \
    || fail "$pair cpu: $(tail -2 "$LOGS/$pair.cpu.log" | tr '\n' ' ')"
  say "$pair cpu: $(grep -h 'sentences/s' "$LOGS/$pair.cpu.log" | sed 's/^rpt-translate: //')"
}

for_each_model() {  # function
  for MODEL in "${MODELS[@]}"; do
    local pair
    pair=$(basename "$MODEL")
    [ -f "$PACK/data/ui.$pair.test.tsv" ] || { say "$pair: no test split in the pack"; continue; }
    cpu_reference "$pair"
    "$1" "$pair"
  done
}

float32_runs() {
  local lines
  lines=$(wc -l < "$LOGS/$1.src")
  gpu_run "$1" float32 32 "$lines" 100
  gpu_run "$1" float32 1 "$BATCH1_LINES" 100
  gpu_run "$1" float32 32 "$lines" 100 --gpu-attention lane-groups
  gpu_run "$1" float32 1 "$BATCH1_LINES" 100 --gpu-attention lane-groups
}
phase_float32() { for_each_model float32_runs; }

half_runs() {
  local lines
  lines=$(wc -l < "$LOGS/$1.src")
  gpu_run "$1" float16 32 "$lines" 99
  gpu_run "$1" float16 1 "$BATCH1_LINES" -1  # held to batch 32, which meets the bar
  gpu_run "$1" bfloat16 32 "$lines" -1
  gpu_run "$1" bfloat16 1 "$BATCH1_LINES" -1
  gpu_run "$1" float16 32 "$lines" -1 --gpu-gemm fastest
  gpu_run "$1" float16 32 "$lines" 99 --gpu-attention lane-groups
  gpu_run "$1" float16 1 "$BATCH1_LINES" -1 --gpu-attention lane-groups
}
phase_half() { for_each_model half_runs; }

# Graphs on against off: identical output, speed of each (two alternating rounds).
graph_runs() {
  local pair=$1 lines run
  lines=$(wc -l < "$LOGS/$pair.src")
  for setup in "float16 32 $lines" "float32 32 $lines" "float16 1 $BATCH1_LINES"; do
    read -r precision batch count <<< "$setup"
    head -n "$count" "$LOGS/$pair.src" > "$LOGS/graphs.$pair.src"
    for round in 1 2; do
      for graphs in off on; do
        run="graphs.$pair.$precision.b$batch.$graphs"
        timeout 150 "${GPU_CPUS[@]}" "$BIN/rpt-translate" --model "$MODEL" --device "$DEVICE" \
          --compute-type "$precision" --batch-size "$batch" --gpu-graphs "$graphs" --verbose \
          < "$LOGS/graphs.$pair.src" > "$LOGS/$run" 2> "$LOGS/$run.log" \
          || { fail "$run: $(tail -2 "$LOGS/$run.log" | tr '\n' ' ')"; continue; }
        say "$run round $round: $(grep -h 'sentences/s' "$LOGS/$run.log" | sed 's/^rpt-translate: //')"
      done
      cmp -s "$LOGS/graphs.$pair.$precision.b$batch.off" "$LOGS/graphs.$pair.$precision.b$batch.on" \
        || fail "graphs $pair $precision batch $batch: output differs with and without graphs"
    done
    say "graphs $pair $precision batch $batch: $(paste -d '\t' "$LOGS/graphs.$pair.$precision.b$batch.off" "$LOGS/graphs.$pair.$precision.b$batch.on" | awk -F'\t' '$1 == $2' | wc -l)/$count lines identical with and without graphs"
  done
}
phase_graphs() { for_each_model graph_runs; }

# Joiners admitted in groups (--admission-group): the same translations, line for line, and the
# speed and encoder calls of each group size, alternating (float16 and float32 at batch 32).
admission_runs() {
  local pair=$1 run precision group round precisions=(float16 float32)
  [ "$DEVICE" = cpu ] && precisions=(float32)  # a dry run
  for precision in "${precisions[@]}"; do
    for round in 1 2; do
      for group in 1 4 8 16; do
        run="admission.$pair.$precision.g$group"
        rm -f "$LOGS/$run"
        timeout 150 "${GPU_CPUS[@]}" "$BIN/rpt-translate" --model "$MODEL" --device "$DEVICE" \
          --compute-type "$precision" --batch-size 32 --admission-group "$group" --verbose \
          < "$LOGS/$pair.src" > "$LOGS/$run" 2> "$LOGS/$run.log" \
          || { fail "$run: $(tail -2 "$LOGS/$run.log" | tr '\n' ' ')"; rm -f "$LOGS/$run"; continue; }
        say "$run round $round: $(grep -h 'sentences/s' "$LOGS/$run.log" | sed 's/^rpt-translate: //' | cut -d'(' -f1)| $(grep -h 'time:' "$LOGS/$run.log" | sed 's/.*encoding/encoding/' | cut -d, -f1-3)"
        local first="$LOGS/admission.$pair.$precision.g1"
        if [ "$group" != 1 ] && [ -f "$first" ]; then
          cmp -s "$first" "$LOGS/$run" || fail "$run: output differs from admission group 1"
        fi
      done
    done
  done
}
phase_admission() {  # (no CPU reference needed: each group is held to group 1)
  for MODEL in "${MODELS[@]}"; do
    local pair
    pair=$(basename "$MODEL")
    [ -f "$PACK/data/ui.$pair.test.tsv" ] || { say "$pair: no test split in the pack"; continue; }
    [ -s "$LOGS/$pair.src" ] || cut -f1 "$PACK/data/ui.$pair.test.tsv" > "$LOGS/$pair.src"
    admission_runs "$pair"
  done
}

phase_sanitizer() {
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  [ -n "$sanitizer" ] || { fail "compute-sanitizer not found"; return; }
  # The op tests and the graphs. Left out, to keep each tool within its timeout: the GEMM's
  # (cuBLAS's own kernels, over a thousand calls) and the fused attention's long inputs (1,536
  # keys); and the refused captures, which report API errors by design.
  local ops_filter="Cuda/*:CudaOpsTest.*-*GraphCaptureRefusal*:Cuda/GemmTest.*:Cuda/FusedAttentionTest.LongSequences*"
  for tool in memcheck racecheck synccheck; do
    local log="$LOGS/sanitizer.$tool.log"
    timeout 150 "${GPU_CPUS[@]}" "$sanitizer" --tool "$tool" --error-exitcode 3 "$BIN/cuda_ops_test" \
      --gtest_filter="$ops_filter" --gtest_brief=1 > "$log" 2>&1 || fail "$tool over cuda_ops_test (exit $?)"
    say "$tool cuda_ops_test: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' "$log" | tr '\n' ' ')"
  done
  local log="$LOGS/sanitizer.memcheck.engine.log"
  timeout 150 "${GPU_CPUS[@]}" "$sanitizer" --tool memcheck --error-exitcode 3 "$BIN/cuda_engine_test" \
    --gtest_filter='*CudaEngineSynthetic.*post_norm*:*CudaEngineSynthetic.*t5_wide*' --gtest_brief=1 > "$log" 2>&1 \
    || fail "memcheck over cuda_engine_test (exit $?)"
  say "memcheck cuda_engine_test: $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' "$log" | tr '\n' ' ')"
}

# What the memory limit does not count: the process's device memory as the driver reports it
# (CUDA context, cuBLAS's handles, the pool's kept blocks, module images) beside the engine's
# own peak, for en-de's test split in float16 at batch 32.
phase_memory() {
  local model=models/en-de tsv="$PACK/data/ui.en-de.test.tsv"
  cut -f1 "$tsv" > "$LOGS/memory.src"
  "${GPU_CPUS[@]}" "$BIN/rpt-translate" --model "$model" --device "$DEVICE" \
    --compute-type float16 --batch-size 32 --verbose < "$LOGS/memory.src" \
    > "$LOGS/memory.out" 2> "$LOGS/memory.log" &
  local pid=$! most=0 used
  while kill -0 "$pid" 2> /dev/null; do
    used=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits \
      | awk -F', ' -v pid="$pid" '$1 == pid {print $2}')
    [ -n "$used" ] && [ "$used" -gt "$most" ] && most=$used
    sleep 0.1
  done
  wait "$pid" || fail "memory run: $(tail -2 "$LOGS/memory.log" | tr '\n' ' ')"
  say "memory: process peak ${most} MiB (nvidia-smi, sampled every 0.1 s); engine: $(grep -h 'peak' "$LOGS/memory.log" | sed 's/^rpt-translate: //')"
  say "memory: $(grep -h 'device memory (driver)' "$LOGS/memory.log" | sed 's/^rpt-translate: //')"
}

# int8 activation bits on the host CPU (no GPU involved): which oneDNN ISAs sum u8 x s8 exactly
# (the saturation tests under each ISA, 8 bits forced with 8-unchecked), then both models' test
# splits in float32, int8 with 7-bit and int8 with 8-bit activations: BLEU against the
# references (sacrebleu) and speed, alternating.
phase_int8_bits() {
  local filter="*Int8*"
  for isa in DEFAULT AVX512_CORE_AMX AVX512_CORE_VNNI AVX2_VNNI AVX512_CORE AVX2; do
    for bits in auto 8-unchecked; do
      local log="$LOGS/int8_bits.$isa.$bits.log"
      (
        [ "$isa" = DEFAULT ] || export ONEDNN_MAX_CPU_ISA=$isa
        [ "$bits" = auto ] || export RPT_INT8_ACTIVATION_BITS=$bits
        timeout 120 "${HOST_CPUS[@]}" "$BIN/kernels_test" --gtest_filter="$filter" --gtest_brief=1
      ) > "$log" 2>&1
      local rc=$?
      say "int8 isa $isa bits $bits: $( [ $rc -eq 0 ] && echo passed || echo "FAILED (exit $rc)"): $(grep -E '^\[  (PASSED|FAILED) ' "$log" | sed 's/, where GetParam.*//' | tr '\n' ' ')"
    done
  done
  for model in "${MODELS[@]}"; do
    local pair
    pair=$(basename "$model")
    cut -f1 "$PACK/data/ui.$pair.test.tsv" > "$LOGS/bits.$pair.src"
    cut -f2 "$PACK/data/ui.$pair.test.tsv" > "$LOGS/bits.$pair.ref"
    for round in 1 2; do
      for variant in float32 int8-7 int8-8; do
        local type=${variant%%-*} bits=${variant#*-}
        [ "$type" = float32 ] && bits=auto
        local out="$LOGS/bits.$pair.$variant"
        RPT_INT8_ACTIVATION_BITS=$([ "$bits" = 7 ] && echo 7 || echo 8) \
          timeout 200 "${HOST_CPUS[@]}" "$BIN/rpt-translate" --model "$model" --compute-type "$type" \
          --threads 2 --batch-size 32 --verbose < "$LOGS/bits.$pair.src" > "$out" 2> "$out.log" \
          || fail "$pair $variant: $(tail -1 "$out.log")"
        local bleu
        bleu=$(python3 -c "import sacrebleu,sys; h=open(sys.argv[1]).read().splitlines(); r=open(sys.argv[2]).read().splitlines(); print(f'{sacrebleu.corpus_bleu(h,[r]).score:.2f} chrF {sacrebleu.corpus_chrf(h,[r]).score:.2f}')" "$out" "$LOGS/bits.$pair.ref" 2>&1)
        say "$pair $variant round $round: BLEU $bleu; $(grep -h 'sentences/s' "$out.log" | sed 's/^rpt-translate: //'); $(grep -h 'int8:' "$out.log" | sed 's/.*int8: //')"
      done
    done
  done
}

# rpt-server on the device, over its JSON API, concurrent one-line calls against rpt-translate's
# batch-32 output (needs the half phase's float16 runs and rpt-server in the pack).
phase_server() {
  [ -x "$BIN/rpt-server" ] || { say "server: rpt-server not in the pack (RPT_PACK_EXTRA)"; return; }
  for MODEL in "${MODELS[@]}"; do
    local pair
    pair=$(basename "$MODEL")
    [ -s "$LOGS/$pair.float16.b32" ] || continue
    timeout 240 "${GPU_CPUS[@]}" python3 bench/gpu_server_check.py --server "$BIN/rpt-server" \
      --model "$pair=$MODEL" --device "$DEVICE" --compute-type float16 --src "$LOGS/$pair.src" \
      --expected "$LOGS/$pair.float16.b32" --lines 500 --log "$LOGS/server.$pair.log" \
      > "$LOGS/server.$pair.txt" 2>&1 || fail "server $pair"
    tee -a "$SUMMARY" < "$LOGS/server.$pair.txt"
  done
}

# CTranslate2 from the pack (RPT_PACK_PEER=1): the environment its Python runs in, PEER_ENV,
# and the time the phase may take (RPT_PEER_BUDGET seconds from now: the device stops a call at
# 600 s), PEER_DEADLINE. The other modules the comparison needs come from the machine's Python.
peer_setup() {
  [ -d "$PACK/peer/site" ] || { fail "peer: CTranslate2 is not in the pack (RPT_PACK_PEER=1)"; return 1; }
  PEER_ENV=(env "PYTHONPATH=$PACK/peer/site${PYTHONPATH:+:$PYTHONPATH}")
  PEER_DEADLINE=$(( $(date +%s) + ${RPT_PEER_BUDGET:-480} ))
  mkdir -p "$LOGS/peer"
  local found
  found=$("${PEER_ENV[@]}" python3 -c "import ctranslate2, numpy, sentencepiece, sacrebleu; print('ctranslate2', ctranslate2.__version__, 'sees', ctranslate2.get_cuda_device_count(), 'GPU(s)')" 2>&1) \
    || { fail "peer: python3 lacks a module: $(echo "$found" | tail -1)"; return 1; }
  say "peer: $found"
}

# One rpt-vs-CTranslate2 comparison (bench/compare_ctranslate2.py) on en-de's test split, within
# PEER_DEADLINE; its JSON (figures and outputs) goes into the logs archive, its table rows to
# the summary.
#   peer_compare NAME DEVICE TYPES BATCHES LINES SEARCHES THREADS [EXTRA...]
peer_compare() {
  local name=$1 device=$2 types=$3 batches=$4 count=$5 searches=$6 threads=$7 pair=en-de
  shift 7
  local cpus=("${GPU_CPUS[@]}") left=$(( PEER_DEADLINE - $(date +%s) ))
  [ "$device" = cpu ] && cpus=("${HOST_CPUS[@]}")
  [ "$left" -ge 30 ] || { fail "$name $pair: skipped, the phase's time is spent"; return; }
  timeout "$left" "${cpus[@]}" "${PEER_ENV[@]}" python3 \
    bench/compare_ctranslate2.py --model "models/$pair" --source-tsv "$PACK/data/ui.$pair.test.tsv" \
    --limit "$count" --device "$device" --rpt-translate "$BIN/rpt-translate" \
    --compute-types "$types" --batch-sizes "$batches" --searches "$searches" --threads "$threads" \
    --repeat "${RPT_PEER_REPEAT:-3}" "$@" --json "$LOGS/peer/$name.$pair.json" \
    > "$LOGS/$name.$pair.txt" 2>&1 \
    || fail "$name $pair (exit $?): $(tail -2 "$LOGS/$name.$pair.txt" | tr '\n' ' ')"
  say "$name $pair:"
  grep -E "^(CTranslate2|rpt) |^\| [a-z0-9]+ \| [0-9]+ \|" "$LOGS/$name.$pair.txt" | sort -u \
    | tee -a "$SUMMARY"
}

# CTranslate2 4.x loads libcublas.so.12 by name; these machines have cuBLAS 13 only, whose
# exports include every name CTranslate2 looks up, with the same C signatures: a link serves
# them (checked name by name first). CTranslate2 logs the cuBLAS it loaded (CT2_VERBOSE), kept in
# each JSON's header.
peer_gpu_setup() {
  local cublas="" dir
  peer_setup || return 1
  say "peer: $(cat "$PACK/peer/VERSION")"
  [ "$DEVICE" = cuda ] || return 0  # (a dry run on the CPU)
  IFS=: read -ra dirs <<< "$cuda_dirs"
  for dir in "${dirs[@]}"; do
    [ -n "$dir" ] && [ -e "$dir/libcublas.so.13" ] && { cublas="$dir/libcublas.so.13"; break; }
  done
  if [ -n "$cublas" ]; then
    python3 tools/cublas12_link.py --ctranslate2-lib "$(ls "$PACK"/peer/site/ctranslate2.libs/libctranslate2*.so* | head -1)" \
      --cublas "$cublas" --out "$LOGS/cublas12" > "$LOGS/peer.cublas12.json" 2>&1 \
      || { fail "peer: cuBLAS 13 cannot serve CTranslate2: $(tr -d '\n' < "$LOGS/peer.cublas12.json")"; return 1; }
    say "peer: libcublas.so.12 -> $cublas ($(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["names"]))' "$LOGS/peer.cublas12.json") names, all found)"
    PEER_ENV+=("LD_LIBRARY_PATH=$LOGS/cublas12:$LD_LIBRARY_PATH")
  else
    fail "peer: no libcublas.so.13 on this machine"; return 1
  fi
}

# The bars' comparisons first.
phase_peer() {
  local half="${RPT_PEER_HALF:-float16}" tsv="$PACK/data/ui.en-de.test.tsv"
  peer_gpu_setup || return
  local lines all
  all=$(wc -l < "$tsv")
  lines=${RPT_PEER_LINES:-$all}  # fewer for a dry run on a CPU
  # Threads 2 at batch 32: one engine with 2 CPU threads, or two decoders / translator replicas
  # sharing the GPU (CPU threads barely matter to a GPU decode; the replicas may).
  peer_compare "peer.$half.b32" "$DEVICE" "$half" 32 "$lines" default,lp0 2
  save_logs  # (with peer_cpu's progress: a call stopped at its limit still returns them)
  peer_compare "peer.$half.long1024" "$DEVICE" "$half" 8 "$all" lp0 1 --long-input 1024
  save_logs
  peer_compare "peer.$half.b1" "$DEVICE" "$half" 1 "${RPT_PEER_BATCH1_LINES:-300}" lp0 1
  save_logs
  peer_compare "peer.float32.b32" "$DEVICE" float32 32 "$lines" lp0 2
}

# rpt against CTranslate2 at base, big and ~1 B shapes with random weights written here
# (bench/synthetic_shapes.py: fixed output length, both engines alternating), within the peer
# budget; its JSON and plot come back beside the summary.
phase_synthetic() {
  peer_gpu_setup || return
  local left=$(( PEER_DEADLINE - $(date +%s) ))
  timeout "$left" "${GPU_CPUS[@]}" "${PEER_ENV[@]}" python3 bench/synthetic_shapes.py \
    --template models/en-de --source "$PACK/data/ui.en-de.test.tsv" --device "$DEVICE" \
    --rpt-translate "$BIN/rpt-translate" --shapes "${RPT_SYNTHETIC_SHAPES:-base,big,1b}" \
    --batches "${RPT_SYNTHETIC_BATCHES:-1,32,128}" \
    --precisions "${RPT_SYNTHETIC_PRECISIONS:-float16}" --repeat "${RPT_SYNTHETIC_REPEAT:-2}" \
    --gpu-attention "${RPT_SYNTHETIC_ATTENTION:-key-split,lane-groups}" \
    --inter "${RPT_SYNTHETIC_INTER:-1}" \
    --lines "${RPT_SYNTHETIC_LINES:-512}" --batch1-lines "${RPT_SYNTHETIC_BATCH1_LINES:-32}" \
    --deadline $(( left > 90 ? left - 90 : 1 )) ${RPT_SYNTHETIC_PROFILE:+--profile} \
    --json "$OUT/synthetic.json" \
    --plot "$OUT/synthetic.png" > "$LOGS/synthetic.txt" 2>&1 \
    || fail "synthetic (exit $?): $(tail -2 "$LOGS/synthetic.txt" | tr '\n' ' ')"
  grep -E "^\||M parameters|FAILED|GPU step profile|device memory" "$LOGS/synthetic.txt" | tee -a "$SUMMARY"
}

# The attention kernel under Nsight Compute, mid-decode at a model size where it dominates the
# step (PERFORMANCE.md: 41% of a 1 B shape's step at batch 128). The model is written here with
# random weights (bench/synthetic_shapes.py). Launches before the profiled ones: the encoder's
# (one per layer and admission group; 64 allowed for) and 32 steps of two per decoder layer.
phase_attention_ncu() {
  local ncu shape="${RPT_NCU_SHAPE:-1b}" layers skip
  local model="/tmp/rpt-ncu-$shape"  # outside LOGS: the archive must not carry it
  ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  [ -n "$ncu" ] || { fail "attention_ncu: ncu not found"; return; }
  timeout 240 "${GPU_CPUS[@]}" python3 -c "import sys; sys.path[:0] = ['bench', 'tools']; import synthetic_shapes as s; print(s.write_model('models/en-de', sys.argv[1], sys.argv[2]))" \
    "$shape" "$model" > "$LOGS/ncu-model.txt" 2>&1 \
    || { fail "attention_ncu: writing the $shape model: $(tail -1 "$LOGS/ncu-model.txt")"; return; }
  layers=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['architecture']['decoder_layers'])" "$model/config.json")
  skip=$(( 64 + 2 * layers * 32 ))
  cut -f1 "$PACK/data/ui.en-de.test.tsv" | head -128 > "$LOGS/ncu-source.txt"
  : > "$OUT/attention_ncu.txt"
  local kernel
  for kernel in ${RPT_NCU_ATTENTION:-key-split lane-groups}; do
    timeout 300 "${GPU_CPUS[@]}" "$ncu" --kernel-name regex:_attention_kernel --launch-skip "$skip" \
      --launch-count 4 --log-file "$LOGS/ncu-$kernel.txt" --section SpeedOfLight \
      --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats \
      "$BIN/rpt-translate" --model "$model" --device cuda --compute-type float16 --gpu-graphs off \
      --gpu-attention "$kernel" --batch-size 128 --beam-size 4 --min-length 64 --max-length 64 \
      --quiet < "$LOGS/ncu-source.txt" > /dev/null 2> "$LOGS/attention_ncu.$kernel.err" \
      || fail "attention_ncu $kernel (exit $?): $(tail -2 "$LOGS/attention_ncu.$kernel.err" | tr '\n' ' ')"
    { echo "=== --gpu-attention $kernel"; cat "$LOGS/ncu-$kernel.txt"; } >> "$OUT/attention_ncu.txt"
    say "attention_ncu: $shape ($(cat "$LOGS/ncu-model.txt") parameters: decoder, all), --gpu-attention $kernel, launches $skip.. of the attention kernel"
    grep -E "_attention_kernel|Duration|Memory Throughput|DRAM Throughput|L1/TEX Hit|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Grid Size|Block Size|Warp Cycles Per Issued|No Eligible|Issued Warp" \
      "$LOGS/ncu-$kernel.txt" | tee -a "$SUMMARY"
  done
}

# The same comparison on the host CPU (float32 and int8; CTranslate2's wheel brings MKL and
# oneDNN), in the background on the upper half of the cores while GPU phases run on the lower.
phase_peer_cpu() {
  peer_setup || return
  local cores=$(( CORES - HALF ))
  local threads=$cores
  [ "$cores" -gt 4 ] && threads="4,$cores"
  peer_compare peer_cpu.b32 cpu float32,int8 32 "${RPT_PEER_CPU_LINES:-500}" lp0 "$threads"
  peer_compare peer_cpu.b1 cpu float32,int8 1 "${RPT_PEER_CPU_BATCH1_LINES:-200}" lp0 1,2
}

# rpt against CTranslate2 on the host CPU at each core count of RPT_CPU_CORES (default 1 2 16),
# the process held to that many cores (cores 0..N-1), float32 and int8 at batch 32 on
# RPT_CPU_CORES_LINES (300) en-de lines, each engine's best layout (N threads, or N decoders /
# replicas of one): whether rpt's lead grows with cores. Uses every core: run it alone, not beside
# GPU phases. Not in `all`.
phase_cpu_cores() {
  peer_setup || return
  local cores last=$(( CORES - 1 ))
  for cores in ${RPT_CPU_CORES:-1 2 $CORES}; do
    [ "$cores" -le "$CORES" ] || { say "cpu_cores: $cores cores: the host has $CORES"; continue; }
    local name="cpu_cores.$cores" left=$(( PEER_DEADLINE - $(date +%s) ))
    [ "$left" -ge 30 ] || { fail "$name: skipped, the phase's time is spent"; return; }
    local pin=()
    command -v taskset > /dev/null && pin=(taskset -c "0-$(( cores - 1 ))")
    [ "$cores" -eq "$CORES" ] && pin=(taskset -c "0-$last")
    timeout "$left" "${pin[@]}" "${PEER_ENV[@]}" python3 bench/compare_ctranslate2.py \
      --model models/en-de --source-tsv "$PACK/data/ui.en-de.test.tsv" \
      --limit "${RPT_CPU_CORES_LINES:-300}" --device cpu --rpt-translate "$BIN/rpt-translate" \
      --compute-types float32,int8 --batch-sizes 32 --searches lp0 --threads "$cores" \
      --repeat "${RPT_PEER_REPEAT:-3}" --json "$LOGS/peer/$name.json" > "$LOGS/$name.txt" 2>&1 \
      || fail "$name (exit $?): $(tail -2 "$LOGS/$name.txt" | tr '\n' ' ')"
    say "$name:"
    grep -E "^(CTranslate2|rpt) |^\| [a-z0-9]+ \| [0-9]+ \|" "$LOGS/$name.txt" | sort -u \
      | tee -a "$SUMMARY"
  done
}

phase_bench() {
  timeout 120 "${GPU_CPUS[@]}" "$BIN/relative_cost_bench" --benchmark_filter='device:[1-4]' \
    --benchmark_min_time=0.3 > "$LOGS/relative_cost_gpu.txt" 2>&1 || fail "relative_cost_bench"
  grep -E "^BM_" "$LOGS/relative_cost_gpu.txt" | tee -a "$SUMMARY"
}

host_pid="" peer_cpu_pid=""
# Both run on the upper half of the cores: together each would slow the other's timings.
if [[ " ${PHASES[*]} " == *" host_cpu "* && " ${PHASES[*]} " == *" peer_cpu "* ]]; then
  fail "host_cpu and peer_cpu share the host's cores: run them in different calls"
  exit 1
fi
for phase in "${PHASES[@]}"; do
  declare -F "phase_$phase" > /dev/null || { fail "unknown phase $phase"; continue; }
  if [ "$phase" = peer_cpu ]; then
    : > "$LOGS/peer_cpu.summary.txt"  # (LOGS outlives a call on a warm machine)
    SUMMARY="$LOGS/peer_cpu.summary.txt" phase_peer_cpu > "$LOGS/peer_cpu.log" 2>&1 &
    peer_cpu_pid=$!
    say "== peer_cpu: started in the background"
    continue
  fi
  if [ "$phase" = host_cpu ]; then
    "${HOST_CPUS[@]}" bash -c "$(declare -f phase_host_cpu); BIN='$BIN' LOGS='$LOGS' PACK='$PACK' \
      RPT_HOST_SPEED='${RPT_HOST_SPEED:-1}' phase_host_cpu" &
    host_pid=$!
    say "== host_cpu: started in the background"
    continue
  fi
  say "== $phase ($(date -u +%T))"
  "phase_$phase"
  save_logs
done
if [ -n "$host_pid" ]; then
  wait "$host_pid"
  say "== host_cpu ($(date -u +%T))"
  tee -a "$SUMMARY" < "$LOGS/host_cpu_tests.txt"
  grep -q "FAILED" "$LOGS/host_cpu_tests.txt" && fail "host CPU tests"
  save_logs
fi
if [ -n "$peer_cpu_pid" ]; then
  wait "$peer_cpu_pid"
  say "== peer_cpu ($(date -u +%T))"
  tee -a "$SUMMARY" < "$LOGS/peer_cpu.summary.txt"
  grep -q "^FAIL" "$LOGS/peer_cpu.summary.txt" && status=1
  save_logs
fi
say "gpu_checks: $([ $status -eq 0 ] && echo passed || echo FAILED)"
exit $status
