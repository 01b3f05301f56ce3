#!/usr/bin/env bash
# On the GPU machine: the checks and numbers a CUDA version is recorded with in docs/PERFORMANCE.md and
# docs/VERIFICATION.md, in one command (what sessions 19 and 20 ran as git-ignored .carry scripts):
#   1. dacpp_gpu_tests without the conv bench and the soak, then the soak alone (it reads device-wide memory, so
#      nothing else runs on the GPU meanwhile: the reference builder below waits for the suite, not the soak);
#   2. DA2 parity against the official code's f32 CPU outputs (scripts/parity/full_size.py): f32 within 1e-4,
#      bf16 / f16 within 1e-2, correlation >= 0.999;
#   3. same-command A/B (ab_bench.sh) of this build against PREV_BIN when given (a stripped dacpp of the previous
#      version, e.g. carried xz-compressed), DA2-L and DA2-S at batch 1, DA2-L at batch 16;
#   4. with DA3=1, cuda_run.sh's da3 step: DA3 parity and timing against the official forward (bf16).
# Expects .carry/cuda.tar.xz (pack_carry.sh) and .carry/ref.tar.xz (the official sources) as cuda_run.sh does.
#   PREV_BIN=/tmp/dacpp_prev DA3=1 bash scripts/gpu/version_run.sh
# Results: $OUT/results.tgz (gpu_tests.txt, gpu_soak.txt, parity.txt, ab_*/summary.txt, da3 files).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
RESULT="${OUT:-/tmp/out}"; mkdir -p "$RESULT"
W=/tmp/work; mkdir -p "$W"
trap 'tar -czf "$RESULT/results.tgz" -C "$W" . 2>/dev/null' EXIT
mkdir -p /tmp/c && tar -xJf .carry/cuda.tar.xz -C /tmp/c
[ -d .ref ] || tar -xJf .carry/ref.tar.xz
export LD_LIBRARY_PATH=/tmp/c/libs:/usr/local/cuda/lib64
B=/tmp/c/bin
read -r -a MODELS <<< "${MODELS:-da2_vitl da2_vits da2_vitb}"
python3 scripts/parity/full_size.py --out /tmp/fs --models "${MODELS[@]}" --threads 8 > "$W/full_size.log" 2>&1 &
GTEST_FILTER='-Conv2dCudaBench.*:CudaSoak.*' timeout 200 $B/dacpp_gpu_tests --gtest_brief=1 > "$W/gpu_tests.txt" 2>&1
echo "rc=$?" >> "$W/gpu_tests.txt"
tail -3 "$W/gpu_tests.txt"; grep -E "FAILED|Failure" "$W/gpu_tests.txt" | head -20
wait
GTEST_FILTER='CudaSoak.*' timeout 90 $B/dacpp_gpu_tests --gtest_brief=1 > "$W/gpu_soak.txt" 2>&1
echo "rc=$?" >> "$W/gpu_soak.txt"; grep -E "MiB|PASSED|FAILED" "$W/gpu_soak.txt"
for m in "${MODELS[@]}"; do
  $B/dacpp convert "$(ls /tmp/fs/$m/*.pth | head -1)" -o /tmp/$m.gguf > /dev/null 2>&1
  for p in f32 bf16 f16; do
    tol=1e-2; [ $p = f32 ] && tol=1e-4
    $B/dacpp_parity /tmp/$m.gguf /tmp/fs/$m/input.npy /tmp/o/$m-$p --device cuda --precision $p > /dev/null 2>&1
    echo "$m $p: $(python3 scripts/parity/compare.py /tmp/fs/$m /tmp/o/$m-$p --tol $tol --min-corr 0.999 2>&1 |
      grep -E 'depth |compared' | tr -s ' ' | tr '\n' ' ')" | tee -a "$W/parity.txt"
  done
done
arms=(); [ -n "${PREV_BIN:-}" ] && arms+=("prev=@$PREV_BIN"); arms+=("this=")
A="--precision bf16 --size 518 --runs 100 --warmup 20"
[ -f /tmp/da2_vitl.gguf ] && OUT=$W/ab_L timeout 90 bash scripts/gpu/ab_bench.sh /tmp/da2_vitl.gguf "$A" "${arms[@]}" | tail -2
[ -f /tmp/da2_vits.gguf ] && OUT=$W/ab_S timeout 60 bash scripts/gpu/ab_bench.sh /tmp/da2_vits.gguf "$A" "${arms[@]}" | tail -2
[ -f /tmp/da2_vitl.gguf ] && OUT=$W/ab_L16 timeout 150 bash scripts/gpu/ab_bench.sh /tmp/da2_vitl.gguf \
  "--precision bf16 --size 518 --batch 16 --runs 20 --warmup 5" "${arms[@]}" | tail -2
if [ -n "${DA3:-}" ]; then
  DA3_PRECISIONS=bf16 timeout 240 bash scripts/gpu/cuda_run.sh da3 2>&1 | grep -E "==|depth |extrinsics|median_ms|bf16:" | tail -40
fi
true
