//===- Types.h - element types and causal masks      -------------*- C++ -*-===//
//
// Plain C++ (no LLVM/MLIR): part of the installed API.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_TYPES_H
#define ATTN_SUPPORT_TYPES_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace attn {

/// Element type of Q, K, V and O (the LSE is always f32).
enum class DType { F16, BF16, F32 };

/// "f16" / "bf16" / "f32" to a DType; nullopt for anything else.
std::optional<DType> parseDType(const std::string &name);
/// The DType's name ("f16", "bf16", "f32").
const char *dtypeName(DType dtype);
/// Bytes per element: 2, 2 or 4.
size_t dtypeBytes(DType dtype);

/// Head dims the compiler supports (Q/K and V/O alike): multiples of 8 in
/// [kMinHeadDim, kMaxHeadDim].
constexpr int64_t kMinHeadDim = 16;
constexpr int64_t kMaxHeadDim = 256;
inline bool isSupportedHeadDim(int64_t d) {
  return d >= kMinHeadDim && d <= kMaxHeadDim && d % 8 == 0;
}

/// Causal mask alignment.
enum class CausalKind {
  /// No mask: every query sees every key.
  None,
  /// torch SDPA is_causal: query i sees keys j <= i.
  TopLeft,
  /// FlashAttention-2: query i sees keys j <= i + SKV - SQ.
  BottomRight,
};

/// "" or "none" -> None, "top_left", "bottom_right"; nullopt otherwise.
std::optional<CausalKind> parseCausalKind(const std::string &name);
/// "none", "top_left" or "bottom_right".
const char *causalKindName(CausalKind causal);

} // namespace attn

#endif // ATTN_SUPPORT_TYPES_H
