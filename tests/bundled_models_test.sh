#!/usr/bin/env bash
# Every bundled model (models/*/) loads and translates: one non-empty line per input, and the
# common UI placeholders of these inputs come through in most outputs (the models keep 65-99% of
# placeholders on the test splits, docs/MODELS.md). Usage: bundled_models_test.sh RPT_TRANSLATE REPO
set -uo pipefail
translate=$1
repo=$2
source "$(dirname "${BASH_SOURCE[0]}")/support/check.sh"

printf '%s\n' 'Open file' 'Save the file as %s' '%d files were copied to %s.' 'Print preview' \
  'Are you sure you want to quit without saving your changes?' > "$work/in.txt"
models=0
for model in "$repo"/models/*/; do
  [ -f "$model/config.json" ] || continue
  models=$((models + 1))
  name=$(basename "$model")
  "$translate" --model "$model" --beam-size 4 < "$work/in.txt" > "$work/$name.txt" 2> "$work/$name.err"
  check "$name: exit 0" test $? -eq 0
  check "$name: one line per input" test "$(wc -l < "$work/$name.txt")" -eq 5
  check "$name: no empty translation" test "$(grep -c '^$' "$work/$name.txt")" -eq 0
  check "$name: %s comes through in at least one of its two sentences" \
    test "$(sed -n '2p;3p' "$work/$name.txt" | grep -c '%s')" -ge 1
  sed "s/^/    $name: /" "$work/$name.txt"
done
check "models/ holds the bundled models" test "$models" -ge 2
exit $((failures > 0))
