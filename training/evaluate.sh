#!/usr/bin/env bash
# Translate a split with OpenNMT-py and score it: training/evaluate.sh PAIR [VARIANT] [CKPT]
#   CKPT defaults to the run's latest checkpoint ($RUNS/PAIR-VARIANT/ckpt/model_step_*.pt);
#   pass e.g. $RUNS/PAIR-VARIANT/avg_last3.pt (average.sh) to score an average.
# Writes $RUNS/PAIR-VARIANT/eval/<ckpt name>-<split>/{hyp.sp,hyp.txt,scores.json,translate.log}
# and prints BLEU, chrF and the placeholder pass-through rate.
#
# Decoding settings (the same ones rpt-translate must use for the parity check):
#   beam 4, length_penalty avg with alpha 1.0 (score / length^1, OpenNMT-py's default),
#   max_length 250 with no source-length ratio cap (OpenNMT-py 3.5 defaults to 1.25 x source
#   + 5; rpt has no such cap), no coverage penalty, no n-gram blocking, no unk replacement.
# Environment: SPLIT=test|dev  BEAM=4  LP=avg  ALPHA=1.0  MAXLEN=250  BATCH=32  GPU=1
#              THREADS=1 NICE=10 RUNS=... VENV=...  QUIET=1 (no progress line every 10 s)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

parse_run_args evaluate.sh "$@"
SPLIT="${SPLIT:-test}"
[ -f "$PREP/$SPLIT.sp.src" ] || die "$PREP/$SPLIT.sp.src missing: run prepare.py --pair $PAIR"

THREADS="${THREADS:-1}"
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS"
NICE="${NICE:-10}"
OUT="$RUN/eval/$(basename "$CKPT" .pt)-$SPLIT"
mkdir -p "$OUT"

GPU_ARGS=()
[ "${GPU:-0}" = 1 ] && GPU_ARGS=(-gpu 0)

echo "translating $PREP/$SPLIT.sp.src with $CKPT -> $OUT"
START=$(date +%s.%N)
rm -f "$OUT/hyp.sp"
nice -n "$NICE" "$ONMT_BIN/onmt_translate" -model "$CKPT" -src "$PREP/$SPLIT.sp.src" \
  -output "$OUT/hyp.sp" -beam_size "${BEAM:-4}" -length_penalty "${LP:-avg}" \
  -alpha "${ALPHA:-1.0}" -max_length "${MAXLEN:-250}" -max_length_ratio 0 \
  -batch_size "${BATCH:-32}" \
  -batch_type sents ${GPU_ARGS[@]+"${GPU_ARGS[@]}"} > "$OUT/translate.log" 2>&1 &
translate_pid=$!
count_lines "$translate_pid" "$OUT/hyp.sp" "$(wc -l < "$PREP/$SPLIT.sp.src")" "onmt_translate" &
wait "$translate_pid" \
  || { tail -20 "$OUT/translate.log" >&2; die "onmt_translate failed (log: $OUT/translate.log)"; }
wait
END=$(date +%s.%N)
"$PY" "$TRAINING_DIR/spm_decode.py" "$PREP/spm.model" < "$OUT/hyp.sp" > "$OUT/hyp.txt"
"$PY" "$TRAINING_DIR/score.py" --src "$PREP/$SPLIT.src" --ref "$PREP/$SPLIT.tgt" \
  --hyp "$OUT/hyp.txt" --json "$OUT/scores.json" --show "${SHOW:-5}"
"$PY" - "$OUT/scores.json" "$START" "$END" "$CKPT" "$THREADS" "${GPU:-0}" <<'PYEOF'
import json, sys
path, start, end, ckpt, threads, gpu = sys.argv[1:]
r = json.load(open(path))
r.update({"checkpoint": ckpt, "translate_seconds": round(float(end) - float(start), 1),
          "threads": int(threads), "gpu": gpu == "1",
          "decoding": "onmt_translate beam 4, length_penalty avg alpha 1.0, max_length 250"})
json.dump(r, open(path, "w"), indent=2, ensure_ascii=False)
print(f"BLEU {r['bleu']}  chrF {r['chrf']}  placeholders {r['placeholder_pass_rate']:.1%} "
      f"of {r['sentences_with_placeholders']}  ({r['translate_seconds']} s) -> {path}")
PYEOF
