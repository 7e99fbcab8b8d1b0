"""The ISR rules at the releases where Kafka changed them (docs/semantics.md §1), on one hand-made
partition (leader 1, followers 2 and 3, lag 10 s), the same state run as each release of a pair."""

from __future__ import annotations

import numpy as np
import pytest

from replicaflow.model import isr
from tests.sim.test_partition import one_partition


@pytest.mark.parametrize(("version", "leaves_at_s"), [("0.10.1", 20), ("0.10.2", 15)])
def test_isr_check_period(version, leaves_at_s):
    """ReplicaManager.startup schedules maybeShrinkIsr every lag up to 0.10.1 and every lag / 2 from 0.10.2
    (KAFKA-4485): a follower caught up at the start leaves at the first check strictly after lag."""
    engine, s, partition, _, _ = one_partition(version=version)
    start = engine.scenario.start_ms
    topo = engine.fetchers.topology()
    s.log_leo[0, 0] += 10
    s.v_lcu[0, 2] = start
    left = None
    for now in range(start + 100, start + 30_001, 100):
        partition.shrink(now, topo, s.leader_leo())
        if not s.in_isr[0, 2]:
            left = now - start
            break
    assert left == leaves_at_s * 1000


@pytest.mark.parametrize(("version", "stays"), [("2.0", False), ("2.1", True)])
def test_idle_follower_with_the_leaders_leo(version, stays):
    """Partition.getOutOfSyncReplicas: from 2.1 a follower whose LEO equals the leader's is in sync however
    long ago it last fetched; before, only the time since it was last caught up counts."""
    engine, s, partition, _, _ = one_partition(version=version)
    start = engine.scenario.start_ms
    s.v_leo[0, 2] = s.log_leo[0, 0]
    s.v_lcu[0, 2] = start
    partition.shrink(start + 15_000, engine.fetchers.topology(), s.leader_leo())
    assert bool(s.in_isr[0, 2]) is stays


@pytest.mark.parametrize(("version", "joins"), [("2.0", True), ("2.1", False)])
def test_expansion_and_the_epoch_start(version, joins):
    """Partition.maybeExpandIsr: from 2.1 (KAFKA-7128) the follower must also reach the leader epoch's start
    offset; before, reaching the HW is enough."""
    engine, s, partition, _, _ = one_partition(version=version)
    s.in_isr[0] = [True, True, False]
    s.epoch_start[0] = int(s.hw[0]) + 5
    s.v_leo[0, 2] = int(s.hw[0])
    partition.expand(np.array([[False, False, True]]), engine.fetchers.topology(), engine.scenario.start_ms + 100)
    assert bool(s.in_isr[0, 2]) is joins


@pytest.mark.parametrize(("version", "hw_held"), [("0.10.1", False), ("0.10.2", True)])
def test_caught_up_follower_outside_the_isr_holds_the_hw(version, hw_held):
    """Partition.maybeIncrementLeaderHW: from 0.10.2 a non-ISR follower caught up within lag holds the HW;
    before, the HW is the lowest LEO of the ISR alone."""
    engine, s, partition, _, _ = one_partition(version=version)
    now = engine.scenario.start_ms + 1000
    s.in_isr[0] = [True, True, False]
    hw = int(s.hw[0])
    s.log_leo[0, 0] = hw + 20
    s.v_leo[0] = [hw + 20, hw + 20, hw + 5]
    s.v_lcu[0, 2] = now
    partition._view = None
    partition.advance_hw(now, engine.fetchers.topology())
    assert int(s.hw[0]) == (hw + 5 if hw_held else hw + 20)


def test_caught_up_rule_before_and_after_0_10_2():
    """Replica.updateLogReadResult: from 0.10.2 a fetch reaching the leader LEO of the previous fetch is caught
    up as of that fetch (A1: lastCaughtUp = t1). On 0.9 – 0.10.1 ReplicaManager.readFromLocalLog sets
    ``isReadFromLogEnd`` from the LEO before the read minus the read's start (``fetchOffsetMetadata``, the
    fetch offset): only a fetch that starts at the leader's LEO counts, however far its read gets."""
    t1, t2 = 1000, 2000
    after = isr.last_caught_up_after_fetch(np.array([10]), 15, t2, 10, t1, np.array([0]), True, kafka_4485=True)
    before = isr.last_caught_up_after_fetch(np.array([10]), 15, t2, 10, t1, np.array([0]), True, kafka_4485=False)
    assert after.tolist() == [t1] and before.tolist() == [0]
    at_end = isr.last_caught_up_after_fetch(np.array([15]), 15, t2, 10, t1, np.array([0]), True, kafka_4485=False)
    assert at_end.tolist() == [t2]                      # it asked for nothing new: caught up now


@pytest.mark.parametrize(("version", "shrinks"), [("0.10.1", True), ("0.10.2", False)])
def test_steady_produce_churns_the_isr_only_before_0_10_2(version, shrinks):
    """KAFKA-4485 on a whole run: 100 kB/s of 1 kB messages, no fault. On 0.10.1 every fetch finds new messages,
    so no follower is ever caught up (readFromLocalLog's start-offset test): both leave at the first check after
    lag (20 s, the check running every lag) and join again once a fetch reaches the HW, which only the ISR holds
    there (§1.5); at every later check they leave again. On 0.10.2 the ISR stays whole."""
    from tests.sim.conftest import simulate, small

    run = simulate(small(duration="45s", kafka={"version": version, "replica_lag_time_max": "10s"}))
    isr_rows = run.table("telemetry", "isr")
    t_s = ((isr_rows["ts_ms"] - run.scenario.start_ms) / 1000).tolist()
    sizes = [len(i) for i in isr_rows["isr"]]
    if not shrinks:
        assert sizes == [3]
        return
    left = [t for t, n in zip(t_s, sizes, strict=True) if n == 1]
    assert left == [20.0, 30.0, 40.0]                   # each check every lag (10 s) from the broker's start
    assert all(n in (1, 2, 3) for n in sizes) and sizes[-1] == 3


def test_0_8_2_new_leader_forgets_follower_offsets():
    """Partition.makeLeader (0.8.2) sets every follower's LEO to unknown, which stamps its update time: the
    stuck clock restarts and a follower of unknown LEO is not 'slow' (more than replica.lag.max.messages)."""
    engine, s, partition, _, _ = one_partition(version="0.8.2", replica_lag_max_messages=100)
    start = engine.scenario.start_ms
    s.log_leo[0, 0] += 5000
    partition.make_leader(0, 0, 1, start + 20_000)          # broker 1 becomes leader again, a new epoch
    assert s.v_leo[0, 1:].tolist() == [-1, -1] and s.v_lft[0, 1:].tolist() == [start + 20_000] * 2
    partition.shrink(start + 20_000, engine.fetchers.topology(), s.leader_leo())
    assert s.in_isr[0].all()                                   # not slow, not stuck
    partition.shrink(start + 40_000, engine.fetchers.topology(), s.leader_leo())
    assert s.in_isr[0].tolist() == [True, False, False]        # stuck: no fetch for more than lag since
