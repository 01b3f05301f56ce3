#!/usr/bin/env bash
# On the GPU machine: an A/B of builds or settings in one command on one GPU, the way docs/PERFORMANCE.md judges a
# change (the same build's GPU time moves between device calls by more than most changes give). Each arm runs in a
# process of its own, tuning for itself, and the arms alternate ROUNDS times; one line per run with the graph-replay
# time (GPU), the whole forward's median (with host copies) and the device memory peak, then each arm's medians.
# Expects a CUDA build unpacked as cuda_run.sh does (/tmp/c/bin, LD_LIBRARY_PATH set) unless BIN says otherwise.
#
#   bash scripts/gpu/ab_bench.sh MODEL "ARGS" ARM...
#     MODEL  a .gguf file or a DA3 checkpoint folder
#     ARGS   dacpp bench arguments besides -m / --json, e.g. "--precision bf16 --size 518 --runs 100 --warmup 20"
#     ARM    label=ENV (space-free VAR=value pairs joined by commas; "label=" for none), or label=@BINARY to run
#            another dacpp binary (e.g. a build without the change); either may end in "|ARGS", bench arguments of
#            this arm only (quote the arm), e.g. "chunks2=|--row-chunks 2"
#   e.g. bash scripts/gpu/ab_bench.sh /tmp/da2_vitl.gguf "--precision bf16 --size 518 --runs 100 --warmup 20" \
#          lanes=DACPP_LANES=1 one-stream=DACPP_LANES=0
# Environment: ROUNDS (default 2), BIN (default /tmp/c/bin/dacpp), OUT (results: one JSON per run, summary.txt),
# DACPP_TUNING_FILE (default: none, each run tunes afresh).
set -uo pipefail
[ $# -ge 3 ] || { sed -n '2,17p' "$0" >&2; exit 2; }
MODEL=$1 ARGS=$2; shift 2
BIN=${BIN:-/tmp/c/bin/dacpp} ROUNDS=${ROUNDS:-2} OUT=${OUT:-/tmp/out}
# Each run tunes for itself: no tuning file (the CLI's default one would carry the first run's choices into the
# rest) unless the caller names one.
export DACPP_TUNING_FILE="${DACPP_TUNING_FILE-}"
mkdir -p "$OUT"
declare -A RESULTS
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get(sys.argv[2], 'n/a'))" "$1" "$2" \
  2>/dev/null || echo n/a; }
for round in $(seq 1 "$ROUNDS"); do
  for arm in "$@"; do
    label=${arm%%=*} spec=${arm#*=} bin=$BIN envs=() extra=
    if [[ $spec == *"|"* ]]; then extra=${spec#*|} spec=${spec%%|*}; fi
    if [[ $spec == @* ]]; then bin=${spec#@}; elif [ -n "$spec" ]; then IFS=, read -r -a envs <<< "$spec"; fi
    json="$OUT/ab_${label}_$round.json"
    # shellcheck disable=SC2086  # ARGS and extra are lists of words
    env "${envs[@]}" "$bin" bench -m "$MODEL" --device cuda $ARGS $extra --json > "$json" 2> "$OUT/ab_${label}_$round.err"
    gpu=$(field "$json" graph_replay_ms) whole=$(field "$json" median_ms) mb=$(field "$json" device_total_peak_mb)
    printf '%-16s round %d: GPU %s ms, whole %s ms, device peak %s MB\n' "$label" "$round" "$gpu" "$whole" "$mb" |
      tee -a "$OUT/summary.txt"
    RESULTS[$label]+="$gpu "
  done
done
for arm in "$@"; do
  label=${arm%%=*}
  printf '%-16s GPU ms per round: %s\n' "$label" "${RESULTS[$label]}" | tee -a "$OUT/summary.txt"
done
