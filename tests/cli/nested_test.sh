#!/usr/bin/env bash
# dacpp on the tiny DA3 nested fixture (tests/fixtures/models/da3nested_tiny): the checkpoint folder and
# depth-anything.cpp's two-file GGUF layout (`convert` / `convert --nested-metric`, then `depth -m ANYVIEW.gguf
# --metric-model METRIC.gguf`) give the official depth in metres; the metric file alone is refused (exit 4).
source "$(dirname "$0")/lib.sh"
export PATH="/usr/bin:$PATH"

FX="$ROOT/tests/fixtures/models"
NE="$FX/da3nested_tiny"
V="$FX/da3small_tiny/view3"

expect_exit 0 "$DACPP" convert "$NE" -o "$TMP/any.gguf"
expect_exit 0 "$DACPP" convert "$NE" --nested-metric -o "$TMP/metric.gguf"
expect_exit 0 "$DACPP" info --json "$TMP/metric.gguf"
expect_grep "m_vit" "$TMP/out"

for src in folder files; do
  if [ "$src" = folder ]; then M=(-m "$NE"); else M=(-m "$TMP/any.gguf" --metric-model "$TMP/metric.gguf"); fi
  expect_exit 0 "$DACPP" depth "${M[@]}" --views "$V/view0.png" "$V/view1.png" "$V/view2.png" -o "$TMP/$src" \
    --size 210 --npy --pose --json
  cp "$TMP/out" "$TMP/$src.json"
  pycheck "$TMP/$src" "$NE" "$TMP/$src.json" <<'PY'
import json, sys
import numpy as np
o, ref, js = sys.argv[1:4]
depth, ext = np.load(f"{ref}/depth.npy"), np.load(f"{ref}/extrinsics.npy")
for k in range(3):
    d = np.load(f"{o}/view{k}.depth.npy")
    e = np.linalg.norm(d - depth[k]) / np.linalg.norm(depth[k])
    assert e <= 1e-5, ("depth", k, e)
    p = np.array(json.load(open(f"{o}/view{k}.pose.json"))["extrinsics"])
    assert np.abs(p - ext[k]).max() <= 1e-5, ("extrinsics", k, p, ext[k])
assert all(r["units"] == "metres" for r in json.load(open(js))), js
PY
done

expect_exit 4 "$DACPP" depth -m "$TMP/metric.gguf" "$V/view0.png" -o "$TMP/bad"
expect_grep "metric-model" "$TMP/err"
expect_exit 3 "$DACPP" depth -m "$TMP/any.gguf" --metric-model "$TMP/any.gguf" "$V/view0.png" -o "$TMP/bad"
expect_grep "not the metric branch" "$TMP/err"
finish
