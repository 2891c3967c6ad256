# Sourced by scripts/sanitize and scripts/fuzz: one clang build of
# attn-mlir's own code with AddressSanitizer + UndefinedBehaviorSanitizer and
# libFuzzer's coverage hooks, in build-sanitize/ (BUILD_SANITIZE_DIR).
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
ATTN_APT_PACKAGES+=(clang-22 libclang-rt-22-dev libfuzzer-22-dev)
SAN_DIR=${BUILD_SANITIZE_DIR:-$ATTN_ROOT/build-sanitize}
ASAN_RT_DIR=$(dirname "$("$LLVM_BIN/clang++" -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null || echo /x/x)")

attn_sanitize_build() {
  if [ ! -f "$SAN_DIR/build.ninja" ]; then
    attn_log "configuring $SAN_DIR (clang-22, address+undefined, fuzzer)"
    CC="$LLVM_BIN/clang" CXX="$LLVM_BIN/clang++" cmake -G Ninja -S "$ATTN_ROOT" -B "$SAN_DIR" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
      -DLLVM_EXTERNAL_LIT="$LLVM_BIN/lit" \
      -DLLVM_USE_LINKER=lld \
      -DATTN_SANITIZE=address,undefined -DATTN_BUILD_FUZZER=ON >/dev/null
  fi
  attn_log "building $SAN_DIR"
  # Optional arguments: the targets to build (default: all).
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake --build "$SAN_DIR" -j "${ATTN_JOBS:-$(nproc)}" "${targets[@]}" | grep -vE '^\[[0-9]+/[0-9]+\] ' || true
  if ! ninja -C "$SAN_DIR" -n "$@" 2>/dev/null | grep -q 'no work to do'; then
    attn_log "sanitizer build failed"
    cmake --build "$SAN_DIR" -j 1 "${targets[@]}"
    return 1
  fi
}

# Findings are errors. The MLIR archives and libLLVM are not instrumented,
# so annotations that need every user of a data structure instrumented are
# off: container-overflow (std::vector) and user poisoning (LLVM's
# BumpPtrAllocator poisons its slabs in our instrumented copies of its inline
# code and unpoisons them in MLIR's uninstrumented ones: a false
# use-after-poison). Leaks are checked.
export ASAN_OPTIONS=detect_container_overflow=0:allow_user_poisoning=0:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LD_LIBRARY_PATH="$ASAN_RT_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
