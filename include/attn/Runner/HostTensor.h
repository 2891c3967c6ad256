//===- HostTensor.h - strided host tensors for attn-run ---------*- C++ -*-===//
//
// Host-side tensors that attn-run fills, hands to a kernel and checks:
// elements stored in their dtype (f16, bf16 or f32) with explicit strides,
// plus bit-exact f16/bf16 conversions. No LLVM/MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_HOSTTENSOR_H
#define ATTN_RUNNER_HOSTTENSOR_H

#include "attn/Support/Types.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace attn {

//===----------------------------------------------------------------------===//
// f16 / bf16 conversions
//===----------------------------------------------------------------------===//

/// Rounds to IEEE binary16, to nearest with ties to even. Overflow gives
/// +-inf, underflow gives subnormals or +-0, NaN stays NaN (quiet).
uint16_t floatToHalf(float value);
/// Same as floatToHalf but rounds a double once (no double rounding through
/// float).
uint16_t doubleToHalf(double value);
/// Widens binary16 to float (exact).
float halfToFloat(uint16_t bits);

/// Rounds to bfloat16, to nearest with ties to even. Overflow gives +-inf,
/// NaN stays NaN (quiet).
uint16_t floatToBF16(float value);
/// Same as floatToBF16 but rounds a double once.
uint16_t doubleToBF16(double value);
/// Widens bfloat16 to float (exact).
float bf16ToFloat(uint16_t bits);

//===----------------------------------------------------------------------===//
// DType
//===----------------------------------------------------------------------===//

/// Rounds `value` to the nearest value representable in `dtype` (ties to
/// even), returned as a double.
double roundToDType(DType dtype, double value);

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

/// A strided tensor in host memory. `sizes` and `strides` are in logical
/// index order ([batch, heads, seq, dim] for Q/K/V/O, [batch, heads, seq]
/// for the LSE); strides count elements, not bytes. `storage` holds the
/// elements encoded in `dtype` and covers exactly the addressed elements.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  std::vector<uint8_t> storage;

  /// Number of dimensions.
  int64_t rank() const { return int64_t(sizes.size()); }
  /// Product of `sizes`.
  int64_t numElements() const;
  /// Element offset (not bytes) of the logical index `idx` (rank entries).
  int64_t offset(const int64_t *idx) const;
  /// Pointer to the first element's bytes.
  void *data() { return storage.data(); }
  const void *data() const { return storage.data(); }

  /// The element at logical index `idx`, widened to double.
  double get(const int64_t *idx) const;
  /// Stores `value` at logical index `idx`, rounded to `dtype`.
  void set(const int64_t *idx, double value);

  /// The element at storage position `offset` (in elements), widened.
  double getAtOffset(int64_t offset) const;
  /// Stores `value` at storage position `offset` (in elements), rounded.
  void setAtOffset(int64_t offset, double value);

  /// The element with row-major logical position `linear` (0 ..
  /// numElements()-1), whatever the strides.
  double getLinear(int64_t linear) const;
  /// Stores at row-major logical position `linear`.
  void setLinear(int64_t linear, double value);

  /// All elements in row-major logical order, widened to double.
  std::vector<double> toLogicalVector() const;
};

/// A rank-4 tensor with logical sizes [B, H, S, D] laid out by `layout`:
/// "bhsd" gives strides [H*S*D, S*D, D, 1] (contiguous), "bshd" gives
/// [S*H*D, D, H*D, 1] (physically B, S, H, D). Storage is zero-filled.
/// Throws std::invalid_argument for another layout or a negative size.
HostTensor makeAttnTensor(DType dtype, int64_t B, int64_t H, int64_t S,
                          int64_t D, const std::string &layout);

/// The LSE tensor: f32, logical sizes [B, H, S], contiguous strides
/// [H*S, S, 1] whatever the layout of the other tensors. Zero-filled.
HostTensor makeLseTensor(int64_t B, int64_t H, int64_t S);

/// A contiguous f32 vector of `n` elements (attn-run --alibi's slopes).
HostTensor makeF32Vector(int64_t n);

/// Fills `t` with standard normal values (std::normal_distribution<double>)
/// rounded to its dtype, drawn in row-major logical index order, so a seed
/// gives the same logical values whatever the strides.
void fillStandardNormal(HostTensor &t, std::mt19937_64 &rng);

/// The most host memory this process can hold, in bytes: the machine's
/// physical memory (sysconf), lowered by the process's address-space and
/// data limits (ulimit -v / -d) and by its cgroup's memory.max where those
/// are set. `what` says which of them it is.
uint64_t hostMemoryLimit(std::string &what);

/// Sets every element of `t` to a quiet NaN (poisons an output so that
/// unwritten elements fail the check).
void fillNaN(HostTensor &t);

} // namespace attn

#endif // ATTN_RUNNER_HOSTTENSOR_H
