#!/usr/bin/env bash
# Packs a CUDA build for the GPU machine: stripped dacpp, dacpp_parity and dacpp_gpu_tests plus the shared
# libraries they load that the machine (Ubuntu 24.04, CUDA 13 in /usr/local/cuda) lacks, into .carry/cuda.tar.xz.
# The working tree and the carried paths travel together under 64 MiB, so this stays around 14 MB (xz -9e; the
# three binaries share most of their code).
#   bash scripts/gpu/pack_carry.sh [BUILD_DIR]      (default build/cuda; configure it with -DDACPP_CUDA=ON)
# Then run e.g.  MODELS="da2_vits da2_vitl" bash scripts/gpu/cuda_run.sh tests parity bench  there, carrying .carry.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-$ROOT/build/cuda}"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/libs" "$ROOT/.carry"
for b in "$BUILD/dacpp" "$BUILD/dacpp_parity" "$BUILD/tests/dacpp_gpu_tests" "$BUILD/dacpp_decode_bench"; do
  [ -x "$b" ] || { echo "pack_carry: $b is missing (build dacpp dacpp_parity dacpp_gpu_tests first)" >&2; exit 1; }
  cp "$b" "$STAGE/bin/"
done
strip "$STAGE"/bin/*
# Every non-glibc, non-CUDA library the binaries load (the GPU machine has glibc, libstdc++ and the CUDA libraries).
for b in "$STAGE"/bin/*; do ldd "$b" | awk '/=>/ {print $3}'; done | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so|libcuda\.so|libcublas' |
  while read -r lib; do cp -L "$lib" "$STAGE/libs/"; done
strip --strip-unneeded "$STAGE"/libs/* 2>/dev/null || true
XZ_OPT="-9e -T2" tar -C "$STAGE" -cJf "$ROOT/.carry/cuda.tar.xz" bin libs
du -h "$ROOT/.carry/cuda.tar.xz"
