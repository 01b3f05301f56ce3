#!/usr/bin/env bash
# Independent readers of the 3D exports (design.md §6): dacpp_tests writes a synthetic scene
# (ExportSample.WritesSceneForIndependentReaders), then meshio reads the PLY, the Khronos glTF validator checks the
# GLB, and COLMAP's model_analyzer / model_converter read the COLMAP model (.bin and .txt), each compared with
# numbers recomputed by numpy (export_readers_check.py).
# A missing reader is a FAILURE, not a skip: scripts/install-deps.sh installs all of them (python3-meshio and
# colmap from Debian; gltf-validator from npm into ${DACPP_TOOLS_DIR:-~/.cache/dacpp}/node), and CI runs it first.
# Usage: export_readers_test.sh DACPP_TESTS_BINARY SOURCE_DIR
set -u
TESTS="$1"
ROOT="$2"
HERE="$ROOT/tests/io"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export PATH="/usr/bin:$PATH"  # Debian's python3 (numpy, meshio), not a pyenv shim
TOOLS="${DACPP_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dacpp}"
export NODE_PATH="$TOOLS/node/node_modules${NODE_PATH:+:$NODE_PATH}"
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

missing=()
python3 -c 'import meshio, numpy' 2>/dev/null || missing+=("python3-meshio (Debian)")
command -v colmap >/dev/null || missing+=("colmap (Debian)")
command -v node >/dev/null || missing+=("nodejs")
[ -f "$TOOLS/node/node_modules/gltf-validator/package.json" ] || missing+=("gltf-validator (npm, in $TOOLS/node)")
if [ ${#missing[@]} -ne 0 ]; then
  echo "FAIL: independent readers missing: ${missing[*]}; run scripts/install-deps.sh"
  exit 1
fi

SAMPLE="$TMP/sample"
if ! DACPP_EXPORT_SAMPLE_DIR="$SAMPLE" "$TESTS" --gtest_filter='ExportSample.*' >"$TMP/gtest.log" 2>&1; then
  cat "$TMP/gtest.log"
  echo "FAIL: the sample scene could not be written"
  exit 1
fi

echo "--- Khronos glTF validator on scene.glb"
node "$HERE/gltf_validate.js" "$SAMPLE/scene.glb" || fail "gltf-validator rejected scene.glb"

echo "--- meshio, COLMAP and numpy"
python3 "$HERE/export_readers_check.py" "$SAMPLE" "$TMP" || fail "independent reader checks"

if [ "$FAILS" -ne 0 ]; then echo "$FAILS check(s) failed"; exit 1; fi
echo ok
