"""Rules beyond the §8 scenarios: legacy lag, 3.3 boundary, epoch reset, check schedule, lists, hashes."""

import numpy as np
import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.model import fetcher, isr, quota


def test_legacy_message_count_rule_and_time_rule_082():
    # 4001 messages behind with a fresh fetch: out on 0.8.2 (messages), in sync under KIP-16 (time)
    assert isr.is_out_of_sync_legacy(1000, 5001, 9000, 10_000, 10_000, 4000)
    assert not isr.is_out_of_sync_legacy(1001, 5001, 9000, 10_000, 10_000, 4000)  # exactly 4000: in
    assert not isr.is_out_of_sync(1000, 5001, 9000, 10_000, 10_000)
    # stuck: no fetch for more than lag
    assert isr.is_out_of_sync_legacy(5001, 5001, 0, 10_001, 10_000, 4000)
    assert not isr.is_out_of_sync_legacy(5001, 5001, 1, 10_001, 10_000, 4000)


def test_fetch_leader_leo_overwrite_before_33_and_max_after():
    # previous fetch saw leader LEO 20; now the (new) leader reports 15: <3.3 overwrites, 3.3+ keeps 20
    _, fll_old, _, _ = isr.update_fetch_state(10, 15, 100, 20, 50, 0, leo_is_max=False)
    _, fll_new, _, _ = isr.update_fetch_state(10, 15, 100, 20, 50, 0, leo_is_max=True)
    assert int(fll_old) == 15 and int(fll_new) == 20


def test_reset_on_epoch_bump_keeps_leos():
    leo, fll, ft, cu = isr.reset_on_new_leader_epoch(500, np.array([True, False]), np.array([True, True]), 42,
                                                     np.array([40, 30]))
    assert list(leo) == [40, 30] and list(fll) == [42, 42] and list(ft) == [500, 0] and list(cu) == [500, 0]


def test_a_new_leader_forgets_the_leader_leo_of_the_last_fetch():
    """Replica.resetReplicaState (3.3+, isNewLeader: lastFetchLeaderLogEndOffset = UnknownOffset) and, before,
    Partition.makeLeader's updateLogReadResult(UnknownLogReadResult) (leaderLogEndOffset -1): the new leader
    starts without the previous leader's view, so a follower's first fetch counts against its own log end.
    Kept (e.g. 3900 from a previous leader whose log went further), the 3.3+ maximum rule would hold it
    above the new leader's LEO and the follower would never be caught up as of its previous fetch."""
    leo, fll, ft, cu = isr.reset_on_new_leader_epoch(500, np.array([True, False]), np.array([False, False]), 1000,
                                                     np.array([3900, 1000]))
    assert list(leo) == [-1, -1] and list(fll) == [-1, -1] and list(ft) == [0, 0] and list(cu) == [500, 0]
    # a fetch at 1000 when the leader is at 1100: caught up as of the previous fetch (time 0), and the next
    # fetch at 1100 (leader 1200) reaches the 1100 the leader had at the first: caught up as of it
    _, fll1, ft1, cu1 = isr.update_fetch_state(1000, 1100, 600, fll[:1], ft[:1], cu[:1], True)
    _, _, _, cu2 = isr.update_fetch_state(1100, 1200, 700, fll1, ft1, cu1, True)
    assert list(fll1) == [1100] and list(cu2) == [600]


def test_hw_never_moves_back_and_freezes():
    leo = np.array([[100, 80, 90], [50, 50, 10]])
    members = np.array([[True, True, True], [True, True, False]])
    hw = isr.high_watermark(np.array([85, 20]), leo, members, np.array([False, False]))
    assert list(hw) == [85, 50]
    frozen = isr.high_watermark(np.array([85, 20]), leo, members, np.array([False, True]))
    assert list(frozen) == [85, 20]


def test_isr_check_runs_every_half_lag_from_broker_start():
    now = np.arange(0, 40_001, 100)
    due = now[isr.isr_check_due(now, 0, 30_000, 100)]
    assert list(due) == [0, 15_000, 30_000]
    due_late_start = now[isr.isr_check_due(now, 250, 30_000, 100)]
    assert list(due_late_start) == [300, 15_300, 30_300]


def test_next_isr_check_is_the_first_run_instant_after_a_time():
    """After a tick ending at ``after``, no tick ending before next_isr_check_ms is due, and the tick containing
    it is (lag/2 and lag periods, brokers started on and between tick boundaries)."""
    for start, divisor, tick in ((0, 2, 100), (250, 2, 100), (7_000, 1, 1000), (1_234, 2, 1000)):
        ends = np.arange(0, 100_001, tick)
        due = isr.isr_check_due(ends, start, 30_000, tick, divisor)
        for after in ends[ends <= 60_000][::7]:
            nxt = int(isr.next_isr_check_ms(after, start, 30_000, divisor))
            assert nxt > after and (nxt - start) % (30_000 // divisor) == 0 and nxt >= start
            assert not due[(ends > after) & (ends < nxt)].any()
            assert due[(ends >= nxt) & (ends - tick < nxt)].all()


def test_parse_and_format_throttled_replicas():
    assert quota.parse_throttled_replicas("0:1, 1:2,0:3") == frozenset({(0, 1), (1, 2), (0, 3)})
    assert quota.parse_throttled_replicas("*") == quota.ALL_REPLICAS
    assert quota.parse_throttled_replicas("") == frozenset()
    assert quota.format_throttled_replicas({(1, 2), (0, 3), (0, 1)}) == "0:1,0:3,1:2"
    assert quota.is_throttled("*", 5, 9) and quota.is_throttled(frozenset({(5, 9)}), 5, 9)
    with pytest.raises(ReplicaflowError, match="0-1"):
        quota.parse_throttled_replicas("0:1,0-1")
    assert quota.parse_throttled_replicas("0:1,") == frozenset({(0, 1)})  # Kafka's validator takes an empty item
    for item in ("0 :1", "0:-1", "²:1", "9" * 5000 + ":1", "0:2147483648"):  # '²' and 5000 digits: int() tracebacks
        with pytest.raises(ReplicaflowError, match="expected 'partition:broker,...' or '\\*', found item '"):
            quota.parse_throttled_replicas(f"1:2,{item}")


def test_quota_unlimited_and_strict():
    assert not quota.quota_exceeded(1e12, float("inf"))
    assert not quota.quota_exceeded(1e12, -1)
    assert not quota.quota_exceeded(100.0, 100)
    assert quota.quota_exceeded(100.0001, 100)


def test_java_hash_overflow_and_min_int():
    assert fetcher.java_string_hash("") == 0
    assert fetcher.java_string_hash("polygenelubricants") == -(2**31)  # Integer.MIN_VALUE
    # abs(MIN_INT) is 0 in Kafka's Utils.abs: 31 * h + p == MIN_INT → thread 0
    h = np.array([fetcher.java_string_hash("polygenelubricants")])
    # 31 * MIN_INT wraps to MIN_INT; + 0 stays MIN_INT → 0
    assert fetcher.fetcher_ids(h, np.array([0]), 7)[0] == 0
    assert fetcher.fetcher_thread_name(1, 3) == "ReplicaFetcherThread-1-3"
    with pytest.raises(ReplicaflowError, match="unknown fetch error"):
        fetcher.fetch_error_outcome(None, "cosmic_ray")
