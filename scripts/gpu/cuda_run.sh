#!/usr/bin/env bash
# On the GPU machine: CUDA op tests, CUDA model parity (f32 / bf16 / f16 against the official code's f32 CPU
# outputs, same random checkpoints), then dacpp CUDA vs PyTorch (shared/bench/pytorch_da2.py) in the same command.
# Expects (carried, git-ignored): .carry/cuda.tar.xz (bin/{dacpp,dacpp_parity,dacpp_gpu_tests} + libs/ the
# machine lacks), .carry/pytorch_da2.py, and .ref/{da2,da3,pydeps,pydeps_local} (official code, never committed).
# Usage: bash scripts/gpu/cuda_run.sh [tests] [parity] [bench]   (default: all three)
set -uo pipefail
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
mkdir -p /tmp/c && tar -xJf .carry/cuda.tar.xz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/libs:/usr/local/cuda/lib64
export PYTHONUNBUFFERED=1
B=/tmp/c/bin
STEPS=("$@"); [ ${#STEPS[@]} -eq 0 ] && STEPS=(tests parity bench)
has() { [[ " ${STEPS[*]} " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1

if has tests && [ -x $B/dacpp_gpu_tests ]; then
  $B/dacpp_gpu_tests --gtest_brief=1 > "$OUT/gpu_tests.txt" 2>&1; echo "gpu_tests rc=$?" >> "$OUT/gpu_tests.txt"
  tail -5 "$OUT/gpu_tests.txt"
fi

MODELS=(${MODELS:-da2_vits da2_vitl})
if has parity; then
  python3 scripts/parity/full_size.py --out /tmp/fs --models "${MODELS[@]}" --threads "$(nproc)" > "$OUT/full_size.log" 2>&1
  for m in "${MODELS[@]}"; do
    ck=$(ls /tmp/fs/$m/*.pth | head -1)
    $B/dacpp convert "$ck" -o /tmp/$m.gguf > /dev/null 2>&1
    for p in f32 bf16 f16; do
      echo "== $m cuda $p"
      $B/dacpp_parity /tmp/$m.gguf /tmp/fs/$m/input.npy /tmp/o/$m-$p --device cuda --precision $p 2>&1 | tail -2
      tol=1e-2; [ $p = f32 ] && tol=1e-4
      python3 scripts/parity/compare.py /tmp/fs/$m /tmp/o/$m-$p --tol $tol --min-corr 0.999 2>&1
    done
  done > "$OUT/cuda_parity.txt" 2>&1
  grep -E "==|depth |compared" "$OUT/cuda_parity.txt"
fi

if has bench; then
  for m in "${MODELS[@]}"; do [ -f /tmp/$m.gguf ] || python3 scripts/parity/full_size.py --out /tmp/fs --models $m \
      > /dev/null 2>&1 && $B/dacpp convert $(ls /tmp/fs/$m/*.pth | head -1) -o /tmp/$m.gguf > /dev/null 2>&1; done
  python3 .carry/pytorch_da2.py gpu > "$OUT/torch_gpu.txt" 2>&1
  for m in "${MODELS[@]}"; do
    for p in bf16 f16; do
      $B/dacpp bench -m /tmp/$m.gguf --device cuda --precision $p --size 518 --runs 50 --warmup 10 --json \
        > "$OUT/bench_${m}_$p.json" 2>&1
    done
  done
  $B/dacpp bench -m /tmp/da2_vitl.gguf --device cuda --precision bf16 --size 518 --batch 16 --runs 20 --warmup 5 \
    --json > "$OUT/bench_da2_vitl_bf16_b16.json" 2>&1
  tail -20 "$OUT/torch_gpu.txt"
  for f in "$OUT"/bench_*.json; do echo "$(basename $f): $(grep -h -E '"median_ms"|"images_per_s"|"error"' $f | tr -d '\n ')"; done
fi
