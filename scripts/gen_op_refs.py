#!/usr/bin/python3
"""Writes tests/fixtures/ops/resize_*.bin: torch.nn.functional.interpolate outputs (raw little-endian f32) that pin
the semantics of ops::resize_bilinear / resize_bicubic. The input of every case is the deterministic pattern
x[i] = sin(0.37 i) + 0.25 cos(1.3 i) over the flat [N, C, H, W] index, rebuilt by tests/ops/resize_test.cc.
Run once by hand (needs torch); the tests do not need Python."""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

# name, (n, c, h, w), (oh, ow) or None, mode, align_corners, scale_factor or None
CASES = [
    ("bilinear_ac0_5x7_9x4", (1, 2, 5, 7), (9, 4), "bilinear", False, None),
    ("bilinear_ac1_5x7_9x4", (1, 2, 5, 7), (9, 4), "bilinear", True, None),
    ("bicubic_ac0_6x5_11x13", (2, 1, 6, 5), (11, 13), "bicubic", False, None),
    ("bicubic_ac1_6x5_11x13", (2, 1, 6, 5), (11, 13), "bicubic", True, None),
    ("bicubic_ac0_37x37_scale", (1, 2, 37, 37), None, "bicubic", False, (36.1 / 37, 46.1 / 37)),
    ("bicubic_ac0_9x8_down_4x3", (1, 1, 9, 8), (4, 3), "bicubic", False, None),
]


def pattern(shape):
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.float64)
    return (np.sin(0.37 * i) + 0.25 * np.cos(1.3 * i)).astype(np.float32).reshape(shape)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name, shape, size, mode, ac, scale in CASES:
        x = torch.from_numpy(pattern(shape))
        if scale is not None:
            y = F.interpolate(x, scale_factor=scale, mode=mode, align_corners=ac)
        else:
            y = F.interpolate(x, size=size, mode=mode, align_corners=ac)
        y.numpy().astype("<f4").tofile(os.path.join(out_dir, name + ".bin"))
        print(name, tuple(y.shape))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "ops"))
