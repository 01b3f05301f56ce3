#!/usr/bin/env bash
# dacpp depth on the tiny DA3 any-view fixture (tests/fixtures/models/da3small_tiny): --views (one cross-view pass
# over three images) checked against the official code's outputs, --conf, --pose, --ref-view, a one-view run, the
# capabilities in `dacpp info --json`, and the documented errors.
source "$(dirname "$0")/lib.sh"
export PATH="/usr/bin:$PATH"

FX="$ROOT/tests/fixtures"
AV="$FX/models/da3small_tiny"
MONO="$FX/models/da3mono_tiny"
DA2="$FX/tiny-da2.gguf"
V="$AV/view3"

# ---- three views in one pass: depth / conf / pose against the official outputs ------------------------------
O="$TMP/scene"
expect_exit 0 "$DACPP" depth -m "$AV" --views "$V/view0.png" "$V/view1.png" "$V/view2.png" -o "$O" --size 210 \
  --npy --conf --pose --json
cp "$TMP/out" "$TMP/scene.json"
for k in 0 1 2; do expect_file "$O/view$k.depth.npy" "$O/view$k.conf.pfm" "$O/view$k.pose.json"; done
pycheck "$O" "$V" "$TMP/scene.json" <<'PY'
import json, sys
import numpy as np
from cli_checks import read_pfm
o, ref, js = sys.argv[1:4]
rel = lambda a, b: float(np.linalg.norm((a - b).ravel()) / np.linalg.norm(b.ravel()))
depth, conf, ext = (np.load(f"{ref}/{n}.npy") for n in ("depth", "depth_conf", "extrinsics"))
for k in range(3):
    d = np.load(f"{o}/view{k}.depth.npy")
    assert d.shape == (154, 210), d.shape
    assert rel(d, depth[k]) <= 1e-5, ("depth", k, rel(d, depth[k]))
    c = read_pfm(f"{o}/view{k}.conf.pfm")
    assert rel(c, conf[k]) <= 1e-5 and c.min() > 1, ("conf", k, rel(c, conf[k]), c.min())
    p = json.load(open(f"{o}/view{k}.pose.json"))
    e = np.array(p["extrinsics"])
    assert e.shape == (3, 4) and np.abs(e - ext[k]).max() <= 1e-4, ("extrinsics", k, e, ext[k])
    K = np.array(p["intrinsics"])
    assert K.shape == (3, 3) and K[0, 2] == 105 and K[1, 2] == 77 and K[2, 2] == 1 and K[0, 0] > 0, K
    assert (p["image_size"]["width"], p["image_size"]["height"]) == (210, 154), p["image_size"]
    assert "opencv" in json.dumps(p["convention"]), p["convention"]
j = json.load(open(js))
assert len(j) == 3 and all(r["input"].endswith(f"view{k}.png") for k, r in enumerate(j)), j
assert all(r["units"] == "relative-depth" for r in j), j
PY

# ---- --ref-view first: another world frame, so other outputs than the default saddle_balanced (picks view 1) -
O2="$TMP/first"
expect_exit 0 "$DACPP" depth -m "$AV" --views "$V/view0.png" "$V/view1.png" "$V/view2.png" -o "$O2" --size 210 \
  --npy --ref-view first
pycheck "$O" "$O2" <<'PY'
import sys
import numpy as np
a, b = (np.load(f"{d}/view0.depth.npy") for d in sys.argv[1:3])
assert np.abs(a - b).max() > 1e-4 * np.abs(a).max(), "ref-view first gave the saddle_balanced result"
PY
expect_exit 2 "$DACPP" depth -m "$AV" --views "$V/view0.png" "$V/view1.png" -o "$TMP/bad" --ref-view best
expect_grep "saddle_balanced" "$TMP/err"

# ---- one image without --views: a one-view pass with conf and pose ------------------------------------------
O3="$TMP/one"
expect_exit 0 "$DACPP" depth -m "$AV" "$V/view0.png" -o "$O3" --size 210 --pfm --conf --pose
expect_file "$O3/view0.depth.pfm" "$O3/view0.conf.pfm" "$O3/view0.pose.json"

# ---- errors: what a model lacks is Unsupported (exit 4) and named; a missing view fails the pass (exit 3) ----
expect_exit 4 "$DACPP" depth -m "$MONO" "$V/view0.png" -o "$TMP/e1" --pose
expect_grep "pose head" "$TMP/err"
expect_exit 4 "$DACPP" depth -m "$DA2" "$V/view0.png" -o "$TMP/e2" --conf
expect_grep "confidence" "$TMP/err"
expect_exit 4 "$DACPP" depth -m "$DA2" --views "$V/view0.png" "$V/view1.png" -o "$TMP/e3"
expect_grep "single-view" "$TMP/err"
expect_exit 3 "$DACPP" depth -m "$AV" --views "$V/view0.png" "$TMP/missing.png" -o "$TMP/e4"
expect_no_file "$TMP/e4/view0.depth.png"

# ---- info --json reports the capabilities --------------------------------------------------------------------
expect_exit 0 "$DACPP" info "$AV" --json
cp "$TMP/out" "$TMP/info_av.json"
expect_exit 0 "$DACPP" info "$MONO" --json
cp "$TMP/out" "$TMP/info_mono.json"
pycheck "$TMP/info_av.json" "$TMP/info_mono.json" <<'PY'
import json, sys
av, mono = (json.load(open(p))["capabilities"] for p in sys.argv[1:3])
assert av["pose"] and av["conf"] and av["multiview"] and not av["sky"] and not av["rays"], av
assert mono["sky"] and not mono["pose"] and not mono["multiview"] and not mono["conf"], mono
PY

finish
