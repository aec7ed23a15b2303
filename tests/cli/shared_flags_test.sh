#!/usr/bin/env bash
# rpt-translate and rpt-server declare the flags they share once (flags/shared_flags.h): their
# --help show each of them alike, and each binary parses what the other does.
# Usage: shared_flags_test.sh RPT_TRANSLATE RPT_SERVER
set -uo pipefail
translate=$1
server=$2
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"

"$translate" --help > "$work/translate.txt" 2>&1
"$server" --help > "$work/server.txt" 2>&1

# A flag's help: its line and the indented description lines under it (CLI11 wraps them so).
help_of() {
  awk -v flag="$1" '
    $1 ~ "^(--)?" flag "([ :={]|$)" || $1 == flag { found = 1; print; next }
    found && /^      / { print; next }
    { found = 0 }' "$2"
}

# --device-memory-limit is shared too, but its default differs by design (the server splits the
# process's memory among its models).
shared=(--beam-size --n-best --max-length --min-length --length-penalty --length-penalty-type
        --device --compute-type --device-index --gpu-gemm --gpu-graphs --gpu-attention --threads
        --split-sentences --glossary-method --max-input-length --admission-group)
for flag in "${shared[@]}"; do
  check "both binaries document $flag" test -n "$(help_of "$flag" "$work/translate.txt")"
  check "$flag reads the same in both" \
    diff <(help_of "$flag" "$work/translate.txt") <(help_of "$flag" "$work/server.txt")
done
check "--device-memory-limit in both" \
  bash -c "grep -q -- '--device-memory-limit' '$work/translate.txt' &&
           grep -q -- '--device-memory-limit' '$work/server.txt'"

# The shared parsers refuse alike, before any model is read.
for bad in "--length-penalty-type linear" "--split-sentences paragraphs" "--gpu-gemm slow" \
           "--gpu-attention warp" \
           "--compute-type fp8" "--beam-size 65"; do
  # shellcheck disable=SC2086
  "$translate" --model /nonexistent $bad < /dev/null > /dev/null 2> "$work/err.txt"
  check "rpt-translate refuses $bad with exit 105" test $? -eq 105
  # shellcheck disable=SC2086
  "$server" --model /nonexistent $bad > /dev/null 2>&1
  check "rpt-server refuses $bad as a bad flag (exit 2)" test $? -eq 2
done
exit $((failures > 0))
