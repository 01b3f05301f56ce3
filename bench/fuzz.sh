#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (DACPP_FUZZ=ON) and runs each for N seconds from its seed corpus.
#   bench/fuzz.sh N [target...]      targets: gguf safetensors pth image, and the server's request decoders
#                                    rest_json image_src worker_frame load_options (default: all)
# Environment: BUILD_DIR (default build/fuzz), JOBS (parallel fuzz runs, default 2), FUZZ_ARGS (extra flags).
# Per target: new corpus entries go to $BUILD_DIR/corpus/<target> (the committed seeds in tests/fuzz/corpus are
# only read), crashes to $BUILD_DIR/artifacts/<target>/, the log to $BUILD_DIR/logs/<target>.log. The summary
# line per target gives seconds, executions and crash artifacts; the exit status is 1 if any target crashed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
N="${1:?usage: bench/fuzz.sh SECONDS [target...]}"
shift
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(gguf safetensors pth image rest_json image_src worker_frame load_options)
BUILD_DIR="${BUILD_DIR:-$ROOT/build/fuzz}"
JOBS="${JOBS:-2}"

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDACPP_CUDA=OFF -DDACPP_FUZZ=ON -DDACPP_BUILD_TESTS=OFF -DDACPP_BUILD_SERVER=ON >/dev/null
fi
cmake --build "$BUILD_DIR" -j"$JOBS" --target $(printf 'fuzz_%s ' "${TARGETS[@]}")

run_one() {
  local t="$1"
  mkdir -p "$BUILD_DIR/corpus/$t" "$BUILD_DIR/artifacts/$t" "$BUILD_DIR/logs"
  local extra=()
  # LoadModel warns on stderr for each unknown option key; keep libFuzzer's own report, drop the target's noise.
  [ "$t" = load_options ] && extra=(-close_fd_mask=2)
  # A frame's length prefix alone must not make read_frame allocate what it claims (up to 1 GiB).
  [ "$t" = worker_frame ] && extra=(-malloc_limit_mb=64)
  # One process per target (no -jobs: that forks workers logging to ./fuzz-N.log). -rss_limit_mb: a reader that allocates what a header claims (instead of checking it) shows up as an OOM crash.
  "$BUILD_DIR/tests/fuzz/fuzz_$t" "$BUILD_DIR/corpus/$t" "$ROOT/tests/fuzz/corpus/$t" \
    -max_total_time="$N" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="$BUILD_DIR/artifacts/$t/" "${extra[@]}" ${FUZZ_ARGS:-} >"$BUILD_DIR/logs/$t.log" 2>&1 || true
}

summary() {
  local t="$1" log="$BUILD_DIR/logs/$1.log"
  local execs crashes
  execs=$(grep -h 'stat::number_of_executed_units' "$log" 2>/dev/null | tail -1 | awk '{print $2}')
  [ -z "$execs" ] && execs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
  crashes=$(find "$BUILD_DIR/artifacts/$t" -type f | wc -l)
  echo "fuzz_$t seconds=$N execs=${execs:-0} crash_artifacts=$crashes"
  [ "$crashes" -eq 0 ]
}

running=0
for t in "${TARGETS[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait
status=0
for t in "${TARGETS[@]}"; do summary "$t" || status=1; done
exit $status
