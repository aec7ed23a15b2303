#!/usr/bin/env bash
# The device tool sends the tracked working tree plus the carried paths, 64 MiB in all. With both
# bundled models (40 MB) the tree is ~60 MiB, too much to carry a device pack (~13 MB,
# tools/device_pack.sh) or the training kit (~6 MB) beside it. For a GPU session:
#
#   tools/device_slim.sh on    # models/en-fr leaves the index (its files stay on disk) and is
#                              # ignored through .git/info/exclude: it no longer travels
#   ... device runs (bench/gpu_checks.sh then checks models/en-de) ...
#   tools/device_slim.sh off   # tracked again
#
# Never commit while "on": the commit would delete models/en-fr. `tools/device_slim.sh status`
# says which state the checkout is in.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=models/en-fr
EXCLUDE=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCLUDE")"
touch "$EXCLUDE"
case "${1:-status}" in
  on)
    git rm -r -q --cached "$MODEL"
    grep -qxF "/$MODEL/" "$EXCLUDE" || echo "/$MODEL/" >> "$EXCLUDE"
    echo "slim: $MODEL untracked for device runs; run 'tools/device_slim.sh off' before any commit"
    ;;
  off)
    sed -i "\\|^/$MODEL/\$|d" "$EXCLUDE"
    git add "$MODEL"
    echo "slim off: $MODEL tracked again"
    ;;
  status)
    if git ls-files --error-unmatch "$MODEL/model.bin" > /dev/null 2>&1; then
      echo "off: $MODEL is tracked"
    else
      echo "ON: $MODEL is untracked (run 'tools/device_slim.sh off' before committing)"
    fi
    echo "tracked tree: $(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) bytes"
    ;;
  *) echo "usage: tools/device_slim.sh on|off|status" >&2; exit 2 ;;
esac
