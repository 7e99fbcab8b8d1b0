"""docs/semantics.md §8 scenarios A1–A15, each with its numbers, through replicaflow.model."""

import numpy as np
import pytest

from replicaflow.model import fetcher, isr, predicates, quota
from replicaflow.model.version import KafkaVersion

V37 = KafkaVersion.parse("3.7")


class FollowerState:
    """One follower's leader-side bookkeeping, advanced by the model functions (test helper)."""

    def __init__(self, leo_is_max=True):
        self.leo, self.fetch_leader_leo, self.fetch_time, self.caught_up = -1, 0, 0, 0
        self.leo_is_max = leo_is_max

    def fetch(self, offset, leader_leo, now):
        self.leo, self.fetch_leader_leo, self.fetch_time, self.caught_up = (
            int(x) for x in isr.update_fetch_state(offset, leader_leo, now, self.fetch_leader_leo, self.fetch_time,
                                                   self.caught_up, self.leo_is_max))

    def out_of_sync(self, leader_leo, now, lag):
        return bool(isr.is_out_of_sync(self.leo, leader_leo, self.caught_up, now, lag))


def test_a1_update_rule():
    f = FollowerState()
    t1, t2, t3 = 1000, 2000, 3000
    f.fetch(5, 10, t1)
    assert (f.leo, f.caught_up) == (5, 0)
    f.fetch(10, 15, t2)
    assert f.caught_up == t1
    f.fetch(15, 15, t3)
    assert f.caught_up == t3


def test_a2_stuck_follower():
    f, t0, lag = FollowerState(), 10_000, 100
    f.caught_up = t0  # ISR member at t0
    f.fetch(19, 20, t0)
    assert not f.out_of_sync(20, t0, lag)
    assert not f.out_of_sync(20, t0 + 100, lag)  # exactly lag: still in sync (strict >)
    assert f.out_of_sync(20, t0 + 150, lag)


def test_a3_slow_follower():
    f, t0, lag = FollowerState(), 10_000, 100
    f.caught_up, f.fetch_leader_leo, f.fetch_time = t0, 20, t0
    f.fetch(18, 20, t0)
    assert not f.out_of_sync(20, t0, lag)
    f.fetch(19, 20, t0 + 75)
    assert f.caught_up == t0
    assert not f.out_of_sync(20, t0 + 75, lag)
    assert f.out_of_sync(20, t0 + 150, lag)
    f.fetch(20, 20, t0 + 150)
    assert not f.out_of_sync(20, t0 + 150, lag)


def test_a4_idle_caught_up_follower():
    f, t0 = FollowerState(), 10_000
    f.fetch(20, 20, t0)
    assert not f.out_of_sync(20, t0 + 150, 100)


def _leader_with_followers(t0, n_followers, leader_leo):
    """Become leader at t0 with every follower in the ISR (§1.1 reset for a new leader)."""
    return isr.reset_on_new_leader_epoch(t0, np.ones(n_followers, bool), np.zeros(n_followers, bool), leader_leo,
                                         np.full(n_followers, -1))


def test_a5_shrink_then_hw():
    t0, lag, leader_leo = 1_000_000, 30_000, 10
    leo, fll, ft, cu = _leader_with_followers(t0, 2, leader_leo)
    assert list(cu) == [t0, t0] and list(leo) == [-1, -1]
    # F1 fetches 10 at t0; F2 never fetches.
    leo1, fll1, ft1, cu1 = isr.update_fetch_state(10, leader_leo, t0, fll[:1], ft[:1], cu[:1], True)
    leo, cu = np.array([leo1[0], leo[1]]), np.array([cu1[0], cu[1]])
    assert not isr.is_out_of_sync(leo, leader_leo, cu, t0, lag).any()
    out = isr.is_out_of_sync(leo, leader_leo, cu, t0 + 30_001, lag)
    assert list(out) == [False, True]
    isr_mask = np.array([[True, True, not out[1]]])  # leader, F1, F2
    hw = isr.high_watermark(np.array([0]), np.array([[leader_leo, leo[0], leo[1]]]), isr_mask, np.array([False]))
    assert hw[0] == 10
    shrinks = int(out.any())
    assert shrinks == 1


def test_a6_no_shrink_when_previous_fetch_reached_old_leo():
    t0, lag = 1_000_000, 30_000
    f = FollowerState()
    f.caught_up, f.fetch_leader_leo, f.fetch_time = t0, 10, 0
    f.fetch(5, 10, t0 + 5000)
    assert f.caught_up == t0
    f.fetch(10, 15, t0 + 10_001)
    assert f.caught_up == t0 + 5000
    assert not f.out_of_sync(15, t0 + 10_001, lag)


def test_a7_expansion_needs_current_leader_epoch():
    hw, epoch_start = 100, 120
    assert not isr.expansion_eligible(110, hw, epoch_start, True)
    assert isr.expansion_eligible(120, hw, epoch_start, True)
    assert not isr.expansion_eligible(130, hw, epoch_start, False)  # dead/fenced cannot join


@pytest.mark.parametrize("isr_members, kip352, legacy", [
    ([1, 2, 3], False, True), ([1, 2], True, True), ([2, 3, 4], False, True)])
def test_a8_urp_with_reassignment(isr_members, kip352, legacy):
    replicas, adding = [1, 2, 3, 4], [4]
    assert predicates.urp_kip352(len(replicas), len(adding), len(isr_members)) == kip352
    assert predicates.urp_legacy(len(replicas), len(isr_members)) == legacy
    assert predicates.under_replicated(KafkaVersion.parse("2.5"), 4, 1, len(isr_members)) == kip352
    assert predicates.under_replicated(KafkaVersion.parse("2.4"), 4, 1, len(isr_members)) == legacy


def test_a8_kip352_quirk_adding_replicas_mask_a_lost_original():
    assert not predicates.urp_kip352(6, 3, 3)  # replicas [1..6], adding [4,5,6], ISR [1,4,5]


def test_a9_min_isr():
    assert not predicates.under_min_isr(2, 2, 2, True)
    assert predicates.under_min_isr(1, 2, 2, True)
    assert predicates.at_min_isr(1, 1, 3, True)
    # min ISR 3 on RF 2: 3.7+ caps to 2
    assert predicates.at_min_isr(2, 3, 2, V37.min_isr_capped)
    assert not predicates.under_min_isr(2, 3, 2, V37.min_isr_capped)
    v36 = KafkaVersion.parse("3.6")
    assert predicates.under_min_isr(2, 3, 2, v36.min_isr_capped)
    assert not predicates.at_min_isr(2, 3, 2, v36.min_isr_capped)


def test_a10_fetcher_failure_outcome_per_version():
    """AbstractFetcherThread.processFetchRequest: 2.3+ marks the partition failed (KIP-461); 1.0 – 2.2 retry a
    KafkaStorageException (JBOD, KIP-112) and die on other unexpected errors; 0.11 halts the broker on a storage
    error (ReplicaFetcherThread.processPartitionData) and dies on the others."""
    assert fetcher.fetch_error_outcome(KafkaVersion.parse("2.3"), "storage") == "failed"
    assert fetcher.fetch_error_outcome(KafkaVersion.parse("2.2"), "storage") == "retried"
    assert fetcher.fetch_error_outcome(KafkaVersion.parse("1.0"), "storage") == "retried"
    assert fetcher.fetch_error_outcome(KafkaVersion.parse("0.11"), "storage") == "halted"
    assert fetcher.fetch_error_outcome(KafkaVersion.parse("2.2"), "unexpected") == "thread_died"
    assert fetcher.fetch_error_outcome(KafkaVersion.parse("2.3"), "unexpected") == "failed"
    assert fetcher.fetch_error_outcome(KafkaVersion.parse("3.7"), "fenced_leader_epoch") == "failed"
    assert fetcher.fetch_error_outcome(KafkaVersion.parse("3.7"), "corrupt_records") == "retried"
    assert fetcher.fetch_error_outcome(KafkaVersion.parse("2.2"), "offset_out_of_range") == "retried"


def test_a11_quota_window():
    limit, window, samples = 100, 1000, 10

    def rate(total, now):
        return float(quota.rate_bps(total, quota.oldest_window_start_ms(now, 0, window, samples), now, window))

    assert rate(150, 1500) == pytest.approx(100.0)
    assert not quota.quota_exceeded(rate(150, 1500), limit)
    assert rate(151, 1500) == pytest.approx(100.6667, abs=1e-3)
    assert quota.quota_exceeded(rate(151, 1500), limit)
    assert rate(151, 2000) == pytest.approx(75.5)
    assert not quota.quota_exceeded(rate(151, 2000), limit)
    # at least one window; and windows older than `samples` drop out
    assert rate(50, 200) == pytest.approx(50.0)
    assert int(quota.oldest_window_start_ms(12_500, 0, window, samples)) == 3000
    # none of them holds a record (SampledStat.purgeObsoleteSamples reset them all to now): one window
    assert int(quota.oldest_window_start_ms(12_500, 0, window, samples, any_retained=False)) == 12_500


def test_a12_leader_throttling():
    throttled = np.array([True, True])
    exceeded = np.array([False, True])  # quota answers "not exceeded" then "exceeded"
    held = quota.throttle_holds_back(throttled, exceeded, np.array([False, False]))
    assert list(held) == [False, True]
    assert not quota.throttle_holds_back(throttled, exceeded, np.array([True, True])).any()


def test_a13_throttle_lists_from_the_tool():
    current = {("foo", 0): ([1, 2, 3, 4], [4], [3]), ("bar", 0): ([2, 3, 4], [], [])}
    proposed = {("foo", 0): [1, 2, 5], ("bar", 0): [1, 2, 3]}
    lists = quota.tool_throttle_lists(current, proposed)
    assert lists["foo"] == ("0:1,0:2,0:3", "0:5")
    assert lists["bar"] == ("0:2,0:3,0:4", "0:1")
    assert quota.tool_throttled_brokers(current, proposed) == [1, 2, 3, 4, 5]


def test_a14_reassignment_bytes_classification():
    is_adding = np.array([True, False])
    appended = np.array([1000, 700])
    reassignment_in = appended[quota.kip542_is_reassignment_traffic(is_adding)].sum()
    replication_in = appended.sum()
    assert (reassignment_in, replication_in) == (1000, 1700)


@pytest.mark.parametrize("topic, partition, n, expected", [
    ("topic", 0, 2, 1), ("topic", 1, 2, 0), ("foo", 0, 2, 0), ("test-topic", 0, 3, 2)])
def test_a15_fetcher_ids(topic, partition, n, expected):
    assert fetcher.fetcher_id(topic, partition, n) == expected
