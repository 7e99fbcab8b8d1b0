"""The ETA of a move once another move of its reassignment finished: two moves share one throttle, the first
completes, and the second's ETA is its bytes left over what it copies alone (docs/pipeline.md, "Reassignment
progress"), not over its 60 s rate, which half the time measured the shared throttle."""

from __future__ import annotations

import pyarrow.parquet as pq

from replicaflow.pipeline.runner import analyze
from tests.pipeline.tele import Tele

MB = 1_000_000


def two_moves() -> Tele:
    """Broker 1 leads a-0 (20MB) and b-0 (50MB); both move onto broker 2 at 0 s under a 1MB/s leader throttle
    (``ReplicationQuotaManager``, one quota for every throttled partition the leader sends), so each copies
    500KB/s: a is copied at 40 s and joins the ISR at 45 s; b then copies the whole 1MB/s. The telemetry ends at
    60 s, b with 50 − 20 − 20 = 10MB left, which it copies by 70 s."""
    t = Tele("eta", "3.7", end_ms=60_000)
    for b in (1, 2):
        t.broker(0, b)
    for topic in ("a", "b"):
        t.partition(0, topic, 0, [1, 2], 1, [1], adding=[2])
    t.add("isr", 45_000, topic="a", partition=0, isr=[1, 2], leader_epoch=0)
    t.add("assignments", 45_000, topic="a", partition=0, replicas=[1, 2], adding=[], removing=[])
    for ts in range(0, 60_001, 10_000):
        copied_a = min(ts // 1000 * MB // 2, 20 * MB)
        copied_b = ts // 1000 * MB // 2 if ts <= 40_000 else 20 * MB + (ts - 40_000) // 1000 * MB
        t.offsets(ts, "a", 0, {1: (20_000, 20_000, 20 * MB), 2: (copied_a // 1000, None, copied_a)})
        t.offsets(ts, "b", 0, {1: (50_000, 50_000, 50 * MB), 2: (copied_b // 1000, None, copied_b)})
    return t


def test_the_eta_divides_by_what_the_move_copies_since_the_other_finished(spark, tmp_path):
    """b at 60 s: 10MB left. Over the 60 s window it copied 40MB, 666,667 B/s, and 10MB at that rate read 15 s;
    since the scrape after a's end (50 s) it copied 40MB − 30MB in 10 s, 1MB/s: 10MB / 1MB/s = 10 s, what b takes.
    (A finished move frees its share of the leader's quota: ReplicationQuotaManager.isQuotaExceeded rates the
    throttled bytes of all partitions together.)"""
    root = two_moves().write(tmp_path / "eta")
    analyze([root], tmp_path / "out", spark=spark)
    moves = {r["topic"]: r for r in pq.read_table(tmp_path / "out" / "analysis" / "reassignments").to_pylist()}
    b = moves["b"]
    assert (b["status"], b["bytes_moved"], b["bytes_to_move"] - b["bytes_moved"]) == ("progressing", 40 * MB, 10 * MB)
    assert b["rate_bps"] == 40 * MB / 60  # the 60 s window still decides the status and is what the table shows
    assert b["eta_ms"] == 10_000
    assert moves["a"]["status"] == "completed" and moves["a"]["eta_ms"] is None


def raised_throttle() -> Tele:
    """Broker 1 leads b-0 (100MB), moving onto broker 2 from 0 s under a 1MB/s leader throttle; at 25 s an operator
    raises the rate to 2MB/s (`kafka-configs --alter --entity-type brokers --entity-name 1`), which
    ``ReplicationQuotaManager.updateQuota`` applies at once. Copied: 25MB at 25 s, then 2MB/s: 95MB at 60 s."""
    t = Tele("raised", "3.7", end_ms=60_000)
    for b in (1, 2):
        t.broker(0, b)
    t.partition(0, "b", 0, [1, 2], 1, [1], adding=[2])
    t.add("configs", 0, entity_type="topic", entity="b", name="leader.replication.throttled.replicas", value="0:1")
    t.add("configs", 0, entity_type="broker", entity="1", name="leader.replication.throttled.rate", value="1000000")
    t.add("configs", 25_000, entity_type="broker", entity="1", name="leader.replication.throttled.rate",
          value="2000000")
    for ts in range(0, 60_001, 10_000):
        copied = ts // 1000 * MB if ts <= 25_000 else 25 * MB + (ts - 25_000) // 1000 * 2 * MB
        t.offsets(ts, "b", 0, {1: (100_000, 100_000, 100 * MB), 2: (copied // 1000, None, copied)})
    return t


def test_the_eta_divides_by_what_the_move_copies_since_the_throttle_changed(spark, tmp_path):
    """b at 60 s: 5MB left. Its 60 s rate, 95MB / 60 s, mixes both throttle rates and reads 3.2 s; since the scrape
    after the config change (30 s, 35MB) it copied 60MB in 30 s, 2MB/s: 5MB / 2MB/s = 2.5 s, what b takes."""
    root = raised_throttle().write(tmp_path / "raised")
    analyze([root], tmp_path / "out", spark=spark)
    (b,) = pq.read_table(tmp_path / "out" / "analysis" / "reassignments").to_pylist()
    assert (b["status"], b["bytes_moved"], b["bytes_to_move"] - b["bytes_moved"]) == ("progressing", 95 * MB, 5 * MB)
    assert b["throttled"] is True
    assert b["rate_bps"] == 95 * MB / 60
    assert b["eta_ms"] == 2_500
