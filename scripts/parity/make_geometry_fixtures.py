"""Build the geometry fixtures in tests/fixtures/geometry from the OFFICIAL DA3 code (no model involved).

Two official code paths are run on synthetic inputs, on the CPU in float32:
  * ray pose (`--ray-pose`): `DepthAnything3Net._process_ray_pose_estimation`, which calls
    `utils/ray_utils.py::get_extrinsic_from_camray` (weighted-DLT RANSAC homography + QL decomposition) and
    turns the result into w2c extrinsics and pixel intrinsics. The RANSAC sample table comes from torch's RNG;
    it is drawn here with a fixed torch seed exactly as the official `get_params_for_ransac` draws it, the RNG is
    re-seeded so that the official call draws the same table, and the table is saved so the C++ test can use
    it. Ray maps stay under 8000 points, so the official refit never subsamples (that draw is not replicable).
  * nested metric alignment: `NestedDepthAnything3Net._apply_metric_scaling`, `_apply_depth_alignment` and
    `_handle_sky_regions`, in that order, as `NestedDepthAnything3Net.forward` runs them. Inputs stay under
    100k pixels, so the official quantile sampling never triggers.

The methods are called unbound with `self=None` (they use no instance state); nothing in the official files is
edited. Every array is float32 .npy (sample indices too, exact as small integers). See manifest.json.

  /usr/bin/python3 scripts/parity/make_geometry_fixtures.py [--out tests/fixtures/geometry]
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_common as pc  # noqa: E402


def rotation(rng, max_deg):
    """A random rotation of at most max_deg degrees about a random axis (Rodrigues)."""
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    ang = np.deg2rad(rng.uniform(0.3, 1.0) * max_deg)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(ang) * k + (1 - np.cos(ang)) * (k @ k)


def synth_rays(rng, h, w, cam, noise=0.0, outlier_frac=0.0, n_zbad=0):
    """One view's ray map [h, w, 6] (world directions, camera centre) and confidence [h, w].

    cam: dict(R=c2w rotation, C=centre, f=(fx, fy), pp=(cx, cy)) with f and pp in the 2-unit image frame of the
    official solver (image spans [0, 2] on both axes; pixel centres at (2j+1)/w)."""
    xs = (2 * np.arange(w) + 1) / w
    ys = (2 * np.arange(h) + 1) / h
    x, y = np.meshgrid(xs, ys)
    d_cam = np.stack([(x - cam["pp"][0]) / cam["f"][0], (y - cam["pp"][1]) / cam["f"][1], np.ones_like(x)], -1)
    d = d_cam @ cam["R"].T
    d *= rng.uniform(0.5, 2.0, size=(h, w, 1))                  # the network's directions are not normalised
    if noise > 0:
        d += rng.normal(scale=noise, size=d.shape) * np.abs(d[..., 2:3])
    conf = rng.uniform(1.2, 6.0, size=(h, w))
    flat = d.reshape(-1, 3)
    n = flat.shape[0]
    order = rng.permutation(n)
    n_out = int(round(outlier_frac * n))
    for i in order[:n_out]:                                       # far off the homography (> 0.2 after /z)
        off = rng.uniform(0.6, 1.5, size=2) * rng.choice([-1, 1], size=2)
        flat[i, :2] += off * flat[i, 2]
    for i in order[n_out:n_out + n_zbad]:                         # |z| <= 1e-4: excluded by the official z-mask
        flat[i, 2] = rng.choice([-1, 1]) * 5e-5
    conf.reshape(-1)[order[:n_out]] *= 0.8
    origin = np.broadcast_to(cam["C"], (h, w, 3)) + rng.normal(scale=0.01, size=(h, w, 3))
    return np.concatenate([d, origin], -1), conf


def truth(cam, H, W):
    R, C = cam["R"], np.asarray(cam["C"])
    ext = np.concatenate([R.T, (-R.T @ C)[:, None]], 1)
    K = np.array([[cam["f"][0] / 2 * W, 0, cam["pp"][0] * W / 2], [0, cam["f"][1] / 2 * H, cam["pp"][1] * H / 2],
                  [0, 0, 1]])
    return ext, K


def ray_case(torch, out, name, rng, h, w, H, W, cams, seed, **synth):
    from addict import Dict
    from depth_anything_3.model.da3 import DepthAnything3Net
    from depth_anything_3.utils.ray_utils import get_params_for_ransac
    maps = [synth_rays(rng, h, w, c, **synth) for c in cams]
    ray = np.stack([m[0] for m in maps]).astype(np.float32)      # [S, h, w, 6]
    conf = np.stack([m[1] for m in maps]).astype(np.float32)     # [S, h, w]
    torch.manual_seed(seed)
    table = get_params_for_ransac(h * w, "cpu")[3].numpy()
    torch.manual_seed(seed)                                       # the official call redraws the same table
    o = Dict(ray=torch.from_numpy(ray.copy())[None], ray_conf=torch.from_numpy(conf.copy())[None])
    o = DepthAnything3Net._process_ray_pose_estimation(None, o, H, W)
    tr = [truth(c, H, W) for c in cams]
    arrays = dict(ray=ray, conf=conf, sample_idx=table, extrinsics=o.extrinsics[0].numpy(),
                  intrinsics=o.intrinsics[0].numpy(), true_extrinsics=np.stack([t[0] for t in tr]),
                  true_intrinsics=np.stack([t[1] for t in tr]), image_hw=np.array([H, W]))
    save(out, f"ray_{name}", arrays)
    return dict(kind="ray_pose", image_hw=[H, W], ray_hw=[h, w], views=len(cams), torch_seed=seed,
                synth={k: v for k, v in synth.items()})


def nested_case(torch, out, name, rng, S, H, W, sky_rows, scale_true, far=False):
    from addict import Dict
    from depth_anything_3.model.da3 import NestedDepthAnything3Net as N
    y, x = np.mgrid[0:H, 0:W].astype(np.float64)
    metric_true = np.stack([2.0 + 3.0 * (y / H) + 0.5 * np.sin(x / 3.0 + s) + s for s in range(S)])
    if far:
        metric_true[:, sky_rows:sky_rows + 2] *= 200.0            # pushes the 99th percentile past the 200 m cap
    depth = metric_true / scale_true * rng.uniform(0.97, 1.03, size=metric_true.shape)
    depth[0, -1, :3] = 5e-4                                       # fails depth > 1e-3
    conf = np.round(rng.uniform(1.0, 8.0, size=depth.shape), 1)   # ties at the median
    f = rng.uniform(150.0, 450.0, size=S)
    K = np.zeros((S, 3, 3))
    K[:, 0, 0], K[:, 1, 1] = f, f * rng.uniform(0.95, 1.05, size=S)
    K[:, 0, 2], K[:, 1, 2], K[:, 2, 2] = W / 2, H / 2, 1
    metric_raw = metric_true * 300.0 / ((K[:, 0, 0] + K[:, 1, 1]) / 2)[:, None, None]
    metric_raw[-1, -1, -2:] = 1e-5                                # fails metric > 1e-2
    sky = rng.uniform(0.0, 0.29, size=depth.shape)
    sky[:, :sky_rows] = rng.uniform(0.3, 1.0, size=(S, sky_rows, W))
    sky[0, sky_rows, 0] = 0.3                                     # exactly the threshold: sky
    ext = np.stack([np.concatenate([rotation(rng, 30), rng.normal(size=(3, 1))], 1) for _ in range(S)])
    f32 = lambda a: torch.from_numpy(np.asarray(a, np.float32).copy())[None]  # noqa: E731
    inputs = dict(depth=depth, depth_conf=conf, extrinsics=ext, intrinsics=K, metric_depth=metric_raw, metric_sky=sky)
    o = Dict(depth=f32(depth), depth_conf=f32(conf), extrinsics=f32(ext), intrinsics=f32(K))
    m = Dict(depth=f32(metric_raw), sky=f32(sky))
    o = N._apply_metric_scaling(None, o, m)
    o = N._apply_depth_alignment(None, o, m)
    o = N._handle_sky_regions(None, o, m)
    arrays = {f"in_{k}": np.asarray(v, np.float32) for k, v in inputs.items()}
    arrays.update(out_depth=o.depth[0].numpy(), out_depth_conf=o.depth_conf[0].numpy(),
                  out_extrinsics=o.extrinsics[0].numpy(), out_scale=np.array([o.scale_factor]))
    save(out, f"nested_{name}", arrays)
    return dict(kind="nested_align", views=S, hw=[H, W], sky_rows=sky_rows, scale_true=scale_true,
                scale_official=float(o.scale_factor))


def save(out, prefix, arrays):
    for k, v in arrays.items():
        np.save(os.path.join(out, f"{prefix}_{k}.npy"), np.ascontiguousarray(np.asarray(v, np.float32)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    paths = pc.default_paths()
    ap.add_argument("--da3-src", default=paths["da3"])
    ap.add_argument("--pydeps", nargs="*", default=paths["pydeps"])
    ap.add_argument("--out", default=os.path.join(pc.REPO, "tests", "fixtures", "geometry"))
    a = ap.parse_args()
    torch = pc.setup(da3_src=a.da3_src, pydeps=a.pydeps, threads=1)
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(20260417)
    man = {}
    centred = [dict(R=rotation(rng, 25), C=rng.normal(size=3), f=(1.4, 1.1), pp=(1.0, 1.0)),
               dict(R=np.eye(3), C=np.zeros(3), f=(0.9, 0.9), pp=(1.0, 1.0))]
    man["ray_clean"] = ray_case(torch, a.out, "clean", rng, 18, 24, 126, 168, centred, seed=7)
    noisy = [dict(R=rotation(rng, 20), C=rng.normal(size=3), f=(1.2, 1.25), pp=(1.0, 1.0)),
             dict(R=rotation(rng, 20), C=rng.normal(size=3), f=(0.8, 0.8), pp=(1.0, 1.0)),
             dict(R=rotation(rng, 15), C=rng.normal(size=3), f=(1.6, 1.5), pp=(1.0, 1.0))]
    man["ray_noisy"] = ray_case(torch, a.out, "noisy", rng, 24, 32, 168, 224, noisy, seed=11,
                                noise=0.004, outlier_frac=0.12, n_zbad=5)
    offc = [dict(R=rotation(rng, 10), C=rng.normal(size=3), f=(1.3, 1.2), pp=(1.08, 0.95))]
    man["ray_offcentre"] = ray_case(torch, a.out, "offcentre", rng, 16, 20, 112, 140, offc, seed=3, noise=0.002)
    man["nested_basic"] = nested_case(torch, a.out, "basic", rng, 2, 20, 28, sky_rows=4, scale_true=0.37)
    man["nested_cap"] = nested_case(torch, a.out, "cap", rng, 3, 12, 16, sky_rows=3, scale_true=2.5, far=True)
    man["_shims"] = pc.SHIMS
    with open(os.path.join(a.out, "manifest.json"), "w") as fh:
        json.dump(man, fh, indent=1, default=lambda v: v if not isinstance(v, np.ndarray) else v.tolist())
    total = sum(os.path.getsize(os.path.join(a.out, n)) for n in os.listdir(a.out))
    print(json.dumps({k: v for k, v in man.items() if not k.startswith("_")}, indent=1), f"\n{total} bytes")


if __name__ == "__main__":
    main()
