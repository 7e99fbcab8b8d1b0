"""ReplicaFetcherManager (sim/fetcher_manager.py): topology, fetch caps and shares, bytes, failures, `fetchers`.

Kafka: kafka.server.ReplicaFetcherManager / AbstractFetcherManager (threads keyed by leader and
fetcher id), ReplicaFetcherThread (replica.fetch.max.bytes, replica.fetch.response.max.bytes) and
the KIP-461 failed partitions of AbstractFetcherThread (docs/semantics.md §4).
"""

from __future__ import annotations

import numpy as np

from replicaflow.model.configs import FETCH_MAX_BYTES, FETCH_RESPONSE_MAX_BYTES
from replicaflow.sim.fetcher_manager import (
    REASSIGNMENT_IN,
    REASSIGNMENT_OUT,
    REPLICATION_IN,
    REPLICATION_OUT,
)
from replicaflow.sim.state import FETCH_ADDED, FETCH_FAILED, FETCH_REMOVED, Reassignment
from tests.sim.conftest import rows, small, started


def fetch_once(engine, now):
    """One fetch round with nothing produced (leader LEOs as they are), as the tick runs it."""
    topo = engine.fetchers.topology()
    leader_leo = engine.s.leader_leo()
    return engine.fetchers.fetch(now, topo, leader_leo, np.zeros(engine.s.n_brokers)), topo


def test_topology_threads_and_who_fetches():
    """Each follower slot maps to the thread (follower, leader, fetcher id); down, failed and dead ones don't fetch."""
    engine, _, _ = started(small(kafka={"version": "3.7", "num_replica_fetchers": 2},
                                 topics=[{"name": "t", "partitions": 2, "replication_factor": 3,
                                          "assignment": [[1, 2, 3], [2, 3, 1]]}]))
    s, fm = engine.s, engine.fetchers
    topo = fm.topology()
    assert topo.fetch_ok.tolist() == [[False, True, True], [False, True, True]]
    assert topo.fetch_everywhere
    n_b, nf = 3, 2
    expected = [((s.rbi[p, k] * n_b + s.rbi[p, 0]) * nf + s.fid[p]) for p in range(2) for k in range(3)]
    assert topo.thread.tolist() == expected
    assert fm.topology() is topo  # cached until the layout changes
    fm.mark_failed(0, 1)
    s.up[2] = False  # broker 3 (index 2), without an event: nothing tells the manager ...
    after = fm.topology()
    assert after is not topo  # ... but mark_failed bumped the layout version
    # t-0: follower 2 failed, follower 3 down; t-1 (leader 2): 3 down, 1 fetches
    assert after.fetch_ok.tolist() == [[False, False, False], [False, False, True]]
    assert not after.fetch_everywhere


def test_one_partition_catches_up_at_most_a_fetch_size_per_round_trip():
    """§1.7: two 50 ms round trips per 100 ms tick, 1 MiB each: a follower 3 MB behind gets 2 MiB of 1 kB messages."""
    engine, _, _ = started(small())
    s = engine.s
    s.log_leo[0, 1] -= 3000
    fetch, _ = fetch_once(engine, engine.scenario.start_ms + 100)
    assert engine.fetchers.rounds == 2
    assert fetch.msgs[0].tolist() == [0, 2 * FETCH_MAX_BYTES // 1000, 0]
    assert fetch.fetched[0].tolist() == [False, True, True]  # the caught-up follower fetches too (no data)


def test_a_full_response_is_shared_in_proportion():
    """12 partitions on one thread each want 2 MiB: the 2 x 10 MiB response cap scales each to 20/24."""
    engine, _, _ = started(small(topics=[{"name": "t", "partitions": 12, "replication_factor": 2,
                                          "assignment": [[1, 2]] * 12, "message_size": "1KB",
                                          "initial_size": "3MB"}]))
    s = engine.s
    s.log_leo[:, 1] = 0
    fetch, _ = fetch_once(engine, engine.scenario.start_ms + 100)
    got = fetch.msgs[:, 1]
    share = 2 * FETCH_RESPONSE_MAX_BYTES / 12
    assert (got == got[0]).all() and (share - 1000 < got[0] * 1000 <= share)
    assert got.sum() * 1000 <= 2 * FETCH_RESPONSE_MAX_BYTES


def test_a_slow_nic_limits_what_its_followers_get():
    """The follower broker's network in (1 MB/s = 100 kB per tick) caps its fetches."""
    engine, _, _ = started(small(events=[{"at": "0s", "slow_network": {"broker": 3, "network_in": "1MB/s",
                                                                          "for": "1m"}}]))
    s = engine.s
    s.log_leo[0, 1:] -= 3000
    fetch, _ = fetch_once(engine, engine.scenario.start_ms + 100)
    assert fetch.msgs[0, 1] == 2 * FETCH_MAX_BYTES // 1000  # broker 2's NIC is fast
    assert 99 <= fetch.msgs[0, 2] <= 100


def test_appended_bytes_feed_the_replication_and_reassignment_meters():
    """Replication bytes in on the follower, out on the leader; an adding replica's bytes also as reassignment."""
    engine, _, _ = started(small())
    s = engine.s
    s.log_leo[0, 1] -= 500
    s.log_leo[0, 2] -= 200
    s.adding[0, 2] = True  # broker 3 joins the partition
    s.reassignments[0] = Reassignment(origin=[0, 1], target=[0, 1, 2])
    s.layout_changed()  # as the controller does when it starts a move (the Topology caches the adding replicas)
    now = engine.scenario.start_ms + 100
    fetch, topo = fetch_once(engine, now)
    engine.fetchers.append(fetch, topo, now)
    assert s.traffic[REPLICATION_IN].tolist() == [0, 500_000, 200_000]
    assert s.traffic[REPLICATION_OUT].tolist() == [700_000, 0, 0]
    assert s.traffic[REASSIGNMENT_IN].tolist() == [0, 0, 200_000]
    assert s.traffic[REASSIGNMENT_OUT].tolist() == [200_000, 0, 0]
    assert (s.log_leo[0] == s.log_leo[0, 0]).all()


def test_fetchers_rows_follow_failures_and_leader_changes():
    engine, writer, logs = started(small())
    s, fm = engine.s, engine.fetchers
    start = engine.scenario.start_ms
    first = rows(writer, "fetchers")
    assert [(r["broker"], r["leader"], r["action"]) for r in first] == [(2, 1, "added"), (3, 1, "added")]
    fm.mark_failed(0, 2)
    fm.sync(start + 100)
    assert rows(writer, "fetchers")[-1] == {"ts_ms": start + 100, "broker": 3, "leader": 1,
                                            "fetcher_id": int(s.fid[0]), "topic": "t", "partition": 0,
                                            "action": "failed"}
    fm.sync(start + 200)
    assert len(rows(writer, "fetchers")) == 3  # an unchanged topology finds nothing
    engine.controller.elect(0, start + 300, exclude=0)  # broker 2 leads: the failure clears with the epoch
    fm.sync(start + 300)
    last = [(r["broker"], r["leader"], r["action"]) for r in rows(writer, "fetchers")[3:]]
    assert last == [(1, 2, "added"), (2, 2, "removed"), (3, 2, "added")]  # the new leader stops fetching
    assert s.fetch_state[0].tolist() == [FETCH_ADDED, FETCH_REMOVED, FETCH_ADDED]
    assert [e["kind"] for e in logs if e["kind"].startswith("fetcher")].count("fetcher_added") == 4


def test_a_dead_thread_stops_its_partitions_until_the_broker_restarts():
    """≤ 2.2: the thread (follower 2, leader 1, fetcher 0) dies: both partitions it fetches stop; a restart clears it."""
    engine, _, _ = started(small(kafka={"version": "2.2"},
                                 topics=[{"name": "t", "partitions": 3, "replication_factor": 2,
                                          "assignment": [[1, 2], [1, 2], [3, 2]]}]))
    s, fm = engine.s, engine.fetchers
    fm.thread_died(follower=1, leader=0, fetcher_id=0)
    assert s.thread_dead.tolist() == [[False, True], [False, True], [False, False]]
    assert fm.topology().fetch_ok[:, 1].tolist() == [False, False, True]
    fm.broker_restarted(1)
    assert not s.thread_dead.any() and fm.topology().fetch_ok[:, 1].all()


def test_stopped_replicas_leave_their_fetcher_unless_down():
    engine, writer, _ = started(small())
    s = engine.s
    s.up[2] = False
    engine.fetchers.stop_replicas(0, [1, 2], engine.scenario.start_ms + 100)
    stopped = rows(writer, "fetchers")[2:]
    assert [(r["broker"], r["leader"], r["action"]) for r in stopped] == [(2, 1, "removed")]
    s.fetch_state[0, 1] = FETCH_FAILED
    engine.fetchers.stop_replicas(0, [1], engine.scenario.start_ms + 200)
    assert rows(writer, "fetchers")[-1]["action"] == "removed"
