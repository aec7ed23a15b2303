#!/usr/bin/env bash
# Every bundled model (models/*/) loads and translates: one non-empty line per input, the common
# UI placeholders of these inputs come through in most outputs (the models keep ~90% of
# placeholders on the test splits, docs/MODELS.md), and a sentence's translation does not depend
# on its batch (one at a time against 16 at a time; batch_invariance_* in tests/CMakeLists.txt
# checks more sentences). Usage: bundled_models_test.sh RPT_TRANSLATE REPO
set -uo pipefail
translate=$1
repo=$2
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"

printf '%s\n' 'Open file' 'Save the file as %s' '%d files were copied to %s.' 'Print preview' \
  'Are you sure you want to quit without saving your changes?' > "$work/in.txt"
# Strings of the kind the models were trained on, short and long, with placeholders.
printf '%s\n' 'Cancel' 'Close the window' 'Delete the selected files?' 'Could not open %s: %s' \
  'The printer is out of paper.' 'Show hidden files' 'Downloading %d of %d packages' \
  'Your password has expired. Please choose a new one.' 'Undo' 'Select all' \
  'The file %s already exists. Do you want to replace it?' 'Connecting to %s...' \
  'Failed to mount the volume.' 'Check for updates automatically' 'Unknown error' \
  'Remove the account %s and all its settings?' 'Settings' 'Import contacts from a file' \
  'The operation was cancelled by the user.' 'Error while reading the configuration file %s' \
  > "$work/batch.txt"
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
  for batch in 1 16; do
    "$translate" --model "$model" --beam-size 4 --batch-size $batch < "$work/batch.txt" \
      > "$work/$name.batch$batch.txt" 2>> "$work/$name.err"
    check "$name: batch size $batch: exit 0" test $? -eq 0
    check "$name: batch size $batch: 20 non-empty lines" \
      test "$(grep -c . "$work/$name.batch$batch.txt")" -eq 20
  done
  check "$name: the same translations alone and 16 at a time" \
    cmp -s "$work/$name.batch1.txt" "$work/$name.batch16.txt"
  # int8 (quantized at load): these 20 come out the same alone and 16 at a time, and close to
  # float32 (the test splits keep ~90% of translations identical, docs/MODELS.md): at least 15
  # of these 20.
  for batch in 1 16; do
    "$translate" --model "$model" --compute-type int8 --beam-size 4 --batch-size $batch \
      < "$work/batch.txt" > "$work/$name.int8.batch$batch.txt" 2>> "$work/$name.err"
    check "$name: int8 batch size $batch: exit 0" test $? -eq 0
  done
  check "$name: int8: the same translations alone and 16 at a time" \
    cmp -s "$work/$name.int8.batch1.txt" "$work/$name.int8.batch16.txt"
  same=$(paste -d '\t' "$work/$name.batch16.txt" "$work/$name.int8.batch16.txt" |
    awk -F '\t' '$1 == $2' | wc -l)
  echo "    $name: int8 = float32 on $same of 20"
  check "$name: int8 = float32 on at least 15 of 20" test "$same" -ge 15
done
check "models/ holds the bundled models" test "$models" -ge 2
exit $((failures > 0))
