#!/usr/bin/env bash
# dacpp depth --views on the tiny DA3 any-view model with every pose/3D output (--conf --pose --ply --glb
# --colmap), each checked by a reader that is not ours: numpy (PFM), meshio (PLY), the Khronos glTF validator
# (GLB), COLMAP's model_analyzer / model_converter (COLMAP model); plus the documented errors.
# A missing reader fails the test (scripts/install-deps.sh installs them all; see tests/io/export_readers_test.sh).
source "$(dirname "$0")/lib.sh"
export PATH="/usr/bin:$PATH"  # Debian's python3 (numpy, meshio), not a pyenv shim
TOOLS="${DACPP_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dacpp}"
export NODE_PATH="$TOOLS/node/node_modules${NODE_PATH:+:$NODE_PATH}"
export QT_QPA_PLATFORM=offscreen

FX="$ROOT/tests/fixtures"
DA3="$FX/models/da3small_tiny"
MONO="$FX/models/da3mono_tiny"
IMG="$FX/images/plain.jpg"  # 48x32

missing=()
python3 -c 'import meshio, numpy' 2>/dev/null || missing+=("python3-meshio")
python3 -c 'import PIL' 2>/dev/null || missing+=("python3-pil")
command -v colmap >/dev/null || missing+=("colmap")
command -v node >/dev/null || missing+=("nodejs")
[ -f "$TOOLS/node/node_modules/gltf-validator/package.json" ] || missing+=("gltf-validator (npm)")
if [ ${#missing[@]} -ne 0 ]; then
  echo "FAIL: independent readers missing: ${missing[*]}; run scripts/install-deps.sh"
  exit 1
fi

# Three small views of one scene (the tiny model accepts few pixels): crops of the sample image.
python3 - "$FX/images/sample_small.png" "$TMP" <<'PY'
import sys
from PIL import Image
src = Image.open(sys.argv[1]).convert("RGB")
for i in range(3):
    src.crop((4 * i, 2 * i, 4 * i + 26, 2 * i + 18)).save(f"{sys.argv[2]}/v{i}.png")
PY

O="$TMP/scene"
expect_exit 0 "$DACPP" depth -m "$DA3" --views "$TMP/v0.png" "$TMP/v1.png" "$TMP/v2.png" -o "$O" --size 56 \
  --pfm --conf --pose --ply --glb --colmap --json
cp "$TMP/out" "$TMP/scene.json"
for i in 0 1 2; do expect_file "$O/v$i.depth.pfm" "$O/v$i.conf.pfm" "$O/v$i.pose.json"; done
expect_file "$O/scene.ply" "$O/scene.glb"
for f in cameras images points3D; do expect_file "$O/colmap/$f.bin" "$O/colmap/$f.txt"; done

echo "--- Khronos glTF validator"
node "$ROOT/tests/io/gltf_validate.js" "$O/scene.glb" || { echo "FAIL: gltf-validator rejected scene.glb"; FAILS=$((FAILS + 1)); }

echo "--- COLMAP model_analyzer"
colmap model_analyzer --path "$O/colmap" >"$TMP/analyzer.txt" 2>&1 || { echo "FAIL: model_analyzer"; FAILS=$((FAILS + 1)); }
cat "$TMP/analyzer.txt"
mkdir -p "$TMP/converted"
colmap model_converter --input_path "$O/colmap" --output_path "$TMP/converted" --output_type TXT >/dev/null 2>&1 \
  || { echo "FAIL: model_converter"; FAILS=$((FAILS + 1)); }

pycheck "$O" "$TMP" <<'PY'
import json, re, sys
import numpy as np
import meshio
from cli_checks import read_pfm
o, tmp = sys.argv[1], sys.argv[2]
summary = json.load(open(f"{tmp}/scene.json"))
scene = summary["scene"]  # --json with a scene export: {"views": [...], "scene": {...}}
depth = [read_pfm(f"{o}/v{i}.depth.pfm") for i in range(3)]
conf = [read_pfm(f"{o}/v{i}.conf.pfm") for i in range(3)]
pose = [json.load(open(f"{o}/v{i}.pose.json")) for i in range(3)]
h, w = depth[0].shape
for i in range(3):
    assert conf[i].shape == (h, w) and (conf[i] > 1).all(), "confidence is exp(x) + 1 > 1"
    assert pose[i]["image_size"] == {"width": w, "height": h}, (pose[i]["image_size"], w, h)
    assert pose[i]["source_size"] == {"width": 26, "height": 18}, pose[i]["source_size"]
    R = np.array(pose[i]["extrinsics"])[:, :3]
    assert np.abs(R.T @ R - np.eye(3)).max() < 1e-4, "extrinsics rotation is not orthonormal"
# The official GLB/PLY rule: min(max(1.05, P40), P90) over all confidences; back-project with K and inverse w2c.
allc = np.concatenate([c.ravel() for c in conf])
thr = min(max(1.05, np.percentile(allc, 40)), np.percentile(allc, 90))
pts = []
for i in range(3):
    K = np.array(pose[i]["intrinsics"])
    w2c = np.vstack([np.array(pose[i]["extrinsics"]), [0, 0, 0, 1]])
    valid = np.isfinite(depth[i]) & (depth[i] > 0) & (conf[i] >= thr)
    ys, xs = np.nonzero(valid)
    cam = np.linalg.inv(K) @ np.stack([xs, ys, np.ones_like(xs)]).astype(np.float64) * depth[i][ys, xs]
    pts.append((np.linalg.inv(w2c) @ np.vstack([cam, np.ones(cam.shape[1])]))[:3].T)
want = np.concatenate(pts)
ply = meshio.read(f"{o}/scene.ply")
assert ply.points.shape == want.shape == (scene["ply_points"], 3), (ply.points.shape, want.shape, scene)
err = np.abs(ply.points - want).max() / max(1.0, np.abs(want).max())
assert err < 1e-4, f"PLY points differ from the back-projection of the depth PFMs and pose JSONs: {err}"
# COLMAP, as COLMAP itself read and re-wrote it.
stats = open(f"{tmp}/analyzer.txt").read()
num = lambda k: int(float(re.search(k + r":\s*([0-9.]+)", stats).group(1)))
assert num("Registered images") == 3 and num("Points") == scene["colmap_points"], (stats, scene)
cams = {int(l.split()[0]): l.split() for l in open(f"{tmp}/converted/cameras.txt") if l[0] != "#"}
for i in range(3):
    c = cams[i + 1]
    K = np.array(pose[i]["intrinsics"])
    assert c[1] == "PINHOLE" and (int(c[2]), int(c[3])) == (26, 18), c
    want_k = [K[0, 0] * 26 / w, K[1, 1] * 18 / h, K[0, 2] * 26 / w, K[1, 2] * 18 / h]
    assert np.allclose([float(x) for x in c[4:8]], want_k, rtol=1e-9), (c, want_k)
names = sorted(l.split()[9] for l in open(f"{tmp}/converted/images.txt") if l[0] != "#" and len(l.split()) == 10)
assert names == ["v0.png", "v1.png", "v2.png"], names
PY

# ---- errors ----------------------------------------------------------------------------------------------------
expect_exit 2 "$DACPP" depth -m "$DA3" "$IMG" -o "$TMP/e1" --size 56 --ply
expect_grep 'add --views' "$TMP/err"
expect_exit 4 "$DACPP" depth -m "$MONO" "$IMG" -o "$TMP/e2" --glb
expect_grep 'only DA3 any-view' "$TMP/err"
expect_exit 2 "$DACPP" depth -m "$DA3" --views "$TMP/v0.png" -o "$TMP/e3" --ply --conf-percentile 101
expect_grep 'conf-percentile' "$TMP/err"
# --colmap DIR puts the model where asked.
expect_exit 0 "$DACPP" depth -m "$DA3" --views "$TMP/v0.png" "$TMP/v1.png" -o "$TMP/e4" --size 56 --colmap "$TMP/cm"
expect_file "$TMP/cm/cameras.bin" "$TMP/cm/points3D.txt"
finish
