"""The ISR a leader line before 2.6 does not name, from the LeaderAndIsr request it applied (docs/real-cluster.md,
``isr``)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

KEYS = ["cluster", "topic", "partition"]


def isr_of_requested_leaders(events: DataFrame, lead: DataFrame) -> tuple[DataFrame, DataFrame]:
    """``isr`` rows (keys, ts_ms, seq, isr, leader_epoch) and their instants (keys, ts_ms): for each leader row of
    ``lead`` (rebuild's numbering) at a leader line that names no ISR (Partition.makeLeader before 2.6: `t-p starts at
    Leader Epoch E …`, server.log), the ISR of the last LeaderAndIsr request (state-change.log, TRACE `Received
    LeaderAndIsr request …`) for the same partition, leader and leader epoch at or before it.

    Partition.makeLeader sets the partition's ISR to the request's (``partitionState.isr``) as it logs that line, so
    the ISR is in force from the line, as a 2.6+ line states it: the row is numbered as such a line's own ISR row
    (right after its leader row). Without it a partition whose leader's line came after its request had no ISR
    until its next ISR change, and no state at all where it had none (a 2.5.1 broker's partitions)."""
    kind = F.col("kind")
    at = F.struct("ts_ms", "source", "line_number")
    bare = (events.where((kind == "leader_start") & F.col("isr").isNull() & F.col("leader_epoch").isNotNull()
                         & F.col("topic").isNotNull() & F.col("partition").isNotNull())
            .select(*KEYS, "ts_ms", F.col("broker").alias("leader"), "leader_epoch").distinct())
    requests = (events.where((kind == "leader_and_isr") & F.col("isr").isNotNull() & F.col("leader").isNotNull()
                             & F.col("leader_epoch").isNotNull() & F.col("topic").isNotNull())
                .select(*KEYS, "leader", "leader_epoch", at.alias("req_at"), F.col("isr").alias("req_isr")))
    rows = (lead.join(bare, [*KEYS, "ts_ms", "leader", "leader_epoch"], "left_semi")
            .join(requests, [*KEYS, "leader", "leader_epoch"]).where(F.col("req_at.ts_ms") <= F.col("ts_ms"))
            .groupBy(*KEYS, "ts_ms", "seq", "leader_epoch").agg(F.max_by("req_isr", "req_at").alias("isr")))
    isr = rows.select(*KEYS, "ts_ms", (F.col("seq") + 2).alias("seq"), "isr", "leader_epoch")
    return isr, rows.select(*KEYS, "ts_ms").distinct()
