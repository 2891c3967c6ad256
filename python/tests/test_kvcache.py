"""flash_attention_with_kvcache on numpy arrays (the CPU target), against
the float64 reference on fresh random inputs: per-sequence lengths from 0
to the capacity, cache slots past each length poisoned with NaN, GQA, every
mask (True = bottom_right, flash_attn's), split-KV, LSE; paged caches of
every page size with pages in random order (unused pages, slots past each
length and the block table's unused entries poisoned); and the errors bad
input must raise."""

import numpy as np
import pytest

import attn_mlir
import reference

RNG = np.random.default_rng()  # fresh inputs every run
MODES = reference.FLASH_ATTN_MODES


def make(B, SQ, H, HKV, S, D, lens, dtype=np.float32):
    q = RNG.standard_normal((B, SQ, H, D)).astype(dtype)
    k = RNG.standard_normal((B, S, HKV, D)).astype(dtype)
    v = RNG.standard_normal((B, S, HKV, D)).astype(dtype)
    for b, length in enumerate(lens):  # slots past a length: never read
        k[b, length:] = np.nan
        v[b, length:] = np.nan
    return q, k, v


def check(B, SQ, H, HKV, S, D, lens, causal, splits, dtype=np.float32):
    q, k, v = make(B, SQ, H, HKV, S, D, lens, dtype)
    lens = np.asarray(lens, dtype=np.int32)
    out, lse = attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=lens, causal=causal, return_lse=True,
        num_splits=splits)
    assert out.shape == (B, SQ, H, D) and lse.shape == (B, H, SQ)
    bound = reference.BOUND[np.dtype(dtype).name]
    for b, length in enumerate(lens):
        t = lambda x: x[b:b + 1].transpose(0, 2, 1, 3)  # noqa: E731
        if length == 0:  # no key at all (the reference needs one)
            assert np.all(out[b] == 0) and np.all(lse[b] == -np.inf)
            continue
        reference.check_against_reference(
            t(q), t(k[:, :length]), t(v[:, :length]), MODES[causal], t(out),
            lse[b:b + 1], bound, f"sequence {b} (length {length})")
    return out, lse


@pytest.mark.parametrize("splits", [1, 3, 0])
@pytest.mark.parametrize("causal", [None, True, "top_left"])
def test_lengths_masks_and_splits(causal, splits):
    # Lengths 1, a partial block, a whole number of blocks, the capacity.
    check(4, 3, 8, 2, 300, 64, [1, 137, 256, 300], causal, splits)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_decode_one_query_gqa(dtype):
    check(3, 1, 8, 2, 1000, 128, [999, 5, 640], True, 0, dtype=dtype)


def test_empty_sequence_and_rows_without_keys():
    # Length 0: no key at all (output 0, LSE -inf); bottom_right with more
    # queries than keys: the first rows see none.
    out, lse = check(2, 6, 2, 2, 64, 32, [0, 4], True, 2)
    assert np.all(out[0] == 0) and np.all(lse[0] == -np.inf)
    assert np.all(out[1, :2] == 0) and np.all(lse[1, :, :2] == -np.inf)


def test_causal_true_is_bottom_right_as_numpy_true():
    q, k, v = make(1, 4, 2, 2, 40, 32, [30])
    lens = np.array([30], np.int32)
    outs = [attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=lens, causal=c)
        for c in (True, np.True_, "bottom_right")]
    assert np.array_equal(outs[0], outs[1])
    assert np.array_equal(outs[0], outs[2])


def test_int64_lengths_and_softmax_scale():
    q, k, v = make(2, 2, 4, 4, 80, 32, [80, 33])
    a = attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=np.array([80, 33], np.int64),
        softmax_scale=0.3)
    b = attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=np.array([80, 33], np.int32), scale=0.3)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("lens,error,match", [
    ([5, 81], ValueError, r"cache_seqlens must be in \[0, 80\]"),
    ([-1, 3], ValueError, r"cache_seqlens must be in \[0, 80\]"),
    ([5], ValueError, "one length per sequence"),
    ([5.0, 3.0], TypeError, "cache_seqlens must be int32 or int64"),
])
def test_bad_lengths(lens, error, match):
    q, k, v = make(2, 1, 2, 2, 80, 32, [80, 80])
    with pytest.raises(error, match=match):
        attn_mlir.flash_attention_with_kvcache(
            q, k, v, cache_seqlens=np.array(lens))


def paged(k, v, lens, page_size, spare_pages=3):
    """k, v [B, S, HKV, D] as a paged cache: (k_pages, v_pages, table). Each
    sequence's pages in random order in a shared pool, unused pages and the
    slots past each length NaN, the table's entries past the used pages
    garbage (negative, past the pool): none of them may be read."""
    B, S, HKV, D = k.shape
    pages, table, placements = reference.page_layout(lens, S, page_size,
                                                     spare_pages, RNG)
    k_pages = np.full((pages, page_size, HKV, D), np.nan, k.dtype)
    v_pages = np.full_like(k_pages, np.nan)
    for page, b, lo, hi in placements:
        k_pages[page, :hi - lo] = k[b, lo:hi]
        v_pages[page, :hi - lo] = v[b, lo:hi]
    return k_pages, v_pages, table


def check_paged(B, SQ, H, HKV, S, D, lens, page_size, causal, splits,
                dtype=np.float32):
    q, k, v = make(B, SQ, H, HKV, S, D, lens, dtype)
    k_pages, v_pages, table = paged(k, v, lens, page_size)
    lens = np.asarray(lens, dtype=np.int32)
    out, lse = attn_mlir.flash_attention_with_kvcache(
        q, k_pages, v_pages, cache_seqlens=lens, block_table=table,
        causal=causal, return_lse=True, num_splits=splits)
    assert out.shape == (B, SQ, H, D) and lse.shape == (B, H, SQ)
    bound = reference.BOUND[np.dtype(dtype).name]
    for b, length in enumerate(lens):
        t = lambda x: x[b:b + 1].transpose(0, 2, 1, 3)  # noqa: E731
        if length == 0:
            assert np.all(out[b] == 0) and np.all(lse[b] == -np.inf)
            continue
        reference.check_against_reference(
            t(q), t(k[:, :length]), t(v[:, :length]), MODES[causal], t(out),
            lse[b:b + 1], bound, f"sequence {b} (length {length})")


@pytest.mark.parametrize("page_size", [16, 32, 64, 128, 256])
def test_paged_page_sizes(page_size):
    # Lengths: one key, inside the first page, a page boundary, a partial
    # last page, none.
    check_paged(5, 2, 4, 2, 600, 64,
                [1, page_size - 3, 2 * page_size, 517, 0], page_size, True, 0)


@pytest.mark.parametrize("splits", [1, 4, 0])
@pytest.mark.parametrize("causal", [None, True, "top_left"])
def test_paged_masks_and_splits(causal, splits):
    check_paged(3, 3, 8, 2, 300, 32, [300, 45, 129], 16, causal, splits)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_paged_decode_mqa(dtype):
    check_paged(2, 1, 8, 1, 900, 128, [900, 77], 64, True, 0, dtype=dtype)


def test_paged_equals_contiguous():
    # The same keys, paged or not: one kernel's blocks walk the pages.
    q, k, v = make(2, 4, 4, 2, 200, 64, [200, 70])
    lens = np.array([200, 70], np.int32)
    k_pages, v_pages, table = paged(k, v, lens, 32)
    a = attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=lens, causal=True, num_splits=1)
    b = attn_mlir.flash_attention_with_kvcache(
        q, k_pages, v_pages, cache_seqlens=lens, block_table=table,
        causal=True, num_splits=1)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_bad_paged_inputs():
    q, k, v = make(2, 1, 2, 2, 64, 32, [64, 64])
    lens = np.array([40, 64], np.int32)
    k_pages, v_pages, table = paged(k, v, lens, 32)

    def call(**change):
        args = dict(k=k_pages, v=v_pages, table=table, lens=lens)
        args.update(change)
        return attn_mlir.flash_attention_with_kvcache(
            q, args["k"], args["v"], cache_seqlens=args["lens"],
            block_table=args["table"])

    def entry(b, p, value):
        t = table.copy()
        t[b, p] = value
        return t

    with pytest.raises(ValueError, match=r"block_table\[1, 1\] = -1 is not "
                                         r"a page of the cache"):
        call(table=entry(1, 1, -1))
    with pytest.raises(ValueError, match=r"block_table\[0, 0\] = 99 is not"):
        call(table=entry(0, 0, 99))
    # Entries past a sequence's pages are never read: garbage is fine.
    expected = call()
    np.testing.assert_array_equal(call(table=entry(0, 2, -7)), expected)
    with pytest.raises(ValueError, match=r"cache_seqlens must be in \[0, 96\]"):
        call(lens=np.array([97, 1], np.int32))
    with pytest.raises(ValueError, match="page size 24"):
        call(k=k_pages[:, :24], v=v_pages[:, :24])
    with pytest.raises(ValueError, match=r"block_table must be \[batch = 2"):
        call(table=table[:1])
    with pytest.raises(TypeError, match="block_table must be int32 or int64"):
        call(table=table.astype(np.float32))
    with pytest.raises(ValueError, match="one number of pages"):
        call(v=v_pages[:-1])
    # int64 tables are accepted.
    np.testing.assert_array_equal(call(table=table.astype(np.int64)),
                                  expected)


@pytest.mark.parametrize("page_size", [0, 16, 64])
def test_new_keys_are_appended_then_attended(page_size):
    # flash_attn's k=/v=: 3 new keys per sequence written at each length
    # (into the cache, in place; through the pages when paged), then
    # lengths + 3 keys attended, bottom-right causal.
    B, SQ, H, HKV, S, D, lens = 3, 3, 4, 2, 200, 32, [0, 50, 197]
    q, k, v = make(B, SQ, H, HKV, S, D, lens)
    k_new = RNG.standard_normal((B, SQ, HKV, D)).astype(np.float32)
    v_new = RNG.standard_normal((B, SQ, HKV, D)).astype(np.float32)
    full_k, full_v = k.copy(), v.copy()
    for b, n in enumerate(lens):
        full_k[b, n:n + SQ], full_v[b, n:n + SQ] = k_new[b], v_new[b]
    cache_seqlens = np.array(lens, np.int32)
    if page_size:
        k_cache, v_cache, table = paged(k, v, [n + SQ for n in lens],
                                        page_size)
    else:
        k_cache, v_cache, table = k, v, None
    out, lse = attn_mlir.flash_attention_with_kvcache(
        q, k_cache, v_cache, k_new, v_new, cache_seqlens=cache_seqlens,
        block_table=table, causal=True, return_lse=True)
    assert cache_seqlens.tolist() == lens  # the caller advances them
    bound = reference.BOUND["float32"]
    for b, n in enumerate(lens):
        t = lambda x: x[b:b + 1].transpose(0, 2, 1, 3)  # noqa: E731
        reference.check_against_reference(
            t(q), t(full_k[:, :n + SQ]), t(full_v[:, :n + SQ]),
            "bottom_right", t(out), lse[b:b + 1], bound, f"sequence {b}")
    # The cache holds the new rows.
    for b, n in enumerate(lens):
        for i in range(SQ):
            j = n + i
            row = (k_cache[table[b, j // page_size], j % page_size]
                   if page_size else k_cache[b, j])
            np.testing.assert_array_equal(row, k_new[b, i])


def test_bad_new_keys():
    q, k, v = make(2, 2, 2, 2, 64, 32, [10, 62])
    lens = np.array([10, 62], np.int32)
    new = RNG.standard_normal((2, 2, 2, 32)).astype(np.float32)
    call = attn_mlir.flash_attention_with_kvcache
    with pytest.raises(TypeError, match="together"):
        call(q, k, v, new, cache_seqlens=lens)
    with pytest.raises(ValueError, match=r"cache_seqlens must be in \[0, 64\]"):
        call(q, k, v, np.concatenate([new, new], 1),
             np.concatenate([new, new], 1), cache_seqlens=lens)
    with pytest.raises(ValueError, match="must be \\[batch = 2, new keys"):
        call(q, k, v, new[:, :, :1], new, cache_seqlens=lens)
    with pytest.raises(TypeError, match="has dtype float16"):
        call(q, k, v, new.astype(np.float16), new, cache_seqlens=lens)
    with pytest.raises(ValueError, match="cache_seqlens must be >= 0"):
        call(q, k, v, new, new, cache_seqlens=np.array([-1, 3], np.int32))
    # Refused by the attention's own checks (q's dtype, its heads), after
    # the new keys' checks passed: nothing written either.
    with pytest.raises(TypeError, match="one dtype"):
        call(q.astype(np.float16), k, v, new, new,
             cache_seqlens=np.array([10, 20], np.int32))
    with pytest.raises(ValueError, match="not a multiple"):
        call(q[:, :, :1], k, v, new, new,
             cache_seqlens=np.array([10, 20], np.int32))
    # Nothing was written by the refused calls.
    assert np.isnan(k[0, 10:]).all() and np.isnan(k[1, 62:]).all()


def test_scale_alias_conflict():
    q, k, v = make(1, 1, 2, 2, 16, 32, [16])
    lens = np.array([16], np.int32)
    with pytest.raises(TypeError, match="not both"):
        attn_mlir.flash_attention_with_kvcache(
            q, k, v, cache_seqlens=lens, scale=0.1, softmax_scale=0.1)
