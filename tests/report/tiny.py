"""A tiny but realistic ``analysis/`` written with pyarrow: the report's input without Spark.

Partition histories are written by hand as intervals; every other table (broker_metrics,
cluster_metrics, incidents, ...) is derived from them by the docs/semantics.md rules (3.7 predicates),
so the numbers agree with each other the way the pipeline's do. ``_summary.json`` holds
:data:`HEADLINES`, worked out by hand from those rows; tests/pipeline/test_summary.py checks that
the pipeline's summary of these tables is exactly that.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from replicaflow.model.metrics import jmx
from replicaflow.model.progress import STATUSES
from replicaflow.telemetry.schema import ANALYSIS

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
STEP = 10_000
SCRIPT_TOPIC = "<script>alert(1)</script>"

# (topic, partition, from_s, to_s, leader, replicas, adding, removing, isr, min_isr)
ALPHA = [
    ("orders", 0, 0, 60, 1, [1, 2, 3], [], [], [1, 2, 3], 2),
    ("orders", 0, 60, 100, 1, [1, 2, 3], [], [], [1, 2], 2),        # URP
    ("orders", 0, 100, 150, 1, [1, 2, 3], [], [], [1], 2),          # under min ISR
    ("orders", 0, 150, 300, 1, [1, 2, 3], [], [], [1, 2, 3], 2),
    ("orders", 1, 0, 200, 2, [2, 3, 1], [], [], [2, 3, 1], 2),
    ("orders", 1, 200, 240, -1, [2, 3, 1], [], [], [2], 2),         # offline
    ("orders", 1, 240, 300, 2, [2, 3, 1], [], [], [2, 3, 1], 2),
    ("events", 0, 0, 30, 3, [1, 2, 3], [], [], [1, 2, 3], 1),
    ("events", 0, 30, 130, 3, [2, 3, 4, 1], [4], [1], [1, 2, 3], 1),  # reassigning: legacy URP only
    ("events", 0, 130, 140, 3, [2, 3, 4, 1], [4], [1], [1, 2, 3, 4], 1),
    ("events", 0, 140, 300, 3, [2, 3, 4], [], [], [2, 3, 4], 1),
]
ALPHA_BROKERS = [1, 2, 3, 4]
ALPHA_DOWN = {4: (250, 270)}          # broker 4 not scraped at 250 and 260 s
ALPHA_FAILED = {2: (170, 220)}        # broker 2's fetcher: one failed partition
BETA = [
    ("logs", 0, 0, 80, 1, [1, 2], [], [], [1, 2], 1),
    ("logs", 0, 80, 150, 1, [1, 2], [], [], [1], 1),                # URP
    ("logs", 0, 150, 300, 1, [1, 2], [], [], [1, 2], 1),
]

# The headline numbers of the two clusters, by hand: alpha's orders-0 is under-replicated [60 s, 150 s)
# (1.5 partition-minutes, two incidents), under min ISR [100 s, 150 s); orders-1 offline [200 s, 240 s);
# events-0 adds replica 4 [30 s, 140 s): legacy URP only, one completed move; 3 shrinks, 2 expands;
# broker 2's fetcher has one failed partition. beta's logs-0 is under-replicated [80 s, 150 s).
_RUN = {"kafka_version": "3.7", "kip542": False, "start": "2026-01-01 00:00:00", "end": "2026-01-01 00:05:00",
        "time_zone": "UTC", "inputs": {"source": "test", "scrape_interval_ms": STEP}}
_NO_MOVES = {s: 0 for s in STATUSES}


def _incident(kind: str, topic: str, partition: int, start_s: int, seconds: int, out_of_sync: list[int]) -> dict:
    return {"kind": kind, "topic": topic, "partition": partition, "start": f"2026-01-01 00:{start_s // 60:02d}:{start_s % 60:02d}",
            "duration_ms": seconds * 1000, "open": False, "out_of_sync_replicas": out_of_sync}


# alpha's worst incidents: orders-1 offline, orders-0 under min ISR, then the longer of orders-0's two URP incidents
HEADLINES = {
    "alpha": {**_RUN, "peak_urp": 1, "peak_urp_legacy": 2, "peak_urp_kip352": 1, "peak_reassignment_induced_urp": 1,
              "peak_under_min_isr": 1, "peak_offline": 1, "peak_reassigning": 1, "urp_minutes": 1.5,
              "under_min_isr_minutes": 0.833, "offline_minutes": 0.667,
              "incidents": {"urp": 2, "under_min_isr": 1, "offline": 1},
              "longest_incidents": [_incident("offline", "orders", 1, 200, 40, [1, 3]),
                                    _incident("under_min_isr", "orders", 0, 100, 50, [2, 3]),
                                    _incident("urp", "orders", 0, 100, 50, [2, 3])],
              "reassignments": {**_NO_MOVES, "completed": 1}, "isr_shrinks": 3, "isr_expands": 2, "produce_requests_rejected": 0, "unclean_elections": 0, "messages_lost": 0,
              "peak_failed_partitions": 1, "reassignment_progress": None},
    "beta": {**_RUN, "peak_urp": 1, "peak_urp_legacy": 1, "peak_urp_kip352": 1, "peak_reassignment_induced_urp": 0,
             "peak_under_min_isr": 0, "peak_offline": 0, "peak_reassigning": 0, "urp_minutes": 1.167,
             "under_min_isr_minutes": 0.0, "offline_minutes": 0.0,
             "incidents": {"urp": 1, "under_min_isr": 0, "offline": 0},
             "longest_incidents": [_incident("urp", "logs", 0, 80, 70, [2])],
             "reassignments": _NO_MOVES, "isr_shrinks": 1, "isr_expands": 1, "produce_requests_rejected": 0, "unclean_elections": 0, "messages_lost": 0,
             "peak_failed_partitions": 0,
             "reassignment_progress": None},
}


def _flags(leader, replicas, adding, removing, isr, min_isr) -> dict:
    eff = min(min_isr, len(replicas))
    kip352 = (len(replicas) - len(adding)) - len(isr) > 0
    legacy = len(isr) < len(replicas)
    online = leader >= 0
    return dict(urp=online and kip352, urp_kip352=online and kip352, urp_legacy=online and legacy,
                under_min_isr=online and len(isr) < eff, at_min_isr=online and len(isr) == eff,
                offline=not online, reassigning=online and bool(adding or removing))


def _state(name: str, spec: list, end_s: int) -> list[dict]:
    rows = []
    for topic, p, a, b, leader, replicas, adding, removing, isr, min_isr in spec:
        rows.append(dict(cluster=name, topic=topic, partition=p, from_ms=T0 + a * 1000,
                         to_ms=None if b >= end_s else T0 + b * 1000, leader=leader, leader_epoch=0,
                         replicas=replicas, adding=adding, removing=removing, isr=isr, min_isr=min_isr,
                         **_flags(leader, replicas, adding, removing, isr, min_isr)))
    return rows


def _at(state: list[dict], ts: int) -> list[dict]:
    return [r for r in state if r["from_ms"] <= ts and (r["to_ms"] is None or ts < r["to_ms"])]


def expected_broker_gauge(state: list[dict], ts: int, broker: int, flag: str) -> int:
    return sum(1 for r in _at(state, ts) if r["leader"] == broker and r[flag])


def build(name: str, spec: list, brokers: list[int], down: dict, failed: dict, end_s: int = 300) -> dict:
    state = _state(name, spec, end_s)
    grid = [T0 + s * 1000 for s in range(0, end_s + 1, STEP // 1000)]
    bm, cm = [], []
    shrinks = {b: 0 for b in brokers}
    expands = {b: 0 for b in brokers}
    moved = 0
    for ts in grid:
        live = [b for b in brokers if not (b in down and T0 + down[b][0] * 1000 <= ts < T0 + down[b][1] * 1000)]
        now = _at(state, ts)
        for r in now:  # ISR changes that happened in (ts - STEP, ts] under the same leader
            if r["from_ms"] > ts - STEP and r["from_ms"] != T0:
                prev = _at(state, r["from_ms"] - 1)
                prev = [q for q in prev if (q["topic"], q["partition"]) == (r["topic"], r["partition"])][0]
                if prev["leader"] == r["leader"] >= 0:
                    if len(r["isr"]) < len(prev["isr"]):
                        shrinks[r["leader"]] += 1
                    elif len(r["isr"]) > len(prev["isr"]):
                        expands[r["leader"]] += 1
        controller = min(live)
        if any(r["reassigning"] for r in now):
            moved += 5_000_000
        for b in live:
            values = {
                "UnderReplicatedPartitions": expected_broker_gauge(state, ts, b, "urp"),
                "UnderMinIsrPartitionCount": expected_broker_gauge(state, ts, b, "under_min_isr"),
                "AtMinIsrPartitionCount": expected_broker_gauge(state, ts, b, "at_min_isr"),
                "ReassigningPartitions": expected_broker_gauge(state, ts, b, "reassigning"),
                "LeaderCount": sum(1 for r in now if r["leader"] == b),
                "PartitionCount": sum(1 for r in now if b in r["replicas"]),
                "IsrShrinksPerSec": shrinks[b],
                "IsrExpandsPerSec": expands[b],
                "ReassignmentBytesInPerSec": moved if b == 4 else 0,
                "FailedPartitionsCount": 1 if b in failed and T0 + failed[b][0] * 1000 <= ts < T0 + failed[b][1] * 1000
                else 0,
                "OfflinePartitionsCount": sum(1 for r in now if r["offline"]) if b == controller else 0,
            }
            bm.extend(dict(cluster=name, ts_ms=ts, broker=b, name=jmx(k), value=float(v)) for k, v in values.items())
        counts = {k: sum(1 for r in now if r[k]) for k in ("urp", "urp_kip352", "urp_legacy", "under_min_isr",
                                                              "at_min_isr", "offline", "reassigning")}
        cm.append(dict(cluster=name, ts_ms=ts, **counts,
                       reassignment_induced_urp=counts["urp_legacy"] - counts["urp_kip352"]))
    incidents = []
    for kind in ("urp", "under_min_isr", "offline"):
        for r in state:
            if r[kind]:
                end = r["to_ms"]
                incidents.append(dict(cluster=name, topic=r["topic"], partition=r["partition"], kind=kind,
                                      start_ms=r["from_ms"], end_ms=end,
                                      duration_ms=None if end is None else end - r["from_ms"],
                                      worst_value=float(len(r["isr"])),
                                      out_of_sync_replicas=[b for b in r["replicas"] if b not in r["isr"]]))
    meta = dict(cluster=name, kafka_version="3.7", kip542=False, start_ms=T0, end_ms=T0 + end_s * 1000,
                scrape_interval_ms=STEP, source="test")
    return dict(state=state, bm=bm, cm=cm, incidents=incidents, meta=meta, grid=grid)


def reassignment_rows(name: str) -> tuple[list[dict], list[dict]]:
    start, end = T0 + 30_000, T0 + 140_000
    moves = [dict(cluster=name, topic="events", partition=0, replica=4, start_ms=start, end_ms=end,
                  bytes_to_move=55_000_000, messages_to_move=55_000, bytes_moved=55_000_000, messages_moved=55_000,
                  rate_bps=500_000.0, leader_growth_bps=0.0, eta_ms=0, status="completed", throttled=False)]
    progress = [dict(cluster=name, ts_ms=t, topic="events", partition=0, replica=4,
                     bytes_moved=(t - start) // STEP * 5_000_000,
                     bytes_remaining=55_000_000 - (t - start) // STEP * 5_000_000, rate_bps=500_000.0)
                for t in range(start, end + 1, STEP)]
    return moves, progress


def log_rows(name: str) -> list[dict]:
    return [
        dict(cluster=name, ts_ms=T0 + 60_000, broker=1, source="server-1.log", line_number=17, kind="isr_shrink",
             topic="orders", partition=0, isr=[1, 2], leader_epoch=0,
             message="[Partition orders-0 broker=1] Shrinking ISR from 1,2,3 to 1,2"),
        dict(cluster=name, ts_ms=T0 + 70_000, broker=2, source="server-2.log", line_number=42, kind="isr_shrink",
             topic=SCRIPT_TOPIC, partition=3, isr=[2], leader_epoch=1,
             message="[Partition <script>alert(1)</script>-3 broker=2] Shrinking ISR from 2,3 to 2 </script>"),
    ]


def write(table: str, rows: list[dict], root: Path) -> None:
    path = root / "analysis" / table
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=ANALYSIS[table]), path / "part-00000.parquet")


def write_analysis(root: Path, clusters: tuple[str, ...] = ("alpha",), logs: bool = True) -> dict:
    """Write ``root/analysis`` (+ ``root/telemetry/_meta.json`` of the first cluster); returns the built data."""
    built = {}
    tables: dict[str, list] = {k: [] for k in ANALYSIS}
    for name in clusters:
        if name == "alpha":
            b = build(name, ALPHA, ALPHA_BROKERS, ALPHA_DOWN, ALPHA_FAILED)
            moves, progress = reassignment_rows(name)
            tables["reassignments"] += moves
            tables["reassignment_progress"] += progress
            if logs:
                tables["log_events"] += log_rows(name)
        else:
            b = build(name, BETA, [1, 2], {}, {})
        built[name] = b
        tables["partition_state"] += b["state"]
        tables["broker_metrics"] += b["bm"]
        tables["cluster_metrics"] += b["cm"]
        tables["incidents"] += b["incidents"]
    for name, rows in tables.items():
        if name in ("log_events", "rejects") and not logs:
            continue
        if name == "rejects":
            rows = [dict(source="server-2.log", line_number=99, raw_line="garbage <b>bold</b>", reason="no timestamp")]
        write(name, rows, root)
    (root / "telemetry").mkdir(parents=True, exist_ok=True)
    (root / "telemetry" / "_meta.json").write_text(json.dumps(built[clusters[0]]["meta"]))
    (root / "analysis" / "_summary.json").write_text(json.dumps({name: HEADLINES[name] for name in built}))
    return built
