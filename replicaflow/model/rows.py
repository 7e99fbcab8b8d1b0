"""Per-row reductions and broadcasts over the short slot axis of [partitions, slots] grids.

NumPy reduces a short innermost axis slowly: ``x.sum(axis=1)`` on a (50000, 3) bool array costs about
as much as fifteen elementwise passes, and an elementwise ufunc whose operand is a ``[:, None]``
broadcast runs its inner loop three elements at a time (about 4x a plain pass). Combining the slot
columns one at a time with elementwise ufuncs (a Python loop over the few slots, not over replicas)
does the same work in ``slots - 1`` passes. Results equal NumPy's reductions over the last axis.
"""

from __future__ import annotations

import numpy as np


def row_sum(x) -> np.ndarray:
    """``x.sum(axis=-1)`` for bool or integer grids (counts per partition), as int64."""
    x = np.asarray(x)
    if x.shape[-1] < 2:
        return x.sum(axis=-1, dtype=np.int64)
    out = np.add(x[..., 0], x[..., 1], dtype=np.int64)
    for slot in range(2, x.shape[-1]):
        out += x[..., slot]
    return out


def row_min(x) -> np.ndarray:
    """``x.min(axis=-1)`` (at least one slot)."""
    x = np.asarray(x)
    if x.shape[-1] < 2:
        return x.min(axis=-1)
    out = np.minimum(x[..., 0], x[..., 1])
    for slot in range(2, x.shape[-1]):
        np.minimum(out, x[..., slot], out=out)
    return out


def row_any(x) -> np.ndarray:
    """``x.any(axis=-1)``."""
    x = np.asarray(x)
    if x.shape[-1] < 2:
        return x.any(axis=-1)
    out = np.logical_or(x[..., 0], x[..., 1])
    for slot in range(2, x.shape[-1]):
        np.logical_or(out, x[..., slot], out=out)
    return out


def repeat_slots(values, slots: int, out: np.ndarray | None = None) -> np.ndarray:
    """A C-contiguous [partitions, slots] grid holding ``values[p]`` in every slot of row p (into ``out`` if given).

    Equal to ``np.broadcast_to(values[:, None], (len(values), slots)).copy()``; materializing the
    per-partition column once lets the following elementwise passes run at full speed.
    """
    values = np.asarray(values)
    if out is None:
        out = np.empty(values.shape + (slots,), dtype=values.dtype)
    for slot in range(slots):
        out[..., slot] = values
    return out
