#!/usr/bin/env bash
# The main job of `make run`: depth, confidence, camera pose and a 3D point cloud of the sample photo with the
# default model, DA3-SMALL (any-view).
#   DACPP_MODEL=/path/model.gguf make run   uses that model instead of downloading one.
# Without DACPP_MODEL it pulls depth-anything/DA3-SMALL into the cache (~/.cache/dacpp) unless it is already there,
# converts it to GGUF, and writes out/sample.{depth.png,color.png,depth.pfm,conf.pfm,pose.json} and
# out/scene.{ply,glb}. A single-view model given with DACPP_MODEL (DA2, DA3 mono/metric) writes the depth files only.
set -euo pipefail
DACPP="${1:-build/release/dacpp}"
cd "$(dirname "$0")/.."
DEFAULT_REPO="depth-anything/DA3-SMALL"
MODEL="${DACPP_MODEL:-}"
if [ -z "$MODEL" ]; then
  if ! MODEL="$("$DACPP" pull "$DEFAULT_REPO")"; then
    cat >&2 <<MSG
dacpp: could not download $DEFAULT_REPO (no network?).
Pass a model you already have instead, for example:
  DACPP_MODEL=/path/to/model.gguf make run          (a .gguf, a .pth checkpoint or a checkpoint folder)
  $DACPP depth -m /path/to/model.gguf assets/sample.jpg -o out/
or try a tiny random-weight test model (its outputs are meaningless, but every stage runs):
  DACPP_MODEL=tests/fixtures/models/da3small_tiny make run     (DA3 any-view: depth, conf, pose, PLY, GLB)
  DACPP_MODEL=tests/fixtures/tiny-da2.gguf make run            (DA2: depth only)
MSG
    exit 1
  fi
fi
"$DACPP" info "$MODEL"
if "$DACPP" info --json "$MODEL" | grep -q '"multiview": true'; then
  "$DACPP" depth -m "$MODEL" --views assets/sample.jpg -o out --png --pfm --color turbo --conf --pose --ply --glb \
    --json
  echo "wrote out/sample.{depth.png,color.png,depth.pfm,conf.pfm,pose.json} and out/scene.{ply,glb}" >&2
else
  "$DACPP" depth -m "$MODEL" assets/sample.jpg -o out --png --pfm --color turbo --json
  echo "wrote out/sample.depth.png, out/sample.color.png and out/sample.depth.pfm" >&2
fi
