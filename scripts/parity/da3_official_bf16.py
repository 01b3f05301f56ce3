"""The official DA3 network's own bf16 error: its bf16-autocast GPU forward on a checkpoint written by
shared/bench/da3_official.py (`ref`), dumped as .npy next to ours, so that compare.py can put both against the
official f32 CPU reference (how far the official code itself moves in bf16 on these random weights).

  python3 scripts/parity/da3_official_bf16.py BENCH_DIR CKPT_DIR OUT_DIR

BENCH_DIR holds da3_official.py (build / make_input / forward); CKPT_DIR holds model.safetensors, config.json and
input.npy from its `ref` command. Needs torch, safetensors and the official package on PYTHONPATH, and a GPU.
"""
import json
import os
import sys

import numpy as np


def main(bench_dir, ckpt_dir, out_dir):
    sys.path.insert(0, bench_dir)
    import torch
    from safetensors.torch import load_file
    import da3_official as official

    name = json.load(open(os.path.join(ckpt_dir, "config.json")))["model_name"]
    model, _ = official.build(name)
    state = {k[len("model."):]: v for k, v in load_file(os.path.join(ckpt_dir, "model.safetensors")).items()}
    model.load_state_dict(state, strict=True)
    model = model.cuda()
    x = torch.from_numpy(np.load(os.path.join(ckpt_dir, "input.npy"))).cuda()
    with torch.inference_mode(), torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        out = official.forward(model, x)
    os.makedirs(out_dir, exist_ok=True)
    for k, v in out.items():
        if torch.is_tensor(v):
            np.save(os.path.join(out_dir, k + ".npy"), v.detach().float().cpu().numpy())
    print("official bf16-autocast", name, "->", out_dir, sorted(k for k, v in out.items() if torch.is_tensor(v)))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    main(*sys.argv[1:])
