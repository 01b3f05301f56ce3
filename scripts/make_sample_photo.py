#!/usr/bin/env python3
"""Renders the synthetic sample photo and the small image fixtures (numpy ray casting, no network, deterministic).

Outputs (paths relative to the repository root):
    assets/sample.jpg                    640x480 JPEG: sky, textured ground plane in perspective, shaded spheres and
                                         a box with cast shadows -- a scene with real depth for `make run`.
    tests/fixtures/images/sample_small.png   83x61 PNG of the same scene (preprocessing parity fixture).
    tests/fixtures/images/orient6.jpg    48x32 (stored) JPEG with an EXIF APP1 segment, orientation 6 (rotate
                                         90 deg clockwise to view), written by hand: big-endian TIFF, IFD0 with
                                         the orientation tag 0x0112 plus one unrelated tag before it.
    tests/fixtures/images/plain.jpg      the same 48x32 JPEG without EXIF.

Needs the system python3 with numpy and PIL.
"""
import io
import os
import struct

import numpy as np
from PIL import Image

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

SPHERES = [  # centre (x, y, z), radius, albedo
    ((-1.6, 0.7, 6.0), 0.7, (0.85, 0.25, 0.20)),
    ((0.9, 0.5, 4.2), 0.5, (0.20, 0.45, 0.85)),
    ((2.6, 1.1, 11.0), 1.1, (0.90, 0.80, 0.30)),
    ((-0.3, 0.35, 3.0), 0.35, (0.30, 0.75, 0.35)),
]
BOX = ((-4.2, 0.0, 8.5), (-2.6, 1.6, 10.5), (0.75, 0.72, 0.68))  # min corner, max corner, albedo
LIGHT = np.array([-0.45, 0.8, -0.35])
LIGHT = LIGHT / np.linalg.norm(LIGHT)


def hit_sphere(o, d, c, r):
    oc = o - np.array(c)
    b = (d * oc).sum(-1)
    q = (oc * oc).sum(-1) - r * r
    disc = b * b - q
    t = -b - np.sqrt(np.maximum(disc, 0))
    return np.where((disc > 0) & (t > 1e-4), t, np.inf)


def hit_box(o, d, lo, hi):
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (np.array(lo) - o) / d
        t2 = (np.array(hi) - o) / d
    tmin = np.nanmax(np.minimum(t1, t2), axis=-1)
    tmax = np.nanmin(np.maximum(t1, t2), axis=-1)
    ok = (tmax >= tmin) & (tmin > 1e-4)
    return np.where(ok, tmin, np.inf), tmin


def box_normal(p, lo, hi):
    lo, hi = np.array(lo), np.array(hi)
    c, half = (lo + hi) / 2, (hi - lo) / 2
    q = (p - c) / half
    axis = np.abs(q).argmax(-1)
    n = np.zeros_like(p)
    n[np.arange(len(p)), axis] = np.sign(q[np.arange(len(p)), axis])
    return n


def occluded(p):
    """True where the ray from p towards the light hits an object (cast shadows)."""
    d = np.broadcast_to(LIGHT, p.shape)
    blocked = np.zeros(len(p), bool)
    for c, r, _ in SPHERES:
        blocked |= np.isfinite(hit_sphere(p, d, c, r))
    blocked |= np.isfinite(hit_box(p, d, BOX[0], BOX[1])[0])
    return blocked


def render(width, height, seed=3):
    rng = np.random.default_rng(seed)
    f = 0.9 * width
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    d = np.stack([(xs - width / 2 + 0.5) / f, -(ys - height * 0.42) / f, np.ones_like(xs)], -1).reshape(-1, 3)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    o = np.broadcast_to(np.array([0.0, 1.3, 0.0]), d.shape)

    t_best = np.full(len(d), np.inf)
    kind = np.full(len(d), -1)  # -1 sky, 0 ground, 1+i sphere i, 99 box
    with np.errstate(divide="ignore", invalid="ignore"):
        t_ground = np.where(d[:, 1] < -1e-6, -o[:, 1] / d[:, 1], np.inf)
    upd = t_ground < t_best
    t_best[upd], kind[upd] = t_ground[upd], 0
    for i, (c, r, _) in enumerate(SPHERES):
        t = hit_sphere(o, d, c, r)
        upd = t < t_best
        t_best[upd], kind[upd] = t[upd], 1 + i
    t, _ = hit_box(o, d, BOX[0], BOX[1])
    upd = t < t_best
    t_best[upd], kind[upd] = t[upd], 99

    col = np.zeros_like(d)
    # Sky: warm horizon to deep blue, with a sun glow.
    sky = kind < 0
    up = np.clip(d[sky, 1], 0, 1)[:, None]
    sun = np.clip((d[sky] @ LIGHT), 0, 1)[:, None] ** 64
    col[sky] = (1 - up) ** 2 * np.array([0.93, 0.90, 0.85]) + (1 - (1 - up) ** 2) * np.array([0.25, 0.45, 0.85]) + sun
    hit = ~sky
    p = o[hit] + d[hit] * t_best[hit, None]
    n = np.zeros_like(p)
    albedo = np.zeros_like(p)
    k = kind[hit]
    g = k == 0
    n[g] = (0, 1, 0)
    checker = ((np.floor(p[g, 0]) + np.floor(p[g, 2])) % 2)[:, None]
    grain = rng.normal(0, 0.04, (g.sum(), 1))
    albedo[g] = np.array([0.45, 0.42, 0.36]) + 0.12 * checker + grain
    for i, (c, r, a) in enumerate(SPHERES):
        s = k == 1 + i
        n[s] = (p[s] - np.array(c)) / r
        albedo[s] = a
    b = k == 99
    n[b] = box_normal(p[b], BOX[0], BOX[1])
    albedo[b] = BOX[2]
    lambert = np.clip(n @ LIGHT, 0, 1)
    lambert[occluded(p + n * 1e-3)] *= 0.25
    shade = albedo * (0.28 + 0.8 * lambert[:, None])
    fog = 1 - np.exp(-t_best[hit] / 40.0)[:, None]
    col[hit] = shade * (1 - fog) + np.array([0.85, 0.87, 0.9]) * fog
    img = col.reshape(height, width, 3)
    img = img + rng.normal(0, 0.008, img.shape)  # sensor noise
    return (np.clip(img, 0, 1) ** (1 / 1.1) * 255 + 0.5).astype(np.uint8)


def exif_app1(orientation):
    """APP1 segment bytes (marker, length, "Exif\\0\\0", big-endian TIFF with IFD0: ImageDescription-free tags
    Make (0x010F, ASCII, inline 'dac\\0') and Orientation (0x0112, SHORT))."""
    entries = [struct.pack(">HHI4s", 0x010F, 2, 4, b"dac\0"),
               struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0)]
    ifd = struct.pack(">H", len(entries)) + b"".join(entries) + struct.pack(">I", 0)
    tiff = b"MM" + struct.pack(">HI", 42, 8) + ifd
    payload = b"Exif\0\0" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload


def save_jpeg(img, quality=92):
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def main():
    os.makedirs(os.path.join(ROOT, "assets"), exist_ok=True)
    fixtures = os.path.join(ROOT, "tests", "fixtures", "images")
    os.makedirs(fixtures, exist_ok=True)

    with open(os.path.join(ROOT, "assets", "sample.jpg"), "wb") as f:
        f.write(save_jpeg(render(640, 480), quality=88))
    Image.fromarray(render(83, 61)).save(os.path.join(fixtures, "sample_small.png"))

    small = render(48, 32)
    small[:4, :4] = (255, 0, 0)    # top-left marker (red) and top-right (blue) to check the rotation direction
    small[:4, -4:] = (0, 0, 255)
    plain = save_jpeg(small, quality=95)
    assert plain[:2] == b"\xff\xd8"
    with open(os.path.join(fixtures, "plain.jpg"), "wb") as f:
        f.write(plain)
    with open(os.path.join(fixtures, "orient6.jpg"), "wb") as f:
        f.write(plain[:2] + exif_app1(6) + plain[2:])


if __name__ == "__main__":
    main()
