"""An independent float64 attention in numpy (shares nothing with the
compiler) and the comparison the tests use."""

import numpy as np


def attention(q, k, v, causal=None, scale=None, window=(-1, -1),
              softcap=0.0, score_mod=None, mask_mod=None, b_offset=0,
              q_offset=0, alibi_slopes=None):
    """q [B,H,SQ,D], k [B,HKV,SKV,D], v [B,HKV,SKV,DV] (logical layout, any
    dtype) -> (out [B,H,SQ,DV], lse [B,H,SQ]) in float64. causal: None,
    "top_left" or "bottom_right". window (left, right): flash_attn's
    window_size (query i sees key j when i + SKV - SQ - left <= j <=
    i + SKV - SQ + right; -1 unbounded); softcap > 0: scores become
    softcap * tanh(score / softcap); alibi_slopes [H] or [B, H]: then
    score - slope[h] * |q_idx + SKV - SQ - kv_idx|. score_mod / mask_mod:
    the user's
    FlexAttention-style functions, called once on float64 scores and int64
    index arrays broadcast to [B, H, SQ, SKV] (b = b_offset + batch,
    q_idx = q_offset + row: a sequence's index and a KV cache's first query
    position). Fully masked rows: out 0, lse -inf."""
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    B, H, SQ, D = q.shape
    SKV = k.shape[2]
    g = H // k.shape[1]
    k = np.repeat(k, g, axis=1)
    v = np.repeat(v, g, axis=1)
    if scale is None:
        scale = 1.0 / np.sqrt(D)
    s = scale * np.einsum("bhqd,bhkd->bhqk", q, k)
    if softcap:
        s = softcap * np.tanh(s / softcap)
    bi = b_offset + np.arange(B).reshape(B, 1, 1, 1)
    hi = np.arange(H).reshape(1, H, 1, 1)
    qi = q_offset + np.arange(SQ).reshape(1, 1, SQ, 1)
    ki = np.arange(SKV).reshape(1, 1, 1, SKV)
    if alibi_slopes is not None:  # [H] or [B, H]: -slope * |i + d - j|
        slopes = np.asarray(alibi_slopes, dtype=np.float64)
        slopes = slopes.reshape((1 if slopes.ndim == 1 else B, H, 1, 1))
        row = np.arange(SQ).reshape(1, 1, SQ, 1)  # (not q_offset's)
        s = s - slopes * np.abs(row + SKV - SQ - ki)
    if score_mod is not None:
        s = np.broadcast_to(np.asarray(score_mod(s, bi, hi, qi, ki),
                                       dtype=np.float64), s.shape)
    if mask_mod is not None:
        seen = np.broadcast_to(mask_mod(bi, hi, qi, ki), s.shape)
        s = np.where(seen, s, -np.inf)
    i = np.arange(SQ)[:, None]
    j = np.arange(SKV)[None, :]
    left, right = window
    if left >= 0:
        s = np.where(j >= i + SKV - SQ - left, s, -np.inf)
    if right >= 0:
        s = np.where(j <= i + SKV - SQ + right, s, -np.inf)
    if causal == "top_left":
        s = np.where(j <= i, s, -np.inf)
    elif causal == "bottom_right":
        s = np.where(j <= i + SKV - SQ, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    # A row that sees no key (max -inf) gives 0 and -inf; NaN and +inf
    # propagate as the plain math does (NaN - NaN, inf - inf are NaN).
    live = m != -np.inf
    with np.errstate(invalid="ignore"):
        p = np.where(live, np.exp(s - np.where(live, m, 0.0)), 0.0)
    l = p.sum(axis=-1, keepdims=True)
    out = np.einsum("bhqk,bhkd->bhqd", p, v) / np.where(live, l, 1.0)
    with np.errstate(divide="ignore"):
        lse = np.where(live, m + np.log(np.where(live, l, 1.0)), -np.inf)
    return out, lse[..., 0]


def rel_l2(out, ref):
    """||out - ref|| / ||ref||, with equal infinities counting as equal and
    anything else non-finite as an infinite error."""
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    same = (out == ref)
    if not np.all(np.isfinite(out) | same):
        return np.inf
    with np.errstate(invalid="ignore"):
        diff = np.where(same, 0.0, out - ref)
    norm = np.linalg.norm(np.where(np.isfinite(ref), ref, 0.0))
    return np.linalg.norm(diff) / (norm if norm > 0 else 1.0)


BOUND = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 1e-5}


def check_against_reference(q, k, v, causal, out, lse, bound, what,
                            **variants):
    """Asserts that out and lse (logical [1, H, SQ, DV] and [1, H, SQ]) are
    within `bound` of the float64 attention of q, k, v (logical layout);
    `variants`: attention's window and softcap."""
    ref_out, ref_lse = attention(q, k, v, causal, **variants)
    err, lse_err = rel_l2(out, ref_out), rel_l2(lse, ref_lse)
    assert err <= bound, f"{what}: output rel_l2 {err:.3e} > {bound}"
    assert lse_err <= bound, f"{what}: lse rel_l2 {lse_err:.3e} > {bound}"


# The mask reference.attention applies for each `causal` of the
# flash_attn-style calls (flash_attention_with_kvcache, _varlen), where
# True means bottom_right.
FLASH_ATTN_MODES = {None: None, False: None, True: "bottom_right",
                    "bottom_right": "bottom_right", "top_left": "top_left"}


def page_layout(lens, capacity, page_size, spare, rng):
    """Where a paged KV cache puts sequences of `lens` keys (caches of
    `capacity` slots): each sequence's pages in random order in a pool of
    their count plus `spare`, the block table's entries past the used pages
    garbage (negative or past the pool: never to be read). Returns (pages,
    table int32 [batch, max_pages], [(page, b, lo, hi)]: key rows lo..hi-1
    of sequence b go to the first hi - lo rows of page); the copying is the
    caller's, in its array library."""
    used = [-(-int(n) // page_size) for n in lens]
    max_pages = -(-capacity // page_size) + 1
    pages = sum(used) + spare
    order = iter(rng.permutation(pages).tolist())
    table = rng.integers(-5, pages + 5, (len(lens), max_pages)).astype(np.int32)
    placements = []
    for b, n in enumerate(lens):
        for p in range(used[b]):
            page = next(order)
            table[b, p] = page
            placements.append((page, b, p * page_size,
                               min((p + 1) * page_size, int(n))))
    return pages, table, placements
