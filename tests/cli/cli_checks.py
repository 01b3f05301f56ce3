"""Independent readers for the files `dacpp depth` writes, for the CLI tests (numpy + the standard library only).

read_pfm(path) -> float32 array [h, w], row 0 at the top (PFM stores rows bottom-up).
read_png(path) -> (array [h, w] or [h, w, c], bit_depth, colour_type), decoded with zlib and PNG's row filters.
"""
import struct
import zlib

import numpy as np


def read_pfm(path):
    with open(path, "rb") as f:
        data = f.read()
    parts = data.split(b"\n", 3)
    assert len(parts) == 4, f"{path}: PFM header needs 3 lines"
    magic, dims, scale, body = parts
    assert magic == b"Pf", f"{path}: magic {magic!r}, expected Pf (one channel)"
    w, h = (int(v) for v in dims.split())
    scale = float(scale)
    assert w > 0 and h > 0, f"{path}: size {w}x{h}"
    assert scale < 0, f"{path}: scale {scale}: expected little-endian (negative)"
    assert len(body) == w * h * 4, f"{path}: {len(body)} data bytes for {w}x{h}"
    return np.frombuffer(body, dtype="<f4").reshape(h, w)[::-1].copy()


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(raw, h, stride, bpp):
    out = bytearray(h * stride)
    prev = bytearray(stride)
    pos = 0
    for y in range(h):
        ftype = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            pred = [0, a, b, (a + b) // 2, _paeth(a, b, c)][ftype]
            line[i] = (line[i] + pred) & 0xFF
        out[y * stride:(y + 1) * stride] = line
        prev = line
    return bytes(out)


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG signature"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    assert ihdr is not None, f"{path}: no IHDR"
    w, h, depth, ctype, _, _, interlace = ihdr
    assert interlace == 0, f"{path}: interlaced PNG"
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    bpp = channels * depth // 8
    pixels = _unfilter(zlib.decompress(idat), h, w * bpp, bpp)
    arr = np.frombuffer(pixels, dtype=">u2" if depth == 16 else np.uint8).reshape(h, w, channels)
    return (arr[:, :, 0] if channels == 1 else arr), depth, ctype
