#!/usr/bin/env bash
# The main job of `make run`: the depth of the sample photo with the default model.
#   DACPP_MODEL=/path/model.gguf make run   uses that model instead of downloading one.
# Without DACPP_MODEL it pulls the default model (Depth-Anything-V2-Small) into the cache (~/.cache/dacpp) unless it
# is already there, converts it to GGUF, and writes out/sample.{depth.png,color.png,depth.pfm}.
set -euo pipefail
DACPP="${1:-build/release/dacpp}"
cd "$(dirname "$0")/.."
DEFAULT_REPO="depth-anything/Depth-Anything-V2-Small"
MODEL="${DACPP_MODEL:-}"
if [ -z "$MODEL" ]; then
  if ! MODEL="$("$DACPP" pull "$DEFAULT_REPO")"; then
    cat >&2 <<MSG
dacpp: could not download $DEFAULT_REPO (no network?).
Pass a model you already have instead, for example:
  DACPP_MODEL=/path/to/model.gguf make run          (a .gguf, a .pth checkpoint or a checkpoint folder)
  $DACPP depth -m /path/to/model.gguf assets/sample.jpg -o out/
or try the tiny random-weight test model (its depth is meaningless, but every stage runs):
  DACPP_MODEL=tests/fixtures/tiny-da2.gguf make run
MSG
    exit 1
  fi
fi
"$DACPP" info "$MODEL"
"$DACPP" depth -m "$MODEL" assets/sample.jpg -o out --png --pfm --color turbo --json
echo "wrote out/sample.depth.png, out/sample.color.png and out/sample.depth.pfm" >&2
