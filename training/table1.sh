#!/usr/bin/env bash
# The paper's Table 1 in miniature: relative positions (Shaw, k = 16) against an absolute
# (sinusoidal) baseline and no position information at all (k = 0), same size, data, recipe and
# number of steps; each scored on the test split at the same step.
#
#   training/table1.sh PAIR STEP
#
# Trains whatever variant lacks $RUNS/PAIR-VARIANT/ckpt/model_step_STEP.pt (train.sh with the
# CPU recipe below, TRAIN_STEPS=STEP), evaluates each variant's step-STEP checkpoint
# (evaluate.sh: onmt_translate beam 4, sacrebleu) and prints a Markdown table: validation
# perplexity/accuracy at STEP, test BLEU/chrF, placeholders, training speed.
#
# Environment (optional): VARIANTS="relative sinusoidal k0" (the default); CONCURRENT=1 trains the missing variants at the same time, THREADS
# each (default 1; on a 2-core machine two 1-thread runs beat one 2-thread run after another);
# GPU=1; the recipe: BATCH_SIZE=4096 WARMUP=400 LR=0.3 VALID_STEPS=500 (models/en-fr's), which
# must match the runs already there; TIME_LIMIT per training run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PAIR="${1:-}"; STEP="${2:-}"
[ -n "$PAIR" ] && [ -n "$STEP" ] || die "usage: table1.sh PAIR STEP"
check_pair "$PAIR"
read -r -a VARIANTS <<< "${VARIANTS:-relative sinusoidal k0}"
export THREADS="${THREADS:-1}" BATCH_SIZE="${BATCH_SIZE:-4096}" WARMUP="${WARMUP:-400}" \
       LR="${LR:-0.3}" VALID_STEPS="${VALID_STEPS:-500}"

checkpoint() { echo "$RUNS/$PAIR-$1/ckpt/model_step_$STEP.pt"; }

pids=()
for variant in "${VARIANTS[@]}"; do
  [ -f "$(checkpoint "$variant")" ] && continue
  RESUME=0
  [ -n "$(latest_checkpoint "$RUNS/$PAIR-$variant")" ] && RESUME=1
  echo "training $PAIR $variant to step $STEP (resume: $RESUME)"
  if [ "${CONCURRENT:-0}" = 1 ]; then
    RESUME=$RESUME TRAIN_STEPS=$STEP SAVE_STEPS=$VALID_STEPS "$TRAINING_DIR/train.sh" \
      "$PAIR" "$variant" > /dev/null &
    pids+=($!)
  else
    RESUME=$RESUME TRAIN_STEPS=$STEP SAVE_STEPS=$VALID_STEPS "$TRAINING_DIR/train.sh" \
      "$PAIR" "$variant" > /dev/null
  fi
done
for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid"; done

for variant in "${VARIANTS[@]}"; do
  ckpt="$(checkpoint "$variant")"
  [ -f "$ckpt" ] || die "$ckpt missing after training (see $RUNS/$PAIR-$variant/train.log)"
  scores="$RUNS/$PAIR-$variant/eval/model_step_$STEP-test/scores.json"
  [ -f "$scores" ] || SPLIT=test "$TRAINING_DIR/evaluate.sh" "$PAIR" "$variant" "$ckpt"
done
"$PY" "$TRAINING_DIR/table1.py" --runs "$RUNS" --pair "$PAIR" --step "$STEP" "${VARIANTS[@]}"
