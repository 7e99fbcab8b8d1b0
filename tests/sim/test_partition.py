"""Partition (sim/partition.py) on hand-made states: fetch state, ISR expand/shrink, AlterPartition, HW.

Kafka: kafka.cluster.Partition (updateFollowerFetchState, maybeExpandIsr, maybeShrinkIsr,
maybeIncrementLeaderHW, makeLeader) and ReplicaManager's isr-expiration task every lag/2
(docs/semantics.md §1.1–§1.6). The rules are model.isr's; these tests check the grid application.
"""

from __future__ import annotations

import numpy as np

from replicaflow.model.configs import MIN_ISR
from tests.sim.conftest import rows, small, started


def one_partition(**kafka):
    engine, writer, logs = started(small(kafka={"version": "3.7", "replica_lag_time_max": "10s", **kafka}))
    return engine, engine.s, engine.partition, writer, logs


def test_fetch_state_update_on_the_grid():
    """A1 on two followers at once, and a replica that did not fetch keeps its state (§1.1)."""
    engine, s, partition, _, _ = one_partition()
    t1, t2, t3 = (engine.scenario.start_ms + d for d in (1000, 2000, 3000))
    s.v_leo[0], s.v_lfl[0], s.v_lft[0], s.v_lcu[0] = [10, -1, -1], [0, 0, 0], [0, 0, 0], [0, 0, 0]
    both = np.array([[False, True, True]])
    s.log_leo[0] = [10, 5, 5]
    partition.record_fetches(both, np.full((1, 3), 10), t1)
    assert s.v_leo[0, 1:].tolist() == [5, 5] and s.v_lcu[0, 1:].tolist() == [0, 0]
    s.log_leo[0] = [15, 10, 5]
    partition.record_fetches(np.array([[False, True, False]]), np.full((1, 3), 15), t2)
    assert s.v_lcu[0, 1:].tolist() == [t1, 0] and s.v_lft[0, 1:].tolist() == [t2, t1]  # 3 did not fetch
    s.log_leo[0] = [15, 15, 5]
    partition.record_fetches(both, np.full((1, 3), 15), t3)
    assert s.v_lcu[0, 1:].tolist() == [t3, 0]


def test_shrink_runs_every_half_lag_and_needs_strictly_more_than_lag():
    """§1.2/§1.3: follower 3 last caught up at the start; lag 10 s; the checks run at start + k·5 s."""
    engine, s, partition, writer, logs = one_partition()
    start = engine.scenario.start_ms
    s.log_leo[0, 0] += 100
    s.v_lcu[0, 2] = start
    s.v_lcu[0, 1] = start + 60_000  # follower 2 keeps up
    topo = engine.fetchers.topology()
    leader_leo = s.leader_leo()
    partition.shrink(start + 10_000, topo, leader_leo)   # exactly lag: stays
    partition.shrink(start + 12_000, topo, leader_leo)   # no check due between the half-lag instants
    assert s.in_isr[0].all()
    partition.shrink(start + 15_000, topo, leader_leo)
    assert s.in_isr[0].tolist() == [True, True, False]
    assert rows(writer, "isr")[-1] == {"ts_ms": start + 15_000, "topic": "t", "partition": 0, "isr": [1, 2],
                                       "leader_epoch": 0, "elr": [], "last_known_elr": []}
    assert s.shrinks.tolist() == [1, 0, 0] and s.partition_epoch[0] == 1
    shrink = next(e for e in logs if e["kind"] == "isr_shrink")
    assert shrink["out_of_sync"] == [{"broker": 3, "leo": int(s.v_leo[0, 2]), "last_caught_up_ms": start}]


def test_legacy_message_rule_up_to_0_8_2():
    """§1.6: more than replica.lag.max.messages behind is out even when fetching (checked every lag, at 10 s)."""
    engine, s, partition, writer, _ = one_partition(version="0.8.2", replica_lag_max_messages=100)
    start = engine.scenario.start_ms
    now = start + 10_000
    s.v_lft[0] = now
    s.log_leo[0, 0] += 101
    s.v_leo[0, 2] = s.log_leo[0, 0] - 101
    s.v_leo[0, 1] = s.log_leo[0, 0] - 100
    partition.shrink(now, engine.fetchers.topology(), s.leader_leo())
    assert s.in_isr[0].tolist() == [True, True, False]


def test_expansion_needs_hw_and_the_epoch_start_and_takes_one_replica_per_tick():
    """§1.4, A7: both outsiders reached the HW, only those at or past the epoch start qualify; one per tick."""
    engine, s, partition, writer, logs = one_partition()
    now = engine.scenario.start_ms + 100
    s.in_isr[0] = [True, False, False]
    s.epoch_start[0] = int(s.hw[0])
    topo = engine.fetchers.topology()
    fetched = np.array([[False, True, True]])
    s.v_leo[0, 1:] = [s.hw[0] - 1, s.hw[0] - 1]
    partition.expand(fetched, topo, now)
    assert s.in_isr[0].tolist() == [True, False, False]
    s.v_leo[0, 1:] = [s.hw[0], s.hw[0] + 5]
    partition.expand(fetched, topo, now)
    assert s.in_isr[0].tolist() == [True, True, False]
    partition.expand(fetched, topo, now + 100)
    assert s.in_isr[0].all() and s.expands.tolist() == [2, 0, 0]
    assert [r["isr"] for r in rows(writer, "isr")[-2:]] == [[1, 2], [1, 2, 3]]
    assert [e["kind"] for e in logs[-4:]] == ["isr_expand", "isr_updated", "isr_expand", "isr_updated"]


def test_alter_partition_commits_after_the_delay_and_the_hw_counts_the_proposal():
    """2.7+: the expansion is proposed, counted in the HW at once (§1.5), committed after isr_commit_delay."""
    engine, s, partition, writer, _ = one_partition(isr_commit_delay="500ms")
    now = engine.scenario.start_ms + 100
    s.in_isr[0] = [True, True, False]
    topo = engine.fetchers.topology()
    n_isr_rows = len(rows(writer, "isr"))
    s.log_leo[0, 0] += 50
    s.v_leo[0] = [0, s.hw[0] + 50, s.hw[0] + 10]
    s.epoch_start[0] = 0
    hw0 = int(s.hw[0])
    partition.expand(np.array([[False, False, True]]), topo, now)
    assert s.in_isr[0].tolist() == [True, True, False] and s.pending_at[0] == now + 500 and partition.proposals
    partition.advance_hw(now, topo)
    assert s.hw[0] == hw0 + 10  # min over leader, 2 and the proposed 3
    partition.commit_pending(now + 400)
    assert len(rows(writer, "isr")) == n_isr_rows
    partition.commit_pending(now + 500)
    assert s.in_isr[0].all() and s.pending_at[0] == -1 and not partition.proposals
    assert rows(writer, "isr")[-1]["ts_ms"] == now + 500


def test_hw_is_min_over_members_and_caught_up_outsiders_and_freezes_under_min_isr_from_3_7():
    for version, frozen in (("3.7", True), ("3.6", False)):
        engine, s, partition, _, _ = one_partition(version=version)
        engine.configs.set("topic", "t", MIN_ISR, "2", engine.scenario.start_ms)
        now = engine.scenario.start_ms + 100
        hw0 = int(s.hw[0])
        s.in_isr[0] = [True, False, False]
        s.log_leo[0, 0] = hw0 + 30
        s.v_leo[0, 1:] = [hw0 + 20, hw0 + 40]
        s.v_lcu[0, 1:] = [now, now - 20_000]  # 2 caught up within lag, 3 not
        partition.advance_hw(now, engine.fetchers.topology())
        assert s.hw[0] == (hw0 if frozen else hw0 + 20), version  # under min ISR 2 with an ISR of 1


def test_make_leader_truncates_followers_and_resets_their_fetch_state():
    """A new leader (slot 1): followers truncate to its LEO, ISR members restart caught up now, LEOs unknown."""
    engine, s, partition, _, _ = one_partition()
    now = engine.scenario.start_ms + 100
    s.log_leo[0] = [120, 100, 110]
    s.in_isr[0] = [True, True, False]
    s.failed[0, 2] = True
    partition.make_leader(0, new_slot=1, old_slot=0, now=now)
    assert s.log_leo[0].tolist() == [100, 100, 100]
    assert s.v_leo[0].tolist() == [-1, 100, -1] and s.v_lcu[0].tolist() == [now, now, 0]
    assert s.epoch_start[0] == 100 and s.hw[0] == 100 and not s.failed[0].any()  # the HW was 1000
