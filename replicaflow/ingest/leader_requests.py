"""What the LeaderAndIsr requests a broker received tell of a partition that has leader lines: the ISR a leader line
before 2.6 does not name, from the request it applied (docs/real-cluster.md, ``isr``), and the partition without a
leader where a request names none (``leaders``)."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.ingest.broker_sessions import lead_rows
from replicaflow.ingest.holders import REQUEST_SEQ

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


def leaderless_requests(events: DataFrame, lead: DataFrame) -> DataFrame:
    """Leader rows of -1 (``lead``'s columns) from the LeaderAndIsr requests that name no leader (``leader=-1``) at a
    leader epoch past every leader row's before them, for the partitions a leader line names (the others take each
    request as it is, ``holders.requested_state``).

    A ZooKeeper controller that takes a failed leader off a partition it could elect no one for writes NoLeader at
    the next leader epoch (ReplicaStateMachine's removal from the ISR) and sends that state to the other replicas, whose
    receipt (TRACE) is then the only line that the partition went offline: it stays so until the next leader row. A
    request of an older epoch (a slow broker's, or a restated one) says nothing; one seen by several replicas counts
    once, and one adds nothing where a -1 of another line is in force."""
    kind, epoch = F.col("kind"), F.col("leader_epoch")
    led = lead.where(F.col("leader") != -1).select(*KEYS).distinct()
    none = (events.where((kind == "leader_and_isr") & (F.col("leader") == -1) & epoch.isNotNull()
                         & F.col("topic").isNotNull() & F.col("partition").isNotNull())
            .join(led, KEYS, "left_semi")
            .groupBy(*KEYS, "leader_epoch").agg(F.min(F.struct("ts_ms", "line_number")).alias("at"))
            .select(*KEYS, "at.ts_ms", (F.col("at.line_number") * 4 + REQUEST_SEQ).alias("seq"), F.lit(-1).alias("leader"),
                    "leader_epoch", F.lit(True).alias("asked")))
    rows = lead.select(*KEYS, "ts_ms", "seq", "leader", "leader_epoch", F.lit(False).alias("asked")).unionByName(none)
    before = Window.partitionBy(*KEYS).orderBy("ts_ms", "seq").rowsBetween(Window.unboundedPreceding, -1)
    past = F.max(F.when(~F.col("asked"), epoch)).over(before)
    in_force = F.last(F.when(~F.col("asked"), F.col("leader")), ignorenulls=True).over(before)
    return (rows.select("*", past.alias("past"), in_force.alias("in_force"))
            .where(F.col("asked") & ~F.coalesce(F.col("past") >= epoch, F.lit(False))
                   & ~F.coalesce(F.col("in_force") == -1, F.lit(False)))
            .transform(lambda r: lead_rows(r, with_epoch=True)))
