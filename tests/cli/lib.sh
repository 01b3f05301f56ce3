# Helpers for the CLI tests. Usage in a test: source "$(dirname "$0")/lib.sh"; then `expect_exit N cmd...`.
set -u
DACPP="$1"
ROOT="$2"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
FAILS=0

# expect_exit CODE CMD... — runs CMD, captures stdout/stderr into $TMP/out and $TMP/err, checks the exit code.
expect_exit() {
  local want="$1"; shift
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: '$*' exited $got, expected $want"; echo "--- stderr:"; cat "$TMP/err"; FAILS=$((FAILS + 1))
  fi
}

# expect_grep PATTERN FILE — the file must contain the pattern (extended regex).
expect_grep() {
  if ! grep -Eq -- "$1" "$2"; then
    echo "FAIL: '$2' does not match /$1/"; echo "--- content:"; head -c 2000 "$2"; FAILS=$((FAILS + 1))
  fi
}

# pycheck ARGS... <<'PY' — runs the Python check read from stdin with ARGS as sys.argv[1:] and tests/cli on
# PYTHONPATH (for cli_checks.py); a non-zero exit (a failed assert) counts as a failure.
CLI_TEST_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pycheck() {
  if ! PYTHONPATH="$CLI_TEST_DIR" python3 - "$@"; then echo "FAIL: python check ($*)"; FAILS=$((FAILS + 1)); fi
}

# expect_file PATH... — each path must be a non-empty regular file.
expect_file() {
  local f
  for f in "$@"; do
    if [ ! -s "$f" ]; then echo "FAIL: missing or empty output '$f'"; FAILS=$((FAILS + 1)); fi
  done
}

# expect_no_file PATH... — none of the paths may exist.
expect_no_file() {
  local f
  for f in "$@"; do
    if [ -e "$f" ]; then echo "FAIL: unexpected output '$f'"; FAILS=$((FAILS + 1)); fi
  done
}

finish() {
  if [ "$FAILS" -ne 0 ]; then echo "$FAILS check(s) failed"; exit 1; fi
  echo "ok"
}
