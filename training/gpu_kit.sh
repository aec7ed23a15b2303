#!/usr/bin/env bash
# Build the GPU training kit (run HERE, on the workstation): training/gpu_kit.sh
#
# Writes .device/kit/kit.tar.xz (git-ignored; carried to the device machine with
# carry [".device/kit"]) holding what the device lacks:
#   wheels/  OpenNMT-py 3.5.1 and ConfigArgParse 1.9.0 (pure Python, installed with --no-deps;
#            torch, numpy, sentencepiece, sacrebleu and PyYAML are the device's own; pyonmttok,
#            spacy, fasttext, ahocorasick and rapidfuzz are replaced at run time by
#            training/onmt_compat, see rpt_onmt_compat.py)
#   data/    ui.en-{de,fr}.{train,dev,test}.tsv and PROVENANCE.md from $DATA
#   MANIFEST, SHA256SUMS  what is inside, when it was built; checksums of every file
# training/gpu_session.sh unpacks and uses it on the device.
#
# Environment: DATA=../shared/data  WHEELS=.device/wheels (download cache)  KIT_DIR=.device/kit
#              PIP_PY=python3 (any Python with pip; only `pip download` is used)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

WHEELS="${WHEELS:-$REPO/.device/wheels}"
KIT_DIR="${KIT_DIR:-$REPO/.device/kit}"
PIP_PY="${PIP_PY:-python3}"
# name==version: exactly what gpu_session.sh installs (one version of each, see README).
REQUIREMENTS=(OpenNMT-py==3.5.1 ConfigArgParse==1.9.0)

mkdir -p "$WHEELS" "$KIT_DIR"
git -C "$REPO" check-ignore -q "$KIT_DIR" || die "$KIT_DIR is not git-ignored (.gitignore: /.device/)"

# find_wheel NAME VERSION: the cached wheel's path, or nothing. Wheel file names normalise the
# project name (OpenNMT-py -> OpenNMT_py, ConfigArgParse -> configargparse).
find_wheel() {
  local f found=""
  shopt -s nocaseglob nullglob
  for f in "$WHEELS/${1//-/_}-$2-"*.whl; do found="$f"; break; done
  shopt -u nocaseglob nullglob
  echo "$found"
}

for req in "${REQUIREMENTS[@]}"; do
  name="${req%%==*}"; version="${req#*==}"
  if [ -z "$(find_wheel "$name" "$version")" ]; then
    "$PIP_PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 -d "$WHEELS" "$req"
  fi
done

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/kit/wheels" "$STAGE/kit/data"
for req in "${REQUIREMENTS[@]}"; do
  name="${req%%==*}"; version="${req#*==}"
  whl="$(find_wheel "$name" "$version")"
  [ -n "$whl" ] || die "no wheel for $req in $WHEELS"
  case "$whl" in *-none-any.whl) ;; *) die "$whl is not pure Python" ;; esac
  cp "$whl" "$STAGE/kit/wheels/"
done
for pair in en-de en-fr; do
  for split in train dev test; do
    f="$DATA/ui.$pair.$split.tsv"
    [ -f "$f" ] || die "$f missing (DATA=$DATA)"
    cp "$f" "$STAGE/kit/data/"
  done
done
[ -f "$DATA/PROVENANCE.md" ] && cp "$DATA/PROVENANCE.md" "$STAGE/kit/data/"
(cd "$STAGE/kit" && find wheels data -type f | sort | xargs sha256sum) > "$STAGE/kit/SHA256SUMS"
{
  echo "rpt GPU training kit, built $(date -Is) on $(hostname)"
  echo "repo $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "wheels: ${REQUIREMENTS[*]}"
  echo "data: $(cd "$STAGE/kit/data" && echo *)"
} > "$STAGE/kit/MANIFEST"

echo "compressing (xz -9, about a minute on one core) ..."
tar -C "$STAGE" -cf - kit | nice -n "${NICE:-10}" xz -9 -T1 > "$KIT_DIR/kit.tar.xz.tmp"
mv "$KIT_DIR/kit.tar.xz.tmp" "$KIT_DIR/kit.tar.xz"
# Everything in KIT_DIR travels when it is carried: keep it to the kit.
others="$(find "$KIT_DIR" -mindepth 1 ! -name kit.tar.xz | head -5)"
[ -z "$others" ] || echo "WARNING: $KIT_DIR holds more than the kit (it all travels): $others" >&2

kit_bytes=$(stat -c %s "$KIT_DIR/kit.tar.xz")
tree_bytes=$( { git -C "$REPO" ls-files -z; git -C "$REPO" ls-files -z --others --exclude-standard; } \
  | (cd "$REPO" && xargs -0 stat -c %s 2>/dev/null) | awk '{s+=$1} END {print s+0}')
echo "kit: $KIT_DIR/kit.tar.xz  $(awk -v b="$kit_bytes" 'BEGIN {printf "%.1f MiB", b/1048576}')"
echo "working tree that travels (tracked + untracked, not ignored): $(awk -v b="$tree_bytes" 'BEGIN {printf "%.1f MiB", b/1048576}')"
total=$((kit_bytes + tree_bytes))
echo "total: $(awk -v b="$total" 'BEGIN {printf "%.1f MiB of the 64 MiB a call may carry", b/1048576}')"
[ "$total" -lt $((60 * 1048576)) ] || echo "WARNING: less than 4 MiB left under the 64 MiB limit" >&2
(cd "$REPO" && sha256sum "${KIT_DIR#"$REPO"/}/kit.tar.xz")
