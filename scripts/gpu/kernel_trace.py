"""Summarises a kernel_trace.cc TSV (start ns, end ns, stream, blocks, threads, name): the last forward — the
shortest tail of >= 50 kernels whose names, as a multiset, repeat the kernels before it (graph replays; concurrent
lanes may start in another order) — its span, busy time (the union of the kernels' intervals), idle gaps, time per
kernel name, and the forward's kernel list (start offset, duration, stream, blocks, name) into OUT.
Durations are start to end: a kernel launched with programmatic dependent launch starts early and waits inside.

  python3 scripts/gpu/kernel_trace.py TRACE.tsv OUT.txt
"""
import collections
import re
import sys


def main(trace, out):
    ks = []
    for line in open(trace):
        p = line.rstrip("\n").split("\t")
        if len(p) < 6:
            continue
        name = re.sub(r"^void ", "", p[5]).replace("(anonymous namespace)::", "")
        if not name.startswith("nvjet"):
            name = re.sub(r"\(.*$", "", name)
        ks.append((int(p[0]), int(p[1]), p[2], int(p[3]), name[:110]))
    ks.sort()
    if not ks:
        sys.exit(f"{trace}: no kernel records")
    names = [k[4] for k in ks]
    n = next((n for n in range(50, len(names) // 2 + 1) if sorted(names[-n:]) == sorted(names[-2 * n:-n])),
             len(names))
    fw = ks[-n:]
    t0, t1 = fw[0][0], max(k[1] for k in fw)
    busy, cs, ce, gaps = 0, None, None, []
    for s, e, _, _, nm in fw:
        if ce is None:
            cs, ce = s, e
        elif s > ce:
            busy += ce - cs
            gaps.append((s - ce, nm))
            cs, ce = s, e
        else:
            ce = max(ce, e)
    busy += ce - cs
    print(f"forward = last {n} of {len(names)} kernels; span {(t1 - t0) / 1e3:.1f} us, busy {busy / 1e3:.1f} us, "
          f"idle {(t1 - t0 - busy) / 1e3:.1f} us in {len(gaps)} gaps; kernel sum "
          f"{sum(e - s for s, e, _, _, _ in fw) / 1e3:.1f} us")
    per = collections.defaultdict(lambda: [0.0, 0])
    for s, e, _, _, nm in fw:
        per[nm][0] += e - s
        per[nm][1] += 1
    for k, (v, c) in sorted(per.items(), key=lambda kv: -kv[1][0])[:40]:
        print(f"  {v / 1e3:9.1f} us {c:4d}x  {k}")
    idle = collections.defaultdict(lambda: [0.0, 0])
    for d, nm in gaps:
        idle[nm][0] += d
        idle[nm][1] += 1
    print("idle time before (by the kernel after the gap):")
    for k, (v, c) in sorted(idle.items(), key=lambda kv: -kv[1][0])[:15]:
        print(f"  {v / 1e3:9.1f} us {c:4d}x  {k}")
    with open(out, "w") as f:
        for s, e, st, b, nm in fw:
            f.write(f"{(s - t0) / 1e3:9.2f} {(e - s) / 1e3:8.2f} s{st:>4} b{b:<6} {nm}\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
