"""Each cluster's logged period (docs/real-cluster.md, "The scrape grid"): its first and last event, the forms its
lines show, and the last line its brokers wrote, in UTC."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from replicaflow.ingest.broker_sessions import active_set
from replicaflow.ingest.log_version import FORMS
from replicaflow.ingest.regex_literals import guarded_rlike
from replicaflow.telemetry.spark import local_frame

QUIET_MS = 24 * 3_600_000  # a day without a line ends the logged period (logged_until_by_cluster)


def in_utc(col: Column, tz: str | None) -> Column:
    """Log4j writes the broker's local time: ``--log-timezone`` turns it into UTC epoch ms."""
    return col if tz is None else F.unix_millis(F.to_utc_timestamp(F.timestamp_millis(col), tz))


def periods_of(events: DataFrame) -> dict[str, dict]:
    """Per cluster: first and last event, event count and the log forms seen -- one Spark job for the fleet."""
    forms = [F.max(guarded_rlike(F.col("message"), p).cast("int")).alias(f"form{i}") for i, (p, _, _) in enumerate(FORMS)]
    active = active_set()
    rows = events.groupBy("cluster").agg(F.min("ts_ms").alias("lo"), F.max("ts_ms").alias("hi"),
                                         F.count("*").alias("events"), F.max(active).alias("active_set"),
                                         *forms).collect()
    return {r["cluster"]: {"lo": r["lo"], "hi": r["hi"], "events": r["events"], "active_set": bool(r["active_set"]),
                           "forms": [bool(r[f"form{i}"]) for i in range(len(FORMS))]} for r in rows}


def logged_until_by_cluster(spark: SparkSession, lines: DataFrame, periods: dict[str, dict], tz: str | None) -> dict[str, int]:
    """Per cluster, the last line its brokers wrote after its last event, up to the first day without a line
    (``QUIET_MS``): a stamp that far past the rest is no line of the logged run (a broken clock, a stray file), and
    it would stretch the scrape grid over the gap. One Spark job for the fleet; the lines before the last event are
    filtered out first."""
    last = local_frame(spark, [(c, p["hi"]) for c, p in periods.items()], "cluster string, ts_ms long")
    after = (lines.select("cluster", in_utc(F.col("ts_ms"), tz).alias("ts_ms"))
             .join(F.broadcast(last.withColumnRenamed("ts_ms", "hi")), "cluster")
             .where(F.col("ts_ms") > F.col("hi")).select("cluster", "ts_ms").unionByName(last))
    prev = F.lag("ts_ms").over(Window.partitionBy("cluster").orderBy("ts_ms"))
    rows = (after.select("cluster", "ts_ms", prev.alias("prev")).groupBy("cluster")
            .agg(F.min(F.when(F.col("ts_ms") - F.col("prev") > QUIET_MS, F.col("prev"))).alias("quiet"),
                 F.max("ts_ms").alias("last")).collect())
    return {r["cluster"]: r["last"] if r["quiet"] is None else r["quiet"] for r in rows}
