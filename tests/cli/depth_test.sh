#!/usr/bin/env bash
# dacpp depth on the committed tiny models: every output file (names, formats, values), the JSON summary, output
# sizes per model family, EXIF orientation, sky, DA3 metric focal scaling, folders, and the documented errors.
source "$(dirname "$0")/lib.sh"
# The checks need numpy: CI installs python3-numpy into the system python3, which a pyenv shim may shadow.
export PATH="/usr/bin:$PATH"

FX="$ROOT/tests/fixtures"
DA2="$FX/tiny-da2.gguf"
DA2_PTH="$FX/models/da2_tiny_rel/da2_tiny_rel.pth"
DA3="$FX/models/da3mono_tiny"
DA3M="$FX/models/da3metric_tiny"
IMG="$FX/images/sample_small.png"  # 83x61
ORIENT6="$FX/images/orient6.jpg"   # stored 48x32, EXIF orientation 6 (rotate 90° clockwise to display)
PLAIN="$FX/images/plain.jpg"       # 48x32, no orientation

# ---- DA2, every output flag: file names, PFM == NPY, 16-bit PNG, colour PNG, JSON summary -------------------
O="$TMP/all"
expect_exit 0 "$DACPP" depth -m "$DA2" "$IMG" -o "$O" --size 70 --pfm --png --npy --color turbo --json
cp "$TMP/out" "$TMP/all.json"
expect_file "$O/sample_small.depth.pfm" "$O/sample_small.depth.png" "$O/sample_small.depth.npy" \
  "$O/sample_small.color.png"
expect_no_file "$O/sample_small.sky.pfm"
pycheck "$O" "$TMP/all.json" <<'PY'
import json, sys
import numpy as np
from cli_checks import read_pfm, read_png
o, js = sys.argv[1], sys.argv[2]
npy = np.load(f"{o}/sample_small.depth.npy")
assert npy.dtype == np.float32 and npy.shape == (61, 83), (npy.dtype, npy.shape)  # DA2: output = input size
assert np.isfinite(npy).all() and npy.std() > 0, "depth is not finite or constant"
pfm = read_pfm(f"{o}/sample_small.depth.pfm")
assert pfm.shape == npy.shape and np.array_equal(pfm, npy), "PFM values differ from the NPY"
png, depth, ctype = read_png(f"{o}/sample_small.depth.png")
assert depth == 16 and ctype == 0 and png.shape == npy.shape, (depth, ctype, png.shape)
want = np.round((npy.astype(np.float64) - npy.min()) / (npy.max() - npy.min()) * 65535)
assert np.abs(png.astype(np.int64) - want).max() <= 1, "16-bit PNG is not min..max quantised depth"
col, depth, ctype = read_png(f"{o}/sample_small.color.png")
assert depth == 8 and ctype == 2 and col.shape == (61, 83, 3), (depth, ctype, col.shape)
assert len(np.unique(col.reshape(-1, 3), axis=0)) > 16, "colour map has too few colours"
j = json.load(open(js))
assert isinstance(j, list) and len(j) == 1, j
r = j[0]
assert r["units"] == "relative-disparity", r["units"]
assert (r["width"], r["height"]) == (83, 61), r
assert abs(r["min"] - float(npy.min())) <= 1e-6 * abs(npy.min()) + 1e-7, (r["min"], npy.min())
assert abs(r["max"] - float(npy.max())) <= 1e-6 * abs(npy.max()) + 1e-7, (r["max"], npy.max())
assert isinstance(r["timing_ms"], dict) and r["timing_ms"], r["timing_ms"]
assert all(v >= 0 for v in r["timing_ms"].values()), r["timing_ms"]
assert r["input"].endswith("sample_small.png"), r["input"]
assert set(r["files"]) == {"depth_pfm", "depth_png", "depth_npy", "color_png"}, r["files"]
PY
expect_grep '^Pf$' "$O/sample_small.depth.pfm"
file "$O/sample_small.depth.png" > "$TMP/file.txt"
expect_grep '16-bit grayscale' "$TMP/file.txt"

# No output flag: the 16-bit depth PNG and the turbo visualisation.
O="$TMP/default"
expect_exit 0 "$DACPP" depth -m "$DA2" "$IMG" -o "$O" --size 70
expect_file "$O/sample_small.depth.png" "$O/sample_small.color.png"
expect_no_file "$O/sample_small.depth.pfm" "$O/sample_small.depth.npy"

# Every colour map; the visualisations differ from each other.
for map in turbo spectral gray; do
  expect_exit 0 "$DACPP" depth -m "$DA2" "$IMG" -o "$TMP/map_$map" --size 70 --color "$map"
  expect_file "$TMP/map_$map/sample_small.color.png"
  expect_no_file "$TMP/map_$map/sample_small.depth.png"
done
pycheck "$TMP" <<'PY'
import sys
import numpy as np
from cli_checks import read_png
t = sys.argv[1]
imgs = {m: read_png(f"{t}/map_{m}/sample_small.color.png")[0] for m in ("turbo", "spectral", "gray")}
g = imgs["gray"].astype(int)
assert (g[..., 0] == g[..., 1]).all() and (g[..., 1] == g[..., 2]).all(), "gray map is not grey"
assert not np.array_equal(imgs["turbo"], imgs["spectral"]), "turbo and spectral are identical"
PY
expect_exit 2 "$DACPP" depth -m "$DA2" "$IMG" -o "$TMP/badmap" --color rainbow
expect_grep "^dacpp: error: .*rainbow" "$TMP/err"

# ---- sizes: EXIF orientation; DA3 processed size vs --resize-to-input -------------------------------------------
expect_exit 0 "$DACPP" depth -m "$DA2" "$ORIENT6" "$PLAIN" -o "$TMP/orient" --size 70 --npy
pycheck "$TMP/orient" <<'PY'
import sys
import numpy as np
o = sys.argv[1]
assert np.load(f"{o}/plain.depth.npy").shape == (32, 48), "plain.jpg: expected 48x32"
rot = np.load(f"{o}/orient6.depth.npy").shape
assert rot == (48, 32), f"orient6.jpg: depth is {rot[1]}x{rot[0]}, expected 32x48 (EXIF 6 swaps the sides)"
PY

expect_exit 0 "$DACPP" depth -m "$DA3" "$IMG" -o "$TMP/da3" --size 98 --npy --pfm --sky --json
cp "$TMP/out" "$TMP/da3.json"
expect_file "$TMP/da3/sample_small.depth.npy" "$TMP/da3/sample_small.sky.pfm"
expect_exit 0 "$DACPP" depth -m "$DA3" "$IMG" -o "$TMP/da3in" --size 98 --npy --sky --json --resize-to-input
cp "$TMP/out" "$TMP/da3in.json"
pycheck "$TMP" <<'PY'
import json, sys
import numpy as np
from cli_checks import read_pfm
t = sys.argv[1]
r = json.load(open(f"{t}/da3.json"))[0]
pw, ph = r["processed"]
assert (r["width"], r["height"]) == (pw, ph), r
assert pw % 14 == 0 and ph % 14 == 0 and max(pw, ph) == 98, (pw, ph)  # DA3: longest side = --size
assert r["source"] == [83, 61], r["source"]
assert r["units"] == "relative-depth", r["units"]
d = np.load(f"{t}/da3/sample_small.depth.npy")
assert d.shape == (ph, pw) and (d > 0).all(), (d.shape, d.min())
assert np.array_equal(read_pfm(f"{t}/da3/sample_small.depth.pfm"), d)
sky = read_pfm(f"{t}/da3/sample_small.sky.pfm")
assert sky.shape == (ph, pw) and (sky >= 0).all() and sky.max() > 0, (sky.shape, sky.min(), sky.max())
r2 = json.load(open(f"{t}/da3in.json"))[0]
assert (r2["width"], r2["height"]) == (83, 61), r2
assert np.load(f"{t}/da3in/sample_small.depth.npy").shape == (61, 83)
assert read_pfm(f"{t}/da3in/sample_small.sky.pfm").shape == (61, 83)
PY

# --sky needs a sky head: DA2 has none → unsupported (4), nothing written.
expect_exit 4 "$DACPP" depth -m "$DA2" "$IMG" -o "$TMP/da2sky" --sky
expect_grep '^dacpp: error: .*sky' "$TMP/err"
expect_no_file "$TMP/da2sky/sample_small.sky.pfm"

# ---- DA3 metric: focal-normalised without --focal, metres with it, scaled by f_processed / 300 -----------------
expect_exit 0 "$DACPP" depth -m "$DA3M" "$IMG" -o "$TMP/m0" --size 98 --npy --json
cp "$TMP/out" "$TMP/m0.json"
expect_exit 0 "$DACPP" depth -m "$DA3M" "$IMG" -o "$TMP/m1" --size 98 --npy --json --focal 600
cp "$TMP/out" "$TMP/m1.json"
pycheck "$TMP" <<'PY'
import json, sys
import numpy as np
t = sys.argv[1]
r0, r1 = json.load(open(f"{t}/m0.json"))[0], json.load(open(f"{t}/m1.json"))[0]
assert r0["units"] == "focal-normalised", r0["units"]
assert r1["units"] == "metres", r1["units"]
d0, d1 = np.load(f"{t}/m0/sample_small.depth.npy"), np.load(f"{t}/m1/sample_small.depth.npy")
(pw, ph), (sw, sh) = r1["processed"], r1["source"]
# The focal is given for the input image; the network sees it scaled to the processed size.
k = 600 * 0.5 * (ph / sh + pw / sw) / 300
assert abs(k - 1) > 0.1, k  # the check below must be able to fail
assert np.allclose(d1, d0 * k, rtol=1e-5, atol=0), float(np.abs(d1 / d0 - k).max())
assert abs(r1["max"] / r0["max"] - k) < 1e-4 * k, (r1["max"], r0["max"], k)
PY
expect_exit 2 "$DACPP" depth -m "$DA2" "$IMG" -o "$TMP/da2focal" --focal 600
expect_grep '^dacpp: error: .*--focal' "$TMP/err"

# ---- checkpoints as -m: the DA2 .pth file (DA3 folders are used above) ------------------------------------------
expect_exit 0 "$DACPP" depth -m "$DA2_PTH" "$IMG" -o "$TMP/pth" --size 70 --npy
pycheck "$TMP/pth" <<'PY'
import sys
import numpy as np
d = np.load(f"{sys.argv[1]}/sample_small.depth.npy")
assert d.shape == (61, 83) and np.isfinite(d).all() and d.std() > 0, (d.shape, d.std())
PY

# ---- folders and many images: all processed, progress on stderr --------------------------------------------------
mkdir -p "$TMP/folder"
cp "$IMG" "$PLAIN" "$TMP/folder/"
cp "$IMG" "$TMP/folder/copy.PNG"
echo "not an image" > "$TMP/folder/notes.txt"
expect_exit 0 "$DACPP" depth -m "$DA2" "$TMP/folder" -o "$TMP/folder_out" --size 70 --npy --json
expect_file "$TMP/folder_out/sample_small.depth.npy" "$TMP/folder_out/plain.depth.npy" \
  "$TMP/folder_out/copy.depth.npy"
expect_no_file "$TMP/folder_out/notes.depth.npy"
expect_grep '3/3' "$TMP/err"
pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert len(j) == 3 and all("error" not in r for r in j), j
PY
mkdir -p "$TMP/empty_folder"
expect_exit 2 "$DACPP" depth -m "$DA2" "$TMP/empty_folder" -o "$TMP/empty_out"
expect_grep 'empty_folder' "$TMP/err"

# ---- bad inputs ---------------------------------------------------------------------------------------------------
expect_exit 3 "$DACPP" depth -m "$DA2" "$TMP/missing.png" -o "$TMP/x"
expect_grep '^dacpp: error: .*missing\.png' "$TMP/err"

echo "this is text, not a PNG" > "$TMP/fake.png"
expect_exit 3 "$DACPP" depth -m "$DA2" "$TMP/fake.png" -o "$TMP/fake_out" --npy
expect_grep '^dacpp: error: .*fake\.png' "$TMP/err"
expect_no_file "$TMP/fake_out/fake.depth.npy"

head -c 300 "$PLAIN" > "$TMP/trunc.jpg"
expect_exit 3 "$DACPP" depth -m "$DA2" "$TMP/trunc.jpg" -o "$TMP/trunc_out" --npy
expect_grep '^dacpp: error: .*trunc\.jpg' "$TMP/err"

# One bad image among good ones: the good ones are written, the run fails (3), the JSON marks the bad one.
expect_exit 3 "$DACPP" depth -m "$DA2" "$IMG" "$TMP/fake.png" "$PLAIN" -o "$TMP/mixed" --size 70 --npy --json
expect_file "$TMP/mixed/sample_small.depth.npy" "$TMP/mixed/plain.depth.npy"
expect_no_file "$TMP/mixed/fake.depth.npy"
expect_grep 'fake\.png' "$TMP/err"
pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert [("error" in r) for r in j] == [False, True, False], j
assert j[1]["input"].endswith("fake.png"), j[1]
PY

# An output that cannot be written, in the middle of a run: the files are written beside the next images' forwards
# (up to 4 results waiting), yet the summary keeps the input order and the run fails as an unwritable output (3).
mkdir -p "$TMP/wr" "$TMP/wr_out/b.depth.npy"
for n in a b c d; do cp "$IMG" "$TMP/wr/$n.png"; done
expect_exit 3 "$DACPP" depth -m "$DA2" "$TMP/wr/a.png" "$TMP/wr/b.png" "$TMP/wr/c.png" "$TMP/wr/d.png" \
  -o "$TMP/wr_out" --size 70 --npy --json
expect_file "$TMP/wr_out/a.depth.npy" "$TMP/wr_out/c.depth.npy" "$TMP/wr_out/d.depth.npy"
expect_grep "cannot write .*b\.depth\.npy" "$TMP/err"
pycheck "$TMP/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert [r["input"].rsplit("/", 1)[1] for r in j] == ["a.png", "b.png", "c.png", "d.png"], j
assert [("error" in r) for r in j] == [False, True, False, False], j
assert j[1]["code"] == "Io", j[1]
PY

# ---- bad models -----------------------------------------------------------------------------------------------------
head -c 4096 "$DA2" > "$TMP/trunc.gguf"
expect_exit 3 "$DACPP" depth -m "$TMP/trunc.gguf" "$IMG" -o "$TMP/tm"
expect_grep '^dacpp: error: .*trunc\.gguf' "$TMP/err"
head -c 100000 "$DA2_PTH" > "$TMP/trunc.pth"
expect_exit 3 "$DACPP" depth -m "$TMP/trunc.pth" "$IMG" -o "$TMP/tm"
expect_grep '^dacpp: error: .*trunc\.pth' "$TMP/err"
expect_exit 3 "$DACPP" depth -m "$TMP/no-model.gguf" "$IMG" -o "$TMP/tm"
expect_grep 'no-model\.gguf' "$TMP/err"

# ---- unwritable outputs: never exit 0, the message names the path ----------------------------------------------
expect_exit 3 "$DACPP" depth -m "$DA2" "$IMG" -o /proc/dacpp-forbidden --npy
expect_grep '^dacpp: error: .*/proc/dacpp-forbidden' "$TMP/err"
: > "$TMP/regular"
expect_exit 3 "$DACPP" depth -m "$DA2" "$IMG" -o "$TMP/regular/sub" --npy
expect_grep '^dacpp: error: .*regular/sub' "$TMP/err"
mkdir -p "$TMP/blocked/sample_small.depth.npy"  # a folder where the output file should go
expect_exit 3 "$DACPP" depth -m "$DA2" "$IMG" -o "$TMP/blocked" --size 70 --npy
expect_grep '^dacpp: error: .*sample_small\.depth\.npy' "$TMP/err"

# ---- usage errors (2) ---------------------------------------------------------------------------------------------
expect_exit 2 "$DACPP" depth -m "$DA2" "$IMG" --size 5
expect_grep '^dacpp: error: .*--size' "$TMP/err"
expect_exit 2 "$DACPP" depth -m "$DA2" "$IMG" --threads -1
expect_grep '^dacpp: error: .*--threads' "$TMP/err"
expect_exit 2 "$DACPP" depth -m "$DA2" "$IMG" --no-such-flag
expect_exit 2 "$DACPP" depth "$IMG"
expect_exit 0 "$DACPP" depth --help
expect_grep 'Exit codes' "$TMP/out"
finish
