#!/usr/bin/env bash
# Train, average, export and evaluate the demo models on a GPU device machine, from the repo
# root, with the kit that training/gpu_kit.sh built here (carried as .device/kit):
#
#   bash training/gpu_session.sh KIT STAGE [ARGS]
#
#   KIT     .device/kit/kit.tar.xz
#   STAGE   setup                     unpack the kit, install the wheels, check torch/CUDA/onmt
#           smoke                     setup + a tiny end-to-end run on a 20k-sentence slice of
#                                     en-de (relative and sinusoidal, 20 steps, resume to 30,
#                                     average, evaluate 20 dev + 20 test sentences, export,
#                                     split and reassemble the exported models)
#                                     -> $OUT/smoke-summary.txt, $OUT/smoke-results.tar.gz
#           train MINUTES [RUN...]    setup + prepare + train the RUNs concurrently on the one
#                                     GPU, each stopped after MINUTES (TIME_LIMIT); a RUN with
#                                     checkpoints resumes (RESUME=1) unless FRESH=1
#           finish [RUN...]           average the last AVG_N checkpoints, evaluate (dev + test,
#                                     onmt_translate on the GPU), export float16, collect to $OUT
#           collect [RUN...]          only the collecting part of finish
#           all SECONDS [RUN...]      setup + prepare + train until SECONDS after this script
#                                     started minus FINISH_RESERVE, then finish: one device call
#   RUN     PAIR-VARIANT; default: en-de-relative en-fr-relative en-de-sinusoidal en-de-k0
#
# What comes back ($OUT, at most 8 files of at most 16 MiB, 64 MiB together):
#   summary.txt            per run: steps, speed, last train/valid figures, BLEU/chrF
#   results.tar.gz         logs, configs, summary.json, scores.json and hyp.txt of every
#                          evaluation, nvidia-smi samples; no checkpoints (120 MB each)
#   models.tar.part-NN     the exported model directories of COLLECT_MODELS (default: the
#   models.tar.sha256      relative runs, the ones we commit), split into 15 MiB parts.
#                          Reassemble:  cat models.tar.part-* > models.tar &&
#                                       sha256sum -c models.tar.sha256 && tar -xf models.tar
#                          -> en-de-relative/{config.json,model.bin,...}, en-fr-relative/...
#
# Environment (all optional):
#   NO_GPU=1        train and translate on the CPU (to test this script without a GPU)
#   BASE_PY         the Python that has torch (default /opt/torch/.venv/bin/python3, else python3)
#   WORK            scratch folder (default REPO/work/gpu, git-ignored; kept while the machine is
#                   warm, so a later call resumes); RUNS=$WORK/runs, DATA=$WORK/kit/data
#   THREADS=2 NICE=0 BATCH=128 (GPU) / THREADS=1 NICE=10 BATCH=32 (NO_GPU); BATCH is
#                   onmt_translate's sentences per batch
#   WARMUP=1000 LR=1.0 SAVE_STEPS=250 VALID_STEPS=500 KEEP=4 (BATCH_SIZE, TRAIN_STEPS, EXTRA,
#                   SEED: the config's unless set): see train.sh
#   FRESH=1         train from scratch even if the run has checkpoints
#   AVG_N=3         checkpoints averaged by finish
#   PICK=avg        what finish evaluates on test and exports: avg (the average), latest, or
#                   dev (whichever of the two has the higher dev BLEU)
#   FINISH_RESERVE=180  seconds that `all` keeps for finish
#   COLLECT_MODELS  runs whose exported models come back (default: the relative ones; all four
#                   do not fit in one call's 64 MiB)
set -euo pipefail
TRAINING_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$TRAINING_DIR/.." && pwd)"
T0=$(date +%s)

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
KIT="$(realpath "$1")"; STAGE="$2"; shift 2

# The device exports OUT (its result folder); the training scripts use OUT as a local name, so
# it is taken here and removed from their environment.
RESULTS="${OUT:-}"
unset OUT
WORK="${WORK:-$REPO/work/gpu}"
RESULTS="${RESULTS:-$WORK/out}"
export RUNS="${RUNS:-$WORK/runs}" DATA="${DATA:-$WORK/kit/data}" VENV="${VENV:-$WORK/venv}"
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$TRAINING_DIR/common.sh"

BASE_PY="${BASE_PY:-/opt/torch/.venv/bin/python3}"
[ -x "$BASE_PY" ] || BASE_PY="$(command -v python3)"
if [ "${NO_GPU:-0}" = 1 ]; then
  export GPU=0 THREADS="${THREADS:-1}" NICE="${NICE:-10}" BATCH="${BATCH:-32}"
else
  # BATCH: onmt_translate sentences per batch (evaluate.sh); 128 keeps a GPU busy and bounds
  # the time an under-trained model that runs to max_length 250 can take.
  export GPU=1 THREADS="${THREADS:-2}" NICE="${NICE:-0}" BATCH="${BATCH:-128}"
fi
export WARMUP="${WARMUP:-1000}" LR="${LR:-1.0}" SAVE_STEPS="${SAVE_STEPS:-250}" \
  VALID_STEPS="${VALID_STEPS:-500}" KEEP="${KEEP:-4}"
export PYTHONUNBUFFERED=1 TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1
DEFAULT_RUN_LIST=(en-de-relative en-fr-relative en-de-sinusoidal en-de-k0)
LOGS="$WORK/logs"
mkdir -p "$WORK" "$LOGS" "$RESULTS"

log() { echo "[$(date +%H:%M:%S) +$(( $(date +%s) - T0 ))s] $*"; }

# Background children still running when this script ends (error, TERM) are ended with it:
# `jobs -p` lists only this shell's own live jobs.
cleanup() {
  local pid
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# split_run RUN: sets RPAIR and RVARIANT (en-de-relative -> en-de, relative).
split_run() {
  RPAIR="${1:0:5}"; RVARIANT="${1:6}"
  check_pair "$RPAIR"; check_variant "$RVARIANT"
}

# ---------------------------------------------------------------------------------- setup
setup() {
  [ -f "$KIT" ] || die "kit $KIT not found (build it here with training/gpu_kit.sh, carry .device/kit)"
  local sum
  sum="$(sha256sum "$KIT" | cut -c1-64)"
  if [ "$(cat "$WORK/kit.sha256" 2>/dev/null)" != "$sum" ]; then
    log "unpacking $KIT"
    rm -rf "$WORK/kit" "$WORK/site" "$VENV"
    if command -v xz > /dev/null; then
      tar -C "$WORK" -xJf "$KIT"
    else  # an image without xz-utils: Python's tarfile reads xz itself
      "$BASE_PY" -c 'import sys, tarfile
kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **kw)' "$KIT" "$WORK"
    fi
    (cd "$WORK/kit" && sha256sum -c --quiet SHA256SUMS) || die "kit checksums do not match"
    echo "$sum" > "$WORK/kit.sha256"
  fi
  if [ ! -f "$WORK/site/.installed" ]; then
    log "installing $(cd "$WORK/kit/wheels" && echo ./*.whl) into $WORK/site"
    if ! "$BASE_PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
      --disable-pip-version-check --target "$WORK/site" "$WORK"/kit/wheels/*.whl; then
      # No pip: a pure-Python wheel installs by unzipping it (the console scripts it would add
      # are replaced by VENV/bin/onmt_* below anyway).
      log "pip failed; unzipping the (pure-Python) wheels instead"
      rm -rf "$WORK/site"; mkdir -p "$WORK/site"
      "$BASE_PY" -c 'import sys, zipfile
for w in sys.argv[2:]: zipfile.ZipFile(w).extractall(sys.argv[1])' "$WORK/site" "$WORK"/kit/wheels/*.whl
    fi
    touch "$WORK/site/.installed"
  fi
  # A stand-in virtual environment: VENV/bin/python is BASE_PY with the wheels and
  # training/onmt_compat on PYTHONPATH; VENV/bin/onmt_* run OpenNMT-py through
  # rpt_onmt_compat. common.sh derives PY and ONMT_BIN from VENV, so train.sh, average.sh,
  # evaluate.sh and export.sh run unchanged.
  mkdir -p "$VENV/bin"
  cat > "$VENV/bin/python" <<EOF
#!/usr/bin/env bash
export PYTHONPATH="$WORK/site:$TRAINING_DIR/onmt_compat\${PYTHONPATH:+:\$PYTHONPATH}"
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="\${TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD:-1}"
exec "$BASE_PY" "\$@"
EOF
  local name
  for name in train translate average_models build_vocab; do
    printf '#!/usr/bin/env bash\nexec "%s" -m rpt_onmt_compat %s "$@"\n' \
      "$VENV/bin/python" "$name" > "$VENV/bin/onmt_$name"
  done
  chmod +x "$VENV"/bin/*
  log "environment: $("$PY" -m rpt_onmt_compat report 2>"$LOGS/report.err" \
    || { cat "$LOGS/report.err" >&2; die "OpenNMT-py does not import"; })"
  if [ "$GPU" = 1 ]; then
    "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
      || die "no CUDA device visible to torch (NO_GPU=1 to run on the CPU)"
    command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version \
      --format=csv,noheader | sed 's/^/  gpu: /'
  fi
  log "cpu: $(nproc) cores; work: $WORK; runs: $RUNS; results: $RESULTS"
}

# prepare_pairs RUN...: prepare.py for every pair the RUNs need, pairs in parallel.
prepare_pairs() {
  local run pairs=() pair pid pids=() rc=0 i=0
  for run in "$@"; do split_run "$run"; pairs+=("$RPAIR"); done
  mapfile -t pairs < <(printf '%s\n' "${pairs[@]}" | sort -u)
  for pair in "${pairs[@]}"; do
    if [ -f "$RUNS/data/$pair/vocab.txt" ]; then continue; fi
    log "preparing $pair (SentencePiece + encoding) -> $RUNS/data/$pair"
    "$PY" "$TRAINING_DIR/prepare.py" --pair "$pair" --data "$DATA" --out "$RUNS/data/$pair" \
      --threads "${PREPARE_THREADS:-4}" ${VOCAB_SIZE:+--vocab-size "$VOCAB_SIZE"} \
      > "$LOGS/prepare-$pair.log" 2>&1 &
    pids+=("$!")
  done
  for pid in ${pids[@]+"${pids[@]}"}; do
    wait "$pid" || { rc=$?; echo "prepare failed:" >&2; tail -5 "$LOGS"/prepare-*.log >&2; }
    i=$((i + 1))
  done
  [ "$rc" = 0 ] || die "prepare.py failed"
  [ "$i" = 0 ] || log "prepared"
}

# ---------------------------------------------------------------------------------- train
# check_checkpoints RUN: a checkpoint cut short by TIME_LIMIT (killed while saving) is not a
# complete zip file; rename such files to *.pt.partial so average/evaluate never see them.
check_checkpoints() {
  "$PY" - "$RUNS/$1/ckpt" <<'PYEOF'
import glob, os, sys, zipfile
for path in glob.glob(os.path.join(sys.argv[1], "model_step_*.pt")):
    ok = zipfile.is_zipfile(path)
    if ok:
        try:
            with zipfile.ZipFile(path) as z:
                ok = any(n.endswith("data.pkl") for n in z.namelist())
        except zipfile.BadZipFile:
            ok = False
    if not ok:
        os.replace(path, path + ".partial")
        print(f"incomplete checkpoint set aside: {path}.partial")
PYEOF
}

# train_runs SECONDS RUN...: all RUNs at once, each onmt_train limited to SECONDS.
train_runs() {
  local secs="$1"; shift
  local run pids=() runs=() rc i smi=""
  prepare_pairs "$@"
  if [ "$GPU" = 1 ] && command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,power.draw --format=csv \
      -l 15 >> "$LOGS/nvidia-smi.csv" 2>/dev/null &
    smi=$!
  fi
  log "training ${*} concurrently for ${secs}s each (GPU=$GPU THREADS=$THREADS WARMUP=$WARMUP LR=$LR)"
  for run in "$@"; do
    split_run "$run"
    local resume=0
    if [ "${FRESH:-0}" != 1 ] && [ -n "$(latest_checkpoint "$RUNS/$run")" ]; then resume=1; fi
    if [ "${FRESH:-0}" = 1 ]; then rm -rf "${RUNS:?}/${run:?}"; fi
    rm -f "$RUNS/$run/picked.txt"  # a new finish picks again
    RESUME="$resume" TIME_LIMIT="${secs}s" \
      "$TRAINING_DIR/train.sh" "$RPAIR" "$RVARIANT" > "$LOGS/$run.train.out" 2>&1 &
    pids+=("$!"); runs+=("$run")
    [ "$resume" = 0 ] || log "  $run resumes from $(basename "$(latest_checkpoint "$RUNS/$run")")"
  done
  local failed=0
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then rc=0; else rc=$?; fi
    run="${runs[$i]}"
    case "$rc" in
      0) log "  $run: finished its train_steps" ;;
      124|137) log "  $run: stopped at the time limit (expected)" ;;
      *) log "  $run: onmt_train FAILED (exit $rc); end of its log:"
         tail -25 "$RUNS/$run/train.log" 2>/dev/null || cat "$LOGS/$run.train.out"
         failed=1 ;;
    esac
    check_checkpoints "$run"
  done
  [ -z "$smi" ] || kill "$smi" 2>/dev/null || true
  "$PY" "$TRAINING_DIR/gpu_summary.py" "$RUNS" "$@" | sed 's/^/  /'
  return "$failed"
}

# --------------------------------------------------------------------------------- finish
# bleu_of SCORES_JSON
bleu_of() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["bleu"])' "$1"; }

finish_one() {
  local run="$1" latest avg pick dev_avg dev_latest
  split_run "$run"
  check_checkpoints "$run"
  latest="$(latest_checkpoint "$RUNS/$run")"
  [ -n "$latest" ] || { echo "$run: no checkpoint"; return 1; }
  avg="$("$TRAINING_DIR/average.sh" "$RPAIR" "$RVARIANT" "${AVG_N:-3}" 2>>"$LOGS/$run.finish.err")"
  # A finish in an earlier call (warm machine, resumed run) scored an older average of the
  # same name: drop those scores.
  rm -rf "$RUNS/$run/eval/$(basename "$avg" .pt)-dev" "$RUNS/$run/eval/$(basename "$avg" .pt)-test"
  case "${PICK:-avg}" in
    avg) pick="$avg" ;;
    latest) pick="$latest" ;;
    dev)
      SPLIT=dev SHOW=0 "$TRAINING_DIR/evaluate.sh" "$RPAIR" "$RVARIANT" "$latest"
      dev_latest="$(bleu_of "$RUNS/$run/eval/$(basename "$latest" .pt)-dev/scores.json")"
      SPLIT=dev SHOW=0 "$TRAINING_DIR/evaluate.sh" "$RPAIR" "$RVARIANT" "$avg"
      dev_avg="$(bleu_of "$RUNS/$run/eval/$(basename "$avg" .pt)-dev/scores.json")"
      pick="$("$PY" -c 'import sys; a, l = map(float, sys.argv[1:3]); print(sys.argv[3] if a >= l else sys.argv[4])' \
        "$dev_avg" "$dev_latest" "$avg" "$latest")" ;;
    *) die "PICK must be avg, latest or dev" ;;
  esac
  [ -f "$RUNS/$run/eval/$(basename "$pick" .pt)-dev/scores.json" ] || \
    SPLIT=dev SHOW=0 "$TRAINING_DIR/evaluate.sh" "$RPAIR" "$RVARIANT" "$pick"
  SPLIT=test SHOW=3 "$TRAINING_DIR/evaluate.sh" "$RPAIR" "$RVARIANT" "$pick"
  MODEL_DIR="$WORK/export/$run" "$TRAINING_DIR/export.sh" "$RPAIR" "$RVARIANT" "$pick"
  echo "$(basename "$pick") (of $(basename "$latest"); PICK=${PICK:-avg}, AVG_N=${AVG_N:-3})" \
    > "$RUNS/$run/picked.txt"
}

finish_runs() {
  local run pids=() runs=() i failed=0
  log "finishing ${*}: average, evaluate (dev, test), export"
  for run in "$@"; do
    finish_one "$run" > "$LOGS/$run.finish.log" 2>&1 &
    pids+=("$!"); runs+=("$run")
  done
  for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
      failed=1; log "  ${runs[$i]}: finish FAILED; end of its log:"; tail -20 "$LOGS/${runs[$i]}.finish.log"
    fi
  done
  log "finished"
  collect_runs "$@"
  return "$failed"
}

# collect_runs RUN...: summary, results tarball and the split model tarball into RESULTS.
collect_runs() {
  local run stage="$WORK/collect" models=() limit=$((60 * 1048576)) total=0 size
  rm -rf "$stage"; mkdir -p "$stage/results"
  "$PY" "$TRAINING_DIR/gpu_summary.py" "$RUNS" "$@" --json "$stage/results/summary.json" \
    > "$stage/summary.txt"
  {
    echo "host $(hostname 2>/dev/null || echo ?); $(nproc) cpus; GPU=$GPU"
    command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version \
      --format=csv,noheader
    "$PY" -m rpt_onmt_compat report 2>/dev/null || true
    echo "WARMUP=$WARMUP LR=$LR SAVE_STEPS=$SAVE_STEPS VALID_STEPS=$VALID_STEPS KEEP=$KEEP" \
      "BATCH_SIZE=${BATCH_SIZE:-config} TRAIN_STEPS=${TRAIN_STEPS:-config} EXTRA=${EXTRA:-}" \
      "AVG_N=${AVG_N:-3} PICK=${PICK:-avg}"
    echo "elapsed in this call: $(( $(date +%s) - T0 )) s"
  } >> "$stage/summary.txt"
  for run in "$@"; do
    local d="$RUNS/$run" r="$stage/results/$run"
    mkdir -p "$r"
    for f in train.log config.yaml run_info.txt picked.txt; do
      [ -f "$d/$f" ] && cp "$d/$f" "$r/"
    done
    if [ -d "$d/eval" ]; then
      (cd "$d" && find eval -name scores.json -o -name hyp.txt -o -name translate.log) \
        | (cd "$d" && xargs -r tar -cf - ) | (cd "$r" && tar -xf -)
    fi
    [ -f "$WORK/export/$run/config.json" ] && cp "$WORK/export/$run/config.json" "$r/model-config.json"
  done
  cp "$LOGS"/*.log "$LOGS"/*.out "$LOGS"/*.csv "$stage/results/" 2>/dev/null || true
  cp "$stage/summary.txt" "$stage/results/"
  tar -C "$stage" -czf "$RESULTS/${RESULT_PREFIX:-}results.tar.gz" results
  cp "$stage/summary.txt" "$RESULTS/${RESULT_PREFIX:-}summary.txt"

  if [ -n "${COLLECT_MODELS+x}" ]; then
    read -r -a models <<< "$COLLECT_MODELS"
  else
    for run in "$@"; do case "$run" in *-relative) models+=("$run") ;; esac; done
  fi
  local keep=()
  for run in ${models[@]+"${models[@]}"}; do
    [ -f "$WORK/export/$run/model.bin" ] || { log "  no exported model for $run"; continue; }
    size=$(du -sb "$WORK/export/$run" | cut -f1)
    if [ $((total + size)) -gt "$limit" ]; then
      log "  $run's model does not fit in this call's 64 MiB: run 'collect $run' in another call"
      continue
    fi
    total=$((total + size)); keep+=("$run")
  done
  if [ "${#keep[@]}" -gt 0 ]; then
    tar -C "$WORK/export" -cf "$stage/models.tar" "${keep[@]}"
    (cd "$stage" && sha256sum models.tar) > "$RESULTS/${RESULT_PREFIX:-}models.tar.sha256"
    split -b 15M -d -a 2 "$stage/models.tar" "$RESULTS/${RESULT_PREFIX:-}models.tar.part-"
    rm -f "$stage/models.tar"
    log "models ${keep[*]}: $(du -ch "$RESULTS"/"${RESULT_PREFIX:-}"models.tar.part-* | tail -1 | cut -f1) in $(find "$RESULTS" -name "${RESULT_PREFIX:-}models.tar.part-*" | wc -l) parts"
  fi
  log "results in $RESULTS:"
  find "$RESULTS" -maxdepth 1 -type f -printf '  %10s  %f\n' | sort -k2
  echo; cat "$stage/summary.txt"
}

# ---------------------------------------------------------------------------------- smoke
smoke() {
  local s="$WORK/smoke" run
  rm -rf "$s"; mkdir -p "$s/data"
  for split in train dev test; do
    local n; case "$split" in train) n=20000 ;; *) n=20 ;; esac
    head -n "$n" "$DATA/ui.en-de.$split.tsv" > "$s/data/ui.en-de.$split.tsv"
  done
  export RUNS="$s/runs" DATA="$s/data"
  local saved_logs="$LOGS" saved_work="$WORK"
  LOGS="$s/logs"; mkdir -p "$LOGS"
  log "smoke: preparing a 20k-sentence slice of en-de (vocabulary 2000)"
  "$PY" "$TRAINING_DIR/prepare.py" --pair en-de --data "$DATA" --out "$RUNS/data/en-de" \
    --vocab-size 2000 > "$LOGS/prepare-en-de.log" 2>&1 || { tail "$LOGS/prepare-en-de.log"; die "prepare failed"; }
  local runs=(en-de-relative en-de-sinusoidal)
  local extra="report_every=5 ${EXTRA:-}"
  TRAIN_STEPS=20 SAVE_STEPS=10 VALID_STEPS=10 BATCH_SIZE=1024 WARMUP=10 KEEP=3 EXTRA="$extra" \
    train_runs 600 "${runs[@]}"
  log "smoke: resuming en-de-relative to step 30 (train_from: torch.load of a full checkpoint)"
  TRAIN_STEPS=30 SAVE_STEPS=10 VALID_STEPS=10 BATCH_SIZE=1024 WARMUP=10 KEEP=3 EXTRA="$extra" \
    train_runs 600 en-de-relative
  grep -q "model_step_30.pt" <(ls "$RUNS/en-de-relative/ckpt") || die "resume did not reach step 30"
  WORK="$s"
  # An untrained model rarely ends a sentence: cap the length so decoding stays quick.
  MAXLEN="${MAXLEN:-40}" AVG_N=2 RESULT_PREFIX=smoke- COLLECT_MODELS="${runs[*]}" \
    finish_runs "${runs[@]}"
  WORK="$saved_work"
  # The round trip the session does with the real models: reassemble the parts, check, unpack.
  local chk="$s/reassemble"; mkdir -p "$chk"
  cat "$RESULTS"/smoke-models.tar.part-* > "$chk/models.tar"
  (cd "$chk" && sed 's/ .*models.tar$/  models.tar/' "$RESULTS/smoke-models.tar.sha256" | sha256sum -c --quiet) \
    || die "reassembled models.tar does not match its checksum"
  tar -C "$chk" -xf "$chk/models.tar"
  for run in "${runs[@]}"; do
    cmp -s "$chk/$run/model.bin" "$s/export/$run/model.bin" || die "$run/model.bin differs after the round trip"
  done
  rm -rf "$chk"
  # The smoke's models are not results: keep only its summary and logs in RESULTS.
  rm -f "$RESULTS"/smoke-models.tar.*
  LOGS="$saved_logs"
  log "SMOKE OK: prepare, concurrent train, resume, average, evaluate, export, split/reassemble"
}

# ---------------------------------------------------------------------------------- stages
runs_or_default() {
  if [ $# -gt 0 ]; then printf '%s\n' "$@"; else printf '%s\n' "${DEFAULT_RUN_LIST[@]}"; fi
}

case "$STAGE" in
  setup) setup ;;
  smoke) setup; smoke ;;
  train)
    [ $# -ge 1 ] || usage
    minutes="$1"; shift
    mapfile -t RUN_LIST < <(runs_or_default "$@")
    setup
    train_runs "$(awk -v m="$minutes" 'BEGIN {printf "%d", m * 60}')" "${RUN_LIST[@]}" ;;
  finish)
    mapfile -t RUN_LIST < <(runs_or_default "$@")
    setup; finish_runs "${RUN_LIST[@]}" ;;
  collect)
    mapfile -t RUN_LIST < <(runs_or_default "$@")
    setup; collect_runs "${RUN_LIST[@]}" ;;
  all)
    [ $# -ge 1 ] || usage
    budget="$1"; shift
    mapfile -t RUN_LIST < <(runs_or_default "$@")
    setup
    prepare_pairs "${RUN_LIST[@]}"
    secs=$(( T0 + budget - ${FINISH_RESERVE:-180} - $(date +%s) ))
    if [ "$secs" -ge 60 ]; then
      train_runs "$secs" "${RUN_LIST[@]}" || log "some runs failed; finishing the others"
      # Logs and summary into RESULTS now, in case finish overruns the call's limit.
      COLLECT_MODELS="" collect_runs "${RUN_LIST[@]}" > /dev/null 2>&1 || true
    else
      log "only ${secs}s left before the finish reserve: no training in this call"
    fi
    finish_runs "${RUN_LIST[@]}" ;;
  *) usage ;;
esac
log "done ($STAGE)"
