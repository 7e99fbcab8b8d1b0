"""Invariants of the model rules, checked with hypothesis."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from replicaflow.model import isr, predicates, quota

counts = st.integers(0, 12)


@st.composite
def partition(draw):
    n_replicas = draw(st.integers(1, 8))
    n_adding = draw(st.integers(0, n_replicas - 1))
    n_isr = draw(st.integers(0, n_replicas))
    min_isr = draw(st.integers(1, 5))
    return n_replicas, n_adding, n_isr, min_isr


@given(partition())
def test_kip352_urp_never_exceeds_legacy(p):
    r, a, i, _ = p
    assert predicates.urp_kip352(r, a, i) <= predicates.urp_legacy(r, i)


@given(partition(), st.booleans())
def test_under_and_at_min_isr_never_both(p, capped):
    r, _, i, m = p
    assert not (predicates.under_min_isr(i, m, r, capped) and predicates.at_min_isr(i, m, r, capped))


@given(st.lists(st.tuples(st.integers(0, 10_000), st.booleans()), min_size=1, max_size=8),
       st.integers(0, 10_000))
def test_hw_at_most_every_member_leo(replicas, prev_hw):
    leo = np.array([[r[0] for r in replicas]])
    members = np.array([[True] + [r[1] for r in replicas[1:]]])  # the leader is always a member
    hw = int(isr.high_watermark(np.array([min(prev_hw, leo.min())]), leo, members, np.array([False]))[0])
    assert all(hw <= leo[0, j] for j in range(leo.shape[1]) if members[0, j])


@given(st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**6), st.integers(1, 10**6))
def test_follower_equal_to_leader_leo_never_out_of_sync(leo, now, caught_up, lag):
    assert not isr.is_out_of_sync(leo, leo, min(caught_up, now), now, lag)


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1, max_size=20))
def test_last_caught_up_never_moves_back(fetches):
    state = (-1, 0, 0, 0)
    now = 0
    for offset_delta, leo in fetches:
        now += 1 + offset_delta % 1000
        offset = min(offset_delta, leo)
        before = state[3]
        state = tuple(int(x) for x in isr.update_fetch_state(offset, leo, now, state[1], state[2], state[3], True))
        assert state[3] >= before and state[3] <= now


@given(st.integers(0, 10**9), st.integers(1, 10**6), st.integers(0, 10**7))
def test_quota_rate_bounded_by_one_window(total, window, now):
    rate = float(quota.rate_bps(total, quota.oldest_window_start_ms(now, 0, window, 11), now, window))
    assert rate <= total * 1000.0 / window + 1e-6
