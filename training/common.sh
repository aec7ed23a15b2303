# Shared settings for the training scripts (sourced, not run).
# REPO: this repository. RUNS: where prepared data, checkpoints and logs go (outside the repo).
# DATA: the TSV corpora (read by prepare.py only).
TRAINING_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$TRAINING_DIR/.." && pwd)"
RUNS="${RUNS:-$(cd "$REPO/.." && pwd)/train_runs}"
DATA="${DATA:-$(cd "$REPO/.." && pwd)/shared/data}"
VENV="${VENV:-/work/venv}"
PY="${PY:-$VENV/bin/python}"
ONMT_BIN="${ONMT_BIN:-$VENV/bin}"

die() { echo "error: $*" >&2; exit 1; }

check_pair() {
  case "$1" in
    en-de|en-fr) ;;
    *) die "unknown pair '$1' (en-de or en-fr)" ;;
  esac
}

check_variant() {
  case "$1" in
    relative|sinusoidal|k0) ;;
    *) die "unknown variant '$1' (relative, sinusoidal or k0)" ;;
  esac
}

# latest_checkpoint RUN_DIR: path of the checkpoint with the highest step, or nothing.
latest_checkpoint() {
  ls "$1"/ckpt/model_step_*.pt 2>/dev/null | sed 's/.*model_step_\([0-9]*\)\.pt/\1 &/' \
    | sort -n | tail -1 | cut -d' ' -f2
}

# parse_run_args SCRIPT PAIR [VARIANT] [CKPT]: sets PAIR, VARIANT, RUN, PREP and CKPT (default:
# the run's latest checkpoint), dying with SCRIPT's usage on bad arguments.
parse_run_args() {
  local script="$1"; shift
  PAIR="${1:-}"; VARIANT="${2:-relative}"; CKPT="${3:-}"
  [ -n "$PAIR" ] || die "usage: $script PAIR [VARIANT] [CKPT]"
  check_pair "$PAIR"; check_variant "$VARIANT"
  RUN="$RUNS/$PAIR-$VARIANT"
  PREP="$RUNS/data/$PAIR"
  [ -n "$CKPT" ] || CKPT="$(latest_checkpoint "$RUN")"
  [ -n "$CKPT" ] && [ -f "$CKPT" ] || die "no checkpoint (looked in $RUN/ckpt)"
}

# Progress of long background steps on stderr (QUIET=1: none). Both return when PID exits.
# follow_log PID LOG REGEX FROM: the lines of LOG past its first FROM bytes (its size before PID
# started) matching REGEX, as they are written (onmt_train's "Step N/M; acc ...; ppl ..." lines).
follow_log() {
  local pid="$1" log="$2" regex="$3" from="$4"
  [ "${QUIET:-0}" = 1 ] && return 0
  tail --pid="$pid" -c +"$((from + 1))" -F "$log" 2>/dev/null \
    | grep --line-buffered -E "$regex" >&2 || true
}

# count_lines PID FILE TOTAL LABEL: every 10 s, how many of TOTAL lines FILE holds (onmt_translate
# writes each batch's translations as it goes), with lines/s and the time left.
count_lines() {
  local pid="$1" file="$2" total="$3" label="$4" start now done
  [ "${QUIET:-0}" = 1 ] && return 0
  start=$(date +%s)
  while kill -0 "$pid" 2>/dev/null; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      sleep 1
      kill -0 "$pid" 2>/dev/null || return 0
    done
    now=$(date +%s)
    done=$(wc -l < "$file" 2>/dev/null || echo 0)
    awk -v d="$done" -v t="$total" -v s="$((now - start))" -v l="$label" 'BEGIN {
      rate = s > 0 ? d / s : 0
      left = rate > 0 ? sprintf("%.0f s left", (t - d) / rate) : "time left unknown"
      printf "%s: %d/%d lines, %.1f lines/s, %s\n", l, d, t, rate, left }' >&2
  done
}
