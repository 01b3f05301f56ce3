#!/usr/bin/env bash
# dacpp info on the committed test model, and its errors on bad model paths.
source "$(dirname "$0")/lib.sh"
MODEL="$ROOT/tests/fixtures/tiny-da2.gguf"

expect_exit 0 "$DACPP" info "$MODEL"
expect_grep '^architecture: +depthanything2' "$TMP/out"
expect_grep '^tensors: ' "$TMP/out"

expect_exit 0 "$DACPP" info --json "$MODEL"
python3 - "$TMP/out" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
j = json.load(open(sys.argv[1]))
assert j["architecture"] == "depthanything2", j
assert j["tensor_count"] > 100, j["tensor_count"]
assert j["dims"]["vit.depth"] == 12, j["dims"]
assert j["dims"]["vit.out_layers"] == [2, 5, 8, 11], j["dims"]
assert j["dtypes"] == {"f32": j["tensor_count"]}, j["dtypes"]
PY

expect_exit 3 "$DACPP" info "$TMP/missing.gguf"
expect_grep '^dacpp: error: .*missing\.gguf' "$TMP/err"

: > "$TMP/empty.gguf"
expect_exit 3 "$DACPP" info "$TMP/empty.gguf"
expect_grep '^dacpp: error: .*empty\.gguf' "$TMP/err"

printf 'NOTAGGUFFILE-----------------------' > "$TMP/bad.gguf"
expect_exit 3 "$DACPP" info "$TMP/bad.gguf"
expect_grep 'bad\.gguf' "$TMP/err"

head -c 200 "$MODEL" > "$TMP/trunc.gguf"
expect_exit 3 "$DACPP" info "$TMP/trunc.gguf"
expect_grep 'trunc\.gguf' "$TMP/err"
finish
