"""Which replication throttle covers a replica's fetches at a given instant (docs/semantics.md §5).

KIP-73: a follower's fetch is throttled on its own broker when the topic's
``follower.replication.throttled.replicas`` lists ``partition:follower`` (or ``*``) and the broker
has ``follower.replication.throttled.rate``; on the leader's broker likewise with the ``leader.*``
pair. KIP-542 (hypothetical): the reassignment rates cover every adding replica's fetches. A
broker's own dynamic config wins over the cluster default (``<default>``).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from replicaflow.model.configs import (
    DEFAULT_BROKER,
    FOLLOWER_REASSIGNMENT_RATE,
    FOLLOWER_REPLICATION_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_REASSIGNMENT_RATE,
    LEADER_REPLICATION_RATE,
    LEADER_THROTTLED_REPLICAS,
    QUOTA_RATES,
    THROTTLED_REPLICAS_LISTS,
)


def _listed(value, partition, broker):
    """``partition:broker`` in a throttled-replicas value, or the value is ``*``."""
    return (value == "*") | F.array_contains(F.split(F.regexp_replace(value, " ", ""), ","),
                                             F.concat(partition.cast("string"), F.lit(":"), broker.cast("string")))


def throttled(rows: DataFrame, configs: DataFrame, key: list[str]) -> DataFrame:
    """``rows`` (``key`` + cluster, topic, partition, replica, leader, ts_ms) with a boolean ``throttled``:
    whether a throttle with a positive rate covers the replica's fetches at ``ts_ms``."""
    r = rows.select(*key, "cluster", "topic", "partition", "replica", "leader", F.col("ts_ms").alias("at_ms"))
    cfg = configs.filter(F.col("name").isin(*QUOTA_RATES, *THROTTLED_REPLICAS_LISTS)).select(
        "cluster", "ts_ms", "seq", "entity_type", "entity", "name", "value")
    broker_entity = F.col("entity").isin(F.col("replica").cast("string"), F.col("leader").cast("string"),
                                         F.lit(DEFAULT_BROKER))
    applies = (F.col("ts_ms") <= F.col("at_ms")) & (
        ((F.col("entity_type") == "topic") & (F.col("entity") == F.col("topic"))
         & F.col("name").isin(*THROTTLED_REPLICAS_LISTS))
        | ((F.col("entity_type") == "broker") & broker_entity & F.col("name").isin(*QUOTA_RATES)))
    latest = Window.partitionBy(*key, "name", "entity").orderBy(F.col("ts_ms").desc(), F.col("seq").desc())
    current = (r.join(F.broadcast(cfg), "cluster").filter(applies)
               .withColumn("rn", F.row_number().over(latest)).filter("rn = 1"))
    rate = F.expr("try_cast(value as double)")

    def rate_on(name: str, broker: str):
        own = F.max(F.when((F.col("name") == name) & (F.col("entity") == F.col(broker).cast("string")), rate))
        default = F.max(F.when((F.col("name") == name) & (F.col("entity") == DEFAULT_BROKER), rate))
        return F.coalesce(own, default)

    def list_has(name: str, broker: str):
        return F.max(F.when(F.col("name") == name, _listed(F.col("value"), F.col("partition"), F.col(broker))))

    per_row = current.groupBy(*key).agg(
        (F.coalesce(list_has(FOLLOWER_THROTTLED_REPLICAS, "replica"), F.lit(False))
         & (F.coalesce(rate_on(FOLLOWER_REPLICATION_RATE, "replica"), F.lit(0.0)) > 0)
         | F.coalesce(list_has(LEADER_THROTTLED_REPLICAS, "leader"), F.lit(False))
         & (F.coalesce(rate_on(LEADER_REPLICATION_RATE, "leader"), F.lit(0.0)) > 0)
         | (F.coalesce(rate_on(FOLLOWER_REASSIGNMENT_RATE, "replica"), F.lit(0.0)) > 0)
         | (F.coalesce(rate_on(LEADER_REASSIGNMENT_RATE, "leader"), F.lit(0.0)) > 0)).alias("throttled"))
    return rows.join(per_row, key, "left").withColumn("throttled", F.coalesce("throttled", F.lit(False)))
