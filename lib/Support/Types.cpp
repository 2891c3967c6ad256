//===- Types.cpp - element types and causal masks -------------------------===//

#include "attn/Support/Types.h"

using namespace attn;

std::optional<DType> attn::parseDType(const std::string &name) {
  if (name == "f16")
    return DType::F16;
  if (name == "bf16")
    return DType::BF16;
  if (name == "f32")
    return DType::F32;
  return std::nullopt;
}

const char *attn::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  }
  return "?";
}

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
  if (name.empty() || name == "none")
    return CausalKind::None;
  if (name == "top_left")
    return CausalKind::TopLeft;
  if (name == "bottom_right")
    return CausalKind::BottomRight;
  return std::nullopt;
}

const char *attn::causalKindName(CausalKind causal) {
  switch (causal) {
  case CausalKind::None:
    return "none";
  case CausalKind::TopLeft:
    return "top_left";
  case CausalKind::BottomRight:
    return "bottom_right";
  }
  return "?";
}
