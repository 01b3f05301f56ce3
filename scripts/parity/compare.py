"""Compare an engine's tensor dumps against reference tensors (.npy, same file names).

  python3 scripts/parity/compare.py REF_DIR OUT_DIR [--tol 1e-4] [--abs-tol X] [--names depth rn1 ...]
        [--require-all] [--recursive]

For every REF_DIR/NAME.npy that OUT_DIR also has (or only --names), prints the relative L2 error
||out - ref|| / ||ref|| and the max abs diff. Exit status 1 if any relative error exceeds --tol (or any max abs
diff exceeds --abs-tol when given), if shapes differ (after squeezing leading 1-sized axes), if an output holds
NaN/Inf, or if nothing was compared; with --require-all, also when a reference has no output. --recursive
walks sub-folders (e.g. a whole fixtures tree against a mirrored dump tree).
"""
import argparse
import os
import sys

import numpy as np


def squeeze_lead(a):
    while a.ndim > 1 and a.shape[0] == 1:
        a = a[0]
    return a


def compare_one(ref_path, out_path):
    r = np.load(ref_path).astype(np.float64)
    o = np.load(out_path).astype(np.float64)
    if squeeze_lead(r).shape != squeeze_lead(o).shape:
        return None, None, f"shape {tuple(o.shape)} != ref {tuple(r.shape)}"
    r, o = squeeze_lead(r), squeeze_lead(o)
    if not np.all(np.isfinite(o)):
        return None, None, f"{int(np.size(o) - np.isfinite(o).sum())} non-finite values"
    d = o - r
    nr = float(np.linalg.norm(r))
    rel = float(np.linalg.norm(d)) / nr if nr > 0 else float(np.linalg.norm(d))
    corr = float(np.corrcoef(r.ravel(), o.ravel())[0, 1]) if r.size > 1 and r.std() > 0 and o.std() > 0 else 1.0
    return rel, (float(np.abs(d).max()) if d.size else 0.0, corr), None


def pairs(ref_dir, out_dir, names, recursive):
    for root, dirs, files in os.walk(ref_dir):
        dirs.sort()
        sub = os.path.relpath(root, ref_dir)
        for f in sorted(files):
            if not f.endswith(".npy"):
                continue
            stem = f[:-4]
            if names and stem not in names:
                continue
            rel_name = stem if sub == "." else os.path.join(sub, stem)
            yield rel_name, os.path.join(root, f), os.path.join(out_dir, sub, f)
        if not recursive:
            break


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ref_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--tol", type=float, default=1e-4, help="max relative L2 error (default 1e-4)")
    ap.add_argument("--abs-tol", type=float, default=None, help="optional max abs diff")
    ap.add_argument("--names", nargs="*", help="only these tensor names (file stems)")
    ap.add_argument("--require-all", action="store_true", help="fail when an output is missing")
    ap.add_argument("--recursive", action="store_true")
    ap.add_argument("--min-corr", type=float, default=None, help="optional min Pearson correlation")
    a = ap.parse_args()
    bad, n = 0, 0
    print(f"{'tensor':<28} {'rel_l2':>11} {'max_abs':>11} {'corr':>10}  status")
    for name, rp, op in pairs(a.ref_dir, a.out_dir, a.names, a.recursive):
        if not os.path.exists(op):
            if a.require_all:
                print(f"{name:<28} {'-':>11} {'-':>11}  MISSING")
                bad += 1
            continue
        n += 1
        rel, stats, err = compare_one(rp, op)
        if err:
            print(f"{name:<28} {'-':>11} {'-':>11}  FAIL ({err})")
            bad += 1
            continue
        mx, corr = stats
        fail = rel > a.tol or (a.abs_tol is not None and mx > a.abs_tol) or (a.min_corr is not None and corr < a.min_corr)
        bad += fail
        print(f"{name:<28} {rel:11.3e} {mx:11.3e} {corr:10.6f}  {'FAIL' if fail else 'ok'}")
    if n == 0:
        print("nothing compared (no output file matches a reference)")
        return 1
    print(f"{n} compared, {bad} failed (tol {a.tol:g}{'' if a.abs_tol is None else f', abs {a.abs_tol:g}'})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
