"""The telemetry tables whose rows are the lines' own events, one function per table (ingest/rebuild.py calls
them): fetchers, log directories, rejected produce requests and the configs the lines tell (min ISR, throttles)."""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.ingest.sources import RebuildOptions
from replicaflow.model.configs import (
    DEFAULT_BROKER,
    FOLLOWER_REPLICATION_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_REPLICATION_RATE,
    LEADER_THROTTLED_REPLICAS,
    MIN_ISR,
)

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
    directory that ever failed on it (a directory is back only after a restart, KIP-112).

    A KRaft controller's `Directories [U1, U2] in broker N marked offline` (3.7+, JBOD) is the same failure told by
    the controller, N's directories named by UUID: a row per directory, for logs that hold the controller's lines and
    not N's. Where N's own line of a failure between the same two starts of N is read, the controller's is not counted
    again: OfflineReplicaCount counts a replica once per offline directory of its broker where the assignment names
    no directory, as from logs it never does."""
    keys = ["cluster", "ts_ms", "broker", "source", "line_number"]
    kind = F.col("kind")
    failed = events.where((kind == "log_dir_failed") & F.col("broker").isNotNull()).select(
        "cluster", "ts_ms", F.coalesce("target_broker", "broker").alias("broker"), "source", "line_number", "log_dir",
        F.col("target_broker").isNotNull().alias("told"))
    starts = events.where((kind == "broker_started") & F.col("broker").isNotNull()).select(
        F.col("cluster").alias("s_cluster"), F.col("broker").alias("s_broker"), F.col("ts_ms").alias("start_ms"))
    since = (failed.join(starts, (F.col("cluster") == F.col("s_cluster")) & (F.col("broker") == F.col("s_broker"))
                         & (F.col("start_ms") <= F.col("ts_ms")), "left")
             .groupBy(*keys, "log_dir", "told").agg(F.max("start_ms").alias("since")))
    own = since.where(~F.col("told")).select(F.col("cluster").alias("o_cluster"), F.col("broker").alias("o_broker"),
                                              F.col("since").alias("o_since")).distinct()
    told = (since.where(F.col("told"))
            .join(own, (F.col("cluster") == F.col("o_cluster")) & (F.col("broker") == F.col("o_broker"))
                  & F.col("since").eqNullSafe(F.col("o_since")), "left_anti")
            .select(*keys, F.explode(F.split("log_dir", ", ")).alias("log_dir")))
    failed = since.where(~F.col("told")).select(*keys, "log_dir").unionByName(told)
    offline = failed.select(*keys, "log_dir", F.lit("offline").alias("state"))
    online = (events.where((kind == "broker_started") & F.col("broker").isNotNull()).select(*keys)
              .join(failed.select("cluster", "broker", "log_dir").distinct(), ["cluster", "broker"])
              .select(*keys, "log_dir", F.lit("online").alias("state")))
    return numbered(offline.unionByName(online), "ts_ms", "source", "line_number", "log_dir")


# The configs the rebuilt `configs` follow, per entity a config change line is about, with the form of a value in its
# listing (docs/real-cluster.md): min ISR, and the KIP-73 throttles (rates on brokers, replica lists on topics)
_THROTTLED_LIST = r"\*|(?:\d+:\d+(?:,\d+:\d+)*)?"
LISTED = {
    "topic": {MIN_ISR: r"\d+", LEADER_THROTTLED_REPLICAS: _THROTTLED_LIST, FOLLOWER_THROTTLED_REPLICAS: _THROTTLED_LIST},
    "default": {MIN_ISR: r"\d+", LEADER_REPLICATION_RATE: r"\d+", FOLLOWER_REPLICATION_RATE: r"\d+"},
    "broker": {LEADER_REPLICATION_RATE: r"\d+", FOLLOWER_REPLICATION_RATE: r"\d+"},
}


def _listed(name: str, value: str) -> Column:
    """``name``'s value in a listing (`k -> v`, `k=v`), "" for an empty one; null when the listing lacks it."""
    pattern = rf"(?:^|[\s(,{{:]){re.escape(name)}(?: -> |=)({value})(?=[,)}}\s]|$)"
    return F.when(F.col("message").rlike(pattern), F.regexp_extract("message", pattern, 1))


def logged_configs(events: DataFrame, opts: RebuildOptions) -> DataFrame:
    """The configs of :data:`LISTED` as the lines tell them, after the start rows of the describe and options.

    A config change line lists every override of its entity after the change, so a name it lacks has no override:
    a topic's min ISR or throttled replicas, a broker's rates, are removed (null); the default's min ISR is the static
    one again (``--min-insync-replicas``, else unknown). Before a topic's first line, a NotEnoughReplicas rejection
    names its effective min ISR (Partition.appendRecordsToLeader): from that instant, the topic's (the topic's line
    then tells its whole state). A cluster whose lines change the default takes no such inference: a topic value
    would hide the default's later changes."""
    k, keys = F.col("kind"), ["cluster", "ts_ms", "source", "line_number"]
    static = F.lit(None if opts.min_insync_replicas is None else str(opts.min_insync_replicas))
    changed = events.where(k == "config_changed")

    def values(state: str) -> Column:
        def value(name: str, form: str) -> Column:
            listed = _listed(name, form)
            return F.coalesce(listed, static) if (state, name) == ("default", MIN_ISR) else listed
        return F.array(*[F.struct(F.lit(name).alias("name"), value(name, form).alias("value"))
                         for name, form in LISTED[state].items()])
    state = F.col("state")
    entity = (F.when(state == "topic", F.col("topic")).when(state == "default", F.lit(DEFAULT_BROKER))
              .otherwise(F.col("target_broker").cast("string")))
    each = F.when(state == "topic", values("topic")).when(state == "default", values("default")) \
        .otherwise(values("broker"))
    lines = (changed.where(state.isin(*LISTED) & entity.isNotNull())
             .select(*keys, F.when(state == "topic", F.lit("topic")).otherwise(F.lit("broker")).alias("entity_type"),
                     entity.alias("entity"), F.explode(each).alias("c"))
             .select(*keys, "entity_type", "entity", "c.name", "c.value"))
    told = changed.where(state == "topic").groupBy("cluster", "topic").agg(F.min("ts_ms").alias("told_ms"))
    by_default = changed.where(state == "default").select("cluster").distinct()
    rejected = (events.where((k == "produce_rejected") & F.col("min_isr").isNotNull() & F.col("topic").isNotNull())
                .join(by_default, "cluster", "left_anti").join(told, ["cluster", "topic"], "left")
                .where(F.col("told_ms").isNull() | (F.col("ts_ms") < F.col("told_ms"))))
    prev = F.lag("min_isr").over(Window.partitionBy("cluster", "topic").orderBy("ts_ms", "source", "line_number"))
    first_of_value = rejected.select("*", prev.alias("prev")).where(~F.col("prev").eqNullSafe(F.col("min_isr")))
    inferred = first_of_value.select(*keys, F.lit("topic").alias("entity_type"), F.col("topic").alias("entity"),
                                     F.lit(MIN_ISR).alias("name"), F.col("min_isr").cast("string").alias("value"))
    order = ("ts_ms", "source", "line_number", "name")
    # every broker logs the same change: a row that repeats its config's value is dropped
    before = F.lag(F.struct("value")).over(Window.partitionBy("cluster", "entity_type", "entity", "name").orderBy(*order))
    rows = (lines.unionByName(inferred).select("*", before.alias("before"))
            .where(F.col("before").isNull() | ~F.col("before.value").eqNullSafe(F.col("value"))))
    seq = F.row_number().over(Window.partitionBy("cluster").orderBy(*order))
    return rows.select("cluster", "ts_ms", (F.lit(LOGGED_CONFIG_SEQ) + seq).cast("long").alias("seq"),
                       "entity_type", "entity", "name", "value")
