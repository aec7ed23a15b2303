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
