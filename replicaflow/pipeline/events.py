"""Incidents (maximal flag intervals per partition) and reassignment progress per adding replica.

Both are gaps-and-islands over the partition_state intervals: consecutive intervals of a
partition with the flag set (or with the replica in ``adding``) form one island.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.model import progress as P
from replicaflow.model.configs import QUOTA_RATES, THROTTLED_REPLICAS_LISTS
from replicaflow.pipeline.metrics import scrape_at_or_after
from replicaflow.pipeline.pruning import with_buckets, within_bucket
from replicaflow.pipeline.state import PKEY
from replicaflow.pipeline.throttles import throttled

STALL_WINDOW_MS = P.STALL_WINDOW_MS
INCIDENT_KINDS = ("urp", "under_min_isr", "offline")
LONG_MAX = (1 << 63) - 1
# the per-scrape measures of reassignment_progress (besides its key, outcome)
PROGRESS_MEASURES = ("ts_ms", "leader", "bytes_moved", "messages_moved", "bytes_remaining", "messages_remaining",
                     "rate_bps", "eta_rate_bps", "leader_growth_bps", "window_messages", "window_ms")


def _islands(df: DataFrame, keys: list[str]) -> DataFrame:
    """Number the runs of contiguous intervals (``to_ms`` of one = ``from_ms`` of the next) per key."""
    w = Window.partitionBy(*keys).orderBy("from_ms")
    new = F.coalesce(F.lag("to_ms").over(w) != F.col("from_ms"), F.lit(True))
    return df.withColumn("island", F.sum(new.cast("int")).over(w.rowsBetween(Window.unboundedPreceding, 0)))


def _end(to: str = "to_ms"):
    """The end of an island: null while any of its intervals is open."""
    return F.when(F.count(to) == F.count(F.lit(1)), F.max(to))


def incidents(state: DataFrame, meta: DataFrame) -> DataFrame:
    """analysis/incidents: maximal intervals per partition and kind, with the worst value seen.

    worst_value: urp → most replicas missing from the ISR (version semantics); under_min_isr →
    largest shortfall below the effective min ISR; offline → |replicas| left without a leader.
    out_of_sync_replicas: the assigned replicas not in the ISR at the incident's start (Kafka's
    ``Partition.getOutOfSyncReplicas``, adding replicas included), the operator's first question: which broker.
    """
    n_r, n_a, n_i = F.size("replicas"), F.size("adding"), F.size("isr")
    m = F.broadcast(meta.select("cluster", "end_ms", "kip352"))
    worst = {
        "urp": F.when(F.col("kip352"), n_r - n_a - n_i).otherwise(n_r - n_i),
        "under_min_isr": F.col("min_isr") - n_i,
        "offline": n_r,
    }
    kinds = F.array(*[F.when(F.col(k), F.struct(F.lit(k).alias("kind"), worst[k].cast("double").alias("value")))
                      for k in INCIDENT_KINDS])
    rows = (state.join(m, "cluster")
            .select(*PKEY, "from_ms", "to_ms", "end_ms", F.array_except("replicas", "isr").alias("out_of_sync"),
                    F.explode(F.array_compact(kinds)).alias("k"))
            .select(*PKEY, "from_ms", "to_ms", "end_ms", "out_of_sync", "k.kind", "k.value"))
    return (_islands(rows, [*PKEY, "kind"])
            .groupBy(*PKEY, "kind", "island")
            .agg(F.min("from_ms").alias("start_ms"), _end().alias("end_ms"), F.max("value").alias("worst_value"),
                 F.first("end_ms").alias("telemetry_end_ms"),
                 F.min_by("out_of_sync", "from_ms").alias("out_of_sync_replicas"))
            .select(*PKEY, "kind", "start_ms", "end_ms",
                    (F.coalesce("end_ms", "telemetry_end_ms") - F.col("start_ms")).alias("duration_ms"),
                    "worst_value", "out_of_sync_replicas"))


def reassignment_episodes(state: DataFrame) -> DataFrame:
    """(cluster, topic, partition, replica, start_ms, end_ms, outcome) per adding replica.

    outcome: 'completed' when the replica is in ``replicas`` right after it left ``adding``,
    'cancelled' when it is not (KIP-455 cancellation reverts to the origin), null while open.
    """
    adding = state.select(*PKEY, "from_ms", "to_ms", F.explode("adding").alias("replica"))
    episodes = (_islands(adding, [*PKEY, "replica"]).groupBy(*PKEY, "replica", "island")
                .agg(F.min("from_ms").alias("start_ms"), _end().alias("end_ms"))
                .select(*PKEY, "replica", "start_ms", "end_ms"))
    after = state.select(*PKEY, F.col("from_ms").alias("end_ms"), F.col("replicas").alias("replicas_after"))
    return (episodes.join(after, [*PKEY, "end_ms"], "left")
            .withColumn("outcome", F.when(F.col("end_ms").isNotNull(),
                                          F.when(F.array_contains("replicas_after", F.col("replica")),
                                                 F.lit("completed")).otherwise(F.lit("cancelled"))))
            .select(*PKEY, "replica", "start_ms", "end_ms", "outcome"))


def reassignment_progress(episodes: DataFrame, replica_offsets: DataFrame, meta: DataFrame, configs: DataFrame,
                          window_ms: int = STALL_WINDOW_MS) -> DataFrame:
    """Per scrape of an episode: the adding replica's copy progress against the leader's log.

    bytes moved = the replica's size now − at the episode's start: 0 when the move began after the
    telemetry did, since the adding replica's log is created empty (``Partition.createLogIfNotExists``) and
    copies the leader's whole log; else (a move already running at the first scrape) its first scrape.
    Remaining = leader's size − replica's size (null while no leader reports); rate = bytes moved over the
    last ``window_ms`` (or since the start), and the leader log's growth over the same window.

    eta_rate_bps, the copy rate the ETA divides by: over the same window, but only since the scrape at or after
    the cluster's last move start or end or throttle change (:func:`_sharing_changes`), and over one scrape
    interval at that scrape.
    Moves share their throttle and their brokers' NICs: after the first of two moves under one 1MB/s throttle
    finished, the other copied 1MB/s, yet the 60 s rate, half of it at 500KB/s, promised 16 s for 10 s of work.
    """
    m = F.broadcast(meta.select("cluster", "start_ms", "scrape_interval_ms"))
    ep = (episodes.withColumnRenamed("start_ms", "ep_start").withColumnRenamed("end_ms", "ep_end").join(m, "cluster")
          .select(*PKEY, "replica", "ep_start", "outcome",
                  F.coalesce(scrape_at_or_after("ep_end"), F.lit(LONG_MAX)).alias("ep_last"),
                  (F.col("ep_start") > F.col("start_ms")).alias("created")))
    rows = (within_bucket(replica_offsets, with_buckets(ep, meta, F.col("ep_start"), F.col("ep_last")),
                          ["replica", "ep_start", "outcome", "ep_last", "created"])
            .filter((F.col("ts_ms") >= F.col("ep_start")) & (F.col("ts_ms") <= F.col("ep_last"))
                    & ((F.col("broker") == F.col("replica")) | F.col("high_watermark").isNotNull())))
    mine = F.col("broker") == F.col("replica")
    leader = F.col("high_watermark").isNotNull()
    per_scrape = (rows.groupBy(*PKEY, "replica", "ep_start", "outcome", "created", "ts_ms")
                  .agg(F.max(F.when(mine, F.col("size_bytes"))).alias("size"),
                       F.max(F.when(mine, F.col("log_end_offset"))).alias("leo"),
                       F.max(F.when(leader, F.col("size_bytes"))).alias("leader_size"),
                       F.max(F.when(leader, F.col("broker"))).alias("leader"),
                       F.max(F.when(leader, F.col("log_end_offset"))).alias("leader_leo"))
                  .filter(F.col("size").isNotNull()))
    key = [*PKEY, "replica", "ep_start"]
    first = Window.partitionBy(*key).orderBy("ts_ms").rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    recent = Window.partitionBy(*key).orderBy("ts_ms").rangeBetween(-window_ms, 0)
    ordered = Window.partitionBy(*key).orderBy("ts_ms")
    seconds = (F.col("ts_ms") - F.col("w_ts")) / 1000.0
    # the first scrape since the last change, or the one before when this is it (the interval the change fell in)
    e_ts = F.when(F.col("c_ts") < F.col("ts_ms"), F.col("c_ts")).otherwise(F.lag("ts_ms").over(ordered))
    e_size = F.when(F.col("c_ts") < F.col("ts_ms"), F.col("c_size")).otherwise(F.lag("size").over(ordered))
    changed = F.coalesce(F.col("changed"), F.lit(0))
    # `shared` never falls as ts_ms grows: the least (-shared, ts_ms) of the window is its first scrape since the
    # last change, in the window (and the sort) the other window measures use
    since = F.min(F.struct((-F.col("shared")).alias("shared"), "ts_ms", "size")).over(recent)
    per_scrape = (per_scrape.join(F.broadcast(_sharing_changes(episodes, meta, configs)), ["cluster", "ts_ms"], "left")
                  .withColumn("shared", F.sum(changed).over(ordered.rowsBetween(Window.unboundedPreceding, 0)))
                  .withColumn("c", since).withColumn("c_ts", F.col("c.ts_ms")).withColumn("c_size", F.col("c.size"))
                  .withColumn("e_ts", e_ts).withColumn("e_size", e_size))
    return (per_scrape
            .withColumn("size0", F.when(F.col("created"), F.lit(0)).otherwise(F.first("size").over(first)))
            .withColumn("leo0", F.when(F.col("created"), F.lit(0)).otherwise(F.first("leo").over(first)))
            .withColumn("w_ts", F.first("ts_ms").over(recent)).withColumn("w_size", F.first("size").over(recent))
            .withColumn("w_leo", F.first("leo").over(recent))
            .withColumn("w_leader_size", F.first("leader_size", ignorenulls=True).over(recent))
            .withColumn("w_leader_ts", F.first(F.when(F.col("leader_size").isNotNull(), F.col("ts_ms")),
                                               ignorenulls=True).over(recent))
            .select(*key, "outcome", "ts_ms", "leader",
                    (F.col("size") - F.col("size0")).alias("bytes_moved"),
                    (F.col("leo") - F.col("leo0")).alias("messages_moved"),
                    F.when(F.col("leader_size").isNotNull(),
                           F.greatest(F.col("leader_size") - F.col("size"), F.lit(0))).alias("bytes_remaining"),
                    F.when(F.col("leader_leo").isNotNull(),
                           F.greatest(F.col("leader_leo") - F.col("leo"), F.lit(0))).alias("messages_remaining"),
                    F.when(seconds > 0, (F.col("size") - F.col("w_size")) / seconds).alias("rate_bps"),
                    F.when(F.col("ts_ms") > F.col("e_ts"), (F.col("size") - F.col("e_size"))
                           / ((F.col("ts_ms") - F.col("e_ts")) / 1000.0)).alias("eta_rate_bps"),
                    F.when(F.col("ts_ms") > F.col("w_leader_ts"),
                           (F.col("leader_size") - F.col("w_leader_size"))
                           / ((F.col("ts_ms") - F.col("w_leader_ts")) / 1000.0)).alias("leader_growth_bps"),
                    (F.col("leo") - F.col("w_leo")).alias("window_messages"),
                    (F.col("ts_ms") - F.col("w_ts")).alias("window_ms")))


def _sharing_changes(episodes: DataFrame, meta: DataFrame, configs: DataFrame) -> DataFrame:
    """(cluster, ts_ms, changed = 1): the scrapes at or after an instant the copy rate of the cluster's moves could
    change: a move started or ended (the moves that share throttles and NICs changed), or a config event set or
    removed a throttle rate or a throttled-replicas list during the telemetry (``ReplicationQuotaManager.updateQuota``
    applies a dynamic rate at once). Cluster-wide, as a throttle rate is per broker and a move's leader and
    destination are not in its row; a change elsewhere only shortens a window whose rate it did not change."""
    m = F.broadcast(meta.select("cluster", "start_ms", "scrape_interval_ms"))
    throttle = configs.filter(F.col("name").isin(*QUOTA_RATES, *THROTTLED_REPLICAS_LISTS)).select("cluster", "ts_ms")
    at = episodes.select("cluster", F.col("start_ms").alias("at")).unionByName(
        episodes.filter(F.col("end_ms").isNotNull()).select("cluster", F.col("end_ms").alias("at")))
    at = at.unionByName(throttle.join(m, "cluster").filter(F.col("ts_ms") > F.col("start_ms"))
                        .select("cluster", F.col("ts_ms").alias("at")))
    return (at.withColumnRenamed("at", "ts").join(m, "cluster")
            .select("cluster", scrape_at_or_after("ts").alias("ts_ms")).distinct().withColumn("changed", F.lit(1)))


def reassignments(episodes: DataFrame, progress: DataFrame, configs: DataFrame,
                  window_ms: int = STALL_WINDOW_MS) -> DataFrame:
    """analysis/reassignments: one row per adding replica, its totals at its last scrape, a status and
    an ETA from the net rate (``model.progress``): 'completed' / 'cancelled' once it left ``adding``,
    else progressing, starved, never at this rate or stalled over the last ``window_ms``."""
    key = [*PKEY, "replica", "ep_start"]
    last = Window.partitionBy(*key).orderBy(F.col("ts_ms").desc())
    latest = throttled(progress.withColumn("rn", F.row_number().over(last)).filter("rn = 1"), configs, key)
    latest = latest.select(*PKEY, "replica", F.col("ep_start").alias("start_ms"), "throttled", *PROGRESS_MEASURES)
    copy = F.coalesce(F.col("rate_bps"), F.lit(0.0))
    eta_copy = F.coalesce(F.col("eta_rate_bps"), copy)  # since the moves last changed (reassignment_progress)
    growth = F.coalesce(F.col("leader_growth_bps"), F.lit(0.0))
    window_full = F.coalesce(F.col("window_ms") >= window_ms, F.lit(False))
    caught_up = F.coalesce(F.col("bytes_remaining") <= 0, F.lit(False))
    status = F.coalesce(F.col("outcome"), P.open_move_status(caught_up, copy, growth, window_full, F.col("throttled")))
    eta = F.when(caught_up, F.lit(0)).when(
        (status == P.PROGRESSING) & F.col("bytes_remaining").isNotNull() & (eta_copy - growth > 0),
        F.ceil(P.eta_ms(F.col("bytes_remaining"), eta_copy, growth)).cast("long"))
    return (episodes.join(latest, [*PKEY, "replica", "start_ms"], "left")
            .select(*PKEY, "replica", "start_ms", "end_ms",
                    (F.col("bytes_moved") + F.col("bytes_remaining")).alias("bytes_to_move"),
                    (F.col("messages_moved") + F.col("messages_remaining")).alias("messages_to_move"),
                    "bytes_moved", "messages_moved", F.col("rate_bps").cast("double"),
                    F.col("leader_growth_bps").cast("double"),
                    F.when(F.col("outcome").isNull(), eta).alias("eta_ms"), status.alias("status"),
                    "throttled"))  # null: no sample of the move to tell it at (logs alone have none)


def progress_table(progress: DataFrame) -> DataFrame:
    """analysis/reassignment_progress in its contract schema."""
    return progress.select("cluster", "ts_ms", "topic", "partition", "replica", "bytes_moved", "bytes_remaining",
                           "rate_bps")
