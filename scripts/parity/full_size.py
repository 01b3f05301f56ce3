"""Full-size reference checkpoints + outputs from the OFFICIAL DA2/DA3 code (for the GPU machine).

Same procedure and file names as make_fixtures.py, but with the official configurations (no tiny dims) and
the official default resolutions (DA2 input_size 518, DA3 process_res 504). Random weights (default init,
fixed seed, perturbed and output-calibrated: see parity_common.py), float32 on the CPU, TF32 off.
Needs only the repo and .ref/ (official sources + pydeps); torch, numpy, cv2, PIL from the interpreter.

  python3 scripts/parity/full_size.py --out DIR [--models da2_vits da3-large ...] [--views 1] \
      [--image tests/fixtures/models/input.png] [--da2-src .ref/da2] [--da3-src .ref/da3] [--pydeps ...]

Writes DIR/<model>/: the checkpoint (DA2: depth_anything_v2_<enc>.pth or
depth_anything_v2_metric_hypersim_<enc>.pth; DA3: model.safetensors + config.json) and the reference
tensors (input, feat0-3, rn1-4, depth, ...; see tests/fixtures/models/README.md), plus DIR/manifest.json.
Models: da2_vits da2_vitb da2_vitl da2_vitg (never released; built anyway), da2m_vits/vitb/vitl (metric,
Hypersim, max_depth 20), da3mono-large da3metric-large da3-small da3-base da3-large da3-giant.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_common as pc  # noqa: E402

DEFAULT = ["da2_vits", "da2_vitb", "da2_vitl", "da3mono-large", "da3-small", "da3-base", "da3-large"]


def run_da2_model(torch, name, out, bgr, input_size, seed):
    metric = name.startswith("da2m_")
    enc = name.split("_", 1)[1]
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    model = pc.build_da2(torch, enc, metric, seed)
    arrays = pc.run_da2(torch, model, bgr, input_size, calibrate=True)
    ckpt = f"depth_anything_v2_metric_hypersim_{enc}.pth" if metric else f"depth_anything_v2_{enc}.pth"
    torch.save(pc.da2_state_dict(model), os.path.join(d, ckpt))
    shapes = pc.save_arrays(d, arrays)
    return dict(kind="da2", encoder=enc, metric="hypersim" if metric else None, checkpoint=ckpt,
                input_size=input_size, seed=seed, arrays=shapes)


def run_da3_model(torch, preset, out, views, process_res, seed):
    d = os.path.join(out, preset if len(views) == 1 else f"{preset}_v{len(views)}")
    model = pc.build_da3(torch, preset, seed)
    x = pc.da3_preprocess(torch, views, process_res)
    arrays, meta = pc.run_da3(torch, model, x, calibrate=True)
    pc.da3_write_model(torch, model, d, preset)
    shapes = pc.save_arrays(d, arrays)
    return dict(kind="da3", preset=preset, process_res=process_res, process_res_method="upper_bound_resize",
                views=len(views), seed=seed, checkpoint="model.safetensors", arrays=shapes, **meta)


def main():
    dp = pc.default_paths()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", nargs="*", default=DEFAULT)
    ap.add_argument("--image", default=os.path.join(pc.REPO, "tests", "fixtures", "models", "input.png"))
    ap.add_argument("--views", type=int, default=1, choices=[1, 3], help="views for any-view DA3 models")
    ap.add_argument("--input-size", type=int, default=518, help="DA2 input_size")
    ap.add_argument("--process-res", type=int, default=504, help="DA3 process_res")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--da2-src", default=dp["da2"])
    ap.add_argument("--da3-src", default=dp["da3"])
    ap.add_argument("--pydeps", nargs="*", default=dp["pydeps"])
    a = ap.parse_args()
    torch = pc.setup(a.da2_src, a.da3_src, a.pydeps, a.threads)
    import cv2
    from make_fixtures import three_views
    bgr = cv2.imread(a.image, cv2.IMREAD_COLOR)
    if bgr is None:
        sys.exit(f"cannot read image {a.image}")
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    os.makedirs(a.out, exist_ok=True)
    man_path = os.path.join(a.out, "manifest.json")
    man = json.load(open(man_path)) if os.path.exists(man_path) else {"fixtures": {}}
    for i, name in enumerate(a.models):
        t0 = time.time()
        seed = a.seed + 1000 * (i + 1)
        if name.startswith("da2"):
            info = run_da2_model(torch, name, a.out, bgr, a.input_size, seed)
            key = name
        else:
            anyview = not (name.startswith("da3mono") or name.startswith("da3metric"))
            views = three_views(rgb) if anyview and a.views == 3 else [rgb]
            info = run_da3_model(torch, name, a.out, views, a.process_res, seed)
            key = name if len(views) == 1 else f"{name}_v{len(views)}"
        info["seconds"] = round(time.time() - t0, 1)
        man["fixtures"][key] = info
        print(f"{key}: {info['seconds']} s", flush=True)
        with open(man_path, "w") as f:
            json.dump(man, f, indent=1, sort_keys=True)
    man["input"] = dict(file=os.path.abspath(a.image), shape=list(rgb.shape))
    man["generator"] = dict(script="scripts/parity/full_size.py", torch=torch.__version__, cv2=cv2.__version__,
                            threads=torch.get_num_threads(), shims=pc.SHIMS)
    with open(man_path, "w") as f:
        json.dump(man, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
