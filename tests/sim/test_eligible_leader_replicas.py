"""Eligible leader replicas (KIP-966, docs/semantics.md §6): off by default in 4.0, on for new 4.1 clusters,
refused before 4.0; the ELR keeps the replicas that left the ISR under min ISR electable."""

from __future__ import annotations

import numpy as np
import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.model import election
from replicaflow.sim.scenario import parse_scenario
from replicaflow.sim.snapshot import describe_now
from tests.sim.conftest import SCENARIOS, rows, small, started
from tests.sim.test_controller_releases import run_until


def elr_story(version: str, **kafka):
    """min ISR 2: 3 stalls out of the ISR, 2 shuts down cleanly at 20 s (ISR [1] < 2), 1 crashes at 25 s
    (KRaft session 9 s: fenced at 34 s), 2 returns at 40 s, 1 at 50 s (stalled until 55 s)."""
    topic = {**small()["topics"][0], "min_insync_replicas": 2}
    return started(small(kafka={"version": version, "replica_lag_time_max": "10s", **kafka}, topics=[topic], events=[
        {"at": "0s", "stall_follower": {"broker": 3}},
        {"at": "20s", "broker_down": {"broker": 2, "controlled": True}},
        {"at": "25s", "broker_down": 1}, {"at": "40s", "broker_up": 2}, {"at": "50s", "broker_up": 1},
        {"at": "50s", "stall_follower": {"broker": 1, "for": "5s"}}]))


def members(s, mask) -> list[int]:
    return s.replica_ids(0, mask[0])


def test_the_release_default_and_the_refusal_before_4_0():
    """``eligible.leader.replicas.version`` (MetadataVersion.isElrSupported, 4.0): present but off in 4.0, on
    for new clusters from 4.1; replicaflow refuses the field before 4.0 with one sentence."""
    defaults = {v: parse_scenario(small(kafka={"version": v}), SCENARIOS, "<t>").kafka.eligible_leader_replicas
                for v in ("3.9", "4.0", "4.1")}
    assert defaults == {"3.9": False, "4.0": False, "4.1": True}
    assert parse_scenario(small(kafka={"version": "4.0", "eligible_leader_replicas": True}), SCENARIOS,
                          "<t>").kafka.eligible_leader_replicas
    with pytest.raises(ReplicaflowError, match="eligible_leader_replicas.*need Kafka 4.0 or later, not 3.9"):
        parse_scenario(small(kafka={"version": "3.9", "controller": "kraft", "eligible_leader_replicas": True}),
                       SCENARIOS, "<t>")


def test_next_elr_follows_the_isr_under_min_isr():
    """PartitionChangeBuilder.maybePopulateTargetElr: below min ISR the ELR is old ELR + old ISR - new ISR -
    unclean shutdowns, LastKnownElr the rest that left; at min ISR both empty."""
    old_isr = np.array([[True, True, False], [True, True, False], [True, False, False]])
    new_isr = np.array([[True, False, False], [True, True, False], [False, False, False]])
    elr = np.array([[False, False, False], [False, False, True], [False, True, False]])
    lke = np.zeros_like(elr)
    unclean = np.array([[False, False, False], [False, False, False], [False, True, False]])
    new_elr, new_lke = election.next_elr(old_isr, new_isr, elr, lke, [2, 2, 2], unclean)
    assert new_elr.tolist() == [[False, True, False], [False] * 3, [True, False, False]]
    assert new_lke.tolist() == [[False] * 3, [False] * 3, [False, True, False]]


def test_elect_leader_takes_a_live_elr_member_only_when_the_isr_is_empty():
    """PartitionChangeBuilder.isValidNewLeader: an ELR member leads (cleanly) when the ISR is empty."""
    live = np.array([[False, True, True], [True, True, False]])
    isr = np.array([[False, False, False], [True, False, False]])
    elr = np.array([[False, False, True], [False, True, False]])
    slot, unclean = election.elect_leader(live, isr, False, elr)
    assert slot.tolist() == [2, 0] and unclean.tolist() == [False, False]
    slot, _ = election.elect_leader(live, isr, False)
    assert slot.tolist() == [-1, 0]


def test_with_elr_on_the_isr_empties_and_the_clean_shutdown_replica_is_elected_back():
    """4.1 (ELR on): 2's clean shutdown at 20 s leaves ISR [1] < min ISR 2, so 2 enters the ELR; 1 fenced at
    34 s empties the ISR (ELR [2,1] — ReplicationControlManager.handleBrokerFenced) and the partition is
    offline; 2 returning at 40 s is elected cleanly from the ELR (ISR [2], ELR [1], no unclean election);
    1 back from a crash at 50 s registers as an unclean shutdown and moves to LastKnownElr
    (handleBrokerUncleanShutdown); once it rejoins (ISR [1,2] = min ISR) both are empty. The HW does not
    move while the ISR is under min ISR (Partition.maybeIncrementLeaderHW)."""
    engine, _, _ = elr_story("4.1")
    s = engine.s
    run_until(engine, 21)
    assert members(s, s.in_isr) == [1] and members(s, s.elr) == [2]
    hw_at_21 = int(s.hw[0])
    run_until(engine, 35)
    assert members(s, s.in_isr) == [] and sorted(members(s, s.elr)) == [1, 2] and s.leader_id(0) == -1
    assert int(s.hw[0]) == hw_at_21
    text = describe_now(s, engine.configs, 0)
    assert "Leader: none\tReplicas: 1,2,3\tIsr: \tElr: 1,2\tLastKnownElr: " in text
    run_until(engine, 41)
    assert s.leader_id(0) == 2 and members(s, s.in_isr) == [2] and members(s, s.elr) == [1]
    assert engine.controller.unclean_elections == 0
    run_until(engine, 52)
    assert members(s, s.in_isr) == [2] and members(s, s.elr) == [] and members(s, s.last_known_elr) == [1]
    assert "Isr: 2\tElr: \tLastKnownElr: 1" in describe_now(s, engine.configs, 0)
    run_until(engine, 60)
    assert members(s, s.in_isr) == [1, 2] and not s.elr.any() and not s.last_known_elr.any()


def test_with_elr_off_in_4_0_the_last_isr_member_stays_and_the_partition_stays_offline():
    """4.0 (ELR off by default): the fenced leader 1 stays the ISR's last member, so 2 returning at 40 s
    cannot lead; the partition is offline until 1 returns at 50 s; no ELR is ever shown."""
    engine, _, _ = elr_story("4.0")
    s = engine.s
    run_until(engine, 45)
    assert members(s, s.in_isr) == [1] and s.leader_id(0) == -1 and not s.elr.any()
    assert "Isr: 1\tElr: \tLastKnownElr: " in describe_now(s, engine.configs, 0)
    run_until(engine, 51)
    assert s.leader_id(0) == 1


def test_the_elr_reaches_the_isr_telemetry_and_an_elr_only_change_is_a_row():
    """KRaft's PartitionChangeRecord carries Isr, Elr and LastKnownElr: every ``isr`` row of the 4.1 story
    holds the ELR the controller wrote with it, and 1's registration after its crash (50 s,
    ReplicationControlManager.handleBrokerUncleanShutdown) is a row of its own that moves 1 from the ELR to
    LastKnownElr and keeps the ISR [2] and the leader epoch (not a shrink or an expansion)."""
    engine, writer, _ = elr_story("4.1")
    run_until(engine, 60)
    got = [((r["ts_ms"] - engine.clock.start_ms) / 1000, r["isr"], r["elr"], r["last_known_elr"], r["leader_epoch"])
           for r in rows(writer, "isr")]
    assert got == [(0.0, [1, 2, 3], [], [], 0), (15.0, [1, 2], [], [], 0),  # 3 stalled out (lag 10 s)
                   (20.0, [1], [2], [], 0), (34.0, [], [1, 2], [], 1), (40.0, [2], [1], [], 2),
                   (50.0, [2], [], [1], 2),  # the ELR-only change: same ISR, same leader epoch
                   (55.0, [1, 2], [], [], 2)]
