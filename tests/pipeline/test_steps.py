"""Each pipeline rule on tiny hand-made telemetry: five clusters analyzed in one Spark job.

ties: changes at exactly a scrape instant, short intervals no scrape sees, an offline partition
counted by the controller, a down broker without rows, meters reset at restart.
v24/v25: URP semantics around KIP-352, reassignments completed / cancelled / stalled, lag gauges.
v36/v37: the min-ISR cap of 3.7 and a topic whose min.insync.replicas changes.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from replicaflow.model.metrics import BROKER_METRICS, jmx
from replicaflow.pipeline.runner import analyze
from tests.pipeline.tele import Tele

URP, UMI, AMI = jmx("UnderReplicatedPartitions"), jmx("UnderMinIsrPartitionCount"), jmx("AtMinIsrPartitionCount")
SHRINKS, EXPANDS = jmx("IsrShrinksPerSec"), jmx("IsrExpandsPerSec")
OFFLINE, LEADERS, PCOUNT = jmx("OfflinePartitionsCount"), jmx("LeaderCount"), jmx("PartitionCount")
REASSIGNING, RMAXLAG, MAXLAG = jmx("ReassigningPartitions"), jmx("ReassignmentMaxLag"), jmx("MaxLag")
BYTES_IN = jmx("ReplicationBytesInPerSec")


def ties() -> Tele:
    t = Tele("ties", "3.7", end_ms=60_000)
    for b in (1, 2, 3):
        t.broker(0, b)
    t.add("configs", 0, entity_type="broker", entity="<default>", name="min.insync.replicas", value="2")
    t.partition(0, "a", 0, [1, 2, 3], 1, [1, 2, 3], epoch=1)
    t.partition(0, "a", 1, [2, 3, 1], 2, [2, 3, 1], epoch=1)
    t.partition(0, "a", 2, [3], -1, [3], epoch=1)
    t.add("isr", 20_000, topic="a", partition=0, isr=[1, 2], leader_epoch=1)       # exactly at a scrape
    t.add("isr", 20_001, topic="a", partition=1, isr=[2, 3], leader_epoch=1)       # just after one
    t.add("isr", 32_000, topic="a", partition=1, isr=[2, 3, 1], leader_epoch=1)    # healed before 40 s
    t.add("isr", 33_000, topic="a", partition=1, isr=[2, 3], leader_epoch=2)       # controller: not counted
    t.add("leaders", 33_000, topic="a", partition=1, leader=2, leader_epoch=2)
    t.add("isr", 34_000, topic="a", partition=1, isr=[2, 3, 1], leader_epoch=2)    # leader expand, epoch 2
    t.broker(40_000, 1, "down")
    t.broker(50_000, 1, "up")
    for ts in range(0, 60_001, 10_000):
        if ts != 40_000:
            t.add("traffic", ts, broker=1, name="ReplicationBytesInPerSec", bytes=100)
    return t


def reassigning(version: str) -> Tele:
    t = Tele(f"v{version.replace('.', '')}", version, end_ms=120_000)
    for b in (1, 2, 3, 4, 5, 6):
        t.broker(0, b)
    # the KIP-352 quirk: adding replicas in the ISR mask an original one that dropped out
    t.partition(0, "m", 0, [1, 2, 3, 4, 5, 6], 1, [1, 4, 5], adding=[4, 5, 6], removing=[1, 2, 3])
    t.partition(0, "m", 1, [1, 2, 3], 1, [1, 2, 3])
    t.partition(0, "m", 2, [1, 2, 3], 1, [1, 2, 3])
    t.partition(0, "m", 3, [1, 2, 3, 6], 1, [1, 2, 3], adding=[6], removing=[3])
    t.add("fetchers", 0, broker=6, leader=1, fetcher_id=0, topic="m", partition=3, action="added")
    t.add("assignments", 10_000, topic="m", partition=1, replicas=[1, 2, 4, 3], adding=[4], removing=[3])
    t.add("assignments", 10_000, topic="m", partition=2, replicas=[1, 2, 5, 3], adding=[5], removing=[3])
    t.add("assignments", 30_000, topic="m", partition=1, replicas=[1, 2, 3], adding=[], removing=[])  # cancel
    t.add("isr", 39_000, topic="m", partition=2, isr=[1, 2, 3, 5], leader_epoch=0)
    t.add("assignments", 40_000, topic="m", partition=2, replicas=[1, 2, 5], adding=[], removing=[])  # done
    t.add("isr", 40_000, topic="m", partition=2, isr=[1, 2, 5], leader_epoch=1)
    t.add("leaders", 40_000, topic="m", partition=2, leader=1, leader_epoch=1)
    for k, ts in enumerate(range(0, 120_001, 10_000)):
        leo = 1000 + 100 * k
        t.offsets(ts, "m", 0, {1: (leo, leo, leo * 10), 4: (leo, None, leo * 10), 5: (leo, None, leo * 10),
                                6: (50 * k, None, 500 * k), 2: (leo, None, leo * 10), 3: (leo, None, leo * 10)})
        # partition 3: the adding replica 6 is stuck at 200 messages (a stalled move)
        t.offsets(ts, "m", 3, {1: (leo, leo, leo * 10), 2: (leo, None, leo * 10), 3: (leo, None, leo * 10),
                                6: (200, None, 2000)})
        if ts < 40_000:
            t.offsets(ts, "m", 2, {1: (leo, leo, leo * 10), 5: (leo - 300 + 100 * k, None, (leo - 300 + 100 * k) * 10)})
    return t


def capped(version: str) -> Tele:
    t = Tele(f"v{version.replace('.', '')}", version, end_ms=60_000)
    for b in (1, 2, 3):
        t.broker(0, b)
    t.add("configs", 0, entity_type="broker", entity="<default>", name="min.insync.replicas", value="2")
    t.add("configs", 0, entity_type="topic", entity="small", name="min.insync.replicas", value="3")
    t.partition(0, "small", 0, [1, 2], 1, [1, 2])
    t.partition(0, "t2", 0, [2, 3, 1], 2, [2, 3])
    t.add("configs", 20_000, entity_type="topic", entity="t2", name="min.insync.replicas", value="3")
    t.add("configs", 40_000, entity_type="topic", entity="t2", name="min.insync.replicas", value=None)
    return t


@pytest.fixture(scope="module")
def out(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("steps")
    dirs = [t.write(root / t.meta["cluster"]) for t in
            (ties(), reassigning("2.4"), reassigning("2.5"), capped("3.6"), capped("3.7"))]
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    try:
        summary = analyze(dirs, root / "out", spark=spark)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)
    (root / "out" / "summary").write_text(repr(summary))
    return root / "out" / "analysis"


def rows(out: Path, name: str, **match) -> list[dict]:
    return [r for r in pq.read_table(out / name).to_pylist() if all(r[k] == v for k, v in match.items())]


def gauge(out: Path, cluster: str) -> dict:
    """(ts_ms, broker, name) → value for one cluster."""
    return {(r["ts_ms"], r["broker"], r["name"]): r["value"] for r in rows(out, "broker_metrics", cluster=cluster)}


def test_change_exactly_at_a_scrape_is_seen_then(out):
    g = gauge(out, "ties")
    assert g[(10_000, 1, URP)] == 0 and g[(20_000, 1, URP)] == 1
    # 20 001 ms is after the scrape at 20 s: first seen at 30 s
    assert g[(20_000, 2, URP)] == 0 and g[(30_000, 2, URP)] == 1
    # healed at 32 s, so the scrape at 40 s sees no URP though the ISR moved three times in between
    assert g[(40_000, 2, URP)] == 0


def test_isr_meters_count_only_leader_driven_changes(out):
    g = gauge(out, "ties")
    assert g[(30_000, 2, SHRINKS)] == 1 and g[(30_000, 2, EXPANDS)] == 0
    # 32 s expand (epoch 1) and 34 s expand (epoch 2) counted; the 33 s controller shrink (new epoch) not
    assert g[(40_000, 2, SHRINKS)] == 1 and g[(40_000, 2, EXPANDS)] == 2


def test_partition_without_leader_is_offline_on_the_controller_only(out):
    g = gauge(out, "ties")
    assert [g[(0, b, OFFLINE)] for b in (1, 2, 3)] == [1, 0, 0]
    # broker 1 down at 40 s: the controller's role goes to the lowest live id, broker 2
    assert g[(40_000, 2, OFFLINE)] == 1 and g[(40_000, 3, OFFLINE)] == 0
    assert all(g[(ts, 3, URP)] == 0 and g[(ts, 3, LEADERS)] == 0 for ts in range(0, 60_001, 10_000))
    state = rows(out, "partition_state", cluster="ties", topic="a", partition=2)
    assert [(s["offline"], s["urp"], s["under_min_isr"]) for s in state] == [(True, False, False)]
    assert rows(out, "incidents", cluster="ties", kind="offline")[0]["end_ms"] is None


def test_down_broker_has_no_rows(out):
    g = gauge(out, "ties")
    assert not [k for k in g if k[0] == 40_000 and k[1] == 1]
    assert (30_000, 1, URP) in g and (50_000, 1, URP) in g
    names = {k[2] for k in g if k[0] == 30_000 and k[1] == 1}
    # a live broker of 3.7 exports every broker metric of model/metrics.py, one row each
    assert names == {m.jmx for m in BROKER_METRICS} and len(names) == 21


def test_meters_reset_when_the_broker_restarts(out):
    g = gauge(out, "ties")
    assert g[(30_000, 1, SHRINKS)] == 1 and g[(50_000, 1, SHRINKS)] == 0
    assert g[(30_000, 1, BYTES_IN)] == 400
    assert g[(60_000, 1, BYTES_IN)] == 200
    assert g[(60_000, 2, LEADERS)] == 1 and g[(60_000, 1, PCOUNT)] == 2


def test_urp_semantics_before_and_after_kip352(out):
    before, after = gauge(out, "v24"), gauge(out, "v25")
    # partition 0 ([1..6], adding [4,5,6], ISR [1,4,5]) and 3 ([1,2,3,6], adding [6]) at 0 s
    assert before[(0, 1, URP)] == 2 and after[(0, 1, URP)] == 0
    assert (0, 1, REASSIGNING) not in before and after[(0, 1, REASSIGNING)] == 2
    topic = {r["ts_ms"]: r for r in rows(out, "topic_metrics", cluster="v25")}
    assert topic[0]["urp_legacy"] == 2 and topic[0]["urp_kip352"] == 0 and topic[0]["reassignment_induced_urp"] == 2
    assert topic[20_000]["reassigning"] == 4 and topic[40_000]["reassigning"] == 2
    cluster = {r["ts_ms"]: r for r in rows(out, "cluster_metrics", cluster="v24")}
    assert cluster[20_000]["urp"] == 4 and cluster[20_000]["urp"] == cluster[20_000]["urp_legacy"]


def test_reassignment_statuses(out):
    moves = {(r["partition"], r["replica"]): r for r in rows(out, "reassignments", cluster="v25")}
    assert moves[(1, 4)]["status"] == "cancelled" and moves[(1, 4)]["end_ms"] == 30_000
    assert moves[(2, 5)]["status"] == "completed" and moves[(2, 5)]["end_ms"] == 40_000
    assert moves[(3, 6)]["status"] == "stalled" and moves[(3, 6)]["eta_ms"] is None
    p0 = moves[(0, 6)]
    # replica 6 grows 500 B per scrape from 0 while the leader's log grows 1000 B: the gap widens
    assert p0["status"] == "never at this rate" and p0["end_ms"] is None and p0["eta_ms"] is None
    # the leader is at 2200 messages / 22 000 B at 120 s
    assert p0["bytes_moved"] == 6000 and p0["messages_moved"] == 600
    assert p0["bytes_to_move"] == 22_000 and p0["messages_to_move"] == 2200
    assert p0["rate_bps"] == pytest.approx(50.0) and p0["leader_growth_bps"] == pytest.approx(100.0)
    # replicas 4 and 5 hold the leader's whole log: caught up, waiting to join the ISR
    assert [(moves[(0, r)]["status"], moves[(0, r)]["eta_ms"]) for r in (4, 5)] == [("progressing", 0)] * 2
    progress = rows(out, "reassignment_progress", cluster="v25", partition=0, replica=6)
    assert [p["bytes_moved"] for p in sorted(progress, key=lambda p: p["ts_ms"])][:3] == [0, 500, 1000]


def test_lag_gauges(out):
    g = gauge(out, "v25")
    # partition 3: HW 1000 + 100k, replica 6 fetching (fetchers 'added') stuck at 200
    assert g[(0, 6, MAXLAG)] == 800 and g[(50_000, 6, MAXLAG)] == 1300
    assert g[(0, 1, RMAXLAG)] == 1000  # partition 0's replica 6 at LEO 0 lags more than partition 3's
    assert g[(0, 4, MAXLAG)] == 0  # broker 4 has no 'added' fetcher row


def test_min_isr_cap_from_37(out):
    v36, v37 = gauge(out, "v36"), gauge(out, "v37")
    # topic 'small': replicas [1,2], min.insync.replicas 3
    assert v36[(0, 1, UMI)] == 1 and v36[(0, 1, AMI)] == 0
    assert v37[(0, 1, UMI)] == 0 and v37[(0, 1, AMI)] == 1


def test_topic_min_isr_change(out):
    g = gauge(out, "v37")
    # t2: ISR [2,3]; default 2 → at min; topic override 3 at 20 s → under; removed at 40 s → default again
    assert [(g[(ts, 2, UMI)], g[(ts, 2, AMI)]) for ts in (10_000, 20_000, 30_000, 40_000)] == \
        [(0, 1), (1, 0), (1, 0), (0, 1)]
    state = sorted(rows(out, "partition_state", cluster="v37", topic="t2"), key=lambda s: s["from_ms"])
    assert [(s["from_ms"], s["to_ms"], s["min_isr"]) for s in state] == [(0, 20_000, 2), (20_000, 40_000, 3),
                                                                          (40_000, None, 2)]
    incident = rows(out, "incidents", cluster="v37", topic="t2", kind="under_min_isr")
    assert [(i["start_ms"], i["end_ms"], i["duration_ms"], i["worst_value"]) for i in incident] == \
        [(20_000, 40_000, 20_000, 1.0)]


def test_summary_written(out):
    import json

    summary = json.loads((out / "_summary.json").read_text())
    assert set(summary) == {"ties", "v24", "v25", "v36", "v37"}
    assert summary["v25"]["reassignments"] == {"progressing": 2, "starved": 0, "never at this rate": 1, "stalled": 1,
                                               "completed": 1, "cancelled": 1}
    assert summary["v25"]["reassignment_progress"] == {
        # replicas 4 and 5 copied 12 000 B each and are caught up; 6 copied 6000 B of partition 0, none of 3
        "open_moves": 4, "bytes_moved": 2 * 12_000 + 6000, "bytes_left": 16_000 + 20_000, "eta_ms": None,
        "moves_that_cannot_finish": 2, "bottleneck_broker": 6}
    assert summary["v37"]["under_min_isr_minutes"] == pytest.approx(20_000 / 60_000, abs=1e-3)
    assert summary["ties"]["peak_urp"] >= 1 and summary["ties"]["incidents"]["offline"] == 1


def test_every_row_is_in_the_contract(out):
    counts = defaultdict(int)
    for r in rows(out, "broker_metrics"):
        counts[(r["cluster"], r["ts_ms"], r["broker"], r["name"])] += 1
    assert set(counts.values()) == {1}


def test_restart_number_of_meter_events_in_replay_order(spark):
    """``metrics.restart_of_events``: an event's restart number is the count of its broker's ``up`` rows at or
    before it in ``(ts_ms, seq)`` order — the process lifetime whose JMX counters it increments (Kafka's meters
    start at 0 in a new process, ``KafkaMetricsGroup``). Same instant, the seq decides (an ``up`` row with the
    event's own ``(ts_ms, seq)`` counts); before the first ``up`` it is 0; another broker's restarts do not count."""
    from replicaflow.pipeline.metrics import restart_of_events

    brokers = spark.createDataFrame(
        [("c", 1, 0, 1, "up"), ("c", 1, 500, 10, "down"), ("c", 1, 1_000, 20, "up"), ("c", 2, 0, 2, "up"),
         ("c", 2, 700, 30, "up")], "cluster string, broker int, ts_ms long, seq long, state string")
    events = spark.createDataFrame(
        [("c", 1, 0, 0, "e0"), ("c", 1, 0, 5, "e1"), ("c", 1, 999, 40, "e2"), ("c", 1, 1_000, 19, "e3"),
         ("c", 1, 1_000, 21, "e4"), ("c", 1, 5_000, 50, "e5"), ("c", 2, 600, 60, "e6"), ("c", 3, 10, 70, "e7"),
         ("c", 2, 700, 30, "e8")],
        "cluster string, broker int, ts_ms long, seq long, name string")
    got = {r["name"]: r["restart"] for r in restart_of_events(events, brokers).collect()}
    assert got == {"e0": 0, "e1": 1, "e2": 1, "e3": 1, "e4": 2, "e5": 2, "e6": 1, "e7": 0, "e8": 2}
