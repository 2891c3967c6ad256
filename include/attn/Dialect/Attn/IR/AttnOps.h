//===- AttnOps.h - attn operations ------------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/VariantRegions.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
