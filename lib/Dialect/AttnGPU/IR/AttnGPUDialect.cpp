//===- AttnGPUDialect.cpp - attngpu dialect, types and attributes ---------===//
//
// Registers the dialect's types, attributes and ops, and implements the
// syntax and invariants of register tiles, shared buffers, fragment layouts
// and the schedule attribute.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/IR/AttnGPUDialect.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.h"
#include "TypeText.h"
#include "attn/Schedule/ScheduleSettings.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attngpu;

#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsDialect.cpp.inc"

#include "attn/Dialect/AttnGPU/IR/AttnGPUEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsTypes.cpp.inc"

void AttnGPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/AttnGPU/IR/AttnGPUAttrs.cpp.inc"
      >();
}



//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

LogicalResult
MmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      MmaInstr instr, MmaRole role, int64_t warps) {
  if (warps <= 0 || warps > 32)
    return emitError() << "warps must be from 1 to 32, got " << warps;
  if (instr == MmaInstr::wgmma && warps % 4 != 0)
    return emitError() << "wgmma layouts need whole warpgroups: warps must be "
                          "a multiple of 4, got "
                       << warps;
  if (instr == MmaInstr::wgmma && role == MmaRole::b)
    return emitError() << "wgmma reads its B operand from shared memory: no "
                          "register tile has the wgmma B layout";
  return success();
}

LogicalResult
RowsLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       MmaLayoutAttr parent) {
  if (parent.getRole() != MmaRole::acc)
    return emitError() << "#attngpu.rows needs an accumulator parent layout, "
                          "got role '"
                       << stringifyMmaRole(parent.getRole()) << "'";
  return success();
}

//===----------------------------------------------------------------------===//
// TileType
//===----------------------------------------------------------------------===//

/// `!attngpu.tile<64x128xf32, #attngpu.mma<...>>`.
Type TileType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute layout;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseAttribute(layout) || parser.parseGreater())
    return {};
  return parser.getChecked<TileType>(loc, parser.getContext(), shape,
                                     elementType, layout);
}

void TileType::print(AsmPrinter &printer) const {
  printer << '<';
  for (int64_t size : getShape())
    printer << size << 'x';
  printer << getElementType() << ", " << getLayout() << '>';
}

MmaLayoutAttr TileType::getMmaLayout() const {
  if (auto rows = dyn_cast<RowsLayoutAttr>(getLayout()))
    return rows.getParent();
  return cast<MmaLayoutAttr>(getLayout());
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType,
                               Attribute layout) {
  if (!elementType.isF16() && !elementType.isBF16() && !elementType.isF32())
    return emitError() << "tile element type must be f16, bf16 or f32, got "
                       << elementType;
  for (int64_t size : shape)
    if (size <= 0)
      return emitError() << "tile sizes must be positive, got "
                         << shapeString(shape);
  auto rowsLayout = dyn_cast<RowsLayoutAttr>(layout);
  auto mma = rowsLayout ? rowsLayout.getParent() : dyn_cast<MmaLayoutAttr>(layout);
  if (!mma)
    return emitError() << "tile layout must be #attngpu.mma or #attngpu.rows, "
                          "got "
                       << layout;
  int64_t warps = mma.getWarps();
  bool wgmma = mma.getInstr() == MmaInstr::wgmma;
  if (rowsLayout) {
    if (shape.size() != 1)
      return emitError() << "a #attngpu.rows tile is 1-D, got shape "
                         << shapeString(shape);
    if (!elementType.isF32())
      return emitError() << "a #attngpu.rows tile holds f32, got "
                         << elementType;
  } else if (shape.size() != 2) {
    return emitError() << "an #attngpu.mma tile is 2-D, got shape "
                       << shapeString(shape);
  }
  MmaRole role = mma.getRole();
  // Rows are split over the warps (A and accumulators) in 16-row mma tiles;
  // wgmma gives each warpgroup exactly 64 rows.
  if (rowsLayout || role != MmaRole::b) {
    int64_t rows = shape[0];
    if (wgmma && rows != 16 * warps)
      return emitError() << "wgmma tiles have 64 rows per warpgroup: "
                         << warps << " warps need " << 16 * warps
                         << " rows, got " << rows;
    if (rows % (16 * warps) != 0)
      return emitError() << "rows (" << rows << ") must be a multiple of 16 "
                         << "per warp (" << warps << " warps: "
                         << 16 * warps << ")";
  }
  if (rowsLayout)
    return success();
  int64_t kStep = elementType.isF32() ? 8 : 16;
  switch (role) {
  case MmaRole::acc:
    if (!elementType.isF32())
      return emitError() << "accumulator tiles are f32, got " << elementType;
    if (shape[1] % 8 != 0)
      return emitError() << "accumulator columns (" << shape[1]
                         << ") must be a multiple of 8";
    if (wgmma && shape[1] > 256)
      return emitError() << "wgmma accumulators have at most 256 columns, got "
                         << shape[1];
    break;
  case MmaRole::a:
    if (shape[1] % kStep != 0)
      return emitError() << "A operand columns (K = " << shape[1]
                         << ") must be a multiple of " << kStep << " for "
                         << elementType;
    if (wgmma && !isSixteenBit(elementType))
      return emitError() << "wgmma A operands in registers are f16 or bf16, "
                            "got "
                         << elementType;
    break;
  case MmaRole::b:
    if (shape[0] % kStep != 0)
      return emitError() << "B operand rows (K = " << shape[0]
                         << ") must be a multiple of " << kStep << " for "
                         << elementType;
    if (shape[1] % 8 != 0)
      return emitError() << "B operand columns (N = " << shape[1]
                         << ") must be a multiple of 8";
    break;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SharedType
//===----------------------------------------------------------------------===//

/// `!attngpu.shared<64x128xf16, xor_rows, stages = 2>`; `plain` and one
/// stage are the defaults and not printed.
Type SharedType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type elementType;
  SharedLayout layout = SharedLayout::plain;
  int64_t stages = 1;
  bool layoutGiven = false, stagesGiven = false;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc keywordLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword))
      return {};
    if (keyword == "stages") {
      if (stagesGiven) {
        parser.emitError(keywordLoc) << "'stages' given twice";
        return {};
      }
      stagesGiven = true;
      if (parser.parseEqual() || parser.parseInteger(stages))
        return {};
      continue;
    }
    std::optional<SharedLayout> parsed = symbolizeSharedLayout(keyword);
    if (!parsed) {
      parser.emitError(keywordLoc)
          << "expected a shared layout (plain, xor_rows, wgmma_128b) or "
             "'stages', got '"
          << keyword << "'";
      return {};
    }
    if (layoutGiven) {
      parser.emitError(keywordLoc)
          << "a shared buffer has one layout, got a second: '" << keyword
          << "'";
      return {};
    }
    layoutGiven = true;
    layout = *parsed;
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<SharedType>(loc, parser.getContext(), shape,
                                       elementType, layout, stages);
}

void SharedType::print(AsmPrinter &printer) const {
  printer << '<';
  for (int64_t size : getShape())
    printer << size << 'x';
  printer << getElementType();
  if (getLayout() != SharedLayout::plain)
    printer << ", " << stringifySharedLayout(getLayout());
  if (getStages() != 1)
    printer << ", stages = " << getStages();
  printer << '>';
}

int64_t SharedType::getStageBytes() const {
  int64_t elements = 1;
  for (int64_t size : getShape())
    elements *= size;
  return elements * getElementType().getIntOrFloatBitWidth() / 8;
}

int64_t SharedType::getAlignment() const {
  // wgmma's 128-byte swizzle repeats every 8 rows of 128 bytes, and the
  // descriptor's base must sit on that pattern's start.
  return getLayout() == SharedLayout::wgmma_128b ? 1024 : 128;
}

LogicalResult
MbarriersType::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t count) {
  if (count < 1 || count > 64)
    return emitError() << "mbarrier count must be from 1 to 64, got " << count;
  return success();
}

LogicalResult
TensorMapType::verify(function_ref<InFlightDiagnostic()> emitError,
                      Type elementType, ArrayRef<int64_t> box) {
  if (!elementType.isF16() && !elementType.isBF16() && !elementType.isF32())
    return emitError() << "tensor map element type must be f16, bf16 or f32, "
                          "got "
                       << elementType;
  if (box.size() < 2 || box.size() > 5)
    return emitError() << "a tensor map's box has one size per tensor "
                          "dimension, 2 to 5 of them (TMA), got "
                       << boxString(box);
  for (int64_t size : box)
    if (size < 1 || size > 256)
      return emitError() << "TMA box sizes must be from 1 to 256, got "
                         << boxString(box);
  int64_t innerBytes = box.back() * elementType.getIntOrFloatBitWidth() / 8;
  if (innerBytes % 16 != 0 || innerBytes > 128)
    return emitError() << "the box's innermost size must be a multiple of 16 "
                          "bytes and at most the 128-byte swizzle span, got "
                       << innerBytes << " bytes";
  return success();
}

LogicalResult SharedType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, Type elementType,
                                 SharedLayout layout, int64_t stages) {
  if (!elementType.isF16() && !elementType.isBF16() && !elementType.isF32())
    return emitError() << "shared buffer element type must be f16, bf16 or "
                          "f32, got "
                       << elementType;
  if (shape.size() != 2)
    return emitError() << "shared buffers hold 2-D tiles, got shape "
                       << shapeString(shape);
  for (int64_t size : shape)
    if (size <= 0)
      return emitError() << "shared buffer sizes must be positive, got "
                         << shapeString(shape);
  if (stages < 1 || stages > 16)
    return emitError() << "stages must be from 1 to 16, got " << stages;
  int64_t rowBytes = shape[1] * elementType.getIntOrFloatBitWidth() / 8;
  switch (layout) {
  case SharedLayout::plain:
    break;
  case SharedLayout::xor_rows: {
    int64_t chunks = rowBytes / 16;
    if (rowBytes % 16 != 0 || !llvm::isPowerOf2_64(chunks))
      return emitError() << "xor_rows swizzles the 16-byte chunks of a row: "
                            "a row must be a power of two of them, got "
                         << rowBytes << " bytes";
    break;
  }
  case SharedLayout::wgmma_128b:
    if (!isSixteenBit(elementType))
      return emitError() << "wgmma_128b holds f16 or bf16, got "
                         << elementType;
    if (shape[1] % 64 != 0)
      return emitError() << "wgmma_128b stores 128-byte slabs of 64 columns: "
                            "columns must be a multiple of 64, got "
                         << shape[1];
    if (shape[0] % 8 != 0)
      return emitError() << "wgmma_128b's swizzle repeats every 8 rows: rows "
                            "must be a multiple of 8, got "
                         << shape[0];
    break;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ScheduleAttr
//===----------------------------------------------------------------------===//

std::optional<int64_t> ScheduleAttr::defaultOf(StringRef name) {
  if (const attn::ScheduleSetting *setting = attn::findScheduleSetting(name))
    return setting->defaultValue;
  return std::nullopt;
}

int64_t ScheduleAttr::getInt(StringRef name) const {
  if (auto value = getSettings().getAs<IntegerAttr>(name))
    return value.getInt();
  return defaultOf(name).value_or(0);
}

/// `#attngpu.schedule<block_m = 64, staged_output = 1>`.
Attribute ScheduleAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  NamedAttrList settings;
  if (parser.parseLess())
    return {};
  if (failed(parser.parseOptionalGreater())) {
    do {
      StringRef name;
      int64_t value;
      SMLoc nameLoc = parser.getCurrentLocation();
      if (parser.parseKeyword(&name) || parser.parseEqual() ||
          parser.parseInteger(value))
        return {};
      if (settings.get(name)) {
        parser.emitError(nameLoc) << "schedule setting '" << name
                                  << "' given twice";
        return {};
      }
      settings.append(name, parser.getBuilder().getI64IntegerAttr(value));
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseGreater())
      return {};
  }
  return parser.getChecked<ScheduleAttr>(
      loc, parser.getContext(),
      DictionaryAttr::get(parser.getContext(), settings));
}

void ScheduleAttr::print(AsmPrinter &printer) const {
  // In the table's order, so that printed schedules compare as text.
  printer << '<';
  bool first = true;
  for (const attn::ScheduleSetting &setting : attn::scheduleSettings()) {
    auto value = getSettings().getAs<IntegerAttr>(setting.name);
    if (!value)
      continue;
    printer << (first ? "" : ", ") << setting.name << " = " << value.getInt();
    first = false;
  }
  printer << '>';
}

LogicalResult
ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     DictionaryAttr settings) {
  for (NamedAttribute entry : settings) {
    StringRef name = entry.getName().getValue();
    const attn::ScheduleSetting *setting = attn::findScheduleSetting(name);
    if (!setting) {
      InFlightDiagnostic diag = emitError();
      diag << "unknown schedule setting '" << name << "'; known:";
      for (const attn::ScheduleSetting &known : attn::scheduleSettings())
        diag << " " << known.name;
      return diag;
    }
    auto value = dyn_cast<IntegerAttr>(entry.getValue());
    if (!value)
      return emitError() << "schedule setting '" << name
                         << "' must be an integer";
    std::string rangeError = attn::settingRangeError(*setting, value.getInt());
    if (!rangeError.empty())
      return emitError() << "schedule setting '" << name << "' "
                         << rangeError;
  }
  return success();
}
