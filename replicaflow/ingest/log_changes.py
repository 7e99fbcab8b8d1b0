"""Telemetry-shaped ``isr`` and ``leaders`` change rows from broker-log events (docs/logs.md, "ISR and
leader history from logs alone")."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.ingest.broker_sessions import failures_before
from replicaflow.ingest.log_text import id_list
from replicaflow.telemetry.schema import CONTROLLER_ISR_EPOCH, TELEMETRY
from replicaflow.telemetry.spark import conform


def changes(events: DataFrame) -> tuple[DataFrame, DataFrame]:
    """`isr` and `leaders` change rows (TELEMETRY schemas) from the events that carry them.

    From 2.7 (KIP-497) "Shrinking/Expanding ISR" is only a proposal; the committed ISR is the
    "ISR updated" line. A partition whose leader logs AlterPartition-style updates (no zkVersion)
    therefore takes its ISR history from the "ISR updated" and leader lines only; up to 2.6 the
    shrink/expand lines are the synchronous ZooKeeper writes and count -- unless ZooKeeper refused
    the write (``state`` = ``refused``: the next line of the partition says "Cached zkVersion ... skip
    updating ISR"). A proposal the controller answered with a new leader epoch (KRaft before metadata
    3.6, docs/semantics.md §6) is not logged as "ISR updated" either: the leader's line of the new epoch,
    in the same millisecond and naming the proposed ISR, carries it instead. A leader's NotEnoughReplicas
    rejection (2.1+) names the committed ISR it refused with, an ISR row too. Rows are ordered by (ts_ms,
    source, line_number) and numbered ``seq``; an ISR row that repeats the previous ISR and leader epoch of
    its partition is dropped.
    """
    k = F.col("kind")
    keys = ["cluster", "broker", "topic", "partition"]
    # before 0.11 no Partition line names a new leader: the broker's "completed LeaderAndIsr request ... for the
    # become-leader transition" (state-change.log, TRACE) is its leader line, epoch unknown, where no other is
    became = (k == "become_leader") & (F.col("state") == "completed")
    logged = events
    # a NotEnoughReplicas rejection (2.1+) names the leader's committed ISR at that instant (Partition.
    # appendRecordsToLeader: partitionState.isr); before 2.1 only its size
    # so does a failed election's exception (0.8-1.0): the dead ISR it could not elect from
    rejections = events.where(k.isin("produce_rejected", "partition_offline") & F.col("isr").isNotNull()).select(
        *keys, "kind", "ts_ms", "source", "line_number", "isr", "leader_epoch", "state", "offset",
        F.lit(False).alias("alter_style"), F.lit(0).alias("with_start"))
    rejections = rejections.unionByName(_skipped(events, keys)).unionByName(_opening_isr(events, keys)) \
        .unionByName(_unclean_from(events, keys))
    events = events.where(k.isin("isr_updated", "leader_start", "isr_shrink", "isr_expand") | became).select(
        *keys, "kind", "ts_ms", "source", "line_number", "isr", "leader_epoch", "state", "offset",
        ((k == "isr_updated") & ~F.col("message").contains("zkVersion")).alias("alter_style"))
    with_start = F.max((k == "leader_start").cast("int")).over(Window.partitionBy("cluster", "topic", "partition"))
    events = events.select("*", with_start.alias("with_start")).where(~became | (F.col("with_start") == 0))
    alter_style = events.where("alter_style").select(*keys).distinct()
    new_epoch = events.where((k == "leader_start") & F.col("isr").isNotNull()) \
        .select(*keys, "ts_ms", F.array_sort("isr").alias("sorted_isr")).distinct()
    proposals = events.where(k.isin("isr_shrink", "isr_expand") & ~F.col("state").eqNullSafe("refused")) \
        .join(alter_style, keys, "left_anti") \
        .withColumn("sorted_isr", F.array_sort("isr")) \
        .join(new_epoch, [*keys, "ts_ms", "sorted_isr"], "left_anti").drop("sorted_isr")
    base = events.where((k == "isr_updated") | ((k == "leader_start") & F.col("isr").isNotNull())) \
        .unionByName(proposals).unionByName(rejections).select("*", F.lit(True).alias("is_isr"))
    leaders = events.where(k.isin("leader_start", "become_leader")).select(
        "*", F.lit(False).alias("is_isr"), F.col("broker").alias("told_leader"))
    leaders = leaders.unionByName(_elected_without_epoch(logged, keys))
    base = base.select("*", F.lit(None).cast("int").alias("told_leader"))
    changed = (base.unionByName(leaders).unionByName(told_leaders(logged, leaders.unionByName(
        _elected_with_epoch(logged, keys), allowMissingColumns=True)), allowMissingColumns=True)
               .where(F.col("topic").isNotNull() & F.col("partition").isNotNull()))
    order = Window.partitionBy("cluster").orderBy("ts_ms", "source", "line_number", F.col("is_isr").asc())
    changed = changed.select("*", F.row_number().over(order).cast("long").alias("seq"))
    by_part = Window.partitionBy("cluster", "topic", "partition").orderBy("seq")
    epoch = F.last(F.when(~F.col("is_isr"), F.col("leader_epoch")), ignorenulls=True).over(
        by_part.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    # feeds both tables, and the rebuild reads each several times: a checkpoint, not a cache, so that their
    # plans do not carry this one (docs/real-cluster.md, "A fleet")
    changed = changed.select("*", epoch.alias("epoch_now")).localCheckpoint(eager=False)
    # a broker failure between two equal ISRs may have changed the ISR between them (the rebuild's controller rows)
    isr = failures_before(changed.where("is_isr").unionByName(_isr_of_elected(changed, by_part)), logged)
    isr = isr.select("*", F.lag(F.struct(F.array_sort("isr").alias("s"), F.col("epoch_now").alias("e"),
                                         F.col("failures").alias("f"))).over(by_part).alias("prev"))
    # a leader line's own ISR stays: the partition may have been deleted and created again between (epoch 0 twice),
    # or the controller's rows changed the ISR; the rebuild drops the repeats once those rows are in
    keep = F.col("prev").isNull() | (F.col("prev.s") != F.array_sort("isr")) | \
        ~F.col("prev.e").eqNullSafe(F.col("epoch_now")) | (F.col("prev.f") != F.col("failures")) | \
        (F.col("kind") == "leader_start")
    unknown = F.lit(None).cast("array<int>")  # the ELR (KIP-966) is in no broker line at INFO
    # a skipped change that takes members out is the controller's (``_skipped``): no leader's meter counts it; one
    # that adds them is the leader's expansion (the controller adds none), its `ISR updated` line not in the files
    removes = F.size(F.array_except(F.col("prev.s"), F.col("isr"))) > 0
    # the ZooKeeper controller's own ISRs (a failed election's dead ISR, the one an unclean election chose outside of,
    # an elected leader alone) are no leader's shrink or expansion either
    by_controller = F.col("kind").isin("partition_offline", "unclean_election", "partition_state")
    written = F.when(by_controller | (F.col("kind") == "leader_and_isr") & F.coalesce(removes, F.lit(True)),
                     F.lit(CONTROLLER_ISR_EPOCH)).otherwise(F.col("epoch_now"))
    isr = isr.where(keep).select("cluster", "ts_ms", "seq", "topic", "partition", "isr",
                                 written.alias("leader_epoch"), unknown.alias("elr"),
                                 unknown.alias("last_known_elr"))
    lead = changed.where(~F.col("is_isr")).select("cluster", "ts_ms", "seq", "topic", "partition",
                                                   F.col("told_leader").alias("leader"), "leader_epoch",
                                                   F.col("offset").alias("start_offset"),  # "from offset O"
                                                   F.lit(None).cast("long").alias("replicas_end_offset"))
    return conform(isr, TELEMETRY["isr"]), conform(lead, TELEMETRY["leaders"])


def _elected_without_epoch(events: DataFrame, keys: list[str]) -> DataFrame:
    """Leader rows (``changes``' leader columns) of a ZooKeeper controller's `Controller C epoch E changed partition
    [t,p] from OfflinePartition to OnlinePartition with leader L` (0.8-0.11; `Changed partition t-p … with leader L`
    in 1.0; PartitionStateMachine.electLeaderForPartition, state-change.log): logged once the new leader is in
    ZooKeeper, it names no leader epoch and no ISR. Bug reports often hold state-change.log without controller.log's
    `Selected new leader and ISR …`: on a public 0.10.2 cluster 34 partitions stayed offline for 51 minutes after a
    failed election that the controller ended 5 s later."""
    said = _elected() & F.col("message").rlike(r" with leader -?\d+$")
    return events.where(said).select(
        *keys, "kind", "ts_ms", "source", "line_number", "isr", F.lit(None).cast("int").alias("leader_epoch"), "state",
        "offset", F.lit(False).alias("alter_style"), F.lit(0).alias("with_start"), F.lit(False).alias("is_isr"),
        F.col("leader").alias("told_leader"))


def _unclean_from(events: DataFrame, keys: list[str]) -> DataFrame:
    """An empty ISR row (``changes``' rejection columns) at a ZooKeeper controller's `No broker in ISR is alive for
    [t,p]. Elect leader L from live brokers …. There's potential data loss.` (OfflinePartitionLeaderSelector, 0.8-1.0,
    just before its `Selected new leader and ISR …`): no ISR member was alive, so L came from outside it, an unclean
    election, whatever ISR the lines named last. A failed election's exception before it (`No replica for partition
    … is alive`) does not change the ISR: the selector throws before it writes. Reading that exception as an empty
    ISR made every later clean election unclean: on a public 0.10.2 cluster 68 of 109."""
    said = (F.col("kind") == "unclean_election") & F.col("message").contains("No broker in ISR is alive for ")
    return events.where(said).select(
        *keys, "kind", "ts_ms", "source", "line_number", F.array().cast("array<int>").alias("isr"), "leader_epoch",
        "state", "offset", F.lit(False).alias("alter_style"), F.lit(0).alias("with_start"))


def _elected_with_epoch(events: DataFrame, keys: list[str]) -> DataFrame:
    """The ZooKeeper controller's election lines that name the leader epoch (`Selected new leader and ISR {…} for
    offline partition [t,p]` up to 1.0, `Changed partition t-p from OfflinePartition to OnlinePartition with state
    LeaderAndIsr(…)` from 1.1), which the rebuild takes as leader rows (``controller_elections.elected_state``): an election that
    ``told_leaders`` must see, or a failed election after it repeated the one before (a 0.10.2 partition read online
    through a real 5 s outage)."""
    return events.where(_elected() & F.col("leader_epoch").isNotNull()).select(
        *keys, "kind", "ts_ms", "source", "line_number", "leader_epoch")


def _elected() -> Column:
    """An event row of a ZooKeeper controller's line that a partition is online under the leader it names."""
    return (F.col("kind") == "partition_state") & (F.col("state") == "OnlinePartition") & F.col("leader").isNotNull()


def _isr_of_elected(changed: DataFrame, by_part: Window) -> DataFrame:
    """An ISR row of the leader alone at each ``_elected_without_epoch`` row whose leader is not in the ISR logged
    before it: OfflinePartitionLeaderSelector (0.8-1.0) elects from the live ISR members, which become the ISR, or,
    none left, from the live replicas with an ISR of the new leader alone (unclean). Without it the partition read
    as led by a broker outside its ISR, a state Kafka cannot be in."""
    before = F.last(F.when(F.col("is_isr"), F.col("isr")), ignorenulls=True).over(
        by_part.rowsBetween(Window.unboundedPreceding, -1))
    rows = changed.select("*", before.alias("isr_before"))
    outside = ((F.col("kind") == "partition_state") & ~F.col("is_isr") & F.col("isr_before").isNotNull()
               & ~F.array_contains("isr_before", F.col("told_leader")))
    return rows.where(outside).select(*changed.columns).withColumn("isr", F.array("told_leader")) \
        .withColumn("is_isr", F.lit(True))


def _opening_isr(events: DataFrame, keys: list[str]) -> DataFrame:
    """An ISR row (``changes``' rejection columns) of the ISR a partition's first ISR line shrinks or expands from
    (`Shrinking ISR from 1,2,3 to 1,2`), just before it: the ISR in force then. Without it the first change of a
    partition had no ISR to count against, and the meters (IsrShrinksPerSec, IsrExpandsPerSec) missed it: a bug
    report's excerpt opening with a shrink counted none."""
    k = F.col("kind")
    part = ["cluster", "topic", "partition"]
    changing = k.isin("isr_shrink", "isr_expand") & ~F.col("state").eqNullSafe("refused")
    named = events.where(F.col("isr").isNotNull() & F.col("topic").isNotNull() & F.col("partition").isNotNull()
                         & (changing | k.isin("isr_updated", "leader_start", "produce_rejected", "partition_offline")))
    first = named.groupBy(*part).agg(F.min(F.struct("ts_ms", "source", "line_number", "kind", "broker", "message"))
                                     .alias("f"))
    return (first.where(F.col("f.kind").isin("isr_shrink", "isr_expand"))
            .select(*part, "f.ts_ms", "f.source", "f.broker", "f.message",
                    (F.col("f.line_number") - 1).alias("line_number"))
            .select(*keys, F.lit("isr_opening").alias("kind"), "ts_ms", "source", "line_number",
                    from_to_isr(1).alias("isr"), F.lit(None).cast("int").alias("leader_epoch"),
                    F.lit(None).cast("string").alias("state"), F.lit(None).cast("long").alias("offset"),
                    F.lit(False).alias("alter_style"), F.lit(0).alias("with_start")))


def _skipped(events: DataFrame, keys: list[str]) -> DataFrame:
    """ISR rows (``changes``' rejection columns) from the state changes a broker skipped as already applied
    (Partition.makeLeader/makeFollower 3.3+: `Skipped the become-leader|follower state change for t-p … isr=[1, 2],
    partitionEpoch=9 …`): the partition's registration. From metadata 3.6 a KRaft controller takes a fenced or
    shutting-down broker out of the ISR without a new leader epoch (PartitionChangeBuilder), and such a line of
    every replica is the only one of it; without the controller's file the ISR stayed whole through a rolling
    restart. A registration counts where its partition epoch is past every earlier line's of the partition (its
    repeats by the other replicas are none) and the partition's leader lines or ISR updates came first (a
    partition without them takes its requests whole, ``holders.requested_state``). An ISR it takes members out of
    is written as the controller's (``CONTROLLER_ISR_EPOCH``): a leader's own shrink shows first in its `ISR
    updated` line."""
    k = F.col("kind")
    skipped = (k == "leader_and_isr") & (F.col("state") == "skipped")
    own = k.isin("isr_updated", "leader_start")
    lines = events.where((own | skipped) & F.col("partition_epoch").isNotNull() & F.col("topic").isNotNull()
                         & F.col("partition").isNotNull())
    before = Window.partitionBy("cluster", "topic", "partition").orderBy("ts_ms", "source", "line_number") \
        .rowsBetween(Window.unboundedPreceding, -1)
    past = F.max("partition_epoch").over(before)
    return (lines.select("*", past.alias("past"), F.max(own.cast("int")).over(before).alias("own_before"))
            .where(skipped & F.col("isr").isNotNull() & (F.col("own_before") == 1)
                   & (F.col("partition_epoch") > F.col("past")))
            .select(*keys, "kind", "ts_ms", "source", "line_number", "isr", "leader_epoch", "state", "offset",
                    F.lit(False).alias("alter_style"), F.lit(0).alias("with_start")))


# Both ISRs of a Shrinking/Expanding line (log_messages' rules keep the second). 0.10 names the partition again: `[t,p]`
# when shrinking, `t-p` when expanding. Character classes only (no repeated group: a hostile line is 1 MiB long).
FROM_TO = r"(?:Shrinking|Expanding) ISR (?:for partition (?:\[[^\[\]]+\]|\S+-\d+) )?from ([\d,]+) to ([\d,]+)"


def from_to_isr(side: int) -> Column:
    """One ISR of a "Shrinking/Expanding ISR from A to B" line (``side`` 1: A, 2: B); [] on other lines."""
    return id_list(F.regexp_extract("message", FROM_TO, side), strip=r"\s")


def told_leaders(events: DataFrame, own: DataFrame) -> DataFrame:
    """Leader rows (``changes``' key, order and leader columns) that the controller's lines tell: no leader (-1) where the
    ZooKeeper controller failed to elect one for an offline partition (PartitionStateMachine: `… failed to change
    state for partition t-p from OfflinePartition to OnlinePartition`, ``partition_offline``), until a leader's line
    (KafkaController's OfflinePartitionsCount counts it meanwhile). Its repeat (the controller tries again at each
    broker change) is the same state and no row. ``own``: the leader rows of the leaders' own lines."""
    k, keys = F.col("kind"), ["cluster", "topic", "partition"]
    cols = ["cluster", "broker", "topic", "partition", "kind", "ts_ms", "source", "line_number", "leader_epoch"]
    # a new partition that no live replica can lead stays NewPartition, which OfflinePartitionsCount does not count
    offline = events.where((k == "partition_offline") & F.col("topic").isNotNull() & F.col("partition").isNotNull()
                           & ~F.col("message").contains("from NewPartition"))
    rows = (own.select(*cols, F.col("broker").alias("told"), F.lit(False).alias("new"))
            .unionByName(offline.select(*cols, F.lit(-1).alias("told"), F.lit(True).alias("new"))))
    before = F.lag("told").over(Window.partitionBy(*keys).orderBy("ts_ms", "source", "line_number"))
    kept = rows.select("*", before.alias("before")).where(F.col("new") & ~F.col("before").eqNullSafe(F.lit(-1)))
    return kept.select(*cols, F.lit(False).alias("is_isr"), F.col("told").alias("told_leader"))


def mark_refused(rows: DataFrame) -> DataFrame:
    """A ZooKeeper-era shrink/expand whose next event of the same file, broker and partition is "Cached zkVersion
    ... skip updating ISR" was refused (Partition.updateIsr wrote nothing): ``state`` = ``refused``. The broker too:
    one file of `docker compose logs` holds every broker's lines, and two brokers that both think they lead a
    partition (KAFKA-2729) log both. Only the rows where ``event_row`` holds are events (the others are grouped
    apart, topic null)."""
    event = F.col("event_row")
    w = Window.partitionBy("source", F.when(event, F.col("broker")), F.when(event, F.col("topic")),
                           F.when(event, F.col("partition"))) \
        .orderBy("line_number")
    nxt = F.lead("kind").over(w)
    refused = event & F.col("kind").isin("isr_shrink", "isr_expand") & (nxt == "isr_update_failed") & \
        F.col("topic").isNotNull()
    return rows.withColumn("state", F.when(refused, F.lit("refused")).otherwise(F.col("state")))
