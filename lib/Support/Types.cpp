//===- Types.cpp - element types and causal masks -------------------------===//

#include "attn/Support/Types.h"

#include <utility>

using namespace attn;

namespace {
/// Each enum's spellings, written once: both directions read the same table.
constexpr std::pair<DType, const char *> kDTypeNames[] = {
    {DType::F16, "f16"}, {DType::BF16, "bf16"}, {DType::F32, "f32"}};
constexpr std::pair<CausalKind, const char *> kCausalNames[] = {
    {CausalKind::None, "none"},
    {CausalKind::TopLeft, "top_left"},
    {CausalKind::BottomRight, "bottom_right"}};

template <typename Enum, size_t N>
std::optional<Enum> parse(const std::pair<Enum, const char *> (&names)[N],
                          const std::string &name) {
  for (const auto &[value, spelling] : names)
    if (name == spelling)
      return value;
  return std::nullopt;
}

template <typename Enum, size_t N>
const char *spell(const std::pair<Enum, const char *> (&names)[N],
                  Enum value) {
  for (const auto &[candidate, spelling] : names)
    if (candidate == value)
      return spelling;
  return "?";
}
} // namespace

std::optional<DType> attn::parseDType(const std::string &name) {
  return parse(kDTypeNames, name);
}

const char *attn::dtypeName(DType dtype) { return spell(kDTypeNames, dtype); }

size_t attn::dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
    return 4;
  }
  return 0;
}

std::optional<CausalKind> attn::parseCausalKind(const std::string &name) {
  // No mask may also be spelled as nothing at all.
  if (name.empty())
    return CausalKind::None;
  return parse(kCausalNames, name);
}

const char *attn::causalKindName(CausalKind causal) {
  return spell(kCausalNames, causal);
}
