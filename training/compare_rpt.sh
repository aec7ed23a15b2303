#!/usr/bin/env bash
# The parity check of a trained model: rpt-translate against OpenNMT-py on the same checkpoint.
#   training/compare_rpt.sh PAIR [VARIANT] [CKPT]
# Run training/evaluate.sh with the same CKPT first (it writes OpenNMT-py's hyp.txt). This
# converts CKPT to float32 for rpt, translates the split with rpt-translate (beam 4, average
# length penalty alpha 1, max length 250: evaluate.sh's settings), scores it, and counts the
# sentences whose translations are identical. Results: $OUT/rpt.txt, $OUT/rpt_scores.json.
# Environment: SPLIT=test|dev  THREADS=1  RPT_TRANSLATE=build/cli/rpt-translate
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

parse_run_args compare_rpt.sh "$@"
SPLIT="${SPLIT:-test}"
OUT="$RUN/eval/$(basename "$CKPT" .pt)-$SPLIT"
[ -f "$OUT/hyp.txt" ] || die "no OpenNMT-py output in $OUT: run evaluate.sh first"
RPT_TRANSLATE="${RPT_TRANSLATE:-$REPO/build/cli/rpt-translate}"

"$PY" "$REPO/tools/convert_onmt.py" "$CKPT" "$OUT/rpt-model" --dtype float32 \
  --src-spm "$PREP/spm.model" --tgt-spm "$PREP/spm.model" > /dev/null
"$RPT_TRANSLATE" --model "$OUT/rpt-model" --split-sentences none --no-protect-spans --beam-size 4 --length-penalty 1 --max-length 250 \
  --threads "${THREADS:-1}" --verbose < "$PREP/$SPLIT.src" > "$OUT/rpt.txt" 2> "$OUT/rpt.log"
"$PY" "$TRAINING_DIR/score.py" --src "$PREP/$SPLIT.src" --ref "$PREP/$SPLIT.tgt" \
  --hyp "$OUT/rpt.txt" --json "$OUT/rpt_scores.json" --show 0
"$PY" - "$OUT" <<'PYEOF'
import json, sys
out = sys.argv[1]
onmt = open(f"{out}/hyp.txt", encoding="utf-8").read().splitlines()
ours = open(f"{out}/rpt.txt", encoding="utf-8").read().splitlines()
same = sum(a == b for a, b in zip(onmt, ours))
onmt_scores = json.load(open(f"{out}/scores.json"))
rpt_scores = json.load(open(f"{out}/rpt_scores.json"))
rpt_scores.update({"identical_to_onmt": same, "sentences": len(ours),
                   "rpt_translate": open(f"{out}/rpt.log").read().strip()})
json.dump(rpt_scores, open(f"{out}/rpt_scores.json", "w"), indent=2, ensure_ascii=False)
print(f"OpenNMT-py BLEU {onmt_scores['bleu']}  rpt BLEU {rpt_scores['bleu']}  "
      f"identical {same}/{len(ours)} ({same / len(ours):.2%})")
PYEOF
