#!/usr/bin/env bash
# dacpp bench: JSON timing summary on the tiny model, and its usage errors.
source "$(dirname "$0")/lib.sh"
export PATH="/usr/bin:$PATH"  # the system python3
MODEL="$ROOT/tests/fixtures/tiny-da2.gguf"

expect_exit 0 "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --warmup 0 --threads 1 --json
pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for k in ("median_ms", "min_ms", "max_ms", "images_per_s", "load_ms", "peak_rss_mb"):
    assert isinstance(j[k], (int, float)) and j[k] > 0, (k, j.get(k))
assert j["min_ms"] <= j["median_ms"] <= j["max_ms"], j
assert (j["width"], j["height"], j["batch"], j["runs"], j["threads"]) == (70, 70, 1, 1, 1), j
PY

expect_exit 0 "$DACPP" bench -m "$MODEL" --size 84x56 --runs 2 --warmup 0 --batch 2
expect_grep 'input 84x56 +batch 2 .*device cpu +precision f32' "$TMP/out"
expect_grep 'median [0-9.]+ ms' "$TMP/out"

# --rays: DA3 any-view with its ray branch (the checkpoint folder keeps the aux head); refused without one.
ANYVIEW="$ROOT/tests/fixtures/models/da3small_tiny"
expect_exit 0 "$DACPP" bench -m "$ANYVIEW" --size 70 --runs 1 --warmup 0 --threads 1 --rays --json
pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["rays"] is True and j["median_ms"] > 0, j
PY
expect_exit 4 "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --rays
expect_grep "^dacpp: error: --rays: .*no ray branch" "$TMP/err"

# --row-chunks: the transformer blocks in row chunks (reported back); 1-4 only.
expect_exit 0 "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --warmup 0 --threads 1 --row-chunks 3 --json
pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["row_chunks"] == 3 and j["median_ms"] > 0, j
PY
expect_exit 2 "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --row-chunks 5
expect_grep "^dacpp: error: runner: row_chunks 5 is not within 1..4" "$TMP/err"

# --precision on the CPU: f32 by default; bf16 opt-in where oneDNN has bf16 kernels for this CPU (exit 4 naming why
# where it has none); f16 is a GPU precision (exit 4); anything else is a usage error.
expect_exit 0 "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --warmup 0 --threads 1 --json
pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["precision"] == "f32", j
assert isinstance(j["cpu_isa"], str) and j["cpu_isa"] and isinstance(j["cpu_bf16_native"], bool), j
PY
"$DACPP" bench -m "$MODEL" --size 70 --runs 1 --warmup 0 --threads 1 --precision bf16 --json >"$TMP/out" 2>"$TMP/err"
rc=$?
case $rc in
  0) pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["precision"] == "bf16" and j["device"] == "cpu" and j["median_ms"] > 0, j
PY
     ;;
  4) expect_grep "^dacpp: error: precision bf16 on the CPU: oneDNN has no bf16 kernels" "$TMP/err" ;;
  *) echo "FAIL: bench --precision bf16 on the CPU exited $rc"; cat "$TMP/err"; FAILS=$((FAILS + 1)) ;;
esac
expect_exit 4 "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --precision f16
expect_grep "^dacpp: error: precision f16 on the CPU: the CPU runs f32 \(the default\) or bf16" "$TMP/err"
expect_exit 2 "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --precision fp8
expect_grep "^dacpp: error: precision 'fp8'" "$TMP/err"

expect_exit 2 "$DACPP" bench -m "$MODEL" --size 71
expect_grep '^dacpp: error: .*--size' "$TMP/err"
expect_exit 2 "$DACPP" bench -m "$MODEL" --size big
expect_grep "^dacpp: error: .*--size.*big" "$TMP/err"
expect_exit 2 "$DACPP" bench -m "$MODEL" --size 70x0
expect_exit 2 "$DACPP" bench -m "$MODEL" --runs 0
expect_exit 2 "$DACPP" bench -m "$MODEL" --batch 0
expect_exit 3 "$DACPP" bench -m "$TMP/missing.gguf" --size 70
expect_grep 'missing\.gguf' "$TMP/err"
finish
