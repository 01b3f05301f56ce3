"""Checks the 3D exports of one synthetic scene with readers that are not dacpp's own.

Usage: export_readers_check.py SAMPLE_DIR WORK_DIR
SAMPLE_DIR holds what ExportSample.WritesSceneForIndependentReaders wrote (scene.ply, scene.glb, colmap/,
*.pose.json, truth.json). The expected numbers are recomputed here with numpy from the raw views in truth.json,
following the official DA3 exporters (numpy.percentile thresholds, K⁻¹ back-projection, inverse w2c).
Readers: meshio (PLY), COLMAP's model_analyzer and model_converter (COLMAP .bin and .txt). The GLB goes through
the Khronos validator in the calling script; here its points are compared after our own minimal GLB parse.
"""
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np

SAMPLE, WORK = sys.argv[1], sys.argv[2]
truth = json.load(open(os.path.join(SAMPLE, "truth.json")))
opt = truth["options"]
views = truth["views"]


def view_arrays(v):
    h, w = v["height"], v["width"]
    return (np.array(v["depth"], np.float32).reshape(h, w), np.array(v["conf"], np.float32).reshape(h, w),
            np.array(v["rgb"], np.uint8).reshape(h, w, 3), np.array(v["K"]).reshape(3, 3),
            np.vstack([np.array(v["w2c"]).reshape(3, 4), [0, 0, 0, 1]]))


def world_points(thr):
    """Points, colours, (view, x, y) of every pixel with depth > 0 and conf >= thr, like the official exporter."""
    pts, cols, origin = [], [], []
    for i, v in enumerate(views):
        d, c, rgb, K, w2c = view_arrays(v)
        valid = np.isfinite(d) & (d > 0) & (c >= thr)
        ys, xs = np.nonzero(valid)
        pix = np.stack([xs, ys, np.ones_like(xs)], 0).astype(np.float64)
        cam = (np.linalg.inv(K) @ pix) * d[ys, xs][None, :]
        world = (np.linalg.inv(w2c) @ np.vstack([cam, np.ones((1, cam.shape[1]))]))[:3].T
        pts.append(world)
        cols.append(rgb[ys, xs])
        origin.append(np.stack([np.full_like(xs, i), xs, ys], 1))
    return np.concatenate(pts), np.concatenate(cols), np.concatenate(origin)


all_conf = np.concatenate([np.array(v["conf"], np.float32) for v in views])
lower, upper = np.percentile(all_conf, opt["conf_percentile"]), np.percentile(all_conf, opt["ensure_percentile"])
glb_thr = min(max(opt["conf_base"], lower), upper)
colmap_thr = np.percentile(all_conf, opt["conf_percentile"])
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


# ---- PLY through meshio ------------------------------------------------------------------------------------
import meshio  # noqa: E402  (Debian python3-meshio)

mesh = meshio.read(os.path.join(SAMPLE, "scene.ply"))
want_pts, want_cols, _ = world_points(glb_thr)
got = np.asarray(mesh.points, np.float64)
check(got.shape == want_pts.shape, f"PLY (meshio {meshio.__version__}): {got.shape[0]} points, expected "
      f"{want_pts.shape[0]} at confidence >= {glb_thr:.6f}")
if got.shape == want_pts.shape:
    err = np.abs(got - want_pts).max()
    check(err < 1e-5, f"PLY points match the numpy back-projection (max error {err:.2e})")
    # meshio 5's binary reader maps PLY "uchar" to int8 (its table says "i1"); the bytes are right, so they are
    # reinterpreted as unsigned here.
    rgb = np.stack([np.asarray(mesh.point_data[k]).view(np.uint8) if mesh.point_data[k].dtype == np.int8
                    else mesh.point_data[k] for k in ("red", "green", "blue")], 1)
    check(np.array_equal(rgb, want_cols), "PLY colours match the views' pixels")

# ---- GLB points: the official alignment recomputed -----------------------------------------------------------
raw = open(os.path.join(SAMPLE, "scene.glb"), "rb").read()
jlen = struct.unpack_from("<I", raw, 12)[0]
doc = json.loads(raw[20:20 + jlen])
binary = raw[20 + jlen + 8:]
node = next(n for n in doc["nodes"] if n["name"] == "points")
acc = doc["accessors"][doc["meshes"][node["mesh"]]["primitives"][0]["attributes"]["POSITION"]]
bv = doc["bufferViews"][acc["bufferView"]]
glb_pts = np.frombuffer(binary, "<f4", acc["count"] * 3, bv.get("byteOffset", 0)).reshape(-1, 3)
flip = np.diag([1.0, -1.0, -1.0, 1.0])
w2c0 = view_arrays(views[0])[4]
moved = (flip @ w2c0 @ np.hstack([want_pts, np.ones((len(want_pts), 1))]).T)[:3].T
moved -= np.median(moved, axis=0)
check(glb_pts.shape == moved.shape and np.abs(glb_pts - moved).max() < 1e-5,
      "GLB points = diag(1,-1,-1) · w2c[0] · world, centred on the median")

# ---- COLMAP: model_analyzer and model_converter ---------------------------------------------------------------
def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    if r.returncode != 0:
        check(False, f"{' '.join(cmd)} exited {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout + r.stderr


model = os.path.join(SAMPLE, "colmap")
want_pts, want_cols, origin = world_points(colmap_thr)
stats = run("colmap", "model_analyzer", "--path", model)
print(stats.strip())


def stat(name):
    m = re.search(name + r":\s*([0-9.]+)", stats)
    return float(m.group(1)) if m else None


check(stat("Cameras") == len(views) and stat("Registered images") == len(views),
      "model_analyzer: cameras and registered images")
check(stat("Points") == len(want_pts), f"model_analyzer: {stat('Points')} points, expected {len(want_pts)}")
check(stat("Observations") == len(want_pts), "model_analyzer: one observation per point")


def read_txt_model(folder):
    lines = {}
    for f in ("cameras", "images", "points3D"):
        with open(os.path.join(folder, f + ".txt")) as fh:
            lines[f] = [l.rstrip("\n") for l in fh if not l.startswith("#")]
    return lines


for fmt, src in (("BIN", model), ("TXT", None)):
    if src is None:  # our .txt alone: COLMAP reads the .bin whenever one is present
        src = os.path.join(WORK, "txt_only")
        os.makedirs(src, exist_ok=True)
        for f in ("cameras", "images", "points3D"):
            with open(os.path.join(model, f + ".txt")) as a, open(os.path.join(src, f + ".txt"), "w") as b:
                b.write(a.read())
    out = os.path.join(WORK, "converted_" + fmt)
    os.makedirs(out, exist_ok=True)
    run("colmap", "model_converter", "--input_path", src, "--output_path", out, "--output_type", "TXT")
    m = read_txt_model(out)
    cams = {int(l.split()[0]): l.split() for l in m["cameras"] if l}
    ok = len(cams) == len(views)
    for i, v in enumerate(views):
        c = cams.get(i + 1)
        K = np.array(v["K"]).reshape(3, 3)
        sx, sy = v["source_width"] / v["width"], v["source_height"] / v["height"]
        ok &= c is not None and c[1] == "PINHOLE" and int(c[2]) == v["source_width"] and \
            int(c[3]) == v["source_height"] and \
            np.allclose([float(x) for x in c[4:8]], [K[0, 0] * sx, K[1, 1] * sy, K[0, 2] * sx, K[1, 2] * sy],
                        rtol=1e-12)
    check(ok, f"COLMAP ({fmt} read): PINHOLE cameras at source size with rescaled intrinsics")
    imgs = [l for l in m["images"]]
    ok, xy_by_image = True, {}
    for k in range(0, len(imgs) - 1, 2):
        f = imgs[k].split()
        i = int(f[0]) - 1
        qw, qx, qy, qz = map(float, f[1:5])
        R = np.array([[1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)],
                      [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)],
                      [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)]])
        w2c = view_arrays(views[i])[4]
        ok &= np.allclose(R, w2c[:3, :3], atol=1e-12) and np.allclose([float(x) for x in f[5:8]], w2c[:3, 3])
        ok &= f[9] == views[i]["image_name"]
        xy_by_image[i] = np.array(imgs[k + 1].split(), float).reshape(-1, 3)
    check(ok and len(xy_by_image) == len(views), f"COLMAP ({fmt} read): world-to-camera poses and names")
    pts = np.array([l.split() for l in m["points3D"] if l], float)
    ok = pts.shape[0] == len(want_pts)
    if ok:
        pts = pts[np.argsort(pts[:, 0])]
        ok &= np.abs(pts[:, 1:4] - want_pts).max() < 1e-5 and np.array_equal(pts[:, 4:7], want_cols)
        # Each point's track element names a 2D point at the pixel it came from (scaled to the source size).
        for p in range(len(pts)):
            img, idx = int(pts[p, 8]) - 1, int(pts[p, 9])
            x, y, pid = xy_by_image[img][idx]
            v = views[img]
            ok &= img == origin[p, 0] and int(pid) == int(pts[p, 0])
            ok &= abs(x - origin[p, 1] * v["source_width"] / v["width"]) < 1e-9
            ok &= abs(y - origin[p, 2] * v["source_height"] / v["height"]) < 1e-9
    check(ok, f"COLMAP ({fmt} read): points, colours and tracks")

# ---- pose JSON -------------------------------------------------------------------------------------------------
ok = True
for v in views:
    j = json.load(open(os.path.join(SAMPLE, v["stem"] + ".pose.json")))
    ok &= np.array_equal(np.array(j["extrinsics"]).ravel(), v["w2c"])
    ok &= np.array_equal(np.array(j["intrinsics"]).ravel(), v["K"])
    ok &= j["image_size"] == {"width": v["width"], "height": v["height"]}
check(ok, "pose JSON: extrinsics, intrinsics and sizes")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
