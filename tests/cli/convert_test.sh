#!/usr/bin/env bash
# dacpp convert: the tiny DA2 .pth and the DA3 checkpoint folders → GGUF, readable by info and depth; bad sources.
source "$(dirname "$0")/lib.sh"
export PATH="/usr/bin:$PATH"  # the system python3 (CI installs python3-numpy there)
FX="$ROOT/tests/fixtures"
DA2_PTH="$FX/models/da2_tiny_rel/da2_tiny_rel.pth"
DA3="$FX/models/da3mono_tiny"
IMG="$FX/images/sample_small.png"

# DA2 .pth → GGUF; info describes it; depth from the GGUF equals depth from the checkpoint.
expect_exit 0 "$DACPP" convert "$DA2_PTH" -o "$TMP/da2.gguf"
expect_grep 'da2\.gguf' "$TMP/err"
expect_file "$TMP/da2.gguf"
expect_exit 0 "$DACPP" info --json "$TMP/da2.gguf"
pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["architecture"] == "depthanything2", j["architecture"]
assert j["dims"]["vit.embed_dim"] == 64 and j["dims"]["vit.depth"] == 12, j["dims"]
assert j["dims"]["vit.out_layers"] == [2, 5, 8, 11], j["dims"]
assert j["tensor_count"] > 100, j["tensor_count"]
PY
expect_exit 0 "$DACPP" depth -m "$TMP/da2.gguf" "$IMG" -o "$TMP/from_gguf" --size 70 --npy
expect_exit 0 "$DACPP" depth -m "$DA2_PTH" "$IMG" -o "$TMP/from_pth" --size 70 --npy
pycheck "$TMP" <<'PY'
import sys
import numpy as np
t = sys.argv[1]
a, b = np.load(f"{t}/from_gguf/sample_small.depth.npy"), np.load(f"{t}/from_pth/sample_small.depth.npy")
assert a.shape == b.shape == (61, 83) and np.array_equal(a, b), "converted GGUF and .pth give different depth"
PY

# DA3 folder → GGUF (with --name); info shows the DA3 depth and out layers.
expect_exit 0 "$DACPP" convert "$DA3" -o "$TMP/da3.gguf" --name tiny-da3-mono
expect_exit 0 "$DACPP" info --json "$TMP/da3.gguf"
pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["architecture"] != "depthanything2" and j["architecture"] != "unknown", j["architecture"]
assert j["variant"] == "tiny-da3-mono", j["variant"]
assert j["dims"]["vit.depth"] == 24 and j["dims"]["vit.out_layers"] == [4, 11, 17, 23], j["dims"]
PY
expect_exit 0 "$DACPP" info "$TMP/da3.gguf"
expect_grep '^variant: +tiny-da3-mono' "$TMP/out"
expect_exit 0 "$DACPP" depth -m "$TMP/da3.gguf" "$IMG" -o "$TMP/da3_out" --size 98 --sky --npy
expect_file "$TMP/da3_out/sample_small.depth.npy" "$TMP/da3_out/sample_small.sky.pfm"

# Bad sources: invalid input (3), the message names the source; no output file is left behind.
expect_exit 3 "$DACPP" convert "$TMP/missing.pth" -o "$TMP/m.gguf"
expect_grep '^dacpp: error: .*missing\.pth' "$TMP/err"
expect_no_file "$TMP/m.gguf"
echo "not a checkpoint" > "$TMP/garbage.pth"
expect_exit 3 "$DACPP" convert "$TMP/garbage.pth" -o "$TMP/g.gguf"
expect_grep '^dacpp: error: .*garbage\.pth' "$TMP/err"
expect_no_file "$TMP/g.gguf"
head -c 100000 "$DA2_PTH" > "$TMP/trunc.pth"
expect_exit 3 "$DACPP" convert "$TMP/trunc.pth" -o "$TMP/t.gguf"
expect_grep '^dacpp: error: .*trunc\.pth' "$TMP/err"
mkdir -p "$TMP/empty_ckpt"
expect_exit 3 "$DACPP" convert "$TMP/empty_ckpt" -o "$TMP/e.gguf"
expect_grep '^dacpp: error: .*empty_ckpt' "$TMP/err"

# Unwritable output: not 0, names the path. Usage errors: 2.
expect_exit 3 "$DACPP" convert "$DA2_PTH" -o /proc/dacpp-forbidden/x.gguf
expect_grep '^dacpp: error: .*dacpp-forbidden' "$TMP/err"
expect_exit 2 "$DACPP" convert "$DA2_PTH"
expect_exit 2 "$DACPP" convert "$DA2_PTH" -o "$TMP/neg.gguf" --max-depth -1
expect_grep '^dacpp: error: .*--max-depth' "$TMP/err"
finish
