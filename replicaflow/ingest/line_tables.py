"""The telemetry tables whose rows are the lines' own events, one function per table (ingest/rebuild.py calls
them): fetchers, log directories, rejected produce requests and the min ISR configs the lines tell."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.ingest.sources import RebuildOptions
from replicaflow.model.configs import DEFAULT_BROKER, MIN_ISR

FETCH_LEADER = r"(?:leaderId=|to broker (?:BrokerEndPoint\((?:id=)?)?|ReplicaFetcherThread-\d+-)(\d+)"
FETCH_ID = r"(?:fetcherId=|ReplicaFetcherThread-)(\d+)"
LOGGED_CONFIG_SEQ = 1 << 40  # config rows from lines are numbered after the start rows of the describe and options


def numbered(df: DataFrame, *order: str) -> DataFrame:
    """``seq``: each cluster's rows numbered in ``order``."""
    w = Window.partitionBy("cluster").orderBy(*order)
    return df.withColumn("seq", F.row_number().over(w).cast("long"))


def fetchers(events: DataFrame) -> DataFrame:
    """"Added fetcher" → added, "Removed fetcher" and a partition fenced by an older epoch → removed, "marked as
    failed" → failed; the leader from the line, else from the fetcher's name."""
    action = (F.when(F.col("kind") == "fetcher_added", F.lit("added"))
              .when((F.col("kind") == "fetcher_removed") | ((F.col("kind") == "fetch_epoch_mismatch")
                                                            & (F.col("state") == "older")), F.lit("removed"))
              .when(F.col("kind") == "partition_failed", F.lit("failed")))

    def num(p: str) -> Column:
        return F.nullif(F.regexp_extract("message", p, 1), F.lit("")).try_cast("int")
    rows = events.where(action.isNotNull() & F.col("topic").isNotNull()).select(
        "cluster", "ts_ms", "broker", F.coalesce("leader", num(FETCH_LEADER)).alias("leader"),
        num(FETCH_ID).alias("fetcher_id"),
        "topic", "partition", action.alias("action"), "source", "line_number")
    return numbered(rows, "ts_ms", "source", "line_number")


def produce_errors(events: DataFrame, interval_ms: int) -> DataFrame:
    """Each rejected append the leader logged, counted at the first scrape at or after it (a scrape at T sees
    (T - interval, T]). ReplicaManager.appendToLocalLog logs every append that fails with NotEnoughReplicas
    (ERROR "Error processing append operation on partition t-p" and the exception) and marks
    FailedProduceRequestsPerSec for it, every release: one line, one request. The error code is the exception's
    name in Kafka's ``Errors`` form (NotEnoughReplicasException → NOT_ENOUGH_REPLICAS); messages and bytes are
    in no line (null)."""
    code = F.upper(F.regexp_replace(F.regexp_replace("error", "Exception$", ""), "([a-z])([A-Z])", "$1_$2"))
    scrape = F.expr(f"(ts_ms + {interval_ms - 1}) div {interval_ms} * {interval_ms}")
    rejected = events.where((F.col("kind") == "produce_rejected") & F.col("broker").isNotNull()
                            & F.col("topic").isNotNull() & F.col("partition").isNotNull())
    return (rejected.groupBy("cluster", scrape.alias("ts_ms"), "topic", "partition", "broker", code.alias("error"))
            .agg(F.count(F.lit(1)).alias("requests"))
            .select("*", F.lit(None).alias("messages"), F.lit(None).alias("bytes")))


def log_dirs(events: DataFrame) -> DataFrame:
    """"Stopping serving replicas in dir D" → D offline; each start of the broker → online again for every
    directory that ever failed on it (a directory is back only after a restart, KIP-112)."""
    keys = ["cluster", "ts_ms", "broker", "source", "line_number"]
    failed = events.where((F.col("kind") == "log_dir_failed") & F.col("broker").isNotNull())
    offline = failed.select(*keys, "log_dir", F.lit("offline").alias("state"))
    online = (events.where((F.col("kind") == "broker_started") & F.col("broker").isNotNull()).select(*keys)
              .join(failed.select("cluster", "broker", "log_dir").distinct(), ["cluster", "broker"])
              .select(*keys, "log_dir", F.lit("online").alias("state")))
    return numbered(offline.unionByName(online), "ts_ms", "source", "line_number", "log_dir")


def logged_configs(events: DataFrame, opts: RebuildOptions) -> DataFrame:
    """min.insync.replicas as the lines tell it, after the start rows of ``_configs`` (docs/real-cluster.md).

    A config change line lists every override of its topic (or of the cluster default) after the change, so a
    topic line without min.insync.replicas removes the override, and a default line without it restores the
    static default (``--min-insync-replicas``, else unknown). Before a topic's first line, a NotEnoughReplicas
    rejection names its effective min ISR (Partition.appendRecordsToLeader): from that instant, the topic's (the
    topic's line then tells its whole state). A cluster whose lines change the default takes no such inference:
    a topic value would hide the default's later changes."""
    k, keys = F.col("kind"), ["cluster", "ts_ms", "source", "line_number"]
    static = F.lit(None if opts.min_insync_replicas is None else str(opts.min_insync_replicas))
    changed = events.where(k == "config_changed")
    lines = changed.where(F.col("state").isin("topic", "default")).select(
        *keys, F.when(F.col("state") == "topic", F.lit("topic")).otherwise(F.lit("broker")).alias("entity_type"),
        F.when(F.col("state") == "topic", F.col("topic")).otherwise(F.lit(DEFAULT_BROKER)).alias("entity"),
        F.when(F.col("state") == "topic", F.col("min_isr").cast("string"))
        .otherwise(F.coalesce(F.col("min_isr").cast("string"), static)).alias("value"))
    told = changed.where(F.col("state") == "topic").groupBy("cluster", "topic").agg(F.min("ts_ms").alias("told_ms"))
    by_default = changed.where(F.col("state") == "default").select("cluster").distinct()
    rejected = (events.where((k == "produce_rejected") & F.col("min_isr").isNotNull() & F.col("topic").isNotNull())
                .join(by_default, "cluster", "left_anti").join(told, ["cluster", "topic"], "left")
                .where(F.col("told_ms").isNull() | (F.col("ts_ms") < F.col("told_ms"))))
    prev = F.lag("min_isr").over(Window.partitionBy("cluster", "topic").orderBy("ts_ms", "source", "line_number"))
    first_of_value = rejected.select("*", prev.alias("prev")).where(~F.col("prev").eqNullSafe(F.col("min_isr")))
    inferred = first_of_value.select(*keys, F.lit("topic").alias("entity_type"), F.col("topic").alias("entity"),
                                     F.col("min_isr").cast("string").alias("value"))
    rows = lines.unionByName(inferred).select("*", F.lit(MIN_ISR).alias("name"))
    seq = F.row_number().over(Window.partitionBy("cluster").orderBy("ts_ms", "source", "line_number"))
    return rows.select("cluster", "ts_ms", (F.lit(LOGGED_CONFIG_SEQ) + seq).cast("long").alias("seq"),
                       "entity_type", "entity", "name", "value")
