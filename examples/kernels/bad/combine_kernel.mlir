// BAD ON PURPOSE (for attn-run): a split-KV combine, not an attention; the
// library runs it after a split launch's partials, attn-run cannot.
!p = memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>
!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @combine(%partials: !p, %partial_lse: memref<?x?x?xf32>, %O: !t) {
  attn.combine_splits %partials, %partial_lse -> %O : !p, memref<?x?x?xf32> -> !t
  return
}
