"""Block masks (attn_mlir.create_block_mask): key ranges per block of
query rows built once from a mask_mod and reused, so masks on captured
data (document ids) skip the key blocks no query of a tile sees. On the
CPU target against the float64 reference evaluating the same functions:
document masks from sorted random ids through flash_attention (both
layouts, GQA, f32 and f16, causal, LSE) and flash_attention_varlen
(ragged sequences, ids per sequence); reuse without recompiling; skipped
blocks really skipped (values there NaN, which any visit would spread:
without the block mask the same call shows it); build errors."""

import numpy as np
import pytest

import attn_mlir
import reference

RNG = np.random.default_rng()  # fresh inputs every run
BOUND = {np.float32: 1e-5, np.float16: 2e-3}


def documents(n, count):
    return np.sort(RNG.integers(0, count, n)).astype(np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
@pytest.mark.parametrize("causal", [None, "top_left"])
def test_document_mask(dtype, layout, causal):
    S = 333
    docs = documents(S, 7)

    def mask(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]

    bm = attn_mlir.create_block_mask(mask, None, None, S, S, BLOCK_SIZE=64)
    assert bm.build_ms > 0 and bm.visited_fraction() < 1
    q = RNG.standard_normal((2, 4, S, 64)).astype(dtype)
    k = RNG.standard_normal((2, 2, S, 64)).astype(dtype)
    v = RNG.standard_normal((2, 2, S, 64)).astype(dtype)
    args = (q, k, v) if layout == "bhsd" else \
        tuple(t.transpose(0, 2, 1, 3).copy() for t in (q, k, v))
    out, lse = attn_mlir.flash_attention(*args, causal=causal, layout=layout,
                                         mask_mod=mask, block_mask=bm,
                                         return_lse=True)
    if layout == "bshd":
        out = out.transpose(0, 2, 1, 3)
    ref_out, ref_lse = reference.attention(q, k, v, causal, mask_mod=mask)
    assert reference.rel_l2(out, ref_out) <= BOUND[dtype]
    assert reference.rel_l2(lse, ref_lse) <= BOUND[dtype]


def test_varlen_documents_per_sequence():
    lens = [150, 1, 290, 77]
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    S = max(lens)
    docs = np.stack([documents(S, 4) for _ in lens])  # [sequences, S]

    def mask(b, h, q_idx, kv_idx):
        return docs[b, q_idx] == docs[b, kv_idx]

    bm = attn_mlir.create_block_mask(mask, len(lens), None, S, S)
    total = int(cu[-1])
    q = RNG.standard_normal((total, 4, 32)).astype(np.float32)
    k = RNG.standard_normal((total, 2, 32)).astype(np.float32)
    v = RNG.standard_normal((total, 2, 32)).astype(np.float32)
    out, lse = attn_mlir.flash_attention_varlen(
        q, k, v, cu, cu, max_seqlen_q=S, max_seqlen_k=S, mask_mod=mask,
        block_mask=bm, return_lse=True)
    for b, (lo, hi) in enumerate(zip(cu[:-1], cu[1:])):
        def one(bb, h, q_idx, kv_idx, b=b):
            return docs[b, q_idx] == docs[b, kv_idx]
        ref_out, ref_lse = reference.attention(
            q[None, lo:hi].transpose(0, 2, 1, 3),
            k[None, lo:hi].transpose(0, 2, 1, 3),
            v[None, lo:hi].transpose(0, 2, 1, 3), None, mask_mod=one)
        assert reference.rel_l2(out[lo:hi].transpose(1, 0, 2)[None],
                                ref_out) <= 1e-5, f"sequence {b}"
        assert reference.rel_l2(lse[:, lo:hi][None], ref_lse) <= 1e-5


def brute_force_ranges(mask, B, H, SQ, SK, BS):
    """kv and full ranges per (b, h, query block) by loops: the first and
    past-the-last key any row sees, and the longest run (the first of
    equals) of keys every row sees; (0, 0) where none."""
    blocks = -(-SQ // BS)
    out = np.zeros((4, B, H, blocks), dtype=np.int64)
    for b in range(B):
        for h in range(H):
            for qb in range(blocks):
                rows = range(qb * BS, min((qb + 1) * BS, SQ))
                # (numpy scalars and keys: ~ on a Python bool is -2 or -1.)
                keys = np.arange(SK)
                seen = np.array([np.broadcast_to(
                    mask(np.int64(b), np.int64(h), np.int64(q), keys), (SK,))
                    for q in rows], dtype=bool)
                any_, all_ = seen.any(0), seen.all(0)
                if any_.any():
                    seen_keys = np.flatnonzero(any_)
                    out[0:2, b, h, qb] = seen_keys[0], seen_keys[-1] + 1
                best, run = (0, 0), 0
                for kv in range(SK):
                    run = run + 1 if all_[kv] else 0
                    if run > best[1] - best[0]:
                        best = (kv + 1 - run, kv + 1)
                out[2:4, b, h, qb] = best
    return out


@pytest.mark.parametrize("budget", ["default", "two blocks", "one row"])
@pytest.mark.parametrize("maker", ["numpy", "torch"])
def test_ranges_match_brute_force(maker, budget, monkeypatch):
    # Random masks from the fuzz's grammar over ragged sizes (a partial
    # last query block), against loops; torch's build (cummax, argmax on
    # ints) must give numpy's. The budget of elements per evaluation sets
    # how many blocks one mask_mod call covers: all, two (several calls,
    # the last one partial), one. B and H None: one range for all.
    from mask_fuzz import random_mask_source, mask_from
    from attn_mlir import _block_mask
    if maker == "torch":
        pytest.importorskip("torch")
    for trial in range(6):
        seed = int(RNG.integers(2**31))
        rng = np.random.default_rng(seed)
        B, H, SQ, SK = 2, 2, int(rng.integers(20, 90)), \
            int(rng.integers(20, 90))
        BS = int(rng.choice([8, 16, 32]))
        mask = mask_from(random_mask_source(rng))
        if trial % 3 == 2:  # built for any b and h
            B = H = None
            mask = (lambda m: lambda b, h, q, kv: m(0, 0, q, kv))(mask)
        nb, nh = B or 1, H or 1
        monkeypatch.setattr(_block_mask, "EVALUATION_ELEMENTS", {
            "default": _block_mask.EVALUATION_ELEMENTS,
            "two blocks": 2 * nb * nh * BS * SK, "one row": 1}[budget])
        bm = attn_mlir.create_block_mask(
            mask, B, H, SQ, SK, BLOCK_SIZE=BS,
            device="cpu" if maker == "torch" else None)
        got = np.stack([np.asarray(a) for a in (
            bm.kv_start, bm.kv_end, bm.full_start, bm.full_end)])
        want = brute_force_ranges(mask, nb, nh, SQ, SK, BS)
        assert (got == want).all(), f"seed {seed}: {got} vs {want}"


def test_full_ranges_skip_the_mask():
    # Flex's full blocks: keys inside full_start..full_end are seen
    # without running mask_mod. A block mask claiming every key full for
    # a mask that hides every key gives plain attention: proof the full
    # ranges are what decides there (a call without it: all hidden).
    S = 96

    def hide_all(b, h, q_idx, kv_idx):
        return q_idx < -1

    def see_all(b, h, q_idx, kv_idx):
        return q_idx >= 0

    bm = attn_mlir.create_block_mask(see_all, None, None, S, S,
                                     BLOCK_SIZE=32)
    assert bm.full_fraction() == 1.0
    q, k, v = (RNG.standard_normal((1, 2, S, 32)).astype(np.float32)
               for _ in range(3))
    out, lse = attn_mlir.flash_attention(q, k, v, mask_mod=hide_all,
                                         block_mask=bm, return_lse=True)
    ref_out, ref_lse = reference.attention(q, k, v, None)
    assert reference.rel_l2(out, ref_out) <= 1e-5
    assert reference.rel_l2(lse, ref_lse) <= 1e-5
    _, lse = attn_mlir.flash_attention(q, k, v, mask_mod=hide_all,
                                       return_lse=True)
    assert np.isneginf(lse).all()


def test_reused_without_recompiling():
    S = 300
    docs = documents(S, 5)

    def mask(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]

    bm = attn_mlir.create_block_mask(mask, None, None, S, S)
    compiled = []
    for _ in range(3):
        q, k, v = (RNG.standard_normal((1, 2, S, 32)).astype(np.float32)
                   for _ in range(3))
        before = attn_mlir.cache_stats()["compilations"]
        out = attn_mlir.flash_attention(q, k, v, mask_mod=mask, block_mask=bm)
        compiled.append(attn_mlir.cache_stats()["compilations"] - before)
        ref_out, _ = reference.attention(q, k, v, None, mask_mod=mask)
        assert reference.rel_l2(out, ref_out) <= 1e-5
    assert compiled[1:] == [0, 0], compiled


def test_hidden_blocks_are_not_read():
    SQ, SK = 200, 900
    docs = documents(SK, 6)

    def mask(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]

    bm = attn_mlir.create_block_mask(mask, None, None, SQ, SK)
    q = RNG.standard_normal((1, 2, SQ, 32)).astype(np.float32)
    k = RNG.standard_normal((1, 2, SK, 32)).astype(np.float32)
    v = RNG.standard_normal((1, 2, SK, 32)).astype(np.float32)
    ref_out, _ = reference.attention(q, k, v, None, mask_mod=mask)
    # Keys from the first 256-aligned block past every query's documents.
    first_hidden = -(-int(bm.kv_end.max()) // 256) * 256
    if first_hidden >= SK:
        pytest.skip("the random documents left no hidden key block")
    poisoned = v.copy()
    poisoned[:, :, first_hidden:] = np.nan
    out = attn_mlir.flash_attention(q, k, poisoned, mask_mod=mask,
                                    block_mask=bm)
    assert np.isfinite(out).all(), "a key block outside the ranges was read"
    assert reference.rel_l2(out, ref_out) <= 1e-5
    # The control: without the block mask those blocks are visited.
    out = attn_mlir.flash_attention(q, k, poisoned, mask_mod=mask)
    assert not np.isfinite(out).all()


def test_errors():
    docs = documents(100, 3)

    def mask(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]

    def per_head(b, h, q_idx, kv_idx):
        return kv_idx <= q_idx + h

    with pytest.raises(ValueError, match="reads h, so H must be given"):
        attn_mlir.create_block_mask(per_head, None, None, 100, 100)
    with pytest.raises(ValueError, match="Q_LEN must be a positive int"):
        attn_mlir.create_block_mask(mask, None, None, 0, 100)
    bm = attn_mlir.create_block_mask(mask, None, None, 100, 100)
    q = RNG.standard_normal((1, 2, 100, 32)).astype(np.float32)
    with pytest.raises(TypeError, match="block_mask needs the mask_mod"):
        attn_mlir.flash_attention(q, q, q, block_mask=bm)
    with pytest.raises(TypeError, match="block_mask must be a BlockMask"):
        attn_mlir.flash_attention(q, q, q, mask_mod=mask, block_mask=3)
    big = RNG.standard_normal((1, 2, 150, 32)).astype(np.float32)
    with pytest.raises(ValueError, match="built for Q_LEN=100, KV_LEN=100"):
        attn_mlir.flash_attention(big, big, big, mask_mod=mask,
                                  block_mask=bm)
    bh = attn_mlir.create_block_mask(per_head, 1, 3, 100, 100)
    with pytest.raises(ValueError, match="built for B=1, H=3"):
        attn_mlir.flash_attention(q, q, q, mask_mod=per_head, block_mask=bh)
    # B=1 given is one sequence's ranges, not a broadcast (None is).
    two = RNG.standard_normal((2, 3, 100, 32)).astype(np.float32)
    with pytest.raises(ValueError, match="built for B=1, H=3; the call has "
                                         "B=2"):
        attn_mlir.flash_attention(two, two, two, mask_mod=per_head,
                                  block_mask=bh)
    # varlen: keys past max_seqlen_k would pass the block mask's check.
    cu = np.array([0, 100], dtype=np.int32)
    packed = q[0].transpose(1, 0, 2).copy()
    with pytest.raises(ValueError, match="100 keys, more than max_seqlen_k"):
        attn_mlir.flash_attention_varlen(
            packed, packed, packed, cu, cu, max_seqlen_q=100,
            max_seqlen_k=50, mask_mod=mask, block_mask=bm)


def test_torch_cpu_tensors():
    # A block mask built with torch (device="cpu") for torch inputs, the
    # captured ids a torch tensor too (through the operator
    # attn_mlir::flash_attention_mod; test_torch_variants.py compiles it).
    torch = pytest.importorskip("torch")
    S = 260
    docs = torch.from_numpy(documents(S, 5))

    def mask(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]

    bm = attn_mlir.create_block_mask(mask, None, None, S, S, device="cpu")
    assert isinstance(bm.kv_start, torch.Tensor)
    q, k, v = (RNG.standard_normal((1, 2, S, 32)).astype(np.float32)
               for _ in range(3))
    out = attn_mlir.flash_attention(*(torch.from_numpy(t) for t in (q, k, v)),
                                    mask_mod=mask, block_mask=bm)
    assert isinstance(out, torch.Tensor)
    np_docs = docs.numpy()
    ref_out, _ = reference.attention(
        q, k, v, None,
        mask_mod=lambda b, h, qi, ki: np_docs[qi] == np_docs[ki])
    assert reference.rel_l2(out.numpy(), ref_out) <= 1e-5


@pytest.mark.parametrize("page_size", [0, 16])
@pytest.mark.parametrize("causal", [None, True])
def test_kvcache_documents(page_size, causal):
    # q_idx counts from the start of the cache, so the block mask covers
    # the capacity; a sequence shorter than the queries puts some of them
    # before the cache (q_idx < 0): those rows are not restricted.
    B, SQ, H, HKV, S, D = 3, 40, 4, 2, 320, 32
    lens = np.array([320, 7, 150], dtype=np.int32)
    docs = np.stack([documents(S, 5) for _ in range(B)])

    def mask(b, h, q_idx, kv_idx):
        return docs[b, q_idx] == docs[b, kv_idx]

    bm = attn_mlir.create_block_mask(mask, B, None, S, S, BLOCK_SIZE=32)
    q = RNG.standard_normal((B, SQ, H, D)).astype(np.float32)
    k = RNG.standard_normal((B, S, HKV, D)).astype(np.float32)
    v = RNG.standard_normal((B, S, HKV, D)).astype(np.float32)
    kw = dict(cache_seqlens=lens, causal=causal, return_lse=True,
              mask_mod=mask, block_mask=bm)
    if page_size:
        per = S // page_size
        table = np.arange(B * per, dtype=np.int32).reshape(B, per)
        out, lse = attn_mlir.flash_attention_with_kvcache(
            q, k.reshape(B * per, page_size, HKV, D),
            v.reshape(B * per, page_size, HKV, D), block_table=table, **kw)
    else:
        out, lse = attn_mlir.flash_attention_with_kvcache(q, k, v, **kw)
    for b, n in enumerate(lens):
        t = lambda x: x[b:b + 1].transpose(0, 2, 1, 3)  # noqa: E731
        ref_out, ref_lse = reference.attention(
            t(q), t(k[:, :n]), t(v[:, :n]),
            "bottom_right" if causal else None, mask_mod=mask, b_offset=b,
            q_offset=int(n) - SQ)
        assert reference.rel_l2(t(out), ref_out) <= 1e-5, f"sequence {b}"
        finite = np.isfinite(ref_lse)
        assert np.array_equal(np.isfinite(lse[b:b + 1]), finite)
        assert reference.rel_l2(lse[b:b + 1][finite], ref_lse[finite]) \
            <= 1e-5, f"sequence {b} lse"


def test_torch_kinds_and_trace_variant():
    torch = pytest.importorskip("torch")
    S = 200
    docs = torch.from_numpy(documents(S, 4))

    def mask(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]

    q = torch.from_numpy(RNG.standard_normal((1, 2, S, 32)).astype(
        np.float32))
    nd = docs.numpy()
    numpy_mask = attn_mlir.create_block_mask(
        lambda b, h, qi, ki: nd[qi] == nd[ki], None, None, S, S)
    with pytest.raises(TypeError, match="built with numpy"):
        attn_mlir.flash_attention(q, q, q, mask_mod=mask,
                                  block_mask=numpy_mask)
    bm = attn_mlir.create_block_mask(mask, None, None, S, S, device="cpu")
    traced = attn_mlir.trace_variant(mask_mod=mask, block_mask=bm)
    out = attn_mlir.flash_attention(q, q, q, variant=traced)
    ref_out, _ = reference.attention(
        q.numpy(), q.numpy(), q.numpy(), None,
        mask_mod=lambda b, h, qi, ki: nd[qi] == nd[ki])
    assert reference.rel_l2(out.numpy(), ref_out) <= 1e-5
    longer = torch.cat([q, q], dim=2)
    with pytest.raises(ValueError, match="built for Q_LEN=200"):
        attn_mlir.flash_attention(longer, longer, longer, variant=traced)
