# Sourced by the shell tests: a scratch directory `$work` removed on exit, and
# `check DESCRIPTION COMMAND...`, which prints ok/FAIL and counts failures in `$failures`.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}
