#!/usr/bin/env python3
"""Writes the small torch.save fixtures of the .pth reader tests to tests/fixtures/pth/.

Needs python3-torch (1.13 here). Each <name>.pth is listed in expected.json with, per state-dict key, the dtype
the reader must report (i64 → i32, f64 → f32, as the reader converts them), the torch-order shape and the values
as float64 (exact for every dtype used). dtypes_zip64.pth holds the same entries as dtypes.pth, re-packed by the
hand-written zip64 writer below so that the reader's zip64 path is exercised.

Usage: /usr/bin/python3 scripts/gen_pth_fixtures.py [out_dir]
"""
import collections
import json
import os
import struct
import sys
import zipfile
import zlib

import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "pth")
DTYPE_NAMES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.int32: "i32",
               torch.int64: "i32", torch.float64: "f32"}


def describe(sd):
    out = {}
    for k, v in sd.items():
        if isinstance(v, dict):
            for k2, v2 in describe(v).items():
                out[k + "." + k2] = v2
        elif isinstance(v, torch.Tensor):
            out[k] = {"dtype": DTYPE_NAMES[v.dtype], "shape": list(v.shape),
                      "values": [float(x) for x in v.detach().to(torch.float64).reshape(-1).tolist()]}
    return out


def dtypes_dict(g):
    return collections.OrderedDict([
        ("f32", torch.randn(3, 4, generator=g)),
        ("f16", torch.randn(5, generator=g).half()),
        ("bf16", torch.randn(2, 3, generator=g).bfloat16()),
        ("i64", torch.arange(-3, 3).reshape(2, 3)),
        ("i32", torch.tensor([[7, -8], [9, 2147483647]], dtype=torch.int32)),
        ("f64", torch.randn(2, 2, generator=g, dtype=torch.float64)),
        ("scalar", torch.tensor(1.5)),
        ("empty", torch.zeros(0, 3)),
    ])


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.norm = torch.nn.LayerNorm(4)
        self.fc = torch.nn.Linear(4, 2)
        self.gamma = torch.nn.Parameter(torch.full((4,), 0.25))


def views_dict(g):
    base = torch.randn(4, 5, generator=g)
    return collections.OrderedDict([
        ("base", base),
        ("slice", base[:, 1:3]),          # non-contiguous, storage offset 1
        ("transposed", base.t()),         # non-contiguous
        ("row", base[2]),                 # contiguous, storage offset 10
        ("step", base[::2, ::2]),         # strides (10, 2)
    ])


def write_zip64(src, dst):
    """Re-packs a stored ZIP so that every central entry uses the zip64 extra field and a zip64 EOCD."""
    with zipfile.ZipFile(src) as zin:
        entries = [(i.filename, zin.read(i.filename)) for i in zin.infolist()]
    with open(dst, "wb") as f:
        central = b""
        for name, data in entries:
            off = f.tell()
            crc = zlib.crc32(data) & 0xffffffff
            nb = name.encode()
            extra = struct.pack("<HHQQ", 1, 16, len(data), len(data))
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 0, 0, 0, crc, 0xffffffff, 0xffffffff,
                                len(nb), len(extra)) + nb + extra + data)
            cextra = struct.pack("<HHQQQ", 1, 24, len(data), len(data), off)
            central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 0, 0, 0, crc, 0xffffffff,
                                   0xffffffff, len(nb), len(cextra), 0, 0, 0, 0, 0xffffffff) + nb + cextra
        cd_off = f.tell()
        f.write(central)
        eocd64 = f.tell()
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, len(entries), len(entries),
                            len(central), cd_off))
        f.write(struct.pack("<IIQI", 0x07064b50, 0, eocd64, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xffff, 0xffff, 0xffffffff, 0xffffffff, 0))


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(1234)
    torch.manual_seed(1234)
    files = {
        "dtypes": dtypes_dict(g),
        "module": Tiny().state_dict(),
        "views": views_dict(g),
        "nested": {"model": collections.OrderedDict([("w", torch.randn(2, 2, generator=g))]), "epoch": 3,
                   "note": "text", "opt": None},
        "param": collections.OrderedDict([("p", torch.nn.Parameter(torch.randn(3, generator=g)))]),
    }
    expected = {}
    for name, sd in files.items():
        torch.save(sd, os.path.join(OUT, name + ".pth"))
        expected[name] = describe(sd)
    write_zip64(os.path.join(OUT, "dtypes.pth"), os.path.join(OUT, "dtypes_zip64.pth"))
    expected["dtypes_zip64"] = expected["dtypes"]
    # The zip64 copy must still load in torch itself.
    back = torch.load(os.path.join(OUT, "dtypes_zip64.pth"))
    assert torch.equal(back["f32"], files["dtypes"]["f32"])
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
