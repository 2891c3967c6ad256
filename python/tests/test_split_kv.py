"""Split-KV (flash-decoding) and packed GQA decode on numpy arrays (the CPU
target), against the float64 reference on fresh random inputs: forced
split counts (1, 2, 7, more than the key blocks), every mask, GQA, LSE,
rows with no visible key, and the GQA packing of short queries (one, or a
few when the heads' rows are contiguous runs and there is no mask)."""

import numpy as np
import pytest

import attn_mlir
import reference

RNG = np.random.default_rng()  # fresh inputs every run


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def lookups():
    """Kernels the library looked up so far (each get: a hit or a compile)."""
    s = attn_mlir.cache_stats()
    return s["memory_hits"] + s["disk_hits"] + s["compilations"]


def check(B, H, HKV, SQ, SKV, D, causal, splits, dtype=np.float32,
          layout="bhsd", DV=None):
    DV = DV or D
    q = randn(B, H, SQ, D, dtype=dtype)
    k = randn(B, HKV, SKV, D, dtype=dtype)
    v = randn(B, HKV, SKV, DV, dtype=dtype)
    if layout == "bshd":
        q, k, v = (np.ascontiguousarray(t.transpose(0, 2, 1, 3))
                   for t in (q, k, v))
    out, lse = attn_mlir.flash_attention(q, k, v, causal=causal, layout=layout,
                                         return_lse=True, num_splits=splits)
    if layout == "bshd":
        q, k, v, out = (t.transpose(0, 2, 1, 3) for t in (q, k, v, out))
    ref_out, ref_lse = reference.attention(q, k, v, causal)
    bound = reference.BOUND[np.dtype(dtype).name]
    err = reference.rel_l2(out, ref_out)
    lse_err = reference.rel_l2(lse, ref_lse)
    assert not np.isnan(out).any() and not np.isnan(lse).any()
    assert err <= bound, f"output rel_l2 {err:.3e} > {bound}"
    assert lse_err <= bound, f"lse rel_l2 {lse_err:.3e} > {bound}"
    return out, lse


# 300 keys: 5 blocks of 64, the last partial.
@pytest.mark.parametrize("splits", [1, 2, 7, 40])
@pytest.mark.parametrize("causal", [None, "top_left", "bottom_right"])
def test_forced_splits_f32(splits, causal):
    check(2, 4, 2, 70, 300, 64, causal, splits)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_splits_dtypes_layouts_dv(dtype, layout):
    check(1, 3, 3, 33, 257, 48, "bottom_right", 3, dtype=dtype,
          layout=layout, DV=80)


def test_more_splits_than_key_blocks_merge_empty_ranges():
    # 100 keys are 2 blocks: 15 of the 17 ranges are empty (LSE -inf).
    check(1, 2, 2, 3, 100, 32, None, 17)


def test_a_huge_forced_split_count_is_bounded():
    # (It used to ask for a workspace of 10^9 ranges and abort the process.)
    check(1, 2, 1, 3, 100, 32, None, 10**9)


def test_rows_without_keys_stay_zero_with_lse_minus_inf():
    # bottom_right with more queries than keys: the first 40 rows see no key.
    out, lse = check(1, 2, 1, 90, 50, 32, "bottom_right", 3)
    assert np.all(out[:, :, :40] == 0)
    assert np.all(lse[:, :, :40] == -np.inf)


@pytest.mark.parametrize("causal", [None, "bottom_right", "top_left"])
@pytest.mark.parametrize("splits", [0, 1, 3])
def test_single_query_gqa_decode(causal, splits):
    check(2, 8, 2, 1, 1000, 64, causal, splits)


def test_split_launch_runs_the_partials_and_the_combine():
    q, k, v = randn(1, 2, 5, 32), randn(1, 2, 200, 32), randn(1, 2, 200, 32)
    attn_mlir.flash_attention(q, k, v, num_splits=1)
    before = lookups()
    attn_mlir.flash_attention(q, k, v, num_splits=1)
    unsplit = lookups() - before
    before = lookups()
    attn_mlir.flash_attention(q, k, v, num_splits=3)
    split = lookups() - before
    # (The package keeps the whole kernel's handle: no lookup.) The split
    # launch gets the partials' kernel and the combine's.
    assert (unsplit, split) == (0, 2)


def test_single_query_gqa_packs_heads_into_one_kernel_of_ratio_1():
    q, k, v = randn(1, 8, 1, 32), randn(1, 2, 64, 32), randn(1, 2, 64, 32)
    attn_mlir.flash_attention(q, k, v, num_splits=1)
    before = lookups()
    attn_mlir.flash_attention(q, k, v, num_splits=1)
    # (The package keeps the GQA kernel's handle.) The launch gets the
    # packed kernel: ratio 1, no mask.
    assert lookups() - before == 1


@pytest.mark.parametrize("splits", [0, 1, 3])
@pytest.mark.parametrize("sq", [2, 16, 32])
def test_short_query_gqa_packed(sq, splits):
    # 8 heads of 16 queries per K/V head: 128 packed rows, two query
    # blocks; 32 queries x 4 heads: 128 rows of ratio 4.
    check(2, 8, 2, sq, 500, 64, None, splits)
    check(1, 8, 1, sq, 300, 32, None, splits, dtype=np.float16)


def test_short_query_gqa_packs_only_contiguous_unmasked_heads():
    q, k, v = randn(1, 8, 16, 32), randn(1, 2, 64, 32), randn(1, 2, 64, 32)

    def kernels(layout="bhsd", **kw):
        t = [x if layout == "bhsd" else
             np.ascontiguousarray(x.transpose(0, 2, 1, 3)) for x in (q, k, v)]
        attn_mlir.flash_attention(*t, num_splits=1, layout=layout, **kw)
        before = lookups()
        attn_mlir.flash_attention(*t, num_splits=1, layout=layout, **kw)
        return lookups() - before
    # BHSD heads are runs of 16 rows: the packed kernel (one lookup).
    assert kernels() == 1
    # BSHD: a head's rows are not one run; a mask needs each row's query
    # position: the GQA kernel itself (kept by the package: no lookup).
    assert kernels(layout="bshd") == 0
    assert kernels(causal="bottom_right") == 0


@pytest.mark.parametrize("bad", [-1, True, 1.5, "2"])
def test_bad_num_splits(bad):
    q = randn(1, 1, 4, 16)
    with pytest.raises(ValueError, match="num_splits must be an int >= 0"):
        attn_mlir.flash_attention(q, q, q, num_splits=bad)


def _c_tensor(a):
    item = a.itemsize
    return attn_mlir._capi.Tensor(
        a.ctypes.data, a.ndim, tuple(a.shape) + (0,) * (4 - a.ndim),
        tuple(s // item for s in a.strides) + (0,) * (4 - a.ndim))


def test_c_api_split_plan_and_a_caller_workspace():
    import ctypes
    capi = attn_mlir._capi
    q, k, v = randn(1, 2, 5, 32), randn(1, 2, 200, 32), randn(1, 2, 200, 32)
    o = np.full((1, 2, 5, 32), np.nan, dtype=np.float32)
    handle = attn_mlir._kernel(capi.F32, 32, 32, capi.CAUSAL_NONE, 1, False,
                               "cpu")
    tensors = [_c_tensor(t) for t in (q, k, v, o)]
    splits, nbytes = ctypes.c_int64(), ctypes.c_size_t()

    def plan(requested):
        options = capi.LaunchOptions(kv_splits=requested)
        assert capi.lib.attn_kernel_split_plan(
            handle.value, *[ctypes.byref(t) for t in tensors[:3]],
            ctypes.byref(options), ctypes.byref(splits),
            ctypes.byref(nbytes)) == 0
        return splits.value, nbytes.value

    assert plan(0) == (1, 0)  # the CPU does not split by itself
    assert plan(1) == (1, 0)
    # 3 ranges x 2 heads x 5 rows, each 32 output floats and an LSE.
    assert plan(3) == (3, 3 * 2 * 5 * 33 * 4)

    def launch(workspace):
        options = capi.LaunchOptions(kv_splits=3,
                                     workspace=workspace.ctypes.data,
                                     workspace_bytes=workspace.nbytes)
        return capi.lib.attn_kernel_launch_ex(
            handle.value, *[ctypes.byref(t) for t in tensors], None, None,
            None, ctypes.byref(options))

    workspace = np.full(3 * 2 * 5 * 33, np.nan, dtype=np.float32)
    assert launch(workspace) == 0
    ref, _ = reference.attention(q, k, v)
    assert reference.rel_l2(o, ref) <= reference.BOUND["float32"]
    assert not np.isnan(workspace).any()  # the partials went there
    assert launch(workspace[:-1]) != 0
    assert "the split-KV workspace has 3956 bytes, the launch needs 3960" \
        in capi.last_error()
