#!/usr/bin/env bash
# The device tool sends the tracked working tree plus the carried paths, 64 MiB in all. With both
# bundled models (40 MB) and the fixtures' OpenNMT-py checkpoints (9 MB) the tree is ~61 MiB, too
# much to carry a device pack (~12 MB, tools/device_pack.sh) beside it. For a GPU session:
#
#   tools/device_slim.sh on    # models/en-fr and tests/fixtures/*/checkpoint.pt leave the index
#                              # (the files stay on disk) and are ignored through
#                              # .git/info/exclude: they no longer travel; device_pack.sh then
#                              # packs models/en-fr (xz) so the GPU checks still see both models
#   ... device runs ...
#   tools/device_slim.sh off   # tracked again
#
# Never commit while "on": the commit would delete them. `tools/device_slim.sh status` says which
# state the checkout is in.
set -euo pipefail
cd "$(dirname "$0")/.."
SLIMMED=(models/en-fr tests/fixtures/*/checkpoint.pt)
EXCLUDE=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCLUDE")"
touch "$EXCLUDE"
case "${1:-status}" in
  on)
    for path in "${SLIMMED[@]}"; do
      git rm -r -q --cached "$path"
      grep -qxF "/$path" "$EXCLUDE" || echo "/$path" >> "$EXCLUDE"
    done
    echo "slim: ${SLIMMED[*]} untracked for device runs; run 'tools/device_slim.sh off' before any commit"
    ;;
  off)
    for path in "${SLIMMED[@]}"; do
      sed -i "\\|^/$path\$|d" "$EXCLUDE"
      git add "$path"
    done
    echo "slim off: ${SLIMMED[*]} tracked again"
    ;;
  status)
    if git ls-files --error-unmatch models/en-fr/model.bin > /dev/null 2>&1; then
      echo "off: everything is tracked"
    else
      echo "ON: ${SLIMMED[*]} untracked (run 'tools/device_slim.sh off' before committing)"
    fi
    echo "tracked tree: $(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) bytes"
    ;;
  *) echo "usage: tools/device_slim.sh on|off|status" >&2; exit 2 ;;
esac
