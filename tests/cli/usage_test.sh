#!/usr/bin/env bash
# Exit codes and error lines of the CLI's usage errors.
source "$(dirname "$0")/lib.sh"

expect_exit 2 "$DACPP"
expect_exit 2 "$DACPP" no-such-command
expect_grep '^dacpp: error: ' "$TMP/err"
expect_exit 0 "$DACPP" --help
expect_grep 'info' "$TMP/out"
expect_exit 0 "$DACPP" --version
expect_grep 'dacpp [0-9]+\.[0-9]+' "$TMP/out"
expect_exit 2 "$DACPP" info
finish
