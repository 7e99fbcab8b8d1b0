"""Engine behaviour with numbers: stuck follower (§1.3), rejoin (§6), reassignment completion, A16 (§8)."""

from __future__ import annotations

import numpy as np

from tests.sim.conftest import simulate, small


def base(**over) -> dict:
    return small(name="engine-test", **over)


def isr_rows(run) -> list[tuple[float, list[int], int]]:
    isr = run.table("telemetry", "isr")
    return [((r.ts_ms - run.scenario.start_ms) / 1000, sorted(r.isr), r.leader_epoch) for r in isr.itertuples()]


def test_stuck_follower_leaves_between_lag_and_one_and_a_half_lag():
    for stop_s in (20.0, 21.3, 24.9):
        run = simulate(base(events=[{"at": f"{stop_s}s", "stall_follower": {"broker": 3}}]))
        shrink = [t for t, isr, _ in isr_rows(run)[1:] if isr == [1, 2]]
        assert shrink, stop_s
        # the last fetch happened at the tick before the stall; checks run every lag/2 = 5 s from start
        assert stop_s + 10 <= shrink[0] <= stop_s + 15, (stop_s, shrink[0])
        assert run.cluster("IsrShrinksPerSec").iloc[-1] == 1


def test_returning_broker_rejoins_once_caught_up():
    run = simulate(base(events=[{"at": "20s", "broker_down": 3}, {"at": "60s", "broker_up": 3}]))
    rows = isr_rows(run)
    # lag 10 s < session timeout 18 s: the leader's own check removes broker 3 first (same epoch 0)
    removed = next(r for r in rows if r[1] == [1, 2])
    assert 30 <= removed[0] <= 35 and removed[2] == 0
    back = [r for r in rows if r[1] == [1, 2, 3] and r[0] > 60]
    assert back and back[0][2] == 0 and back[0][0] < 62  # a leader-driven expansion once caught up
    assert len(rows) == 3  # the session expiry found nothing left to change
    urp = run.cluster("UnderReplicatedPartitions")
    assert urp.loc[40] == 1 and urp.loc[65:].max() == 0
    assert run.metric("IsrExpandsPerSec")[1].iloc[-1] == 1
    # a down broker is not scraped at all
    bm = run.table("truth", "broker_metrics")
    t = (bm["ts_ms"] - run.scenario.start_ms) / 1000
    assert set(bm[(t > 20) & (t < 60)]["broker"]) == {1, 2}


def test_leader_failure_elects_first_live_isr_member_and_offline_without_one():
    run = simulate(base(events=[{"at": "10s", "broker_down": 1}, {"at": "12s", "broker_down": 2},
                                {"at": "40s", "broker_down": 3}, {"at": "70s", "broker_up": 1},
                                {"at": "80s", "broker_up": 3}]))
    leaders = run.table("telemetry", "leaders")
    seq = [(round((r.ts_ms - run.scenario.start_ms) / 1000, 1), r.leader) for r in leaders.itertuples()]
    # broker 1's session expires at 28 s; 2 is dead already: the first live ISR member is 3
    assert seq[:2] == [(0.0, 1), (28.0, 3)]
    assert (58.0, -1) in seq  # 3's session expires: no live ISR member, the partition goes offline
    assert seq[-1] == (80.0, 3)  # the last ISR member returns and leads again
    isr = isr_rows(run)
    assert next(r for r in isr if r[0] == 58.0)[1] == [3]  # the last member stays in the ISR
    offline = run.metric("OfflinePartitionsCount")
    assert set(offline.loc[70:79].dropna(axis=1, how="all").columns) == {1}  # broker 1 is the only live one
    assert (offline.loc[70:79][1] == 1).all() and offline.loc[80:][1].max() == 0


def test_reassignment_completes_and_removed_replicas_disappear():
    run = simulate(base(events=[{"at": "5s", "reassign": {"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [2, 3, 4]}]}}],
        cluster={"brokers": 4, "network_in": "1GB/s", "network_out": "1GB/s"}))
    a = run.table("telemetry", "assignments")
    assert [list(r) for r in a["replicas"]] == [[1, 2, 3], [2, 3, 4, 1], [2, 3, 4]]
    assert [list(r) for r in a["adding"]] == [[], [4], []]
    assert [list(r) for r in a["removing"]] == [[], [1], []]
    done_s = (a["ts_ms"].iloc[-1] - run.scenario.start_ms) / 1000
    assert 5 < done_s < 7  # 1 MB at ~21 MB/s per partition
    leaders = run.table("telemetry", "leaders")
    assert leaders["leader"].iloc[-1] == 2  # the leader left the target: re-elected from the target
    fetchers = run.table("telemetry", "fetchers")
    mine = fetchers[fetchers["broker"] == 4]
    assert list(zip(mine["action"], mine["leader"], strict=True)) == [("added", 1), ("added", 2)]
    assert run.metric("PartitionCount")[1].iloc[-1] == 0


def test_a16_throttled_moves_take_about_ten_seconds():
    """docs/semantics.md §8 (A16) / Kafka's ReplicationQuotasTest: 6 x 10 MB moved, leader 1 MB/s, follower 3 MB/s."""
    leader_list = ",".join(f"{p}:{p + 1}" for p in range(6))
    follower_list = ",".join(f"{p}:{7 if p < 3 else 8}" for p in range(6))
    moves = [{"topic": "t", "partition": p, "replicas": [7 if p < 3 else 8]} for p in range(6)]
    moves += [{"topic": "free", "partition": p, "replicas": [7 if p < 3 else 8]} for p in range(6)]
    run = simulate({
        "name": "a16", "duration": "1m", "tick": "100ms", "scrape_interval": "1s",
        "kafka": {"version": "2.0"},
        "cluster": {"brokers": 8, "network_in": "1GB/s", "network_out": "1GB/s"},
        "topics": [{"name": "t", "partitions": 6, "replication_factor": 1, "assignment": [[p + 1] for p in range(6)],
                    "message_size": "1KB", "initial_size": "10MB"},
                   {"name": "free", "partitions": 6, "replication_factor": 1,
                    "assignment": [[p + 1] for p in range(6)], "message_size": "1KB", "initial_size": "10MB"}],
        "events": [
            {"at": "0s", "config": {"broker": "all", "leader.replication.throttled.rate": "1MB/s",
                                    "follower.replication.throttled.rate": "3MB/s"}},
            {"at": "0s", "config": {"topic": "t", "leader.replication.throttled.replicas": leader_list,
                                    "follower.replication.throttled.replicas": follower_list}},
            {"at": "1s", "reassign": {"version": 1, "partitions": moves}},
        ],
    })
    a = run.table("telemetry", "assignments")
    done = a[(a["ts_ms"] > run.scenario.start_ms + 1000) & a["adding"].map(len).eq(0)]
    secs = {(r.topic, r.partition): (r.ts_ms - run.scenario.start_ms - 1000) / 1000 for r in done.itertuples()}
    throttled = np.array([secs[("t", p)] for p in range(6)])
    free = np.array([secs[("free", p)] for p in range(6)])
    assert ((throttled >= 9) & (throttled <= 30)).all(), throttled
    assert ((throttled >= 9.5) & (throttled <= 12)).all(), throttled  # the aim
    rate = 10e6 / throttled
    assert ((rate >= 0.5e6) & (rate <= 1.1e6)).all(), rate
    assert free.max() < throttled.min() / 5, (free, throttled)
