#!/usr/bin/env bash
# Do two builds of rpt-translate translate alike? Both bundled models' full test splits, float32
# and int8, batch 32 and 1, beam 4, scores included: every output file must be byte-identical.
# For refactors that must not change a bit (a build of the previous commit against this one).
#
#   bench/compare_builds.sh OLD_RPT_TRANSLATE NEW_RPT_TRANSLATE [OUT_DIR]
#
# e.g. git worktree add /tmp/before HEAD~1 && cmake -S /tmp/before -B /tmp/before/build -G Ninja
#      -DCMAKE_BUILD_TYPE=Release -DRPT_BUILD_TESTS=OFF -DRPT_BUILD_BENCH=OFF &&
#      cmake --build /tmp/before/build --target rpt-translate &&
#      bench/compare_builds.sh /tmp/before/build/cli/rpt-translate build/cli/rpt-translate
# (a commit from before cli/ existed builds tools/rpt-translate). Exit 1 when any file differs;
# exit 77 without ../shared/data.
set -euo pipefail
old=$1
new=$2
out=${3:-$(mktemp -d)}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=$repo/../shared/data
[ -f "$data/ui.en-de.test.tsv" ] || { echo "compare_builds: no test splits in $data"; exit 77; }
mkdir -p "$out/old" "$out/new"
differ=0
for pair in en-de en-fr; do
  cut -f1 "$data/ui.$pair.test.tsv" > "$out/$pair.src"
  for type in float32 int8; do
    for batch in 32 1; do
      name=$pair.$type.b$batch.txt
      for side in old new; do
        binary=$old
        [ "$side" = new ] && binary=$new
        "$binary" --model "$repo/models/$pair" --compute-type "$type" --batch-size "$batch" \
          --beam-size 4 --with-scores --quiet --threads 1 < "$out/$pair.src" > "$out/$side/$name"
      done
      if cmp -s "$out/old/$name" "$out/new/$name"; then
        echo "$name: identical ($(wc -l < "$out/new/$name") lines, scores included)"
      else
        echo "$name: DIFFERS ($(diff "$out/old/$name" "$out/new/$name" | grep -c '^<') lines)"
        differ=1
      fi
    done
  done
done
exit $differ
