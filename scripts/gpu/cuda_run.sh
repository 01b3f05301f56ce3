#!/usr/bin/env bash
# On the GPU machine: CUDA op tests, CUDA model parity (f32 / bf16 / f16 against the official code's f32 CPU
# outputs, same random checkpoints), then dacpp CUDA vs PyTorch (shared/bench/pytorch_da2.py) in the same command.
# Expects (carried, git-ignored): .carry/cuda.tar.xz (bin/{dacpp,dacpp_parity,dacpp_gpu_tests} + libs/ the
# machine lacks), .carry/pytorch_da2.py, .carry/da3_official.py (shared/bench/), and .ref/{da2,da3,pydeps}
# (official code, never committed; or the same packed as .carry/ref.tar.xz).
# The tree plus .carry is just over the device's 64 MiB: `bash scripts/gpu/slim_tree.sh drop` before the run,
# `restore` after it.
# Usage: bash scripts/gpu/cuda_run.sh [tests] [parity] [bench] [da3] [profile] [detail]   (default: tests parity bench)
#   da3: the official DA3 SMALL/BASE/LARGE (random weights, official checkpoint format, 504×336): our CUDA f32 /
#        bf16 outputs against the official f32 CPU outputs, then the official bf16-autocast and f32 forwards timed
#        on the GPU and `dacpp bench` on the same checkpoints, in the same command (DA3_MODELS to choose;
#        DA3_PARITY_ONLY=1 stops after the parity).
set -uo pipefail
# Everything is written under /tmp/work and packed into $OUT/results.tgz after each step (the device returns at
# most 8 files; a run cut short still returns the steps it finished).
RESULT="${OUT:-/tmp/out}"; mkdir -p "$RESULT"
export OUT=/tmp/work; mkdir -p "$OUT"
pack() { tar -czf "$RESULT/results.tgz" -C "$OUT" . 2>/dev/null; }
trap pack EXIT
mkdir -p /tmp/c && tar -xJf .carry/cuda.tar.xz -C /tmp/c
# The official sources may come packed (.carry/ref.tar.xz holding .ref/) to keep the carried tree small.
[ -d .ref ] || { [ -f .carry/ref.tar.xz ] && tar -xJf .carry/ref.tar.xz; }
export LD_LIBRARY_PATH=/tmp/c/libs:/usr/local/cuda/lib64
export PYTHONUNBUFFERED=1
B=/tmp/c/bin
CHOICES="$OUT/choices.tsv"  # autotuning choices shared by the bench and profile steps (DACPP_TUNING_FILE)
STEPS=("$@"); [ ${#STEPS[@]} -eq 0 ] && STEPS=(tests parity bench)
has() { [[ " ${STEPS[*]} " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1

pack
if has tests && [ -x $B/dacpp_gpu_tests ]; then
  # A kernel that hangs (a pipeline waiting on a barrier that never completes) must not take the whole device call:
  # 124 here means timed out (the full suite takes ~65 s on the H200).
  timeout 300 $B/dacpp_gpu_tests --gtest_brief=1 > "$OUT/gpu_tests.txt" 2>&1; echo "gpu_tests rc=$?" >> "$OUT/gpu_tests.txt"
  tail -5 "$OUT/gpu_tests.txt"
  # The tuning file (DACPP_TUNING_FILE): a second process takes the first one's choices instead of timing again.
  TF=/tmp/tuning_file_check.tsv; rm -f $TF
  for run in 1 2; do
    DACPP_TUNING_FILE=$TF DACPP_LOG=debug $B/dacpp bench -m tests/fixtures/tiny-da2.gguf --device cuda \
      --precision bf16 --size 518 --runs 1 --warmup 0 > /dev/null 2> "$OUT/tuning_file_$run.log"
  done
  echo "tuning file: $(wc -l < $TF) lines; run 1 timed $(grep -c 'us -> ' "$OUT/tuning_file_1.log") shapes;" \
    "run 2 timed $(grep -c 'us -> ' "$OUT/tuning_file_2.log"), reused $(grep -c 'from the tuning file' \
    "$OUT/tuning_file_2.log")" | tee -a "$OUT/gpu_tests.txt"
fi

MODELS=(${MODELS:-da2_vits da2_vitl})
pack
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

pack
if has bench; then
  for m in "${MODELS[@]}"; do [ -f /tmp/$m.gguf ] || python3 scripts/parity/full_size.py --out /tmp/fs --models $m \
      > /dev/null 2>&1 && $B/dacpp convert $(ls /tmp/fs/$m/*.pth | head -1) -o /tmp/$m.gguf > /dev/null 2>&1; done
  # The benches keep their tuned choices in $CHOICES (DACPP_TUNING_FILE), which the profile step reuses. Ours run
  # before PyTorch's reference (same command either way): a slow PyTorch run cut by a time limit then loses only
  # its own numbers (session 18's version call lost DA2's bench that way).
  for m in "${MODELS[@]}"; do
    for p in ${BENCH_PRECISIONS:-bf16 f16}; do
      DACPP_TUNING_FILE=$CHOICES $B/dacpp bench -m /tmp/$m.gguf --device cuda --precision $p --size 518 --runs 50 \
        --warmup 10 --json > "$OUT/bench_${m}_$p.json" 2>&1
    done
  done
  DACPP_TUNING_FILE=$CHOICES $B/dacpp bench -m /tmp/da2_vitl.gguf --device cuda --precision bf16 --size 518 \
    --batch 16 --runs 20 --warmup 5 --json > "$OUT/bench_da2_vitl_bf16_b16.json" 2>&1
  # What the first-use autotuning chose (conv algorithm, GEMM algorithm, attention variant; one line per shape).
  for m in "${MODELS[@]}"; do
    DACPP_LOG=debug $B/dacpp bench -m /tmp/$m.gguf --device cuda --precision bf16 --size 518 --runs 1 \
      --warmup 0 > /dev/null 2> "$OUT/tuning_$m.log"; echo "$m: $(grep -c "tuned \[" "$OUT/tuning_$m.log") tuned shapes"
  done
  for f in "$OUT"/bench_*.json; do echo "$(basename $f): $(grep -h -E '"median_ms"|"graph_replay_ms"|"images_per_s"|"device_total_peak_mb"|"error"' $f | tr -d '\n ')"; done
  for f in "$OUT"/bench_*.json; do python3 -c "import json,sys; p=json.load(open(sys.argv[1])).get('phases_ms'); p and print(sys.argv[1].split('/')[-1], 'phases', p)" "$f" 2>/dev/null; done
  pack
  [ -n "${SKIP_TORCH:-}" ] || python3 .carry/pytorch_da2.py gpu > "$OUT/torch_gpu.txt" 2>&1
  tail -20 "$OUT/torch_gpu.txt"
fi

pack
if has da3; then
  export PYTHONPATH=.ref/pydeps:.ref/da3/src
  D3=(${DA3_MODELS:-small base large})
  for m in "${D3[@]}"; do
    d=/tmp/da3/$m
    python3 .carry/da3_official.py ref $m 504x336 $d > "$OUT/da3_ref_$m.log" 2>&1 || { tail -5 "$OUT/da3_ref_$m.log"; continue; }
    python3 - "$d" <<'PY'
import sys, os, numpy as np
d = sys.argv[1]
x = np.load(os.path.join(d, "input.npy")); np.save(os.path.join(d, "input4.npy"), x.reshape(x.shape[1:]))
os.makedirs(os.path.join(d, "ref"), exist_ok=True)
for k, v in np.load(os.path.join(d, "ref.npz")).items(): np.save(os.path.join(d, "ref", k + ".npy"), v)
PY
    for p in f32 bf16; do
      echo "== da3-$m cuda $p"
      $B/dacpp_parity $d $d/input4.npy /tmp/o/da3-$m-$p --device cuda --precision $p 2>&1 | tail -1
      tol=1e-2; [ $p = f32 ] && tol=1e-4
      python3 scripts/parity/compare.py $d/ref /tmp/o/da3-$m-$p --tol $tol --names depth depth_conf extrinsics intrinsics 2>&1
    done
    # The official code's own bf16 error on the same network (its bf16-autocast forward against its f32 one).
    echo "== da3-$m official bf16-autocast"
    python3 scripts/parity/da3_official_bf16.py .carry $d /tmp/o/da3-$m-official-bf16 2>&1 | tail -1
    python3 scripts/parity/compare.py $d/ref /tmp/o/da3-$m-official-bf16 --tol 1e-2 --names depth depth_conf extrinsics intrinsics 2>&1
  done > "$OUT/da3_parity.txt" 2>&1
  grep -E "==|depth|extrinsics|intrinsics" "$OUT/da3_parity.txt" | head -40
  [ -n "${DA3_PARITY_ONLY:-}" ] && D3=()  # parity only: no timing below
  [ ${#D3[@]} -gt 0 ] && python3 .carry/da3_official.py time gpu "${D3[@]}" > "$OUT/da3_official_time.txt" 2>&1
  grep -E '"W": 504, "H": 336' "$OUT/da3_time.jsonl" 2>/dev/null
  for m in "${D3[@]}"; do
    for p in ${DA3_PRECISIONS:-bf16 f32}; do
      $B/dacpp bench -m /tmp/da3/$m --device cuda --precision $p --size 504x336 --runs 50 --warmup 10 --json \
        > "$OUT/bench_da3_${m}_$p.json" 2>&1
      echo "da3-$m $p: $(grep -h -E '"median_ms"|"graph_replay_ms"|"device_total_peak_mb"|"error"' "$OUT/bench_da3_${m}_$p.json" | tr -d '\n ')"
    done
  done
fi


# profile: kernel time per kernel name over one bf16 forward (Nsight Compute), for the models in MODELS (or
# PROFILE_MODELS), at batch PROFILE_BATCH (1). The bench runs warmup 1 + 2 forwards under ncu with the choices of
# $CHOICES (tuned by the bench step, or by a plain run here first), so ncu sees the algorithms a normal run uses
# (tuning under the profiler chose differently); the last forward is found as the shortest tail of at least 50
# launches that repeats the one before it.
pack
if has profile; then
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  for m in ${PROFILE_MODELS:-${MODELS[@]}}; do
    [ -f /tmp/$m.gguf ] || { python3 scripts/parity/full_size.py --out /tmp/fs --models $m > /dev/null 2>&1;
      $B/dacpp convert $(ls /tmp/fs/$m/*.pth | head -1) -o /tmp/$m.gguf > /dev/null 2>&1; }
    PB=${PROFILE_BATCH:-1}; tag=$m; [ "$PB" = 1 ] || tag=${m}_b$PB
    DACPP_TUNING_FILE=$CHOICES $B/dacpp bench -m /tmp/$m.gguf --device cuda --precision bf16 --size 518 --runs 1 \
      --warmup 0 --batch "$PB" > /dev/null 2>&1
    DACPP_TUNING_FILE=$CHOICES $NCU --metrics gpu__time_duration.sum --cache-control none --clock-control none --csv \
      $B/dacpp bench -m /tmp/$m.gguf --device cuda --precision bf16 --size 518 --runs 2 --warmup 1 --batch "$PB" \
      > "$OUT/ncu_$tag.csv" 2> "$OUT/ncu_$tag.err"
    python3 - "$OUT/ncu_$tag.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; ki, vi, ui = h.index("Kernel Name"), h.index("Metric Value"), h.index("Metric Unit")
scale = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}
launches = []
for r in rows[1:]:
    try: launches.append((r[ki].split("(")[0][:70], float(r[vi].replace(",", "")) * scale.get(r[ui], 1.0)))
    except ValueError: continue
names = [k for k, _ in launches]
n = next((n for n in range(50, len(names) // 2 + 1) if names[-n:] == names[-2 * n:-n]), len(names))
t = collections.defaultdict(lambda: [0.0, 0])
for k, v in launches[-n:]: t[k][0] += v; t[k][1] += 1
tot = sum(v[0] for v in t.values())
print(f"{sys.argv[1]}: one forward = last {n} of {len(names)} launches, kernel time {tot/1e6:.3f} ms")
for k, (v, c) in sorted(t.items(), key=lambda kv: -kv[1][0])[:40]: print(f"  {v/1e6:7.3f} ms {c:4d}x  {k}")
with open(sys.argv[1][:-4] + ".forward.txt", "w") as f:
    for k, v in launches[-n:]: f.write(f"{v/1e3:9.2f} us  {k}\n")
PY
  done
fi

# detail: Nsight Compute's full section set (stall reasons, pipe and memory-system use, occupancy) for one launch of
# each kernel named in DETAIL ("name-regex:launches-to-skip ..."; the skip counts that kernel's own launches, so
# attention's 24 per DA2-L forward skip the first forward) in a bf16 forward of DETAIL_MODEL (da2_vitl) at batch
# DETAIL_BATCH (1), with the bench's tuned choices ($CHOICES) so the profiled kernels are those a normal run uses.
pack
if has detail; then
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  m=${DETAIL_MODEL:-da2_vitl}
  [ -f /tmp/$m.gguf ] || { python3 scripts/parity/full_size.py --out /tmp/fs --models $m > /dev/null 2>&1;
    $B/dacpp convert $(ls /tmp/fs/$m/*.pth | head -1) -o /tmp/$m.gguf > /dev/null 2>&1; }
  DB=${DETAIL_BATCH:-1}; tag=$m; [ "$DB" = 1 ] || tag=${m}_b$DB
  DACPP_TUNING_FILE=$CHOICES $B/dacpp bench -m /tmp/$m.gguf --device cuda --precision bf16 --size 518 --runs 1 \
    --warmup 0 --batch "$DB" > /dev/null 2>&1
  for spec in ${DETAIL:-flash_attention_tma:24 conv3x3_wgmma_tma_kernel:0 upsample_conv_head_kernel:0}; do
    k=${spec%%:*} skip=${spec##*:}
    DACPP_TUNING_FILE=$CHOICES $NCU --set full -k "regex:$k" --launch-skip "$skip" --launch-count 1 --page details \
      --cache-control all --clock-control none $B/dacpp bench -m /tmp/$m.gguf --device cuda --precision bf16 \
      --size 518 --runs 1 --warmup 1 --batch "$DB" > "$OUT/detail_${tag}_$k.txt" 2>&1
    echo "detail $tag $k: $(grep -E -m3 'Duration|Compute \(SM\) Throughput|Memory Throughput' "$OUT/detail_${tag}_$k.txt" |
      tr -s ' ' | tr '\n' ';')"
  done
fi
