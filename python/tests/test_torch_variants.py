"""Variants on torch tensors through the operators
attn_mlir::flash_attention_mod(_lse) (CPU tensors here; the CUDA ones in
test_torch_cuda_variants.py): results against the float64 reference,
torch.compile with the functions given inline (the tracing breaks the
graph, the call still runs and agrees with eager), trace_variant ahead of
a fullgraph=True compile (the operator in the graph; captured tensors
read at each call, so new data is seen), meta tensors, misuse."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import attn_mlir  # noqa: E402
import reference  # noqa: E402

RNG = np.random.default_rng()


def inputs(S=150, SK=230):
    q = RNG.standard_normal((1, 4, S, 32)).astype(np.float32)
    k = RNG.standard_normal((1, 2, SK, 32)).astype(np.float32)
    v = RNG.standard_normal((1, 2, SK, 32)).astype(np.float32)
    return (q, k, v), tuple(torch.from_numpy(t) for t in (q, k, v))


def recording_backend(graphs):
    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    return backend


def ops_in(graphs):
    return {str(n.target) for g in graphs for n in g.graph.nodes
            if n.op == "call_function"}


def test_operator_matches_the_reference():
    (q, k, v), (tq, tk, tv) = inputs()
    docs = torch.from_numpy(np.sort(RNG.integers(0, 4, 230)).astype(np.int32))

    def mask(b, h, q_idx, kv_idx):
        return (docs[q_idx] == docs[kv_idx]) | (kv_idx < 10)

    def score(s, b, h, q_idx, kv_idx):
        return s - 0.01 * abs(q_idx - kv_idx)

    out, lse = attn_mlir.flash_attention(tq, tk, tv, mask_mod=mask,
                                         score_mod=score, return_lse=True)
    nd = docs.numpy()
    ref_out, ref_lse = reference.attention(
        q, k, v, None, score_mod=score,
        mask_mod=lambda b, h, qi, ki: (nd[qi] == nd[ki]) | (ki < 10))
    assert reference.rel_l2(out.numpy(), ref_out) <= 1e-5
    assert reference.rel_l2(lse.numpy(), ref_lse) <= 1e-5


def test_compile_with_inline_functions_works():
    (q, k, v), (tq, tk, tv) = inputs()

    def f(q, k, v):
        return attn_mlir.flash_attention(
            q, k, v, softcap=20.0,
            mask_mod=lambda b, h, qi, ki: ki <= qi + 40)

    graphs = []
    compiled = torch.compile(f, backend=recording_backend(graphs))
    torch.testing.assert_close(compiled(tq, tk, tv), f(tq, tk, tv),
                               rtol=0, atol=0)
    assert "attn_mlir.flash_attention_mod.default" in ops_in(graphs)


def test_trace_variant_keeps_one_graph_and_reads_new_data():
    (q, k, v), (tq, tk, tv) = inputs()
    docs = torch.from_numpy(np.sort(RNG.integers(0, 4, 230)).astype(np.int32))

    def mask(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]

    traced = attn_mlir.trace_variant(mask_mod=mask)
    graphs = []
    compiled = torch.compile(
        lambda q, k, v: attn_mlir.flash_attention(q, k, v, variant=traced,
                                                  return_lse=True),
        fullgraph=True, backend=recording_backend(graphs))
    for _ in range(2):
        out, lse = compiled(tq, tk, tv)
        nd = docs.numpy().copy()
        ref_out, ref_lse = reference.attention(
            q, k, v, None, mask_mod=lambda b, h, qi, ki: nd[qi] == nd[ki])
        assert reference.rel_l2(out.numpy(), ref_out) <= 1e-5
        assert reference.rel_l2(lse.numpy(), ref_lse) <= 1e-5
        docs.copy_(torch.from_numpy(
            np.sort(RNG.integers(0, 6, 230)).astype(np.int32)))
    # One graph for both calls (new data is not a new graph), the
    # operator in it.
    assert len(graphs) == 1
    assert "attn_mlir.flash_attention_mod_lse.default" in ops_in(graphs)


def test_meta_tensors_give_shapes():
    traced = attn_mlir.trace_variant(mask_mod=lambda b, h, qi, ki: ki <= qi)
    q = torch.empty((2, 64, 8, 32), device="meta")
    k = torch.empty((2, 80, 4, 32), device="meta")
    out, lse = torch.ops.attn_mlir.flash_attention_mod_lse(
        q, k, k, traced.name, traced.captures, layout="bshd")
    assert out.shape == (2, 64, 8, 32) and lse.shape == (2, 8, 64)


def test_misuse():
    _, (tq, tk, tv) = inputs()
    traced = attn_mlir.trace_variant(softcap=5.0)
    with pytest.raises(TypeError, match="variant= .* replaces"):
        attn_mlir.flash_attention(tq, tk, tv, variant=traced, softcap=5.0)
    with pytest.raises(ValueError, match="unknown variant"):
        torch.ops.attn_mlir.flash_attention_mod(tq, tk, tv, "vnone", [])
    with pytest.raises(ValueError, match="no variant given"):
        attn_mlir.trace_variant()
    ids = torch.zeros(230, dtype=torch.int32)
    reads = attn_mlir.trace_variant(
        mask_mod=lambda b, h, qi, ki: ids[ki] == 0)
    with pytest.raises(ValueError, match="reads 1 captured tensors, got 0"):
        torch.ops.attn_mlir.flash_attention_mod(tq, tk, tv, reads.name, [])


def test_captures_that_require_grad_are_refused():
    _, (tq, tk, tv) = inputs()
    bias = torch.zeros(230, requires_grad=True)
    with pytest.raises(RuntimeError, match="captures requires grad"):
        attn_mlir.flash_attention(
            tq, tk, tv, score_mod=lambda s, b, h, qi, ki: s + bias[ki])
    with torch.no_grad():
        attn_mlir.flash_attention(
            tq, tk, tv, score_mod=lambda s, b, h, qi, ki: s + bias[ki])
