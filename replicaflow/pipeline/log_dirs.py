"""OfflineReplicaCount from telemetry ``log_dirs`` (docs/metrics.md, KIP-112, docs/semantics.md §6).

A broker whose log directory failed keeps hosting its replicas (ReplicaManager marks them
HostedPartition.Offline, so PartitionCount still counts them) and reports them as offline until the
broker restarts. The gauge is therefore the broker's PartitionCount intervals cut to the intervals
in which its directory is ``offline``; ``metrics.gauge_deltas`` puts them on the scrape grid.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from replicaflow.model.metrics import jmx
from replicaflow.pipeline.state import change_intervals

OFFLINE_REPLICAS = jmx("OfflineReplicaCount")


def offline_replica_intervals(state: DataFrame, log_dirs: DataFrame) -> DataFrame:
    """(cluster, broker, from_ms, to_ms, name): one interval per replica hosted on an offline log directory.

    ``to_ms`` null is open to the end; ``least`` skips a null, so the intersection of two intervals
    ends at the earlier of their ends.
    """
    offline = (change_intervals(log_dirs, ("cluster", "broker")).filter(F.col("state") == "offline")
               .select("cluster", "broker", F.col("from_ms").alias("off_from"), F.col("to_ms").alias("off_to")))
    hosted = state.select("cluster", F.explode("replicas").alias("broker"), "from_ms", "to_ms")
    lo = F.greatest("from_ms", "off_from")
    hi = F.least("to_ms", "off_to")
    return (hosted.join(offline, ["cluster", "broker"])
            .select("cluster", "broker", lo.alias("from_ms"), hi.alias("to_ms"))
            .filter(F.col("to_ms").isNull() | (F.col("from_ms") < F.col("to_ms")))
            .withColumn("name", F.lit(OFFLINE_REPLICAS)))
