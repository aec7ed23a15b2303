#!/usr/bin/env bash
# Average the last N checkpoints of a run: training/average.sh PAIR [VARIANT] [N=3]
# Writes $RUNS/PAIR-VARIANT/avg_lastN.pt and prints its path. Compare it with the latest
# checkpoint on the dev split (SPLIT=dev evaluate.sh ...) and export the better one.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PAIR="${1:-}"; VARIANT="${2:-relative}"; N="${3:-3}"
[ -n "$PAIR" ] || die "usage: average.sh PAIR [VARIANT] [N]"
check_pair "$PAIR"; check_variant "$VARIANT"
RUN="$RUNS/$PAIR-$VARIANT"
mapfile -t CKPTS < <(ls "$RUN"/ckpt/model_step_*.pt 2>/dev/null \
  | sed 's/.*model_step_\([0-9]*\)\.pt/\1 &/' | sort -n | tail -"$N" | cut -d' ' -f2)
[ "${#CKPTS[@]}" -ge 1 ] || die "no checkpoints in $RUN/ckpt"
OUT="$RUN/avg_last$N.pt"
echo "averaging: ${CKPTS[*]}" >&2
OMP_NUM_THREADS=1 nice -n "${NICE:-10}" "$ONMT_BIN/onmt_average_models" -models "${CKPTS[@]}" -output "$OUT" >&2
echo "$OUT"
