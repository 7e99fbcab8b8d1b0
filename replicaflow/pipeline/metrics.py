"""Broker metrics on the scrape grid (docs/metrics.md), and topic / cluster roll-ups.

Never partitions × scrapes: each interval of a flag becomes a +1 at the first scrape at or after
``from_ms`` and a −1 at the first scrape at or after ``to_ms`` (a scrape at T sees changes with
``ts_ms <= T``), and a running sum over the grid per (cluster, broker, metric) gives the gauge.
Meters are the same running sum of change events, restarted at each ``up`` row of the broker
(the ``epoch`` column). Only MaxLag and ReassignmentMaxLag read ``replica_offsets``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.model.metrics import BROKER_METRICS, LEADER_FLAG_GAUGES, TRAFFIC_METRICS, jmx
from replicaflow.pipeline.elections import controller_changes, elected_outside_isr
from replicaflow.pipeline.log_dirs import offline_replica_intervals
from replicaflow.pipeline.produce import produce_meter_deltas
from replicaflow.pipeline.pruning import with_buckets, within_bucket
from replicaflow.pipeline.state import FLAGS, PKEY, change_intervals, replay_rows, running
from replicaflow.telemetry.values import LIVE_STATES

LONG_MAX = (1 << 63) - 1
METERS = [m.jmx for m in BROKER_METRICS if m.kind == "meter"]
OFFLINE = jmx("OfflinePartitionsCount")
LAG_GAUGES = (jmx("MaxLag"), jmx("ReassignmentMaxLag"))


def scrape_at_or_after(ts: str) -> Column:
    """First scrape instant ≥ ``ts`` (needs the meta columns start_ms and scrape_interval_ms)."""
    return F.expr(f"if({ts} is null, null, start_ms + (greatest({ts} - start_ms, 0) + scrape_interval_ms - 1)"
                  " div scrape_interval_ms * scrape_interval_ms)")


def last_scrape() -> Column:
    """The last scrape instant of the cluster's grid (needs start_ms, end_ms, scrape_interval_ms)."""
    return F.expr("start_ms + (end_ms - start_ms) div scrape_interval_ms * scrape_interval_ms")


def scrape_grid(meta: DataFrame) -> DataFrame:
    """(cluster, ts_ms) for every scrape of every cluster."""
    return meta.select("cluster", F.explode(F.sequence("start_ms", last_scrape(), "scrape_interval_ms")).alias("ts_ms"))


def broker_grid(brokers: DataFrame, meta: DataFrame) -> DataFrame:
    """(cluster, broker, ts_ms, state, restart) at every scrape: the broker's state and its number of up rows.

    ``restart`` numbers the broker's process lifetimes, so a meter restarts at 0 with it.
    """
    ids = brokers.select("cluster", "broker").distinct()
    points = (scrape_grid(meta).join(ids, "cluster")
              .select("cluster", "broker", "ts_ms", F.lit(LONG_MAX).alias("seq"), F.lit(True).alias("grid")))
    rows = brokers.select("cluster", "broker", "ts_ms", "seq", F.col("state").alias("state_raw"),
                          F.lit(False).alias("grid"))
    w = running("cluster", "broker")
    return (rows.unionByName(points, allowMissingColumns=True)
            .select("cluster", "broker", "ts_ms", "grid",
                    F.last("state_raw", ignorenulls=True).over(w).alias("state"),
                    F.sum(F.when(F.col("state_raw") == "up", 1).otherwise(0)).over(w).alias("restart"))
            .filter("grid").select("cluster", "broker", "ts_ms", "state", "restart"))


def restart_spans(brokers: DataFrame) -> DataFrame:
    """(s_cluster, s_broker, restart, from_ts, from_seq, to_ts, to_seq): the broker's ``restart``-th process lifetime,
    from its ``restart``-th ``up`` row to its next (``to_*`` null: to the end of the telemetry)."""
    w = Window.partitionBy("cluster", "broker").orderBy("ts_ms", "seq")
    return (brokers.filter(F.col("state") == "up")
            .select(F.col("cluster").alias("s_cluster"), F.col("broker").alias("s_broker"),
                    F.row_number().over(w).alias("restart"), F.col("ts_ms").alias("from_ts"),
                    F.col("seq").alias("from_seq"), F.lead("ts_ms").over(w).alias("to_ts"),
                    F.lead("seq").over(w).alias("to_seq")))


def restart_of_events(events: DataFrame, brokers: DataFrame) -> DataFrame:
    """Tag meter events (cluster, broker, ts_ms, seq, name) with the broker's restart number at them: the number
    of its ``up`` rows at or before the event in replay order (0 before the first).

    The few lifetimes per broker are broadcast to the events, which are never shuffled: a running count over
    the events and the ``up`` rows together sorted every ISR change of a broker (docs/pipeline-measurements.md, "The night's changes").
    """
    def at_or_after(ts: str, seq: str) -> Column:
        return (F.col("ts_ms") > F.col(ts)) | ((F.col("ts_ms") == F.col(ts)) & (F.col("seq") >= F.col(seq)))

    inside = at_or_after("from_ts", "from_seq") & (F.col("to_ts").isNull() | ~at_or_after("to_ts", "to_seq"))
    same = (F.col("cluster") == F.col("s_cluster")) & (F.col("broker") == F.col("s_broker"))
    return (events.join(F.broadcast(restart_spans(brokers)), same & inside, "left")
            .select("cluster", "broker", "ts_ms", "seq", "name", F.coalesce("restart", F.lit(0)).cast("long").alias("restart")))


def interval_deltas(df: DataFrame, keys: list[str]) -> DataFrame:
    """Interval rows (keys…, from_ms, to_ms, meta columns) → (keys…, ts_ms, delta) on the scrape grid.

    Intervals that no scrape sees (both ends before the same scrape) cancel out and are dropped.
    """
    lo, hi = scrape_at_or_after("from_ms"), scrape_at_or_after("to_ms")
    pair = F.array(F.struct(lo.alias("ts_ms"), F.lit(1).alias("delta")),
                   F.struct(hi.alias("ts_ms"), F.lit(-1).alias("delta")))
    one = F.array(F.struct(lo.alias("ts_ms"), F.lit(1).alias("delta")))
    return (df.filter(F.col("to_ms").isNull() | (lo != hi))
            .select(*keys, last_scrape().alias("last_ms"),
                    F.explode(F.when(F.col("to_ms").isNull(), one).otherwise(pair)).alias("d"))
            .select(*keys, "d.ts_ms", "d.delta", "last_ms")
            .filter(F.col("ts_ms") <= F.col("last_ms")).select(*keys, "ts_ms", "delta"))


# A (broker, gauge) pair of partition_gauge_deltas as one long, broker × len(_PAIR_GAUGES) + the gauge's index:
# Spark's array_except compares struct elements pairwise through an interpreted ordering, longs through a
# hash set in generated code (docs/pipeline-measurements.md, "The first figures").
_PAIR_GAUGES = (*[short for short, _ in LEADER_FLAG_GAUGES], "LeaderCount", "PartitionCount")


def _unpair(p: Column) -> tuple[Column, Column]:
    """broker and JMX name of a pair."""
    names = F.array(*[F.lit(jmx(short)) for short in _PAIR_GAUGES])
    return (F.floor(p / len(_PAIR_GAUGES)).cast("int").alias("broker"),
            F.element_at(names, F.pmod(p, F.lit(len(_PAIR_GAUGES))).cast("int") + 1).alias("name"))


def partition_gauge_deltas(state: DataFrame, meta: DataFrame) -> DataFrame:
    """(cluster, broker, name, ts_ms, delta) of the gauges a partition's state feeds, only where they change.

    Each state interval contributes a set of (broker, gauge) pairs — its leader's flag gauges and
    LeaderCount (leader-only counting, §2), PartitionCount on every replica (OfflinePartitionsCount is
    the controller's: ``offline_at_controller``). Compared with the partition's previous interval, a pair that
    appears is a +1 and one that disappears a −1, at the first scrape at or after the change; an
    interval followed by no other closes all its pairs at its end. So a partition's replicas count
    once, not once per ISR change.
    """
    m = F.broadcast(meta.select("cluster", "start_ms", "end_ms", "scrape_interval_ms"))

    def pair(broker: str, short: str) -> str:
        return f"CAST({broker} AS BIGINT) * {len(_PAIR_GAUGES)} + {_PAIR_GAUGES.index(short)}"

    # SQL text, not F.transform: PySpark names a Python lambda's variable x_<n> from a counter of the JVM, and the
    # name lands in the generated code, so every analyze in one session compiled that class again
    led = [F.when(F.col(flag), F.expr(pair("leader", short))) for short, flag in LEADER_FLAG_GAUGES]
    led += [F.when(F.col("leader") != -1, F.expr(pair("leader", "LeaderCount")))]
    pairs = F.concat(F.array_compact(F.array(*led)), F.expr(f"transform(replicas, r -> {pair('r', 'PartitionCount')})"))
    order = Window.partitionBy(*PKEY).orderBy("from_ms")
    rows = state.select(*PKEY, "from_ms", "to_ms", pairs.alias("pairs")).select(
        *PKEY, "from_ms", "to_ms", "pairs",
        F.when(F.lag("to_ms").over(order) == F.col("from_ms"), F.lag("pairs").over(order)).alias("prev"),
        F.lead("from_ms").over(order).alias("next_from"))
    empty = F.array().cast("array<bigint>")
    prev = F.coalesce(F.col("prev"), empty)
    closes = F.col("to_ms").isNotNull() & (F.col("next_from").isNull() | (F.col("next_from") != F.col("to_ms")))
    changes = F.array(
        F.struct(F.col("from_ms").alias("at"), F.lit(1).alias("delta"), F.array_except("pairs", prev).alias("p")),
        F.struct(F.col("from_ms").alias("at"), F.lit(-1).alias("delta"), F.array_except(prev, "pairs").alias("p")),
        F.struct(F.col("to_ms").alias("at"), F.lit(-1).alias("delta"), F.when(closes, F.col("pairs")).otherwise(empty)
                 .alias("p")))
    return (rows.join(m, "cluster")
            .select("cluster", last_scrape().alias("last_ms"), "start_ms", "scrape_interval_ms",
                    F.explode(changes).alias("c"))
            .select("cluster", "last_ms", "start_ms", "scrape_interval_ms", "c.at", "c.delta",
                    F.explode("c.p").alias("p"))
            .select("cluster", *_unpair(F.col("p")), scrape_at_or_after("at").alias("ts_ms"), "delta", "last_ms")
            .filter(F.col("ts_ms") <= F.col("last_ms")).select("cluster", "broker", "name", "ts_ms", "delta"))


def gauge_deltas(state: DataFrame, fetchers: DataFrame, meta: DataFrame, offline_replicas: DataFrame) -> DataFrame:
    """(cluster, broker, name, ts_ms, delta) for every interval-counted gauge (leader-only counting, §2)."""
    m = F.broadcast(meta.select("cluster", "start_ms", "end_ms", "scrape_interval_ms"))
    failed = (change_intervals(fetchers, ("cluster", "broker", "topic", "partition"))
              .filter(F.col("action") == "failed")
              .select("cluster", "broker", "from_ms", "to_ms",
                      F.lit(jmx("FailedPartitionsCount")).alias("name")))
    intervals = failed.unionByName(offline_replicas)
    return (partition_gauge_deltas(state, meta)
            .unionByName(interval_deltas(intervals.join(m, "cluster"), ["cluster", "broker", "name"])))


def isr_meter_prev() -> Column:
    """On the replay stream (``state.partition_events``): the previous ISR of an isr row that the ISR meters
    count, null on the other rows.

    Leader-driven ISR shrinks/expands: an isr row in the same leader epoch as the previous isr row and not
    written by the controller (a KRaft controller's ISR removal keeps the epoch, docs/semantics.md §6),
    counted on the partition's leader at that row (docs/metrics.md, IsrShrinksPerSec). Only this cheap test
    (and that the ISR changed) runs on every row; which meters a row counts is read on the few rows it keeps (``isr_meter_events``).
    """
    counted = ((F.col("src") == "i") & (F.col("isr_epoch") == F.col("prev_isr_epoch"))
               & ~F.coalesce(F.col("controller_write"), F.lit(False))
               & F.col("leader").isNotNull() & (F.col("leader") != -1) & (F.col("isr") != F.col("prev_isr")))
    return F.when(counted, F.col("prev_isr"))


def partition_replay(events: DataFrame, meta: DataFrame) -> DataFrame:
    """The replay rows that ``analyze`` caches (``state.replay_rows``): the partition state, and the change
    rows that the ISR meters (``isr_meter_prev``) and the unclean elections (``unclean``) count."""
    return replay_rows(events, meta, {"isr_meter_prev": isr_meter_prev(), "unclean": elected_outside_isr()})


def isr_meter_events(replay: DataFrame) -> DataFrame:
    """(cluster, broker, ts_ms, seq, name): one row per ISR meter event of ``partition_replay``."""
    shrink = F.when(F.size(F.array_except("isr_meter_prev", "isr")) > 0, F.lit(jmx("IsrShrinksPerSec")))
    expand = F.when(F.size(F.array_except("isr", "isr_meter_prev")) > 0, F.lit(jmx("IsrExpandsPerSec")))
    return (replay.filter(F.col("isr_meter_prev").isNotNull())
            .select("cluster", F.col("leader").alias("broker"), "ts_ms", "seq",
                    F.explode(F.array_compact(F.array(shrink, expand))).alias("name")))


def controller_at(points: DataFrame, controllers: DataFrame) -> DataFrame:
    """(cluster, ts_ms, seq, controller) for each of ``points`` (cluster, ts_ms, seq): the active controller in force
    there (null while no broker is up), from ``elections.controller_changes``."""
    at = points.select("cluster", "ts_ms", "seq", F.lit(None).cast("int").alias("controller"), F.lit(True).alias("point"))
    changes = controllers.select("cluster", "ts_ms", "seq", "controller", F.lit(False).alias("point"))
    return (at.unionByName(changes)
            .select("cluster", "ts_ms", "seq", "point",
                    F.last("controller", ignorenulls=True).over(running("cluster")).alias("controller"))
            .filter("point").select("cluster", "ts_ms", "seq", "controller"))


def unclean_election_events(replay: DataFrame, controllers: DataFrame) -> DataFrame:
    """UncleanLeaderElectionsPerSec: a leaders row whose leader is not in the ISR in force before it
    (``elections.elected_outside_isr``; no ISR yet — a new partition — is clean), counted on the
    active controller at that row (``elections.controller_changes``, docs/semantics.md §6)."""
    elected = replay.filter(F.col("unclean")).select("cluster", "ts_ms", "seq")
    return (controller_at(elected, controllers).filter(F.col("controller").isNotNull())
            .select("cluster", F.col("controller").alias("broker"), "ts_ms", "seq",
                    F.lit(jmx("UncleanLeaderElectionsPerSec")).alias("name")))


def meter_deltas(replay: DataFrame, traffic: DataFrame, brokers: DataFrame, grid: DataFrame,
                 meta: DataFrame, controllers: DataFrame) -> DataFrame:
    """(cluster, broker, name, restart, ts_ms, delta) of the meters: ISR changes, unclean elections (on the
    ``controllers`` of ``elections.controller_changes``) and traffic bytes."""
    m = F.broadcast(meta.select("cluster", "start_ms", "end_ms", "scrape_interval_ms"))
    counted = isr_meter_events(replay).unionByName(unclean_election_events(replay, controllers))
    isr = (restart_of_events(counted, brokers).join(m, "cluster")
           .select("cluster", "broker", "name", "restart", scrape_at_or_after("ts_ms").alias("ts_ms"),
                   F.lit(1).cast("long").alias("delta"), last_scrape().alias("last_ms"))
           .filter(F.col("ts_ms") <= F.col("last_ms")).select("cluster", "broker", "name", "restart", "ts_ms", "delta"))
    names = F.create_map(*[x for s in TRAFFIC_METRICS for x in (F.lit(s), F.lit(jmx(s)))])
    byte_rows = (traffic.select("cluster", "broker", names[F.col("name")].alias("name"), "ts_ms",
                                F.col("bytes").alias("delta"))
                 .filter(F.col("name").isNotNull())
                 .join(grid.select("cluster", "broker", "ts_ms", "restart"), ["cluster", "broker", "ts_ms"]))
    return isr.unionByName(byte_rows.select("cluster", "broker", "name", "restart", "ts_ms", "delta"))


def out_of_sync_intervals(state: DataFrame) -> DataFrame:
    """The partition intervals with a replica outside the ISR (``outside``): the only ones with a lag."""
    return (state.select(*PKEY, "from_ms", "to_ms", F.array_except("replicas", "isr").alias("outside"))
            .filter(F.size("outside") > 0))


def lagging_replicas(replica_offsets: DataFrame, state: DataFrame, meta: DataFrame) -> DataFrame:
    """Replica rows whose LEO is behind the partition's HW at that scrape: (…, broker, ts_ms, lag).

    Only a replica outside the ISR can be behind: the HW is the minimum LEO over a set that holds
    the leader and the whole ISR and never passes a member's LEO (docs/semantics.md §1.5, Kafka's
    ``Partition.maybeIncrementLeaderHW``). So replica_offsets, the largest table, is read once and
    never shuffled: the partition intervals of ``state`` with a replica outside the ISR (few, even
    over days of telemetry) are broadcast to the scan, which keeps the rows of those scrapes (the
    leader's, for its HW, and the out-of-sync replicas'); a window over (partition, scrape) on that
    remainder spreads the leader's HW. Pairing every follower row with its leader's row instead
    shuffled the whole table (benchmarks/bench_pipeline.py, docs/pipeline.md). Rows meet the intervals
    of their partition and time bucket (``pruning.within_bucket``). Lags ≤ 0 contribute 0 and are dropped.
    """
    out_of_sync = with_buckets(out_of_sync_intervals(state), meta, F.col("from_ms"), F.col("to_ms") - 1)
    in_interval = (F.col("ts_ms") >= F.col("from_ms")) & (F.col("to_ms").isNull() | (F.col("ts_ms") < F.col("to_ms")))
    rows = (within_bucket(replica_offsets, out_of_sync, ["from_ms", "to_ms", "outside"])
            .filter(in_interval & (F.col("high_watermark").isNotNull() | F.array_contains("outside", F.col("broker"))))
            .select(*PKEY, "ts_ms", "broker", "log_end_offset", "high_watermark"))
    hw = F.max("high_watermark").over(Window.partitionBy(*PKEY, "ts_ms"))
    return (rows.select(*PKEY, "ts_ms", "broker", (hw - F.col("log_end_offset")).alias("lag"), "high_watermark")
            .filter(F.col("high_watermark").isNull() & (F.col("lag") > 0))
            .select(*PKEY, "ts_ms", "broker", "lag"))


def lag_gauges(lagging: DataFrame, state: DataFrame, fetchers: DataFrame) -> DataFrame:
    """(cluster, broker, name, ts_ms, value) of MaxLag and ReassignmentMaxLag where positive."""
    added = (change_intervals(fetchers, ("cluster", "broker", "topic", "partition"))
             .filter(F.col("action") == "added")
             .select("cluster", "broker", "topic", "partition", "from_ms", "to_ms"))
    in_interval = (F.col("ts_ms") >= F.col("from_ms")) & (F.col("to_ms").isNull() | (F.col("ts_ms") < F.col("to_ms")))
    max_lag = (lagging.join(added, ["cluster", "broker", "topic", "partition"]).filter(in_interval)
               .groupBy("cluster", "broker", "ts_ms").agg(F.max("lag").alias("value"))
               .withColumn("name", F.lit(jmx("MaxLag"))))
    moving = state.filter((F.size("adding") > 0) & (F.col("leader") != -1)).select(*PKEY, "from_ms", "to_ms",
                                                                                  "leader", "adding")
    reassign = (lagging.join(moving, list(PKEY)).filter(in_interval & F.array_contains("adding", F.col("broker")))
                .groupBy("cluster", F.col("leader").alias("broker"), "ts_ms").agg(F.max("lag").alias("value"))
                .withColumn("name", F.lit(jmx("ReassignmentMaxLag"))))
    return max_lag.unionByName(reassign)


def offline_at_controller(state: DataFrame, controllers: DataFrame, meta: DataFrame) -> DataFrame:
    """(cluster, ts_ms, controller, offline_total): OfflinePartitionsCount as the active controller reports it.

    The cluster-wide running sum of the offline intervals of ``state`` at every scrape, and the
    controller there (``elections.controller_changes``, after the scrape's own rows). Both are per (cluster,
    scrape), a small table that ``broker_metrics`` broadcasts. The offline intervals are read off ``state``
    directly, not from ``partition_gauge_deltas``: no broker reports them there.
    """
    m = F.broadcast(meta.select("cluster", "start_ms", "end_ms", "scrape_interval_ms"))
    offline = (interval_deltas(state.filter("offline").select("cluster", "from_ms", "to_ms").join(m, "cluster"),
                               ["cluster"])
               .groupBy("cluster", "ts_ms").agg(F.sum("delta").alias("delta")))
    totals = (scrape_grid(meta).join(offline, ["cluster", "ts_ms"], "left")
              .select("cluster", "ts_ms", F.sum(F.coalesce("delta", F.lit(0))).over(
                  running("cluster", order=("ts_ms",))).alias("offline_total")))
    scrapes = scrape_grid(meta).select("cluster", "ts_ms", F.lit(LONG_MAX).alias("seq"))
    controller = controller_at(scrapes, controllers).select("cluster", "ts_ms", "controller")
    return totals.join(controller, ["cluster", "ts_ms"], "left")


def metric_grid(grid: DataFrame, meta: DataFrame) -> DataFrame:
    """(cluster, broker, name, restart, ts_ms): every metric of the cluster's version for every live broker at
    every scrape; ``restart`` is the broker's process lifetime for a meter, 0 for a gauge."""
    meters = F.array(*[F.lit(n) for n in METERS])
    return (grid.filter(F.col("state").isin(*LIVE_STATES))
            .join(F.broadcast(meta.select("cluster", F.explode("metrics").alias("name"))), "cluster")
            .select("cluster", "broker", "name",
                    F.when(F.array_contains(meters, F.col("name")), F.col("restart")).otherwise(F.lit(0))
                    .alias("restart"), "ts_ms"))


def broker_metrics(state: DataFrame, replay: DataFrame, tables: dict[str, DataFrame], meta: DataFrame) -> DataFrame:
    """analysis/broker_metrics but the lag gauges (``lag_metrics``): one row per live broker, metric of its
    version and scrape (docs/metrics.md).

    One union and one window: the grid rows (a broker's metric at a scrape) and the deltas are ordered
    per (cluster, broker, metric, restart) by time, deltas before the grid row of their scrape; the
    running sum of the deltas is read off at each grid row. OfflinePartitionsCount comes from a small
    per-scrape table (``offline_at_controller``).
    """
    grid = broker_grid(tables["brokers"], meta)
    keys = ["cluster", "broker", "name", "restart"]
    base = (metric_grid(grid, meta).filter(~F.col("name").isin(*LAG_GAUGES))
            .withColumn("at_grid", F.lit(True)))
    offline_replicas = offline_replica_intervals(tables["assignments"], tables["log_dirs"])
    gauges = gauge_deltas(state, tables["fetchers"], meta, offline_replicas)
    controllers = controller_changes(tables["brokers"])
    deltas = (gauges.withColumn("restart", F.lit(0))
              .unionByName(meter_deltas(replay, tables["traffic"], tables["brokers"], grid, meta, controllers))
              .unionByName(produce_meter_deltas(tables["produce_errors"], grid))
              .groupBy(*keys, "ts_ms").agg(F.sum("delta").alias("delta"))
              .withColumn("at_grid", F.lit(False)))
    w = running(*keys, order=("ts_ms", "at_grid"))
    rows = (base.unionByName(deltas, allowMissingColumns=True)
            .select("cluster", "broker", "name", "ts_ms", "at_grid",
                    F.sum(F.coalesce("delta", F.lit(0))).over(w).alias("running"))
            .filter("at_grid")
            .join(F.broadcast(offline_at_controller(state, controllers, meta)), ["cluster", "ts_ms"], "left"))
    value = (F.when(F.col("name") == OFFLINE,
                    F.when(F.col("broker") == F.col("controller"), F.col("offline_total")).otherwise(F.lit(0)))
             .otherwise(F.col("running")))
    return rows.select("cluster", "ts_ms", F.col("broker").cast("int"), "name", value.cast("double").alias("value"))


def lag_metrics(lagging: DataFrame, state: DataFrame, tables: dict[str, DataFrame], meta: DataFrame) -> DataFrame:
    """The rest of analysis/broker_metrics: MaxLag and ReassignmentMaxLag of every live broker at every scrape,
    the measured lag where there is one and 0 elsewhere (docs/metrics.md).

    Apart from ``broker_metrics`` because only they read ``replica_offsets``: ``analyze`` first collects
    the scrapes that ``lagging`` needs (runner.build), and the rest of the table need not wait for it.
    """
    lags = lag_gauges(lagging, state, tables["fetchers"])
    # 0 where no lag was measured, as a nullable column like the other part's (a coalesce would be non-null), so
    # that every Parquet file of the table carries one schema
    value = F.when(F.col("value").isNull(), F.lit(0.0)).otherwise(F.col("value").cast("double"))
    return (metric_grid(broker_grid(tables["brokers"], meta), meta).filter(F.col("name").isin(*LAG_GAUGES))
            .join(lags, ["cluster", "broker", "ts_ms", "name"], "left")
            .select("cluster", "ts_ms", F.col("broker").cast("int"), "name", value.alias("value")))


def topic_metrics(state: DataFrame, meta: DataFrame) -> DataFrame:
    """analysis/topic_metrics: counts of each flag per topic and scrape, plus reassignment_induced_urp.

    Same interval/delta design as the broker gauges, with the seven flags as columns.
    """
    m = F.broadcast(meta.select("cluster", "start_ms", "end_ms", "scrape_interval_ms"))
    flagged = state.filter(" or ".join(FLAGS))
    lo, hi = scrape_at_or_after("from_ms"), scrape_at_or_after("to_ms")
    ones = [F.col(f).cast("long").alias(f) for f in FLAGS]
    plus = F.struct(lo.alias("ts_ms"), *ones)
    minus = F.struct(hi.alias("ts_ms"), *[(-F.col(f).cast("long")).alias(f) for f in FLAGS])
    deltas = (flagged.join(m, "cluster")
              .filter(F.col("to_ms").isNull() | (lo != hi))
              .select("cluster", "topic", last_scrape().alias("last_ms"),
                      F.explode(F.when(F.col("to_ms").isNull(), F.array(plus)).otherwise(F.array(plus, minus)))
                      .alias("d"))
              .select("cluster", "topic", "last_ms", "d.*")
              .filter(F.col("ts_ms") <= F.col("last_ms"))
              .groupBy("cluster", "topic", "ts_ms").agg(*[F.sum(f).alias(f) for f in FLAGS]))
    topics = state.select("cluster", "topic").distinct()
    w = running("cluster", "topic", order=("ts_ms",))
    return (scrape_grid(meta).join(topics, "cluster").join(deltas, ["cluster", "topic", "ts_ms"], "left")
            .select("cluster", "ts_ms", "topic",
                    *[F.sum(F.coalesce(F.col(f), F.lit(0))).over(w).cast("long").alias(f) for f in FLAGS])
            .withColumn("reassignment_induced_urp", F.col("urp_legacy") - F.col("urp_kip352")))


def cluster_metrics(topics: DataFrame) -> DataFrame:
    """analysis/cluster_metrics: the topic counts summed per cluster and scrape."""
    cols = [*FLAGS, "reassignment_induced_urp"]
    return topics.groupBy("cluster", "ts_ms").agg(*[F.sum(c).cast("long").alias(c) for c in cols])
