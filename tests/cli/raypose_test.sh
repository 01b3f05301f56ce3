#!/usr/bin/env bash
# dacpp depth --ray-pose on the tiny DA3 any-view fixture (tests/fixtures/models/da3small_tiny): poses from the ray
# head (RANSAC homography, estimated principal point) instead of the camera decoder; deterministic for one seed;
# Unsupported (exit 4) naming the model when it has no ray head. Parity with the official use_ray_pose=True output
# is checked by the gtest RayPoseParity (with the official RANSAC table).
source "$(dirname "$0")/lib.sh"
export PATH="/usr/bin:$PATH"

FX="$ROOT/tests/fixtures"
AV="$FX/models/da3small_tiny"
MONO="$FX/models/da3mono_tiny"
IMG="$FX/models/input.png"

expect_exit 0 "$DACPP" depth -m "$AV" "$IMG" -o "$TMP/cam" --size 168 --npy --pose
expect_exit 0 "$DACPP" depth -m "$AV" "$IMG" -o "$TMP/ray" --size 168 --npy --pose --ray-pose --json
expect_file "$TMP/ray/input.pose.json" "$TMP/ray/input.depth.npy"
expect_exit 0 "$DACPP" depth -m "$AV" "$IMG" -o "$TMP/ray2" --size 168 --npy --pose --ray-pose
expect_exit 0 "$DACPP" depth -m "$AV" "$IMG" -o "$TMP/ray3" --size 168 --pose --ray-pose --ray-pose-seed 7
pycheck "$TMP" "$AV/raypose" <<'PY'
import json, sys
import numpy as np
t, ref = sys.argv[1:3]
pose = lambda d: json.load(open(f"{t}/{d}/input.pose.json"))
cam, ray, ray2, ray3 = (pose(d) for d in ("cam", "ray", "ray2", "ray3"))
K, E = np.array(ray["intrinsics"]), np.array(ray["extrinsics"])
assert K.shape == (3, 3) and E.shape == (3, 4) and np.isfinite(K).all() and np.isfinite(E).all(), (K, E)
assert K[0, 0] > 0 and K[1, 1] > 0 and K[2, 2] == 1, K
# cam_dec puts the principal point at the centre exactly; the ray solver estimates it.
Kc = np.array(cam["intrinsics"])
assert (Kc[0, 2], Kc[1, 2]) == (84, 63), Kc
assert (K[0, 2], K[1, 2]) != (84, 63), K
assert np.abs(E - np.array(cam["extrinsics"])).max() > 1e-4, "--ray-pose gave the camera decoder's pose"
R = E[:, :3]
assert np.abs(R @ R.T - np.eye(3)).max() < 1e-4, R
assert ray == ray2, "same seed, different poses"
# Depth does not depend on the pose source, and matches the official use_ray_pose run.
d = np.load(f"{t}/ray/input.depth.npy")
assert np.array_equal(d, np.load(f"{t}/cam/input.depth.npy"))
r = np.load(f"{ref}/depth.npy")[0]
assert np.linalg.norm(d - r) / np.linalg.norm(r) <= 1e-5
PY

# ---- no ray head: exit 4 naming the model and the missing head ------------------------------------------------
expect_exit 4 "$DACPP" depth -m "$MONO" "$IMG" -o "$TMP/bad" --ray-pose
expect_grep "ray-pose" "$TMP/err"
expect_grep "da3mono_tiny" "$TMP/err"
expect_grep "ray head" "$TMP/err"
expect_exit 0 "$DACPP" convert "$AV" -o "$TMP/noaux.gguf"
expect_exit 4 "$DACPP" depth -m "$TMP/noaux.gguf" "$IMG" -o "$TMP/bad2" --ray-pose --pose
expect_grep "ray head" "$TMP/err"
finish
