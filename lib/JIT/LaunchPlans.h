//===- LaunchPlans.h - what one launch runs ---------------------*- C++ -*-===//

#ifndef ATTN_LIB_JIT_LAUNCHPLANS_H
#define ATTN_LIB_JIT_LAUNCHPLANS_H

#include "attn/JIT/Attention.h"

#include <cstdint>
#include <utility>

namespace attn::detail {

/// What the grid walks: query rows and batch, the tensors' (seq_q, batch)
/// or, varlen, the longest query and the number of sequences.
std::pair<int64_t, int64_t> gridRowsAndBatch(const AttentionSpec &spec,
                                             const LaunchArgs &args);

/// The keys a sequence may have: K's seq_kv, or a paged cache's capacity
/// (its block table's columns times the page size).
int64_t keyCapacity(const AttentionSpec &spec, const LaunchArgs &args);

} // namespace attn::detail

#endif // ATTN_LIB_JIT_LAUNCHPLANS_H
