//===- AttnGPUOps.h - attngpu operations ------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNGPU_IR_ATTNGPUOPS_H
#define ATTN_DIALECT_ATTNGPU_IR_ATTNGPUOPS_H

#include "attn/Dialect/AttnGPU/IR/AttnGPUDialect.h"
#include "attn/Dialect/Attn/IR/VariantRegions.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.h.inc"

#endif // ATTN_DIALECT_ATTNGPU_IR_ATTNGPUOPS_H
