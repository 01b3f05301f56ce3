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

# --profile: every op of the forward with its operand shapes and calls per forward; the ops' times and the time
# outside them add up to the forward, each op kind's total is its rows' sum, and the text form names the ops.
expect_exit 0 "$DACPP" bench -m "$MODEL" --size 70 --runs 2 --warmup 1 --threads 1 --profile --json
pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["profile"]
assert p["forwards"] == 2 and p["forward_ms"] > 0, p
ops = p["ops"]
names = {e["op"] for e in ops}
for want in ("linear", "attention_qkv", "layer_norm", "upsample_conv_head"):
    assert want in names, (want, sorted(names))
# upsample_conv_head runs convs inside: they are its time, not rows of their own; one call per forward.
head = [e for e in ops if e["op"] == "upsample_conv_head"]
assert len(head) == 1 and head[0]["calls"] == 1 and head[0]["shapes"].endswith("[1,1,70,70]"), head
assert abs(sum(e["ms"] for e in ops) - p["ops_ms"]) < 1e-6 * max(1.0, p["ops_ms"]), p
assert abs(p["ops_ms"] + p["outside_ops_ms"] - p["forward_ms"]) < 1e-6 * p["forward_ms"], p
assert 0 <= p["outside_ops_ms"] < p["forward_ms"], p
for k in p["by_op"]:
    rows = sum(e["ms"] for e in ops if e["op"] == k["op"])
    assert abs(rows - k["ms"]) < 1e-6 * max(1.0, rows), (k, rows)
assert all(e["calls"] > 0 and e["ms"] >= 0 and e["shapes"].startswith("[") for e in ops), ops
PY
expect_exit 0 "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --warmup 0 --threads 1 --profile
expect_grep '^op profile, per forward \(mean of 1\): forward [0-9.]+ ms = ops [0-9.]+ \+ outside ops' "$TMP/out"
expect_grep '^  linear +\[' "$TMP/out"
expect_exit 0 "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --warmup 0 --threads 1 --json
pycheck "$TMP/out" <<'PY'
import json, sys
assert "profile" not in json.load(open(sys.argv[1]))
PY

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

# A run that may use a GPU (--device other than cpu) keeps the CUDA autotuner's choices in the cache folder
# (tools/cli/cache_dir.h): $DACPP_CACHE, else ~/.cache/dacpp, is made; DACPP_TUNING_FILE, even empty, overrides it;
# a CPU run makes nothing. (Without a GPU nothing is tuned, so no file appears here; the GPU machine checks that.)
H="$TMP/home"
mkdir -p "$H"
expect_exit 0 env -u DACPP_TUNING_FILE -u DACPP_CACHE HOME="$H" "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --warmup 0
if [ -e "$H/.cache/dacpp" ]; then echo "FAIL: a CPU run made the cache folder"; FAILS=$((FAILS + 1)); fi
expect_exit 0 env -u DACPP_CACHE DACPP_TUNING_FILE= HOME="$H" "$DACPP" bench -m "$MODEL" --size 70 --runs 1 --warmup 0 \
  --device auto
if [ -e "$H/.cache/dacpp" ]; then echo "FAIL: DACPP_TUNING_FILE= still made the cache folder"; FAILS=$((FAILS + 1)); fi
expect_exit 0 env -u DACPP_TUNING_FILE -u DACPP_CACHE HOME="$H" "$DACPP" bench -m "$MODEL" --size 70 --runs 1 \
  --warmup 0 --device auto
if [ ! -d "$H/.cache/dacpp" ]; then echo "FAIL: --device auto made no cache folder"; FAILS=$((FAILS + 1)); fi
expect_exit 0 env -u DACPP_TUNING_FILE DACPP_CACHE="$TMP/cache" HOME="$H" "$DACPP" bench -m "$MODEL" --size 70 \
  --runs 1 --warmup 0 --device auto
if [ ! -d "$TMP/cache" ]; then echo "FAIL: DACPP_CACHE was not the cache folder"; FAILS=$((FAILS + 1)); fi
finish
