#!/usr/bin/env bash
# Installs every build and test dependency of dacpp from Debian/Ubuntu packages. Idempotent: packages already
# present are skipped, and apt is not touched at all when nothing is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libdnnl-dev            # oneDNN: CPU matmul, conv, layer norm, softmax
  libstb-dev             # stb_image (the tests read written PNGs with it)
  libpng-dev zlib1g-dev  # PNG outputs (8- and 16-bit; zlib for their strips deflated in parallel)
  libjpeg-dev            # JPEG input: libjpeg-turbo (Debian libjpeg62-turbo-dev, Ubuntu libjpeg-turbo8-dev)
  nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libcpp-httplib-dev libcurl4-openssl-dev
  python3 python3-numpy  # independent NPY reader in the tests
  python3-grpcio python3-protobuf  # the dacpp-server end-to-end tests' gRPC client (tests/server)
  python3-meshio colmap  # independent PLY and COLMAP-model readers in the tests
  python3-pil  # the export test crops its multi-view inputs from a sample image
  chromium chromium-driver  # headless browser test of the web viewer (tests/server/test_web_page.py)
)
# The Khronos glTF validator (npm) checks our GLB files; it goes into a folder outside the repository.
GLTF_VALIDATOR="gltf-validator@2.0.0-dev.3.10"
TOOLS_DIR="${DACPP_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dacpp}"

install_gltf_validator() {
  [ -f "$TOOLS_DIR/node/node_modules/gltf-validator/package.json" ] && return 0
  echo "install-deps: installing $GLTF_VALIDATOR into $TOOLS_DIR/node" >&2
  mkdir -p "$TOOLS_DIR/node"
  npm install --prefix "$TOOLS_DIR/node" --no-audit --no-fund --silent "$GLTF_VALIDATOR"
}

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs may come from elsewhere (e.g. NodeSource, whose package carries npm): only ask Debian when npm is absent.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ ${#missing[@]} -eq 0 ]; then
  install_gltf_validator
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_gltf_validator
