#!/usr/bin/env bash
# On the GPU machine (CPU work only): full-size parity against the official code, then dacpp vs PyTorch on the
# 16-core CPU in the same command. Expects (carried, git-ignored): .carry/bin/{dacpp,dacpp_parity},
# .carry/libs.tar.xz (the shared libraries the binaries need that the machine lacks), .carry/pytorch_da2.py
# (shared/bench), and .ref/ (official DA2/DA3 code + pure-Python deps, see scripts/parity/README).
# Usage: bash scripts/gpu/cpu_parity_bench.sh MODELS...   (default: da2_vits da2_vitb da2_vitl da3mono-large)
set -uo pipefail
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
mkdir -p /tmp/c && tar -xJf .carry/libs.tar.xz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/libs
export PYTHONUNBUFFERED=1
B=.carry/bin
MODELS=("$@"); [ ${#MODELS[@]} -eq 0 ] && MODELS=(da2_vits da2_vitb da2_vitl da3mono-large)
T=$(nproc)
{ echo "nproc $T"; grep -m1 "model name" /proc/cpuinfo; grep -o -w -E "avx512f|avx512_bf16|amx_bf16|amx_int8" /proc/cpuinfo | sort -u | tr '\n' ' '; echo; } > "$OUT/machine.txt"

python3 scripts/parity/full_size.py --out /tmp/fs --models "${MODELS[@]}" --threads "$T" > "$OUT/full_size.log" 2>&1
for m in "${MODELS[@]}"; do
  d=/tmp/fs/$m
  ck=$(ls "$d"/*.pth 2>/dev/null | head -1); [ -z "$ck" ] && ck=$d
  echo "== $m ($ck)"
  $B/dacpp convert "$ck" -o /tmp/$m.gguf 2>&1
  $B/dacpp_parity /tmp/$m.gguf "$d/input.npy" /tmp/ours/$m 2>&1
  python3 scripts/parity/compare.py "$d" /tmp/ours/$m --tol 1e-4 2>&1
  # bf16 on the CPU (opt-in): the design's bf16 bound against the same official outputs
  echo "== $m bf16"
  $B/dacpp_parity /tmp/$m.gguf "$d/input.npy" /tmp/ours_bf16/$m --precision bf16 2>&1
  python3 scripts/parity/compare.py "$d" /tmp/ours_bf16/$m --tol 1e-2 --min-corr 0.999 2>&1
done > "$OUT/parity.txt"

# CPU speed, same machine, same thread count: PyTorch f32 (transformers DA2) then dacpp f32 and bf16.
python3 .carry/pytorch_da2.py cpu "$T" > "$OUT/torch_cpu.txt" 2>&1
for m in da2_vits da2_vitb da2_vitl; do
  [ -f /tmp/$m.gguf ] || continue
  $B/dacpp bench -m /tmp/$m.gguf --size 518 --threads "$T" --runs 10 --warmup 2 --json > "$OUT/bench_$m.json" 2>&1
  $B/dacpp bench -m /tmp/$m.gguf --size 518 --threads "$T" --runs 10 --warmup 2 --precision bf16 --json \
    > "$OUT/bench_${m}_bf16.json" 2>&1
done
# load time from a warm page cache, and peak RSS of a 1-run process, for DA2-S
[ -f /tmp/da2_vits.gguf ] && $B/dacpp bench -m /tmp/da2_vits.gguf --size 518 --threads "$T" --runs 1 --warmup 0 \
  --json > "$OUT/bench_da2_vits_once.json" 2>&1
cat "$OUT/parity.txt" | grep -E "==|failed|rel_l2" ; cat "$OUT/torch_cpu.txt" | tail -4; grep -h -E "median_ms|load_ms|peak_rss" "$OUT"/bench_*.json
