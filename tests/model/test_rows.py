"""Slot-axis reductions (model/rows.py) equal NumPy's, for every slot count the simulator can produce."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from replicaflow.model import isr, rows

grids = st.tuples(st.integers(0, 40), st.integers(1, 7)).flatmap(
    lambda shape: st.one_of(hnp.arrays(bool, shape), hnp.arrays(np.int64, shape, elements=st.integers(-2**62, 2**62)),
                            hnp.arrays(np.int32, shape)))


@given(grids)
def test_row_reductions_equal_numpy(x):
    total = rows.row_sum(x)
    assert total.dtype == np.int64 and np.array_equal(total, x.sum(axis=-1))
    assert np.array_equal(rows.row_any(x), x.any(axis=-1))
    minimum = rows.row_min(x)
    assert minimum.dtype == x.dtype and np.array_equal(minimum, x.min(axis=-1))


def test_strided_and_higher_dimensional_input():
    x = np.arange(2 * 5 * 4).reshape(2, 5, 4)[:, ::2, ::-1]
    assert np.array_equal(rows.row_sum(x), x.sum(axis=-1))
    assert np.array_equal(rows.row_min(x), x.min(axis=-1))
    assert np.array_equal(rows.row_any(x > 30), (x > 30).any(axis=-1))


def test_zero_slots():
    empty = np.zeros((3, 0), dtype=bool)
    assert list(rows.row_sum(empty)) == [0, 0, 0] and not rows.row_any(empty).any()
    with pytest.raises(ValueError):
        rows.row_min(np.zeros((3, 0), dtype=np.int64))


@given(hnp.arrays(np.int64, st.integers(0, 30)), st.integers(1, 6))
def test_repeat_slots_is_a_contiguous_broadcast(values, slots):
    grid = rows.repeat_slots(values, slots)
    assert grid.flags.c_contiguous and np.array_equal(grid, np.broadcast_to(values[:, None], (len(values), slots)))
    out = np.full((len(values), slots), -7, dtype=np.int64)
    assert rows.repeat_slots(values, slots, out=out) is out and np.array_equal(out, grid)


@given(hnp.arrays(np.int64, (6, 3), elements=st.integers(0, 10**6)), hnp.arrays(np.int64, 6, elements=st.integers(0, 10**6)),
       hnp.arrays(bool, 6))
def test_high_watermark_without_mask_means_every_replica(leo, prev_hw, freeze):
    everyone = np.ones(leo.shape, dtype=bool)
    assert np.array_equal(isr.high_watermark(prev_hw, leo, None, freeze),
                          isr.high_watermark(prev_hw, leo, everyone, freeze))
