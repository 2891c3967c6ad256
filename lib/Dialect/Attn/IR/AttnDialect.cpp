//===- AttnDialect.cpp - attn dialect, types and attributes ---------------===//
//
// Registers the dialect's types, attributes and ops, and implements the
// block-pointer type's syntax and invariants.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnOpsDialect.cpp.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnOpsTypes.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "attn/Dialect/Attn/IR/AttnOpsTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// BlockPtrType
//===----------------------------------------------------------------------===//

/// `!attn.block_ptr<64x32xf16>`: a static shape then the element type.
Type BlockPtrType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return parser.getChecked<BlockPtrType>(loc, parser.getContext(), shape,
                                         elementType);
}

void BlockPtrType::print(AsmPrinter &printer) const {
  printer << '<';
  for (int64_t size : getShape())
    printer << size << 'x';
  printer << getElementType() << '>';
}

LogicalResult
BlockPtrType::verify(function_ref<InFlightDiagnostic()> emitError,
                     ArrayRef<int64_t> shape, Type elementType) {
  if (shape.empty())
    return emitError() << "block pointer must have rank >= 1";
  for (int64_t size : shape)
    if (size <= 0)
      return emitError() << "block pointer sizes must be positive, got "
                         << size;
  if (!elementType.isF16() && !elementType.isBF16() && !elementType.isF32())
    return emitError() << "block pointer element type must be f16, bf16 or "
                          "f32, got "
                       << elementType;
  return success();
}
