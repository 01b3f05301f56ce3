#!/usr/bin/env python3
"""Writes cv2.resize reference cases for tests/pipeline/cv_resize_test.cc.

Each case is one binary file (little-endian):
    8 bytes  magic b"DRSZ1\\0\\0\\0"
    7 int32  dtype (0 uint8, 1 float32, 2 float64), interp (0 INTER_CUBIC, 1 INTER_AREA), src_h, src_w, channels,
             dst_h, dst_w
    src_h*src_w*channels elements of the source, then dst_h*dst_w*channels elements of cv2.resize's output.

Usage:
    scripts/gen_resize_refs.py                       # the small committed set -> tests/fixtures/resize/
    scripts/gen_resize_refs.py --many 2000 --out /tmp/rsz --seed 7   # a large random sweep (not committed);
        run the test with DACPP_RESIZE_REFS=/tmp/rsz to check it.

Needs the system python3 with numpy and OpenCV (python3-opencv).
"""
import argparse
import os
import struct
import sys

import numpy as np
import cv2

DTYPES = {0: np.uint8, 1: np.float32, 2: np.float64}
INTERPS = {0: cv2.INTER_CUBIC, 1: cv2.INTER_AREA}


def make_source(rng, h, w, cn, dtype_code, kind):
    if kind == "noise":
        img = rng.integers(0, 256, size=(h, w, cn), dtype=np.uint8)
    else:  # a smooth image with a few hard edges, like a photo
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
        base = 127.5 + 100 * np.sin(xx / (3 + w / 7.0)) * np.cos(yy / (2 + h / 5.0))
        base[(xx > w / 3) & (yy > h / 2)] = 250
        base[(xx < w / 4)] = 3
        chans = [np.clip(base + 20 * c, 0, 255) for c in range(cn)]
        img = np.stack(chans, axis=-1).round().astype(np.uint8)
    if dtype_code == 0:
        return img
    if dtype_code == 1:
        return img.astype(np.float32) / np.float32(255.0)
    return img.astype(np.float64) / 255.0


def write_case(path, dtype_code, interp_code, src, dst):
    h, w = src.shape[:2]
    cn = 1 if src.ndim == 2 else src.shape[2]
    dh, dw = dst.shape[:2]
    dt = np.dtype(DTYPES[dtype_code]).newbyteorder("<")
    with open(path, "wb") as f:
        f.write(b"DRSZ1\0\0\0")
        f.write(struct.pack("<7i", dtype_code, interp_code, h, w, cn, dh, dw))
        f.write(np.ascontiguousarray(src, dtype=dt).tobytes())
        f.write(np.ascontiguousarray(dst, dtype=dt).tobytes())


def resize(src, dh, dw, interp_code):
    out = cv2.resize(src, (dw, dh), interpolation=INTERPS[interp_code])
    if out.ndim == 2:
        out = out[:, :, None]
    return out


def one_case(rng, out_dir, idx, dtype_code, interp_code, sh, sw, cn, dh, dw, kind):
    src = make_source(rng, sh, sw, cn, dtype_code, kind)
    dst = resize(src, dh, dw, interp_code)
    name = "%04d_%s_%s_%dx%dx%d_to_%dx%d_%s.rsz" % (
        idx, ["u8", "f32", "f64"][dtype_code], ["cubic", "area"][interp_code], sh, sw, cn, dh, dw, kind)
    write_case(os.path.join(out_dir, name), dtype_code, interp_code, src, dst)


def committed_set(out_dir, rng):
    cases = [
        # uint8 cubic, up and down, odd sizes, 1/3/4 channels (DA3 enlarges with it)
        (0, 0, 13, 17, 3, 29, 41), (0, 0, 40, 30, 3, 17, 23), (0, 0, 7, 9, 3, 14, 14), (0, 0, 31, 33, 1, 28, 42),
        (0, 0, 24, 25, 4, 36, 27), (0, 0, 5, 3, 3, 28, 14), (0, 0, 37, 52, 3, 42, 56),
        # uint8 area: integer factors (2x2, 3x2, 4x4) and fractional ones, as DA3 shrinks with it
        (0, 1, 40, 36, 3, 20, 18), (0, 1, 39, 40, 3, 13, 20), (0, 1, 48, 48, 3, 12, 12), (0, 1, 41, 37, 3, 28, 28),
        (0, 1, 50, 64, 3, 37, 49), (0, 1, 33, 45, 1, 14, 28), (0, 1, 30, 42, 3, 28, 42), (0, 1, 29, 31, 4, 20, 30),
        # float64 / float32 cubic (DA2 resizes the /255 float64 image with it)
        (2, 0, 19, 23, 3, 28, 42), (2, 0, 41, 29, 3, 14, 28), (2, 0, 10, 14, 3, 14, 14), (1, 0, 17, 21, 3, 28, 28),
        (1, 0, 30, 26, 3, 14, 15), (1, 0, 9, 11, 1, 23, 17),
        # float area
        (1, 1, 32, 30, 3, 16, 15), (1, 1, 35, 41, 3, 14, 28), (2, 1, 36, 30, 3, 14, 28), (2, 1, 40, 40, 3, 20, 20),
    ]
    for i, (dt, it, sh, sw, cn, dh, dw) in enumerate(cases):
        kind = "noise" if i % 2 == 0 else "smooth"
        one_case(rng, out_dir, i, dt, it, sh, sw, cn, dh, dw, kind)
    return len(cases)


def random_set(out_dir, rng, n):
    for i in range(n):
        dt = int(rng.choice([0, 0, 0, 1, 2]))
        it = int(rng.integers(0, 2))
        cn = int(rng.choice([1, 3, 3, 3, 4]))
        sh, sw = int(rng.integers(2, 90)), int(rng.integers(2, 90))
        if it == 1:  # area: shrink (or keep) each axis
            dh, dw = int(rng.integers(1, sh + 1)), int(rng.integers(1, sw + 1))
            if rng.random() < 0.3:  # integer factors
                f = int(rng.integers(1, 5))
                dh, dw = max(1, sh // f), max(1, sw // f)
                sh, sw = dh * f, dw * f
        else:
            dh, dw = int(rng.integers(1, 120)), int(rng.integers(1, 120))
        kind = "noise" if rng.random() < 0.5 else "smooth"
        one_case(rng, out_dir, i, dt, it, sh, sw, cn, dh, dw, kind)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "resize"))
    ap.add_argument("--many", type=int, default=0, help="write this many random cases instead of the fixed set")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    n = random_set(args.out, rng, args.many) if args.many else committed_set(args.out, rng)
    print("wrote %d cases to %s (OpenCV %s)" % (n, args.out, cv2.__version__), file=sys.stderr)


if __name__ == "__main__":
    main()
