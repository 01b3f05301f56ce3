#!/usr/bin/env python3
"""JPEG decoding fixtures: JPEGs of the sample scene and what libjpeg(-turbo) decodes them to.

The decode references are written by PIL, whose JPEG reader is libjpeg with its defaults (integer IDCT, "fancy"
chroma upsampling), as cv2.imread's is: dacpp's JPEG decoder must give the same pixels, byte for byte.

Outputs in tests/fixtures/images/jpeg/ (from tests/fixtures/images/sample_small.png, 83x61: odd sizes on purpose,
so the chroma planes' last column and row are partial):
    s420.jpg / s420.png           baseline, quality 90, 4:2:0 (the common camera layout)
    s422_prog.jpg / .png          progressive, quality 80, 4:2:2
    s444.jpg / s444.png           baseline, quality 95, 4:4:4
    grey.jpg / grey.png           one-component (greyscale) baseline; the reference is its grey replicated to RGB
    restart.jpg / restart.png     4:2:0 with a restart marker every 4 MCU rows' worth of MCUs (cjpeg -restart 1)
    many_scans.jpg / .png         s420.jpg rewritten losslessly (jpegtran -scans) as a progressive JPEG of 66 scans:
                                  decoded under the default scan limit, refused under a limit of 50
    cmyk.jpg                      the scene as PIL's CMYK (Adobe, inverted) JPEG, which libjpeg does not convert to RGB:
                                  decoded through stb_image instead
    corrupt_entropy.jpg           s420.jpg without the second half of its scan data (the end marker kept): libjpeg
                                  warns "premature end of data segment" and would fill the rest grey; must be refused

Needs the system python3 with PIL and libjpeg-turbo's cjpeg / jpegtran (Debian package libjpeg-turbo-progs).
"""
import io
import os
import subprocess
import tempfile

from PIL import Image

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "tests", "fixtures", "images", "sample_small.png")
OUT = os.path.join(ROOT, "tests", "fixtures", "images", "jpeg")


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def reference(name, jpg_bytes):
    img = Image.open(io.BytesIO(jpg_bytes))
    img.load()
    img.convert("RGB").save(os.path.join(OUT, name), optimize=False)


def encode(img, **kw):
    buf = io.BytesIO()
    img.save(buf, "JPEG", **kw)
    return buf.getvalue()


def main():
    os.makedirs(OUT, exist_ok=True)
    rgb = Image.open(SRC).convert("RGB")
    cases = {
        "s420": encode(rgb, quality=90, subsampling=2),
        "s422_prog": encode(rgb, quality=80, subsampling=1, progressive=True),
        "s444": encode(rgb, quality=95, subsampling=0),
        "grey": encode(rgb.convert("L"), quality=90),
    }
    with tempfile.TemporaryDirectory() as tmp:
        ppm = os.path.join(tmp, "in.ppm")
        rgb.save(ppm)
        cases["restart"] = subprocess.run(["cjpeg", "-quality", "90", "-restart", "1", ppm], check=True,
                                          capture_output=True).stdout
        for name, data in cases.items():
            write(name + ".jpg", data)
            reference(name + ".png", data)
        # 66 scans (jpegtran takes at most 100): all DC at once, each AC coefficient of the luma its own band, the
        # chroma ACs one band each.
        lines = ["0,1,2: 0 0 0 0;"] + [f"0: {k} {k} 0 0;" for k in range(1, 64)] + ["1: 1 63 0 0;", "2: 1 63 0 0;"]
        script = os.path.join(tmp, "scans.txt")
        with open(script, "w") as f:
            f.write("\n".join(lines) + "\n")
        src = os.path.join(tmp, "s420.jpg")
        with open(src, "wb") as f:
            f.write(cases["s420"])
        many = subprocess.run(["jpegtran", "-scans", script, src], check=True, capture_output=True).stdout
        assert many.count(b"\xff\xda") == len(lines), (many.count(b"\xff\xda"), len(lines))
        write("many_scans.jpg", many)
        write("cmyk.jpg", encode(rgb.convert("CMYK"), quality=95, subsampling=0))
        reference("many_scans.png", many)
    # The second half of the (single) scan's entropy-coded data cut off, the end-of-image marker kept.
    data = cases["s420"]
    sos = data.index(b"\xff\xda")
    start = sos + 2 + (data[sos + 2] << 8 | data[sos + 3])
    mid = (start + len(data) - 2) // 2
    write("corrupt_entropy.jpg", data[:mid] + data[-2:])


if __name__ == "__main__":
    main()
