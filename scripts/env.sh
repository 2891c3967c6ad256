# Sourced by scripts/demo and scripts/test: installs what is missing (quietly
# when everything is there), configures and builds into build/.
# Environment: BUILD_DIR (default build), ATTN_BUILD_TYPE (default Release),
# ATTN_JOBS (default: number of cores).

set -euo pipefail
ATTN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ATTN_ROOT/build}
LLVM_BIN=/usr/lib/llvm-22/bin

ATTN_APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools lld-22
  libzstd-dev zlib1g-dev libedit-dev libxml2-dev libffi-dev libcurl4-openssl-dev
  cmake ninja-build g++ python3 python3-numpy python3-pytest libgtest-dev
  python3-venv patchelf
)

attn_log() { printf '[attn] %s\n' "$*" >&2; }

attn_install_deps() {
  local missing=()
  for pkg in "${ATTN_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
      || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  attn_log "installing with apt: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null; then
    "${sudo[@]}" apt-get update -qq >/dev/null
    "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

attn_build() {
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    attn_log "configuring $BUILD_DIR"
    cmake -G Ninja -S "$ATTN_ROOT" -B "$BUILD_DIR" \
      -DCMAKE_BUILD_TYPE="${ATTN_BUILD_TYPE:-Release}" \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
      -DLLVM_EXTERNAL_LIT="$LLVM_BIN/lit" \
      -DLLVM_USE_LINKER=lld \
      -DCMAKE_EXE_LINKER_FLAGS="-B$LLVM_BIN" \
      -DCMAKE_SHARED_LINKER_FLAGS="-B$LLVM_BIN" >/dev/null
  fi
  attn_log "building"
  cmake --build "$BUILD_DIR" -j "${ATTN_JOBS:-$(nproc)}" | grep -vE '^\[[0-9]+/[0-9]+\] ' || true
  # grep swallows ninja's exit status: ask ninja whether anything is left.
  if ! ninja -C "$BUILD_DIR" -n 2>/dev/null | grep -q 'no work to do'; then
    attn_log "build failed"
    cmake --build "$BUILD_DIR" -j 1
    return 1
  fi
}
