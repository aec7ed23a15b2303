#!/usr/bin/env bash
# Convert a checkpoint to an rpt model directory: training/export.sh PAIR [VARIANT] [CKPT]
#   CKPT defaults to the run's latest checkpoint.
#   Output: models/PAIR in the repo for the relative variant (the models we ship), otherwise
#   $RUNS/PAIR-VARIANT/model (ablations are not committed). MODEL_DIR=dir overrides (not OUT:
#   the device machine exports OUT as its result folder).
# Uses tools/convert_onmt.py with float16 weights and the joint SentencePiece model as both
# source and target tokenizer.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

parse_run_args export.sh "$@"
if [ "$VARIANT" = relative ]; then DEFAULT_OUT="$REPO/models/$PAIR"; else DEFAULT_OUT="$RUN/model"; fi
OUT="${MODEL_DIR:-$DEFAULT_OUT}"
NAME="${NAME:-$PAIR}"
[ "$VARIANT" = relative ] || NAME="${NAME}-$VARIANT"
[ -f "$REPO/tools/convert_onmt.py" ] || die "tools/convert_onmt.py not found"

"$PY" "$REPO/tools/convert_onmt.py" "$CKPT" "$OUT" --dtype float16 \
  --src-spm "$PREP/spm.model" --tgt-spm "$PREP/spm.model" --name "$NAME" \
  --source-language "${PAIR%%-*}" --target-language "${PAIR#*-}"
echo "exported $CKPT -> $OUT"
du -sh "$OUT"/* "$OUT"
