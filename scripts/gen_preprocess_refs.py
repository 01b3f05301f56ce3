#!/usr/bin/env python3
"""Writes whole-preprocessing references for tests/pipeline/preprocess_test.cc, following the official code:

  DA2  depth_anything_v2/dpt.py image2tensor + util/transform.py (Resize lower_bound, ensure_multiple_of 14,
       INTER_CUBIC on the float64 image / 255, NormalizeImage, PrepareForNet)
  DA3  src/depth_anything_3/utils/io/input_processor.py (PIL RGB, _resize_longest_side / _resize_shortest_side,
       _make_divisible_by_resize, ToTensor + Normalize)

Each output is tests/fixtures/preprocess/<policy>_<target>.npy, float32 [1, 3, H, W], for the input
tests/fixtures/images/sample_small.png (made by scripts/make_sample_photo.py).
Needs the system python3 with numpy, OpenCV and PIL; uses torch for ToTensor/Normalize when it is installed.
"""
import os

import cv2
import numpy as np
from PIL import Image

try:
    import torch
except ImportError:  # numpy float32 arithmetic gives the same values
    torch = None

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


# ---- DA2 (util/transform.py Resize with keep_aspect_ratio, lower_bound, multiple of 14) ----

def da2_constrain(x, multiple, min_val):
    y = (np.round(x / multiple) * multiple).astype(int)
    if y < min_val:
        y = (np.ceil(x / multiple) * multiple).astype(int)
    return y


def da2(path, target):
    raw = cv2.imread(path)
    image = cv2.cvtColor(raw, cv2.COLOR_BGR2RGB) / 255.0
    height, width = image.shape[:2]
    scale_height = target / height
    scale_width = target / width
    if scale_width > scale_height:
        scale_height = scale_width
    else:
        scale_width = scale_height
    new_h = da2_constrain(np.float64(scale_height * height), 14, target)
    new_w = da2_constrain(np.float64(scale_width * width), 14, target)
    image = cv2.resize(image, (int(new_w), int(new_h)), interpolation=cv2.INTER_CUBIC)
    image = (image - MEAN) / STD
    return np.ascontiguousarray(np.transpose(image, (2, 0, 1))).astype(np.float32)[None]


# ---- DA3 (InputProcessor) ----

def da3_boundary(img, target, upper):
    w, h = img.size
    ref = max(w, h) if upper else min(w, h)
    if ref == target:
        return img
    scale = target / float(ref)
    new_w = max(1, int(round(w * scale)))
    new_h = max(1, int(round(h * scale)))
    interp = cv2.INTER_CUBIC if scale > 1.0 else cv2.INTER_AREA
    return Image.fromarray(cv2.resize(np.asarray(img), (new_w, new_h), interpolation=interp))


def da3_divisible(img, patch=14):
    w, h = img.size

    def nearest_multiple(x, p):
        down = (x // p) * p
        up = down + p
        return up if abs(up - x) <= abs(x - down) else down

    new_w = max(1, nearest_multiple(w, patch))
    new_h = max(1, nearest_multiple(h, patch))
    if new_w == w and new_h == h:
        return img
    upscale = (new_w > w) or (new_h > h)
    interp = cv2.INTER_CUBIC if upscale else cv2.INTER_AREA
    return Image.fromarray(cv2.resize(np.asarray(img), (new_w, new_h), interpolation=interp))


def da3(path, target, upper):
    img = Image.open(path).convert("RGB")
    img = da3_divisible(da3_boundary(img, target, upper))
    arr = np.asarray(img)
    if torch is not None:
        t = torch.from_numpy(arr.copy()).permute(2, 0, 1).contiguous().float().div(255)
        mean = torch.as_tensor(MEAN, dtype=t.dtype).view(-1, 1, 1)
        std = torch.as_tensor(STD, dtype=t.dtype).view(-1, 1, 1)
        return t.sub_(mean).div_(std).numpy()[None]
    t = np.transpose(arr, (2, 0, 1)).astype(np.float32) / np.float32(255)
    mean = np.asarray(MEAN, np.float32)[:, None, None]
    std = np.asarray(STD, np.float32)[:, None, None]
    return ((t - mean) / std)[None]


CASES = [  # (policy name as in preprocess.cc, target)
    ("da2-lower-bound", 42), ("da2-lower-bound", 70),
    ("da3-upper-bound", 98), ("da3-upper-bound", 56), ("da3-lower-bound", 56),
]


def main():
    src = os.path.join(ROOT, "tests", "fixtures", "images", "sample_small.png")
    out_dir = os.path.join(ROOT, "tests", "fixtures", "preprocess")
    os.makedirs(out_dir, exist_ok=True)
    for policy, target in CASES:
        if policy.startswith("da2"):
            x = da2(src, target)
        else:
            x = da3(src, target, upper=policy == "da3-upper-bound")
        np.save(os.path.join(out_dir, "%s_%d.npy" % (policy, target)), x.astype(np.float32))
        print(policy, target, x.shape)


if __name__ == "__main__":
    main()
