"""Unclean leader elections and the messages they lose, and the active controller that counts them, from telemetry
(docs/semantics.md §6, docs/metrics.md).

A leaders row elects uncleanly when its leader is neither in the ISR nor among the eligible leader
replicas (KIP-966) in force just before it: the controller writes the leaders row of a decision before
the isr row that goes with it, so the forward-filled ``isr``/``elr`` of ``state.partition_events`` on a
leaders row are the ones the controller chose from. A partition that had no ISR yet (its creation) is
clean. The loss is ``model.election.messages_lost`` of the row's two offsets: what the replicas held
beyond the offset the new leader starts from. An ELR member that an unclean election happens to pick
(the ISR still holding fenced members, so the ELR was not eligible) reads as clean here.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from replicaflow.model import election
from replicaflow.pipeline.state import PKEY


def elected_outside_isr() -> Column:
    """On the replay stream (``state.partition_events``): true on a leaders row whose leader is not in the ISR
    in force before it, the ISR being known (a partition's first leader is elected clean); null otherwise. A row
    without a leader epoch is no election anyone saw: a leader that a cluster rebuilt from logs knows only from the
    lines a leader writes (docs/real-cluster.md), whose election and the ISR it came from no line shows."""
    leader = F.col("leader")
    return F.when((F.col("src") == "l") & F.col("epoch_known") & (leader != -1)
                  & ~F.coalesce(F.array_contains("isr", leader), F.lit(True)), F.lit(True))


def unclean_elections(replay: DataFrame, leaders: DataFrame) -> DataFrame:
    """analysis/unclean_elections: (cluster, ts_ms, topic, partition, leader, leader_epoch, messages_lost), from
    the ``unclean`` rows of ``metrics.partition_replay`` whose leader is not an eligible leader replica either."""
    elected = replay.filter(F.col("unclean") & ~F.coalesce(F.array_contains("elr", F.col("leader")), F.lit(False)))
    offsets = leaders.select(*PKEY, "ts_ms", "seq", "start_offset", "replicas_end_offset")
    return (elected.select(*PKEY, "ts_ms", "seq", "leader", "leader_epoch").join(offsets, [*PKEY, "ts_ms", "seq"])
            .select(*PKEY, "ts_ms", "leader", "leader_epoch",
                    election.messages_lost(F.col("replicas_end_offset"), F.col("start_offset"))
                    .alias("messages_lost")))


def controller_changes(brokers: DataFrame) -> DataFrame:
    """(cluster, ts_ms, seq, controller) after each ``brokers`` row: the active controller as
    ``model.election.next_controller`` keeps it over the rows in (ts_ms, seq) order — the one before while it is live
    (not down: a controller takes its own broker's controlled shutdown), else the lowest live id; null while no broker
    is live. A fold over each cluster's few rows (one array per cluster):
    the rule depends on the controller before, which no window gives."""
    change = F.struct("ts_ms", "seq", "broker", (F.col("state") != "down").alias("up"))
    init = F.struct(F.array().cast("array<int>").alias("up"), F.lit(-1).alias("controller"),
                    F.array().cast("array<struct<ts_ms:bigint,seq:bigint,controller:int>>").alias("out"))

    def step(acc: Column, row: Column) -> Column:
        up = F.when(row["up"], F.array_union(acc["up"], F.array(row["broker"]))).otherwise(
            F.array_remove(acc["up"], row["broker"]))
        controller = election.next_controller(acc["controller"], F.array_contains(up, acc["controller"]),
                                              F.coalesce(F.array_min(up), F.lit(-1)))
        return F.struct(up.alias("up"), controller.alias("controller"), F.concat(acc["out"], F.array(F.struct(
            row["ts_ms"].alias("ts_ms"), row["seq"].alias("seq"), controller.alias("controller")))).alias("out"))

    folded = (brokers.select("cluster", F.col("broker").cast("int").alias("broker"), F.col("ts_ms").cast("long")
                             .alias("ts_ms"), F.col("seq").cast("long").alias("seq"), "state")
              .groupBy("cluster").agg(F.array_sort(F.collect_list(change)).alias("changes"))
              .select("cluster", F.explode(F.aggregate("changes", init, step)["out"]).alias("c")))
    return folded.select("cluster", "c.ts_ms", "c.seq",
                         F.when(F.col("c.controller") >= 0, F.col("c.controller")).alias("controller"))
