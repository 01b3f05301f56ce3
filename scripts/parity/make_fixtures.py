"""Build the tiny-model parity fixtures in tests/fixtures/models from the OFFICIAL DA2/DA3 code.

Each fixture is a tiny model built with the official classes (same structure, small widths), random weights
(default init, fixed seed, then perturbed: see parity_common.py), saved in the official checkpoint format,
plus float32 reference tensors (.npy) of the official preprocessing, the backbone features fed to the head,
the head's rn pyramid, and the raw/final outputs. See tests/fixtures/models/README.md for the file list.

  /usr/bin/python3 scripts/parity/make_fixtures.py [--da2-src .ref/da2] [--da3-src .ref/da3] \
      [--pydeps .ref/pydeps .ref/pydeps_local] [--out tests/fixtures/models] [--only NAME ...] [--skip-small]
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_common as pc  # noqa: E402

# Tiny dims: head_dim stays 64 (1 head) like every official variant.
DA2_DIMS = dict(embed_dim=64, depth=12, num_heads=1)
DA3_L_DIMS = dict(embed_dim=64, depth=24, num_heads=1)   # stands in for vitl (out layers 4,11,17,23)
DA3_S_DIMS = dict(embed_dim=64, depth=12, num_heads=1)   # stands in for vits (out layers 5,7,9,11; alt 4)
# Stands in for vitg: SwiGLU, 40 blocks, out layers 19,27,33,39, alt/rope/qk-norm from 13 (odd: block 13 is global and
# receives the camera token), no GS head. Weights stored as f16 (the reference ran on the f16-rounded weights) to
# keep it ~4 MB.
DA3_G_DIMS = dict(embed_dim=64, depth=40, num_heads=1)
HEAD = dict(features=16, out_channels=[8, 16, 32, 32])
DA2_INPUT_SIZE = 140     # DA2 --input-size (official default 518; small to keep the fixtures small)
DA3_PROCESS_RES = 210    # DA3 process_res (official default 504); 97x73 -> 210x158 (cubic) -> 210x154 (area)
SEEDS = dict(da2_tiny_rel=1000, da2_tiny_metric=1000, da3mono_tiny=3000, da3small_tiny=5000, da3giant_tiny=7000)


def make_image(path):
    """Deterministic natural-ish 97x73 RGB image: smooth gradients, a few shapes, mild noise."""
    import cv2
    H, W = 73, 97
    rng = np.random.default_rng(12345)
    y, x = np.mgrid[0:H, 0:W].astype(np.float64)
    sky = np.stack([235 - 60 * y / H, 200 - 40 * y / H, 140 + 20 * x / W], -1)       # RGB
    ground = np.stack([90 + 50 * x / W, 120 - 30 * y / H, 60 + 20 * np.sin(x / 9.0)], -1)
    horizon = 30 + 4 * np.sin(x / 13.0)
    img = np.where((y < horizon)[..., None], sky, ground)
    img = np.where((((x - 70) ** 2 + (y - 45) ** 2) < 13 ** 2)[..., None], [200, 60, 50], img)  # red disc
    img = np.where(((x > 12) & (x < 34) & (y > 40) & (y < 64))[..., None], [40, 70, 170], img)  # blue box
    tri = (y > 18) & (y < 40) & (np.abs(x - 48) < (y - 18) * 0.8)                                # tree
    img = np.where(tri[..., None], [30, 110, 40], img)
    img = cv2.GaussianBlur(img, (3, 3), 0.8) + rng.normal(0, 3.0, img.shape)
    rgb = np.clip(np.round(img), 0, 255).astype(np.uint8)
    cv2.imwrite(path, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))


def load_rgb(path):
    import cv2
    return cv2.cvtColor(cv2.imread(path, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def three_views(rgb):
    """Three related views of one image: as is, mirrored, and shifted with a brightness change."""
    v1 = np.ascontiguousarray(rgb[:, ::-1])
    v2 = np.clip(np.roll(rgb, (4, 9), axis=(0, 1)).astype(np.float64) * 0.9 + 8, 0, 255).astype(np.uint8)
    return [rgb, v1, v2]


def fixture_da2(torch, name, metric, out, bgr, weights_from=None):
    """With weights_from (a built model) its state dict is reused: DA2 metric and relative have the same
    parameters (only the final activation differs), and near-identical .pth files pack to ~one in git."""
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    model = pc.build_da2(torch, "vits", metric, SEEDS[name], DA2_DIMS, HEAD["features"], HEAD["out_channels"])
    if weights_from is not None:
        model.load_state_dict(weights_from.state_dict())
    arrays = pc.run_da2(torch, model, bgr, DA2_INPUT_SIZE, calibrate=weights_from is None)
    ckpt = f"{name}_hypersim.pth" if metric else f"{name}.pth"
    torch.save(pc.da2_state_dict(model), os.path.join(d, ckpt))
    shapes = pc.save_arrays(d, arrays)
    return model, dict(kind="da2", checkpoint=ckpt, metric="hypersim" if metric else None,
                max_depth=20.0 if metric else None, encoder_like="vits", vit=DA2_DIMS, head=HEAD,
                intermediate_layers=[2, 5, 8, 11], input_size=DA2_INPUT_SIZE, seed=SEEDS[name], arrays=shapes)


def fixture_da3(torch, name, preset, dims, out, views, cam=False, model=None, sub=None):
    """One DA3 reference set. With `model` given the weights are reused (already written)."""
    d = os.path.join(out, name)
    c = dims["embed_dim"]
    dim_in = 2 * c if cam else c
    if model is None and preset == "da3-giant":
        model = build_da3_giant_tiny(torch, SEEDS[name], dims, dict(HEAD, dim_in=dim_in))
        calibrate = True
    elif model is None:
        model = pc.build_da3(torch, preset, SEEDS[name.split("/")[0]], dims, dict(HEAD, dim_in=dim_in),
                             cam_dim=(c, 2 * c) if cam else None)
        calibrate = True
    else:
        calibrate = False
    x = pc.da3_preprocess(torch, views, DA3_PROCESS_RES)
    arrays, meta = pc.run_da3(torch, model, x, calibrate)
    if len(views) > 1:  # the ray branch is already covered by the 1-view set; keep the fixtures small
        arrays.pop("ray", None)
        arrays.pop("ray_conf", None)
    rd = os.path.join(d, sub) if sub else d
    shapes = pc.save_arrays(rd, arrays)
    info = dict(kind="da3", preset=preset, vit=dims, head=dict(HEAD, dim_in=dim_in), process_res=DA3_PROCESS_RES,
                process_res_method="upper_bound_resize", views=len(views), arrays=shapes, **meta)
    return model, info


def build_da3_giant_tiny(torch, seed, dims, head):
    """pc.build_da3 for the da3-giant preset without its GS head and adapter (the adapter needs the `evo` package,
    and the engine ignores the GS head): a giant backbone (SwiGLU, odd alt_start) with the DualDPT head."""
    from depth_anything_3.cfg import load_config, create_object
    from depth_anything_3.registry import MODEL_REGISTRY
    from depth_anything_3.model.dinov2 import vision_transformer as vt
    cfg = load_config(MODEL_REGISTRY["da3-giant"])
    for k, v in head.items():
        cfg.head[k] = v
    del cfg["gs_head"], cfg["gs_adapter"]
    c = dims["embed_dim"]
    cfg.cam_enc.dim_out, cfg.cam_dec.dim_in = c, 2 * c
    torch.manual_seed(seed)
    with pc.vit_dims(vt.DinoVisionTransformer, dims):
        model = create_object(cfg)
    pc.perturb(torch, model, seed + 1)
    return model.eval()


def fixture_da3_nested(torch, out, views):
    """DA3NESTED (model/da3.py::NestedDepthAnything3Net) from the two tiny fixtures already written: the any-view
    branch is da3small_tiny (the nested code does not care that upstream's is a giant; a 40-block giant would double
    the size), the metric branch da3metric_tiny. Weights stored as f16 in one official nested checkpoint
    (model.da3.* + model.da3_metric.*); the reference runs on the f16-rounded weights. Three views at process_res
    210: 3·210·154 < 100k pixels, so upstream's quantile sampling never triggers."""
    from depth_anything_3.model.da3 import NestedDepthAnything3Net
    name = "da3nested_tiny"
    d = os.path.join(out, name)
    branches = []
    for src, preset, dims, cam in (("da3small_tiny", "da3-small", DA3_S_DIMS, True),
                                   ("da3metric_tiny", "da3metric-large", DA3_L_DIMS, False)):
        c = dims["embed_dim"]
        m = pc.build_da3(torch, preset, 0, dims, dict(HEAD, dim_in=2 * c if cam else c),
                         cam_dim=(c, 2 * c) if cam else None)
        sd = pc.load_safetensors(torch, os.path.join(out, src, "model.safetensors"))
        m.load_state_dict({k[len("model."):]: v for k, v in sd.items()}, strict=True)
        branches.append(m.half().float().eval())
    net = NestedDepthAnything3Net.__new__(NestedDepthAnything3Net)
    torch.nn.Module.__init__(net)
    net.da3, net.da3_metric = branches
    net.eval()
    x = pc.da3_preprocess(torch, views, DA3_PROCESS_RES)
    cap = pc.Capture()
    cap.output(net.da3_metric.head, "metric_head", lambda o: dict(o))
    with torch.no_grad():
        o = net(x, None, None, [], False, False, "saddle_balanced")
    cap.close()
    arrays = {"input": pc.npf(x)}
    for k in ("depth", "depth_conf", "extrinsics", "intrinsics"):
        arrays[k] = pc.npf(o[k][0])
    ms = cap.t["metric_head"]["sky"]  # the metric branch's sky map: where upstream capped the depth
    arrays["metric_sky"] = pc.npf(ms.reshape(x.shape[1], *ms.shape[-2:]))
    arrays["scale_factor"] = np.array([o["scale_factor"]], dtype=np.float32)
    shapes = pc.save_arrays(d, arrays)
    sd = {"model." + k: v.half() for k, v in net.state_dict().items()}
    pc.save_safetensors(torch, sd, os.path.join(d, "model.safetensors"))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(dict(model_name="da3nested-giant-large",
                       dacpp_fixture=dict(anyview="da3small_tiny", metric="da3metric_tiny", dtype="f16")), f, indent=1)
    return dict(kind="da3nested", process_res=DA3_PROCESS_RES, views=len(views), arrays=shapes,
                scale_factor=float(o["scale_factor"]), checkpoint="model.safetensors",
                branches=["da3small_tiny", "da3metric_tiny"])


def preproc_da3_default(torch, rgb, out):
    """Official DA3 preprocessing at the default process_res 504, stored losslessly as the uint8 RGB image
    that InputProcessor normalises (it resizes uint8 with cv2 and normalises afterwards)."""
    import cv2
    x = pc.da3_preprocess(torch, [rgb], 504)[0, 0]
    mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
    u = (x * std + mean) * 255
    err = float((u - u.round()).abs().max())
    if err > 1e-3:
        raise RuntimeError(f"DA3 504 preprocessing is not an exact uint8 image (max frac {err})")
    u8 = u.round().clamp(0, 255).byte().permute(1, 2, 0).numpy()
    d = os.path.join(out, "preproc")
    os.makedirs(d, exist_ok=True)
    cv2.imwrite(os.path.join(d, "da3_504_upper_bound_resize.png"), cv2.cvtColor(u8, cv2.COLOR_RGB2BGR))
    return dict(file="preproc/da3_504_upper_bound_resize.png", shape=list(u8.shape), max_roundtrip_err=err)


def main():
    dp = pc.default_paths()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--da2-src", default=dp["da2"])
    ap.add_argument("--da3-src", default=dp["da3"])
    ap.add_argument("--pydeps", nargs="*", default=dp["pydeps"])
    ap.add_argument("--out", default=os.path.join(pc.REPO, "tests", "fixtures", "models"))
    ap.add_argument("--only", nargs="*", help="fixture names to (re)build; default all")
    ap.add_argument("--skip-small", action="store_true", help="skip da3small_tiny (any-view)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--verify", metavar="FIXTURE_DIR",
                    help="instead of building: load the DA3 fixtures' weights and input.npy from FIXTURE_DIR, "
                         "recompute with this interpreter's official stack and write the arrays to --out")
    a = ap.parse_args()
    torch = pc.setup(a.da2_src, a.da3_src, a.pydeps, a.threads)
    if a.verify:
        return verify(torch, a.verify, a.out)
    import cv2
    os.makedirs(a.out, exist_ok=True)
    img_path = os.path.join(a.out, "input.png")
    if not os.path.exists(img_path):
        make_image(img_path)
    bgr = cv2.imread(img_path, cv2.IMREAD_COLOR)
    rgb = load_rgb(img_path)
    want = lambda n: not a.only or n in a.only  # noqa: E731

    man_path = os.path.join(a.out, "manifest.json")
    man = json.load(open(man_path)) if os.path.exists(man_path) else {}
    fx = man.setdefault("fixtures", {})
    if want("da2_tiny_rel") or want("da2_tiny_metric"):
        rel, fx["da2_tiny_rel"] = fixture_da2(torch, "da2_tiny_rel", False, a.out, bgr)
        _, fx["da2_tiny_metric"] = fixture_da2(torch, "da2_tiny_metric", True, a.out, bgr, weights_from=rel)
        fx["da2_tiny_metric"]["seed"] = SEEDS["da2_tiny_rel"]
    if want("da3mono_tiny") or want("da3metric_tiny"):
        # da3metric-large has the same architecture and YAML as da3mono-large: the same tiny weights serve
        # both (byte-identical model.safetensors, so git stores them once); only config.json differs.
        m, info = fixture_da3(torch, "da3mono_tiny", "da3mono-large", DA3_L_DIMS, a.out, [rgb])
        for name, preset in (("da3mono_tiny", "da3mono-large"), ("da3metric_tiny", "da3metric-large")):
            _, info = fixture_da3(torch, name, preset, DA3_L_DIMS, a.out, [rgb], model=m)
            pc.da3_write_model(torch, m, os.path.join(a.out, name), preset,
                               dict(dacpp_fixture=dict(vit=DA3_L_DIMS, head=info["head"])))
            fx[name] = dict(info, seed=SEEDS["da3mono_tiny"], checkpoint="model.safetensors")
    if not a.skip_small and want("da3small_tiny"):
        name = "da3small_tiny"
        m, i1 = fixture_da3(torch, name, "da3-small", DA3_S_DIMS, a.out, [rgb], cam=True, sub="view1")
        views = three_views(rgb)
        _, i3 = fixture_da3(torch, name, "da3-small", DA3_S_DIMS, a.out, views, cam=True, model=m, sub="view3")
        for k, v in enumerate(views):
            cv2.imwrite(os.path.join(a.out, name, "view3", f"view{k}.png"), cv2.cvtColor(v, cv2.COLOR_RGB2BGR))
        pc.da3_write_model(torch, m, os.path.join(a.out, name), "da3-small",
                           dict(dacpp_fixture=dict(vit=DA3_S_DIMS, head=i1["head"])))
        fx[name] = dict(i1, seed=SEEDS[name], checkpoint="model.safetensors", view1=i1["arrays"],
                        view3=i3["arrays"], view3_ref_view=i3["ref_view"])
        fx[name].pop("arrays")
    if want("da3giant_tiny"):
        name = "da3giant_tiny"
        views = three_views(rgb)
        m, _ = fixture_da3(torch, name, "da3-giant", DA3_G_DIMS, a.out, views, cam=True, sub="view3")
        m.half().float()  # calibrated weights rounded to f16, then the reference recomputed with them
        _, i3 = fixture_da3(torch, name, "da3-giant", DA3_G_DIMS, a.out, views, cam=True, model=m, sub="view3")
        sd = {"model." + k: v.half() for k, v in m.state_dict().items()}
        pc.save_safetensors(torch, sd, os.path.join(a.out, name, "model.safetensors"))
        with open(os.path.join(a.out, name, "config.json"), "w") as f:
            json.dump(dict(model_name="da3-giant", dacpp_fixture=dict(vit=DA3_G_DIMS, head=i3["head"], dtype="f16")),
                      f, indent=1)
        fx[name] = dict(i3, seed=SEEDS[name], checkpoint="model.safetensors", view3=i3["arrays"],
                        view3_ref_view=i3["ref_view"])
        fx[name].pop("arrays")
    if want("da3nested_tiny"):
        fx["da3nested_tiny"] = fixture_da3_nested(torch, a.out, three_views(rgb))
    if want("preproc"):
        man["preproc_da3_504"] = preproc_da3_default(torch, rgb, a.out)
    man["input"] = dict(file="input.png", shape=list(rgb.shape))
    man["generator"] = dict(script="scripts/parity/make_fixtures.py", torch=torch.__version__,
                            numpy=np.__version__, cv2=cv2.__version__, shims=pc.SHIMS,
                            da2_commit=_commit(a.da2_src), da3_commit=_commit(a.da3_src))
    with open(man_path, "w") as f:
        json.dump(man, f, indent=1, sort_keys=True)
    total = sum(os.path.getsize(os.path.join(r, n)) for r, _, ns in os.walk(a.out) for n in ns)
    print(f"wrote {a.out}: {total / 1e6:.2f} MB; shims: {pc.SHIMS or 'none'}")


def verify(torch, fixdir, out):
    jobs = [("da3mono_tiny", "da3mono-large", DA3_L_DIMS, False, [""]),
            ("da3small_tiny", "da3-small", DA3_S_DIMS, True, ["view1", "view3"])]
    for name, preset, dims, cam, subs in jobs:
        if not os.path.isdir(os.path.join(fixdir, name)):
            continue
        c = dims["embed_dim"]
        m = pc.build_da3(torch, preset, 0, dims, dict(HEAD, dim_in=2 * c if cam else c),
                         cam_dim=(c, 2 * c) if cam else None)
        for sub in subs:
            meta = pc.verify_da3(torch, m, os.path.join(fixdir, name), sub, os.path.join(out, name, sub))
            print(f"verified {name}/{sub}: ref_view {meta['ref_view']}")


def _commit(src):
    p = os.path.join(src, "COMMIT")
    return open(p).read().strip() if os.path.exists(p) else None


if __name__ == "__main__":
    main()
