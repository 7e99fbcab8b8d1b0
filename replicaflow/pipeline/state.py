"""State reconstruction: per partition, the change logs forward-filled into intervals with flags.

Every telemetry change log is a stream of rows ordered by ``(ts_ms, seq)``; a scrape at T sees
the state after the last row with ``ts_ms <= T`` (docs/design.md, telemetry). The partition's state is the
union of its assignments, leaders and isr rows and of its topic's effective
``min.insync.replicas`` (topic config, else the broker default, else 1), forward-filled with
``last(..., ignorenulls)`` and collapsed to one interval ``[from_ms, to_ms)`` per distinct
``ts_ms``. Flags come from the predicates of ``replicaflow.model.predicates`` applied to Columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.model import predicates as P
from replicaflow.model.configs import DEFAULT_BROKER, MIN_ISR
from replicaflow.telemetry.schema import CONTROLLER_ISR_EPOCH

PKEY = ("cluster", "topic", "partition")
FLAGS = ("urp", "urp_kip352", "urp_legacy", "under_min_isr", "at_min_isr", "offline", "reassigning")
NO_VALUE = -1  # a removed config (value null) in a forward-filled config column
# a state interval's columns after its key and bounds (analysis/partition_state)
STATE_VALUES = ("leader", "leader_epoch", "replicas", "adding", "removing", "isr", "elr", "last_known_elr", "min_isr",
                *FLAGS)
STATE_COLUMNS = (*PKEY, "from_ms", "to_ms", *STATE_VALUES)


def running(*keys: str, order: tuple[str, ...] = ("ts_ms", "seq")) -> Window:
    """Rows from the start of the key up to the current row, in replay order."""
    return Window.partitionBy(*keys).orderBy(*order).rowsBetween(Window.unboundedPreceding, Window.currentRow)


def change_intervals(df: DataFrame, keys: tuple[str, ...]) -> DataFrame:
    """A change log → intervals: the last row (by seq) of each ts_ms, valid until the next ts_ms.

    ``to_ms`` is null for the interval still open at the end of the telemetry.
    """
    w = Window.partitionBy(*keys).orderBy("ts_ms", "seq")
    nxt = F.lead("ts_ms").over(w)
    return (df.withColumn("to_ms", nxt)
            .filter(F.col("to_ms").isNull() | (F.col("to_ms") != F.col("ts_ms")))
            .withColumnRenamed("ts_ms", "from_ms"))


def topic_min_isr(configs: DataFrame, topics: DataFrame) -> DataFrame:
    """(cluster, topic, ts_ms, seq, min_isr): the configured min ISR after every relevant config change.

    A broker-default change applies to every topic of the cluster (cross join with ``topics``,
    which is small); a topic override wins while it is set.
    """
    cfg = configs.filter(F.col("name") == MIN_ISR)
    value = F.coalesce(F.expr("try_cast(value as int)"), F.lit(NO_VALUE))
    per_topic = (cfg.filter(F.col("entity_type") == "topic")
                 .select("cluster", F.col("entity").alias("topic"), "ts_ms", "seq", value.alias("t_val")))
    default = (cfg.filter((F.col("entity_type") == "broker") & (F.col("entity") == DEFAULT_BROKER))
               .select("cluster", "ts_ms", "seq", value.alias("d_val"))
               .join(topics, "cluster"))
    w = running("cluster", "topic")
    t_ff = F.last("t_val", ignorenulls=True).over(w)
    d_ff = F.last("d_val", ignorenulls=True).over(w)
    return (per_topic.unionByName(default, allowMissingColumns=True)
            .withColumn("t_ff", t_ff).withColumn("d_ff", d_ff)
            .select("cluster", "topic", "ts_ms", "seq",
                    F.coalesce(F.when(F.col("t_ff") != NO_VALUE, F.col("t_ff")),
                               F.when(F.col("d_ff") != NO_VALUE, F.col("d_ff")),
                               F.lit(1)).cast("int").alias("min_isr")))


def partition_events(tables: dict[str, DataFrame]) -> DataFrame:
    """One replay stream per partition: every change row with the state forward-filled up to it.

    The state columns include the eligible leader replicas of the last isr row (``elr``, ``last_known_elr``;
    KIP-966, null when the telemetry does not know them). Besides them it keeps, on isr rows, the previous
    isr row's members and epoch (``prev_isr``, ``prev_isr_epoch``) for the IsrShrinks/Expands meters, and
    whether the controller wrote it with a leaders row (``controller_write``: a KRaft ISR removal keeps the
    leader epoch, docs/semantics.md §6), and on leaders rows whether the row knows its leader epoch (``epoch_known``).
    """
    assignments, leaders, isr = tables["assignments"], tables["leaders"], tables["isr"]
    topics = assignments.select("cluster", "topic").distinct()
    partitions = assignments.select(*PKEY).distinct()
    a = assignments.select(*PKEY, "ts_ms", "seq", "replicas", "adding", "removing", F.lit("a").alias("src"))
    ld = leaders.select(*PKEY, "ts_ms", "seq", "leader", "leader_epoch", F.lit("l").alias("src"),
                        F.col("leader_epoch").isNotNull().alias("epoch_known"))
    i = isr.select(*PKEY, "ts_ms", "seq", F.col("isr").alias("isr_raw"),
                   F.col("leader_epoch").alias("isr_epoch_raw"), F.col("elr").alias("elr_raw"),
                   F.col("last_known_elr").alias("last_known_elr_raw"), F.lit("i").alias("src"))
    m = (topic_min_isr(tables["configs"], topics).join(partitions, ["cluster", "topic"])
         .select(*PKEY, "ts_ms", "seq", F.col("min_isr").alias("min_isr_raw"), F.lit("m").alias("src")))
    ev = (a.unionByName(ld, allowMissingColumns=True).unionByName(i, allowMissingColumns=True)
          .unionByName(m, allowMissingColumns=True))
    w = running(*PKEY)
    before = Window.partitionBy(*PKEY).orderBy("ts_ms", "seq").rowsBetween(Window.unboundedPreceding, -1)
    ordered = Window.partitionBy(*PKEY).orderBy("ts_ms", "seq")
    return ev.select(
        *PKEY, "ts_ms", "seq", "src", "epoch_known",
        # a leaders row right before an isr row at the same instant: the controller wrote both (§6)
        ((F.lag("src").over(ordered) == "l") & (F.lag("ts_ms").over(ordered) == F.col("ts_ms")))
        .alias("controller_write"),
        *[F.last(c, ignorenulls=True).over(w).alias(c) for c in ("replicas", "adding", "removing", "leader",
                                                                  "leader_epoch")],
        F.last("isr_raw", ignorenulls=True).over(w).alias("isr"),
        F.last("isr_epoch_raw", ignorenulls=True).over(w).alias("isr_epoch"),
        F.last("elr_raw", ignorenulls=True).over(w).alias("elr"),
        F.last("last_known_elr_raw", ignorenulls=True).over(w).alias("last_known_elr"),
        F.last("min_isr_raw", ignorenulls=True).over(w).alias("configured_min_isr"),
        F.last("isr_raw", ignorenulls=True).over(before).alias("prev_isr"),
        # an ISR the controller wrote at a broker failure is skipped: the leader's next change counts against the
        # epoch before it (KRaft keeps the epoch; ZooKeeper's new one shows on the leader's lines)
        F.last(F.when(F.col("isr_epoch_raw") != CONTROLLER_ISR_EPOCH, F.col("isr_epoch_raw")), ignorenulls=True)
        .over(before).alias("prev_isr_epoch"),
    )


def with_flags(df: DataFrame) -> DataFrame:
    """Flags of docs/semantics.md §2 per row, in the cluster's version semantics and both URP semantics.

    ``df`` must carry the per-cluster meta columns ``kip352`` and ``min_isr_capped``. Partition
    predicates are true only on a current leader (§2): with no leader every flag but ``offline``
    is false.
    """
    n_r, n_a, n_rm, n_i = (F.size("replicas"), F.size("adding"), F.size("removing"), F.size("isr"))
    led = F.col("leader") != -1
    configured = F.col("configured_min_isr")
    capped = F.col("min_isr_capped")
    kip352, legacy = P.urp_kip352(n_r, n_a, n_i) & led, P.urp_legacy(n_r, n_i) & led

    def by_cap(fn) -> Column:
        return F.when(capped, fn(n_i, configured, n_r, True)).otherwise(fn(n_i, configured, n_r, False))

    return df.select(
        "*",
        F.when(capped, P.effective_min_isr(configured, n_r, True))
        .otherwise(P.effective_min_isr(configured, n_r, False)).cast("int").alias("min_isr"),
        F.when(F.col("kip352"), kip352).otherwise(legacy).alias("urp"),
        kip352.alias("urp_kip352"), legacy.alias("urp_legacy"),
        (by_cap(P.under_min_isr) & led).alias("under_min_isr"),
        (by_cap(P.at_min_isr) & led).alias("at_min_isr"),
        (~led).alias("offline"),
        (P.reassigning(n_a, n_rm) & led).alias("reassigning"),
    )


def replay_rows(events: DataFrame, meta: DataFrame, counted: Mapping[str, Column] | None = None) -> DataFrame:
    """The rows of the replay stream (``partition_events``) that later steps read, as one table to cache.

    Its state rows (``state_row``): the last row of each instant of a partition whose replicas are known, or
    which is known to have no leader (offline, its replicas null while unknown),
    with the interval it starts (``ts_ms`` to ``to_ms``, null while open) and the state columns and flags
    of ``partition_state``. Besides them, the rows where one of the columns ``counted`` (expressions over the
    stream, null where a row counts for nothing) is set: the change rows that meters and elections count.
    The stream itself is not cached: at 8 h of the benchmark its 2.9 M rows of arrays took 4.5 s to cache,
    against 1.5 s for these (docs/pipeline.md, "One cached replay").
    """
    counted = dict(counted or {})
    nxt = F.lead("ts_ms").over(Window.partitionBy(*PKEY).orderBy("ts_ms", "seq"))
    rows = events.select("*", nxt.alias("to_ms"), *[c.alias(n) for n, c in counted.items()])
    last_of_instant = F.col("to_ms").isNull() | (F.col("to_ms") != F.col("ts_ms"))
    # size(): null while the replicas are not yet known; 0 for a deleted topic. A partition known to have no
    # leader is offline whatever its replicas (the controller's OfflinePartitionsCount): a failed election's line
    # often names nothing else (docs/real-cluster.md)
    known = (F.size("replicas") > 0) | (F.col("replicas").isNull() & (F.col("leader") == -1))
    state_row = F.coalesce(last_of_instant & known, F.lit(False))
    keep = reduce(lambda a, b: a | b, [F.col(n).isNotNull() for n in counted], F.col("state_row"))
    kept = (rows.withColumn("state_row", state_row).filter(keep)
            .withColumn("leader", F.coalesce("leader", F.lit(-1)))
            .withColumn("isr", F.coalesce("isr", F.array().cast("array<int>")))
            .withColumn("configured_min_isr", F.coalesce("configured_min_isr", F.lit(1)))
            .join(F.broadcast(meta.select("cluster", "kip352", "min_isr_capped")), "cluster"))
    return with_flags(kept).select(*PKEY, "ts_ms", "seq", "to_ms", *STATE_VALUES, "state_row", *counted)


def state_rows(replay: DataFrame) -> DataFrame:
    """analysis/partition_state from ``replay_rows``: its state rows, each the interval ``[from_ms, to_ms)``."""
    return replay.filter("state_row").withColumnRenamed("ts_ms", "from_ms").select(*STATE_COLUMNS)


def partition_state(events: DataFrame, meta: DataFrame) -> DataFrame:
    """Intervals ``[from_ms, to_ms)`` of each partition's state and flags (analysis/partition_state)."""
    return state_rows(replay_rows(events, meta))
