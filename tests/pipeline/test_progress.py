"""Reassignment status and ETA from the net rate (model/progress.py, pipeline/events.py, pipeline/throttles.py).

One tiny cluster with four moves to broker 6 whose leader logs grow 100 B/s: one closes its gap
(progressing, with the ETA the net rate gives), one copies slower than producers append (never at
this rate), one the same but covered by a KIP-73 follower throttle (starved), one copies nothing
(stalled). Kafka's rules for which fetch a throttle covers: ReplicationQuotaManager.isThrottled and
the throttled-replicas lists of kafka.server.DynamicConfig / ConfigHandler (docs/semantics.md §5.1).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from replicaflow.model import progress as P
from replicaflow.pipeline.runner import analyze
from tests.pipeline.tele import Tele

# bytes per scrape (10 s) the adding replica 6 copies, per partition; leaders grow 1000 B per scrape
COPY_PER_SCRAPE = {0: 1500, 1: 500, 2: 500, 3: 0}


def eta_cluster() -> Tele:
    t = Tele("eta", "3.7", end_ms=120_000)
    for b in (1, 2, 3, 4, 5, 6):
        t.broker(0, b)
    for p in COPY_PER_SCRAPE:
        t.partition(0, "m", p, [1, 2, 3, 6], 1, [1, 2, 3], adding=[6], removing=[3])
    # KIP-73 follower-side throttle on partition 2's replica 6, with a rate on broker 6 (the default's is 0)
    t.add("configs", 0, entity_type="topic", entity="m", name="follower.replication.throttled.replicas",
          value="2:6,0:5")
    t.add("configs", 0, entity_type="broker", entity="<default>", name="follower.replication.throttled.rate",
          value="0")
    t.add("configs", 5_000, entity_type="broker", entity="6", name="follower.replication.throttled.rate",
          value="1000")
    for k, ts in enumerate(range(0, 120_001, 10_000)):
        leo = 1000 + 100 * k
        for p, copy in COPY_PER_SCRAPE.items():
            mine = copy * k // 10
            t.offsets(ts, "m", p, {1: (leo, leo, leo * 10), 2: (leo, None, leo * 10), 3: (leo, None, leo * 10),
                                   6: (mine, None, mine * 10)})
    return t


def late_move_cluster() -> Tele:
    """A move that starts at 15 s, between scrapes: n-0 from [1,2] to [3,2]. The leader's log holds 100 000 B
    and grows 1000 B/s; broker 3's new replica copies 10 000 B/s, so the first scrape of the move (20 s) already
    shows 50 000 B of it. It catches up by 30 s (130 000 B) and completes at 32 s; at 40 s broker 3 leads."""
    t = Tele("late", "3.7", end_ms=60_000)
    for b in (1, 2, 3):
        t.broker(0, b)
    t.partition(0, "n", 0, [1, 2], 1, [1, 2])
    t.partition(15_000, "n", 0, [3, 2, 1], 1, [1, 2], epoch=1, adding=[3], removing=[1])
    t.partition(32_000, "n", 0, [3, 2], 3, [3, 2], epoch=2)
    for ts in range(0, 60_001, 10_000):
        size = 100_000 + 1000 * ts // 1000
        leader = 1 if ts < 32_000 else 3
        copied = min(size, 10 * max(ts - 15_000, 0))
        rows = {b: (size // 10, size // 10 if b == leader else None, size) for b in ((1, 2) if ts < 32_000 else (2,))}
        if ts >= 20_000:
            rows[3] = (copied // 10, copied // 10 if leader == 3 else None, copied)
        t.offsets(ts, "n", 0, rows)
    return t


@pytest.fixture(scope="module")
def analysis(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("progress")
    teles = [eta_cluster().write(root / "eta"), late_move_cluster().write(root / "late")]
    analyze(teles, root / "out", spark=spark)
    return root / "out" / "analysis"


def test_a_move_started_between_scrapes_counts_what_it_copied_before_the_first(analysis):
    """The adding replica's log is created empty when the move starts (Kafka's ``Partition.createLogIfNotExists``)
    and copies the leader's whole log, so by the 40 s scrape it moved 140 000 B (14 000 messages): all of it.
    The table counted from the first scrape of the move, 50 000 B in, and said 90 000 B of 90 000."""
    (move,) = [r for r in pq.read_table(analysis / "reassignments").to_pylist() if r["cluster"] == "late"]
    assert (move["start_ms"], move["end_ms"], move["status"]) == (15_000, 32_000, "completed")
    assert (move["bytes_moved"], move["bytes_to_move"]) == (140_000, 140_000)
    assert (move["messages_moved"], move["messages_to_move"]) == (14_000, 14_000)
    progress = sorted((r for r in pq.read_table(analysis / "reassignment_progress").to_pylist()
                       if r["cluster"] == "late"), key=lambda r: r["ts_ms"])
    assert [(r["ts_ms"], r["bytes_moved"], r["bytes_remaining"]) for r in progress] == [
        (20_000, 50_000, 70_000), (30_000, 130_000, 0), (40_000, 140_000, 0)]


def test_statuses_and_etas(analysis):
    moves = {r["partition"]: r for r in pq.read_table(analysis / "reassignments").to_pylist() if r["cluster"] == "eta"}
    assert {p: moves[p]["status"] for p in moves} == {
        0: "progressing", 1: "never at this rate", 2: "starved", 3: "stalled"}
    # partition 0 at 120 s: 18 000 B copied of the leader's 22 000 B; 150 B/s against 100 B/s of growth
    m0 = moves[0]
    assert (m0["bytes_moved"], m0["bytes_to_move"]) == (18_000, 22_000)
    assert m0["rate_bps"] == pytest.approx(150.0) and m0["leader_growth_bps"] == pytest.approx(100.0)
    assert m0["eta_ms"] == 80_000  # 4000 B / (150 − 100) B/s
    assert [moves[p]["eta_ms"] for p in (1, 2, 3)] == [None, None, None]
    assert [moves[p]["throttled"] for p in range(4)] == [False, False, True, False]


def test_overall_progress_names_the_bottleneck(analysis):
    summary = json.loads((analysis / "_summary.json").read_text())["eta"]
    assert summary["reassignments"]["starved"] == 1 and summary["reassignments"]["never at this rate"] == 1
    assert summary["reassignment_progress"] == {
        "open_moves": 4, "bytes_moved": 18_000 + 6000 + 6000, "bytes_left": 4000 + 16_000 + 16_000 + 22_000,
        "eta_ms": None, "moves_that_cannot_finish": 3, "bottleneck_broker": 6}


def test_status_rule_on_arrays():
    """The same rule the pipeline runs, on NumPy arrays (model.progress is written once for both)."""
    status = P.open_move_status(
        caught_up=np.array([False, False, False, False, True, False]),
        copy_bps=np.array([150.0, 50.0, 50.0, 0.0, 0.0, 10.0]),
        leader_growth_bps=np.array([100.0, 100.0, 100.0, 0.0, 100.0, 100.0]),
        window_full=np.array([True, True, True, True, True, False]),
        throttled=np.array([False, False, True, False, False, False]))
    assert list(status) == ["progressing", "never at this rate", "starved", "stalled", "progressing", "progressing"]
    assert P.eta_ms(4000, 150.0, 100.0) == 80_000
    assert P.describe("starved", 559_240.5, 2e6, True) == (
        "held back by a replication throttle: copies 559KB/s, the log grows 2MB/s")
    assert P.describe("progressing", 150.0, 100.0, False) == "copies 150B/s, the log grows 100B/s"
