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

finish() {
  if [ "$FAILS" -ne 0 ]; then echo "$FAILS check(s) failed"; exit 1; fi
  echo "ok"
}
