#!/usr/bin/env bash
# Fails when C/C++ files are not formatted as .clang-format says (`clang-format --dry-run
# -Werror`): every tracked .cc, .h, .cu, .cuh (.cpp, .hpp, .c) file whole, or the lines changed
# since a base commit (with the diffs clang-format would make).
#
#   bash tools/check_format.sh --all   # every tracked C/C++ file, whole (CI, .ci/run): names
#                                      # each that would change; exit 1 when any would
#   bash tools/check_format.sh         # changes since HEAD~1, committed or not
#   bash tools/check_format.sh BASE    # changes since BASE, e.g. origin/main (RPT_FORMAT_BASE too)
#
# With no base to compare with (a single-commit or shallow clone, or no git checkout) it says so
# and passes: there is no change to hold to the style. Exit status: 0 formatted (or nothing to
# check), 1 unformatted lines (each shown as clang-format would write it), 2 no clang-format
# (bash tools/setup.sh installs it) or a bad BASE. CLANG_FORMAT names the binary (default:
# clang-format-14, the Debian 12 version the style was checked with, else clang-format).
# To fix: clang-format -i --lines=FIRST:LAST FILE, or `git clang-format BASE` (changed lines only).
set -euo pipefail
cd "$(dirname "$0")/.."

extensions=('*.cc' '*.h' '*.cu' '*.cuh' '*.cpp' '*.hpp' '*.c')

clang_format=${CLANG_FORMAT:-}
if [ -z "$clang_format" ]; then
  for candidate in clang-format-14 clang-format; do
    if command -v "$candidate" >/dev/null 2>&1; then
      clang_format=$candidate
      break
    fi
  done
fi
if [ -z "$clang_format" ] || ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "check_format: no clang-format found: bash tools/setup.sh installs it (Debian clang-format)" >&2
  exit 2
fi

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check_format: not a git checkout: no changes to check (skipped)"
  exit 0
fi

# `clang-format FILE` (with these line ranges) against FILE, as a unified diff; empty if formatted.
show_changes() {
  local file=$1
  shift
  "$clang_format" --style=file "$@" "$file" | diff -u --label "$file" --label "$file (formatted)" \
    "$file" - || true
}

if [ "${1:-}" = "--all" ]; then
  mapfile -t files < <(git ls-files -- "${extensions[@]}")
  unformatted=0
  for file in "${files[@]}"; do
    [ -f "$file" ] || continue
    if ! "$clang_format" --style=file --dry-run -Werror "$file" >/dev/null 2>&1; then
      echo "$file"
      unformatted=$((unformatted + 1))
    fi
  done
  echo "check_format: $unformatted of ${#files[@]} C/C++ files would change under clang-format"
  [ "$unformatted" -eq 0 ]
  exit
fi

base=${1:-${RPT_FORMAT_BASE:-HEAD~1}}
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
  if [ -z "${1:-}" ] && [ -z "${RPT_FORMAT_BASE:-}" ]; then
    echo "check_format: no commit before HEAD (a single-commit or shallow clone): nothing to" \
      "compare with (skipped)"
    exit 0
  fi
  echo "check_format: base '$base' is not a commit" >&2
  exit 2
fi

# The new-side line ranges of every changed file (added, copied, modified or renamed; not
# deleted) from one zero-context diff: `+++ b/FILE` names the file, each `@@ -a,b +start,count @@`
# hunk a range (count absent: 1; 0: lines removed only). Renames are followed (-M), so a moved
# file is held to the style only where its text changed.
declare -A ranges=()
files=()
while IFS=$'\t' read -r file range; do
  [ -n "${ranges[$file]+set}" ] || files+=("$file")
  ranges[$file]+="$range "
done < <(git diff --no-ext-diff --no-color -M -U0 --diff-filter=ACMR --src-prefix=a/ \
  --dst-prefix=b/ "$base" -- "${extensions[@]}" | awk '
    /^diff --git / { file = ""; next }
    /^\+\+\+ b\// { file = substr($0, 7); next }
    /^@@ / && file != "" {
      split($3, side, ",")  # "+start,count" or "+start"
      start = substr(side[1], 2) + 0
      count = (2 in side) ? side[2] + 0 : 1
      if (count > 0) print file "\t--lines=" start ":" (start + count - 1)
    }')

failed=()
for file in "${files[@]}"; do
  [ -f "$file" ] || continue
  read -ra lines <<<"${ranges[$file]}"
  if ! "$clang_format" --style=file --dry-run -Werror "${lines[@]}" "$file" >/dev/null 2>&1; then
    failed+=("$file")
    show_changes "$file" "${lines[@]}"
  fi
done
checked=${#files[@]}

if [ ${#failed[@]} -gt 0 ]; then
  echo "check_format: ${#failed[@]} of $checked changed C/C++ files have unformatted changed" \
    "lines (since $base): ${failed[*]}" >&2
  echo "check_format: fix with \`git clang-format $base\` (or clang-format -i --lines=A:B FILE)" >&2
  exit 1
fi
echo "check_format: the changed lines of $checked C/C++ files since $base follow .clang-format"
