"""Build tests/fixtures/models/da3small_tiny/raypose from the OFFICIAL DA3 code: the da3small_tiny weights run with
`use_ray_pose=True` (`DepthAnything3Net._process_ray_pose_estimation` → `utils/ray_utils.py::get_extrinsic_from_camray`)
on the fixture image at process_res 168 (168×126 → a 96×72 ray map: under the official max_inlier_num of 8000
points, so the official refit never subsamples; that draw is not replicable).

The RANSAC sample table comes from torch's global RNG. Nothing else in the forward draws from it (eval mode, one
view, no sky), so it is drawn here with a fixed seed exactly as `get_params_for_ransac` draws it, the RNG is
re-seeded, and the official forward redraws the same table. The table is saved (sample_idx.npy, float32 small
integers) so the C++ test can hand it to pipeline::ray_pose.

  /usr/bin/python3 scripts/parity/make_raypose_fixture.py [--out tests/fixtures/models]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_common as pc  # noqa: E402
import make_fixtures as mf  # noqa: E402

SEED = 4242
PROCESS_RES = 168


def main():
    dp = pc.default_paths()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(pc.REPO, "tests", "fixtures", "models"))
    a = ap.parse_args()
    torch = pc.setup(dp["da2"], dp["da3"], dp["pydeps"], 2)
    from depth_anything_3.utils.ray_utils import get_params_for_ransac
    fixdir = os.path.join(a.out, "da3small_tiny")
    c = mf.DA3_S_DIMS["embed_dim"]
    model = pc.build_da3(torch, "da3-small", 0, mf.DA3_S_DIMS, dict(mf.HEAD, dim_in=2 * c), cam_dim=(c, 2 * c))
    sd = pc.load_safetensors(torch, os.path.join(fixdir, "model.safetensors"))
    model.load_state_dict({k[len("model."):]: v for k, v in sd.items()}, strict=True)
    x = pc.da3_preprocess(torch, [mf.load_rgb(os.path.join(a.out, "input.png"))], PROCESS_RES)
    H, W = x.shape[-2:]
    h, w = 8 * (H // 14), 8 * (W // 14)
    assert h * w < 8000, (h, w)
    torch.manual_seed(SEED)
    table = get_params_for_ransac(h * w, "cpu")[3].numpy()
    cap = pc.Capture()
    cap.output(model.head, "head", lambda o: dict(o))
    torch.manual_seed(SEED)
    with torch.no_grad():
        out = model(x, None, None, [], False, True, "saddle_balanced")
    cap.close()
    head = cap.t["head"]
    arrays = dict(input=pc.npf(x), ray=pc.npf(head["ray"][0]), ray_conf=pc.npf(head["ray_conf"][0]),
                  depth=pc.npf(out["depth"][0]), extrinsics=pc.npf(out["extrinsics"][0]),
                  intrinsics=pc.npf(out["intrinsics"][0]), sample_idx=table.astype(np.float32))
    shapes = pc.save_arrays(os.path.join(fixdir, "raypose"), arrays)
    print("wrote", os.path.join(fixdir, "raypose"), shapes, "seed", SEED)


if __name__ == "__main__":
    main()
