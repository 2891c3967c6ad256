"""Block masks: where a mask_mod can see keys, per block of query rows,
built once from the function and reused across calls (FlexAttention's
create_block_mask, in a simpler form).

A BlockMask holds, for each (batch, head, block of BLOCK_SIZE query rows),
two key ranges (int32 arrays [B', H', blocks], B' and H' 1 when
broadcast): kv_start / kv_end, from the first visible key to the end of
the last visible one, and full_start / full_end, a run of keys every row
of the block sees (empty where there is none). A call given one computes

    (mask_mod(b, h, q_idx, kv_idx) and kv_start[qb] <= kv_idx < kv_end[qb])
    or full_start[qb] <= kv_idx < full_end[qb]

(qb = q_idx // BLOCK_SIZE, with b and h; a KV-cache call's queries before
the cache's start, q_idx < 0, keep the mask alone): the mask itself
wherever the ranges came from it, and two bounds the compiler reads per
tile. Key
blocks outside [kv_start, kv_end) of a tile's rows are skipped
(attn-narrow-key-loops), and tiles inside [full_start, full_end) run
without the mask's per-element code (the tile guard proves them seen),
as Flex's full blocks. That is how masks that read captured data
(document ids) skip their empty tiles and most mask work: the function
itself is only known per element. Like Flex's, a block mask built from
another function gives that function's answer in its full ranges.
"""

import time

from . import _variants

# Mask elements create_block_mask evaluates at once (several query blocks
# per mask_mod call; its int64 temporaries are 8 bytes each).
EVALUATION_ELEMENTS = 1 << 24


class BlockMask:
    """Key ranges per block of query rows; see the module's docstring.
    `build_ms` is the time create_block_mask took (milliseconds)."""

    __slots__ = ("kv_start", "kv_end", "block_size", "q_len", "kv_len",
                 "build_ms", "batch", "heads", "full_start", "full_end")

    def __init__(self, kv_start, kv_end, block_size, q_len, kv_len,
                 build_ms, batch=None, heads=None, full_start=None,
                 full_end=None):
        self.kv_start, self.kv_end = kv_start, kv_end
        self.block_size, self.q_len, self.kv_len = block_size, q_len, kv_len
        self.build_ms = build_ms
        self.batch, self.heads = batch, heads  # None: built for any
        # None: no full runs (every visited tile runs the mask).
        self.full_start, self.full_end = full_start, full_end

    @property
    def shape(self):
        """(B', H', query blocks)."""
        return tuple(self.kv_start.shape)

    def _fraction(self, start, end):
        spans = end - start
        total = float(spans.sum()) if hasattr(spans, "sum") else float(spans)
        count = start.numel() if hasattr(start, "numel") else start.size
        return total / count / self.kv_len

    def visited_fraction(self):
        """The fraction of (query block, key) pairs inside the kv ranges:
        what the attention call still visits, roughly."""
        return self._fraction(self.kv_start, self.kv_end)

    def full_fraction(self):
        """The fraction of (query block, key) pairs inside the full ranges:
        visited without the mask's per-element code."""
        if self.full_start is None:
            return 0.0
        return self._fraction(self.full_start, self.full_end)

    def __repr__(self):
        return (f"BlockMask(shape={self.shape}, block_size={self.block_size}"
                f", q_len={self.q_len}, kv_len={self.kv_len}, "
                f"build_ms={self.build_ms:.2f})")

    def check_for(self, batch, heads, q_len, kv_len, what, like=None):
        """Raises unless the mask covers a call of `batch` sequences,
        `heads` query heads and these lengths, its arrays of the kind of
        `like` (numpy or torch on its device)."""
        if self.batch not in (None, batch) or self.heads not in (None, heads):
            raise ValueError(f"{what}: block_mask was built for B="
                             f"{self.batch}, H={self.heads}; the call has B="
                             f"{batch}, H={heads} (build with these, or "
                             f"None where the mask reads no b or h)")
        if self.q_len < q_len or self.kv_len < kv_len:
            raise ValueError(f"{what}: block_mask was built for Q_LEN="
                             f"{self.q_len}, KV_LEN={self.kv_len}; the call "
                             f"has {q_len} queries and {kv_len} keys")
        if like is not None:
            torch_call = type(like).__module__.startswith("torch")
            torch_mask = type(self.kv_start).__module__.startswith("torch")
            if torch_call != torch_mask:
                raise TypeError(
                    f"{what}: block_mask was built with "
                    f"{'torch' if torch_mask else 'numpy (device=None)'} "
                    f"for a {'torch' if torch_call else 'numpy'} call: "
                    f"build it with create_block_mask(..., device="
                    f"{'q.device' if torch_call else 'None'})")
            if torch_call and self.kv_start.device != like.device:
                raise ValueError(f"{what}: block_mask is on "
                                 f"{self.kv_start.device}, q on "
                                 f"{like.device}")


def _reads(text, name):
    """Whether the traced function's body (after its signature) uses the
    argument %name."""
    body = text.split("\n", 1)[1]
    import re
    return re.search(rf"%{name}\b", body) is not None


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None,
                      BLOCK_SIZE=128):
    """The key ranges `mask_mod(b, h, q_idx, kv_idx)` sees, per block of
    BLOCK_SIZE query rows, for B sequences (batch) and H query heads (None:
    the same for all, an error when the function reads b or h), Q_LEN
    queries and KV_LEN keys. The function is evaluated on every (b, h,
    q_idx, kv_idx) once, here, with numpy (device=None) or torch tensors on
    `device`: pass the result as `block_mask=` to calls with the same
    mask_mod and inputs of those sizes (numpy calls take the numpy one,
    torch calls the torch one). Returns a BlockMask (`build_ms` says how
    long this took). It is a snapshot: rebuild it when the mask or the
    data it reads (document ids) change; calls do not check that it came
    from their mask_mod. BLOCK_SIZE: at least half the kernel's query
    tile (64 and 128 rows on GPUs) for the ranges to skip anything."""
    for name, value in (("Q_LEN", Q_LEN), ("KV_LEN", KV_LEN),
                        ("BLOCK_SIZE", BLOCK_SIZE)):
        if isinstance(value, bool) or not isinstance(value, int) or \
                not 0 < value < 2**31:
            raise ValueError(f"create_block_mask: {name} must be a positive "
                             f"int, got {value!r}")
    for name, value in (("B", B), ("H", H)):
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, int) or value < 1):
            raise ValueError(f"create_block_mask: {name} must be a positive "
                             f"int or None, got {value!r}")
    # Traced once: a function the kernel could not take fails here, and
    # B/H None is checked against what it reads.
    _, text, _ = _variants.trace_pair(None, mask_mod)
    for name, value, arg in (("B", B, "b"), ("H", H, "h")):
        if value is None and _reads(text, arg):
            raise ValueError(f"create_block_mask: mask_mod reads {arg}, so "
                             f"{name} must be given (not None)")
    nb, nh = B or 1, H or 1
    blocks = -(-Q_LEN // BLOCK_SIZE)
    start_time = time.perf_counter()
    # numpy or torch: arange, a bool broadcast, a running maximum, row
    # padding and the result arrays; one loop below.
    if device is None:
        import numpy as np

        def arange(first, end):
            return np.arange(first, end, dtype=np.int64)

        def as_seen(value, shape):
            return np.broadcast_to(np.asarray(value, dtype=bool), shape)

        def running_max(x):
            return np.maximum.accumulate(x, axis=-1)

        def where(c, x, y):
            return np.where(c, x, y)

        def argmax(x):
            return x.argmax(-1)

        def flip(x):
            return x[..., ::-1]

        def pad_rows(seen, n):
            last = np.broadcast_to(seen[:, :, -1:], seen.shape[:2] +
                                   (n,) + seen.shape[3:])
            return np.concatenate([seen, last], axis=2)

        ranges = [np.zeros((nb, nh, blocks), dtype=np.int32)
                  for _ in range(4)]
    else:
        import torch

        def arange(first, end):
            return torch.arange(first, end, device=device)

        def as_seen(value, shape):
            return torch.as_tensor(value, device=device).to(
                torch.bool).expand(*shape)

        def running_max(x):
            return torch.cummax(x, -1).values

        def where(c, x, y):
            return torch.where(c, x, y)

        def argmax(x):  # (not on bool; ties: the first, as numpy's)
            return x.to(torch.int32 if x.dtype == torch.bool
                        else x.dtype).argmax(-1)

        def flip(x):
            return x.flip(-1)

        def pad_rows(seen, n):
            last = seen[:, :, -1:].expand(-1, -1, n, -1)
            return torch.cat([seen, last], dim=2)

        ranges = [torch.zeros((nb, nh, blocks), dtype=torch.int32,
                              device=device) for _ in range(4)]
    keys = arange(0, KV_LEN)

    def store(array, first, value):  # (numpy and torch alike)
        array[:, :, first:first + value.shape[-1]] = value

    def visible(seen):
        """[first, end) from the first to past the last key seen per row
        of `seen` (0, 0 where none)."""
        has = seen.any(-1)
        first = argmax(seen)
        end = KV_LEN - argmax(flip(seen))
        return where(has, first, 0 * first), where(has, end, 0 * end)

    def longest_run(seen):
        """[first, end) of the longest run of keys seen per row (the first
        of equals; 0, 0 where none)."""
        # Each key's run so far: its index minus the last unseen key's.
        last_unseen = running_max(where(seen, -1 + 0 * keys, keys))
        length = where(seen, keys - last_unseen, 0 * keys)
        end = argmax(length) + 1
        best = length.max(-1)
        best = best.values if hasattr(best, "values") else best
        has = best > 0
        return (where(has, end - best, 0 * end), where(has, end, 0 * end))

    # Several query blocks per evaluation (about EVALUATION_ELEMENTS
    # elements, or one block where a block alone has more), on real rows
    # only; the last block's missing rows repeat its last one (no change
    # to any or all over the block).
    step = max(1, EVALUATION_ELEMENTS // (nb * nh * BLOCK_SIZE * KV_LEN))
    for first in range(0, blocks, step):
        count = min(step, blocks - first)
        rows = arange(first * BLOCK_SIZE,
                      min((first + count) * BLOCK_SIZE, Q_LEN))
        shape = (nb, nh, rows.shape[0], KV_LEN)
        seen = as_seen(mask_mod(arange(0, nb).reshape(nb, 1, 1, 1),
                                arange(0, nh).reshape(1, nh, 1, 1),
                                rows.reshape(1, 1, -1, 1),
                                keys.reshape(1, 1, 1, KV_LEN)), shape)
        if rows.shape[0] < count * BLOCK_SIZE:
            seen = pad_rows(seen, count * BLOCK_SIZE - rows.shape[0])
        seen = seen.reshape(nb, nh, count, BLOCK_SIZE, KV_LEN)
        for array, value in zip(ranges, visible(seen.any(3)) +
                                longest_run(seen.all(3))):
            store(array, first, value)
    if device is not None and torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
    build_ms = (time.perf_counter() - start_time) * 1e3
    kv_start, kv_end, full_start, full_end = ranges
    return BlockMask(kv_start, kv_end, BLOCK_SIZE, Q_LEN, KV_LEN, build_ms, B,
                     H, full_start, full_end)
