#!/usr/bin/env bash
# Train one model: training/train.sh PAIR [VARIANT]
#   PAIR     en-de | en-fr
#   VARIANT  relative (default; Shaw et al., k = 16) | sinusoidal (absolute baseline) | k0
#
# Prepares the data first if needed (prepare.py), renders config/PAIR.yaml into
# $RUNS/PAIR-VARIANT/config.yaml and runs onmt_train in the foreground. Checkpoints go to
# $RUNS/PAIR-VARIANT/ckpt/, onmt_train's whole output (appended) to $RUNS/PAIR-VARIANT/train.log;
# its step reports, validations and checkpoints are also shown on stderr as they come.
#
# Environment (all optional):
#   RUNS=../train_runs DATA=../shared/data VENV=/work/venv
#   THREADS=1          CPU threads for torch (OMP/MKL); ignored work is niced by NICE=10
#   GPU=1              train on GPU 0 (gpu_ranks [0])
#   TRAIN_STEPS BATCH_SIZE WARMUP LR SAVE_STEPS VALID_STEPS KEEP SEED   hyperparameter overrides
#   EXTRA="key=value ..."   any other onmt option, YAML-parsed (e.g. EXTRA="accum_count=[2]")
#   RESUME=1           continue from the latest checkpoint of the run
#   QUIET=1            no progress lines (steps, validations, checkpoints) on stderr
#   TIME_LIMIT=130m    stop onmt_train after this long (coreutils timeout: 130m, 2h); Noam does
#                      not depend on train_steps, so a run cut short is just a shorter run
# Example (background, CPU, one thread):
#   nohup training/train.sh en-de relative > /dev/null 2>&1 &
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PAIR="${1:-}"; VARIANT="${2:-relative}"
[ -n "$PAIR" ] || die "usage: train.sh PAIR [VARIANT]"
check_pair "$PAIR"; check_variant "$VARIANT"

THREADS="${THREADS:-1}"
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS"
NICE="${NICE:-10}"

PREP="$RUNS/data/$PAIR"
RUN="$RUNS/$PAIR-$VARIANT"
mkdir -p "$RUN/ckpt"

if [ ! -f "$PREP/vocab.txt" ]; then
  echo "preparing $PAIR from $DATA into $PREP"
  nice -n "$NICE" "$PY" "$TRAINING_DIR/prepare.py" --pair "$PAIR" --data "$DATA" --out "$PREP"
fi

SETS=()
[ -n "${TRAIN_STEPS:-}" ] && SETS+=(--set "train_steps=$TRAIN_STEPS")
[ -n "${BATCH_SIZE:-}" ]  && SETS+=(--set "batch_size=$BATCH_SIZE")
[ -n "${WARMUP:-}" ]      && SETS+=(--set "warmup_steps=$WARMUP")
[ -n "${LR:-}" ]          && SETS+=(--set "learning_rate=$LR")
[ -n "${SAVE_STEPS:-}" ]  && SETS+=(--set "save_checkpoint_steps=$SAVE_STEPS")
[ -n "${VALID_STEPS:-}" ] && SETS+=(--set "valid_steps=$VALID_STEPS")
[ -n "${KEEP:-}" ]        && SETS+=(--set "keep_checkpoint=$KEEP")
[ -n "${SEED:-}" ]        && SETS+=(--set "seed=$SEED")
if [ "${GPU:-0}" = 1 ]; then
  SETS+=(--set "gpu_ranks=[0]" --set "world_size=1")
fi
for kv in ${EXTRA:-}; do SETS+=(--set "$kv"); done
if [ "${RESUME:-0}" = 1 ]; then
  LAST="$(latest_checkpoint "$RUN")"
  [ -n "$LAST" ] || die "RESUME=1 but no checkpoint in $RUN/ckpt"
  SETS+=(--set "train_from=$LAST")
  echo "resuming from $LAST"
fi

"$PY" "$TRAINING_DIR/render_config.py" "$TRAINING_DIR/config/$PAIR.yaml" \
  --variant "$VARIANT" --data "$PREP" --run "$RUN" ${SETS[@]+"${SETS[@]}"} > "$RUN/config.yaml"

{
  echo "# $(date -Is) train.sh $PAIR $VARIANT"
  echo "# host $(hostname) cpu '$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)' threads $THREADS gpu ${GPU:-0}"
  echo "# repo $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo uncommitted)"
  env | grep -E '^(TRAIN_STEPS|BATCH_SIZE|WARMUP|LR|SAVE_STEPS|VALID_STEPS|KEEP|SEED|EXTRA|RESUME|TIME_LIMIT|THREADS|GPU)=' || true
} > "$RUN/run_info.txt"

echo "run $RUN: config $RUN/config.yaml, log $RUN/train.log"
LIMIT=()
# TERM first; KILL 30 s later if onmt_train has not exited (a stuck CUDA context ignores TERM)
[ -n "${TIME_LIMIT:-}" ] && LIMIT=(timeout --signal=TERM --kill-after=30s "$TIME_LIMIT")
# onmt's own log_file stops after model setup in 3.5.1 (training steps go to stderr only), so
# the log is onmt_train's stdout and stderr.
cat "$RUN/run_info.txt" >> "$RUN/train.log"
log_start=$(stat -c %s "$RUN/train.log")
${LIMIT[@]+"${LIMIT[@]}"} nice -n "$NICE" "$ONMT_BIN/onmt_train" -config "$RUN/config.yaml" \
  >> "$RUN/train.log" 2>&1 &
train_pid=$!
trap 'kill -TERM "$train_pid" 2>/dev/null' TERM INT
# Progress on stderr: onmt_train's step reports (every report_every steps), validations and
# checkpoints, as they reach the log (QUIET=1: none).
follow_log "$train_pid" "$RUN/train.log" 'Step [0-9]+/|Validation|Saving checkpoint|Error|error' "$log_start" &
status=0
wait "$train_pid" || status=$?
wait
exit "$status"
