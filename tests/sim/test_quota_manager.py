"""ReplicationQuotaManager (sim/quota_manager.py): Kafka's sampled windows, "exceeded", the held-back fetches.

The rules are model.quota's (tests/model/test_scenarios_a.py A11, A12, A14); these tests check the
manager applies them per broker and quota type: kafka.server.ReplicationQuotaManager.isQuotaExceeded
/ record, ReplicaManager.shouldLeaderThrottle and ReplicaFetcherThread.shouldFollowerThrottle.
"""

from __future__ import annotations

import numpy as np

from replicaflow.sim.quota_manager import (
    FOLLOWER_REASSIGNMENT,
    FOLLOWER_REPLICATION,
    LEADER_REASSIGNMENT,
    LEADER_REPLICATION,
    ReplicationQuotaManager,
)
from tests.sim.conftest import small, started

T0 = 1_000_000


def limits(n_brokers: int, **rows: float) -> np.ndarray:
    out = np.full((4, n_brokers), np.inf)
    for name, value in rows.items():
        out[globals()[name.upper()]] = value
    return out


def test_rate_over_the_retained_windows_strictly_above_the_limit():
    """A11 through the manager: 150 B in 1.5 s at 100 B/s is not exceeded, 151 B is; the sensor starts at
    the first byte recorded (Kafka creates it on first use), and a broker without bytes is never exceeded."""
    qm = ReplicationQuotaManager(2, window_ms=1000, samples=11, kip542=False)
    qm.update_quota(limits(2, leader_replication=100.0))
    qm.record(LEADER_REPLICATION, np.array([150.0, 0.0]), T0)
    assert qm.t0[LEADER_REPLICATION].tolist() == [T0, -1]
    assert not qm.exceeded(T0 + 1500)[LEADER_REPLICATION].any()
    qm.record(LEADER_REPLICATION, np.array([1.0, 0.0]), T0 + 1500)
    assert qm.exceeded(T0 + 1500)[LEADER_REPLICATION].tolist() == [True, False]
    assert not qm.exceeded(T0 + 2000)[LEADER_REPLICATION].any()  # 151 B over 2 s = 75.5 B/s
    # the other quota types of the same broker are untouched
    assert not qm.exceeded(T0 + 1500)[[FOLLOWER_REPLICATION, LEADER_REASSIGNMENT, FOLLOWER_REASSIGNMENT]].any()


def test_windows_older_than_the_samples_drop_out():
    qm = ReplicationQuotaManager(1, window_ms=1000, samples=3, kip542=False)
    qm.update_quota(limits(1, follower_replication=10.0))
    qm.record(FOLLOWER_REPLICATION, np.array([100.0]), T0)          # window 0
    qm.record(FOLLOWER_REPLICATION, np.array([5.0]), T0 + 2500)     # window 2
    assert qm.exceeded(T0 + 2500)[FOLLOWER_REPLICATION, 0]          # 105 B over 2.5 s
    # at 3.5 s windows 1..3 are retained: window 0's 100 B are gone, 5 B over 2.5 s from window 1's start
    assert not qm.exceeded(T0 + 3500)[FOLLOWER_REPLICATION, 0]
    qm.record(FOLLOWER_REPLICATION, np.array([30.0]), T0 + 3500)    # window 3 reuses window 0's slot
    assert qm.bytes[FOLLOWER_REPLICATION, 0].tolist() == [30.0, 0.0, 5.0]
    assert qm.exceeded(T0 + 3500)[FOLLOWER_REPLICATION, 0]          # 35 B over 2.5 s = 14 B/s


def _overlap_story(overlapping: bool) -> ReplicationQuotaManager:
    qm = ReplicationQuotaManager(1, window_ms=1000, samples=11, kip542=False, overlapping=overlapping)
    qm.record(LEADER_REPLICATION, np.array([1100.0]), T0)          # window 0 opens the sensor
    qm.record(LEADER_REPLICATION, np.array([1.0]), T0 + 900)       # its last record, at 0.9 s
    qm.record(LEADER_REPLICATION, np.array([1.0]), T0 + 11_200)    # window 11
    return qm


def test_the_window_overlapping_the_samples_counts_from_3_8():
    """SampledStat.purgeObsoleteSamples at 3.8.0 resets a sample once `now - sample.lastEventMs >= samples *
    timeWindowMs` (keeping `samples + 1` of them) and SimpleRate.windowSize measures from the oldest one's
    startTimeMs (apache/kafka#15889); at 3.7.0 the test is `now - sample.lastWindowMs` (its start). 11 windows of
    1 s; 1101 B in window 0 (last at 0.9 s), 1 B at 11.2 s. At 11.5 s Kafka 3.8 still rates window 0: 1102 B over
    11.5 s = 95.83 B/s. Up to 3.7 window 0 is gone by 11.2 s, the whole retention without a record: its sample is
    reset to the instant asked, and SimpleRate rates the 1 B from the sample of 11.2 s over one window, 1 B/s
    (the simulator counted the ten empty windows before it: 1 B over 10.5 s)."""
    new, old = _overlap_story(True), _overlap_story(False)
    assert new.rates_bps(T0 + 11_500)[LEADER_REPLICATION, 0] == np.float64(1102.0 * 1000 / 11_500)
    assert old.rates_bps(T0 + 11_500)[LEADER_REPLICATION, 0] == np.float64(1.0)
    assert old.rates_bps(T0 + 11_950)[LEADER_REPLICATION, 0] == np.float64(1.0)
    assert old.t0[LEADER_REPLICATION, 0] == T0 + 11_200  # the sensor started again with that byte


def test_a_quota_idle_for_a_whole_retention_starts_again():
    """kafka.server.ReplicationQuotaManager's SimpleRate: 100 B at 0 s, then nothing for 20 s, then 150 B.
    SampledStat.purgeObsoleteSamples has reset every sample to the instant asked (Sample.reset(now)), so the
    150 B are rated over one window, 150 B/s, above a 100 B/s limit. The simulator rated them over the ten empty
    windows before, 14.3 B/s: a leader whose quota sat idle between two batches of a move copied at full fetch
    speed for ten seconds (plan's batch 4 of docs/examples/plan at 15MB/s took 47 s; by hand 610MB / 12.5MB/s
    = 48.8 s, now 50 s)."""
    for overlapping in (False, True):
        qm = ReplicationQuotaManager(1, window_ms=1000, samples=11, kip542=False, overlapping=overlapping)
        qm.update_quota(limits(1, leader_replication=100.0))
        qm.record(LEADER_REPLICATION, np.array([100.0]), T0)
        assert qm.rates_bps(T0 + 20_000)[LEADER_REPLICATION, 0] == 0.0
        qm.record(LEADER_REPLICATION, np.array([150.0]), T0 + 20_000)
        assert qm.rates_bps(T0 + 20_500)[LEADER_REPLICATION, 0] == np.float64(150.0)
        assert qm.exceeded(T0 + 20_500)[LEADER_REPLICATION, 0]
        # a quota recording within the retention keeps its windows: 100 B at 0 s and 150 B at 10.5 s over 10.5 s
        qm = ReplicationQuotaManager(1, window_ms=1000, samples=11, kip542=False, overlapping=overlapping)
        qm.record(LEADER_REPLICATION, np.array([100.0]), T0)
        qm.record(LEADER_REPLICATION, np.array([150.0]), T0 + 10_500)
        assert qm.rates_bps(T0 + 10_500)[LEADER_REPLICATION, 0] == np.float64(250.0 * 1000 / 10_500)


def test_the_engine_keeps_the_overlapping_window_from_3_8():
    """The engine's quotas follow the release: 3.7 keeps 11 window slots, 3.8 one more (KafkaVersion
    quota_keeps_overlapping_window)."""
    for version, slots in (("3.7", 11), ("3.8", 12)):
        engine, _, _ = started(small(kafka={"version": version}))
        assert engine.quotas.bytes.shape[-1] == slots and engine.quotas.overlapping is (version == "3.8")


def test_restart_forgets_only_that_brokers_sensors():
    qm = ReplicationQuotaManager(2, window_ms=1000, samples=11, kip542=False)
    qm.update_quota(limits(2, leader_replication=1.0))
    qm.record(LEADER_REPLICATION, np.array([500.0, 500.0]), T0)
    qm.reset_broker(0)
    assert qm.exceeded(T0 + 100)[LEADER_REPLICATION].tolist() == [False, True]
    assert qm.t0[LEADER_REPLICATION, 0] == -1 and qm.bytes[:, 0].sum() == 0


def grid_engine(version: str = "2.4", kip542: bool = False, rates: dict | None = None):
    """Partition t-0 on [1, 2, 3] led by 1, followers 2 (in the ISR) and 3 (out of it, listed on both sides)."""
    events = [{"at": "0s", "config": {"broker": "all", **(rates or {})}}] if rates else []
    if not kip542:
        events.append({"at": "0s", "config": {"topic": "t", "leader.replication.throttled.replicas": "0:1",
                                              "follower.replication.throttled.replicas": "0:2,0:3"}})
    engine, _, _ = started(small(kafka={"version": version, "kip542": kip542}, events=events))
    engine.s.in_isr[0] = [True, True, False]
    return engine


def test_held_back_only_out_of_the_isr_and_only_while_exceeded():
    """A12: the throttled follower 3 (not in the ISR) is held on both sides once the quotas are exceeded;
    follower 2, throttled but in the ISR, never is."""
    engine = grid_engine(rates={"leader.replication.throttled.rate": "100B/s", "follower.replication.throttled.rate": "100B/s"})
    qm, s = engine.quotas, engine.s
    topo = engine.fetchers.topology()
    now = engine.scenario.start_ms + 100
    quiet = qm.throttle(now, 100, s, topo.leader_mask, topo.lb, topo.rbi)
    assert not quiet.held_leader.any() and not quiet.held_follower.any()
    rep_l, rep_f, rea_l, rea_f = quiet.classes.masks
    assert rep_l[0].tolist() == [False, True, True]     # the leader's listed replica serves both followers
    assert rep_f[0].tolist() == [False, True, True]     # both followers are listed
    assert not rea_l.any() and not rea_f.any()
    qm.record(LEADER_REPLICATION, np.array([1000.0, 0, 0]), now)
    qm.record(FOLLOWER_REPLICATION, np.array([0, 0, 1000.0]), now)
    busy = qm.throttle(now + 100, 100, s, topo.leader_mask, topo.lb, topo.rbi)
    assert busy.held_leader[0].tolist() == [False, False, True]
    assert busy.held_follower[0].tolist() == [False, False, True]


def test_kip542_classes_adding_replicas_by_the_reassignment_quotas_configured():
    """§5.2: an adding replica's traffic counts against the reassignment quota where the broker has one,
    else against KIP-73's (not listed here, so unthrottled)."""
    engine = grid_engine(version="2.4", kip542=True, rates={"leader.reassignment.throttled.rate": "100B/s"})
    qm, s = engine.quotas, engine.s
    s.adding[0] = [False, False, True]
    topo = engine.fetchers.topology()
    now = engine.scenario.start_ms + 100
    rep_l, rep_f, rea_l, rea_f = qm.throttle(now, 100, s, topo.leader_mask, topo.lb, topo.rbi).classes.masks
    assert rea_l[0].tolist() == [False, False, True]   # leader 1 has a leader reassignment rate
    assert not rea_f.any()                             # follower 3 has no follower reassignment rate
    assert not rep_l.any() and not rep_f.any()         # and no replication lists are set
    qm.record(LEADER_REASSIGNMENT, np.array([1000.0, 0, 0]), now)
    held = qm.throttle(now + 100, 100, s, topo.leader_mask, topo.lb, topo.rbi)
    assert held.held_leader[0].tolist() == [False, False, True] and not held.held_follower.any()


def test_moved_bytes_are_recorded_against_each_class_owner():
    """A14: leader-side classes count on the leader's broker, follower-side ones on the follower's."""
    engine = grid_engine(rates={"leader.replication.throttled.rate": "1MB/s"})
    qm, s = engine.quotas, engine.s
    topo = engine.fetchers.topology()
    now = engine.scenario.start_ms + 100
    throttle = qm.throttle(now, 100, s, topo.leader_mask, topo.lb, topo.rbi)
    moved = np.array([[0.0, 700.0, 1000.0]])
    qm.record_moved(throttle, moved, now)
    window = (now - qm.t0[:, :, None]) // 1000 % 11
    current = np.take_along_axis(qm.bytes, np.maximum(window, 0), axis=2)[..., 0]
    assert current[LEADER_REPLICATION].tolist() == [1700.0, 0.0, 0.0]
    assert current[FOLLOWER_REPLICATION].tolist() == [0.0, 700.0, 1000.0]
    assert qm.bytes[[LEADER_REASSIGNMENT, FOLLOWER_REASSIGNMENT]].sum() == 0
