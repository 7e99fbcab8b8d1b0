"""OfflineReplicaCount from telemetry ``log_dirs`` (docs/metrics.md, KIP-112, docs/semantics.md §6.1).

A broker whose log directory failed keeps hosting that directory's replicas (ReplicaManager marks them
HostedPartition.Offline, so PartitionCount still counts them) and reports them as offline until the
broker restarts. The gauge is therefore each replica's assignment interval cut to the intervals in which
its directory -- the ``assignments`` row's ``log_dirs`` entry for it -- is ``offline`` on its broker;
``metrics.gauge_deltas`` puts them on the scrape grid. A directory the telemetry does not name (a null
``log_dirs`` of the assignment, or a null ``log_dir`` of the ``log_dirs`` row) stands for all the broker's.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from replicaflow.model.metrics import jmx
from replicaflow.pipeline.state import PKEY, change_intervals

OFFLINE_REPLICAS = jmx("OfflineReplicaCount")


def offline_replica_intervals(assignments: DataFrame, log_dirs: DataFrame) -> DataFrame:
    """(cluster, broker, from_ms, to_ms, name): one interval per replica hosted on an offline log directory.

    ``to_ms`` null is open to the end; ``least`` skips a null, so the intersection of two intervals
    ends at the earlier of their ends.
    """
    offline = (change_intervals(log_dirs, ("cluster", "broker", "log_dir")).filter(F.col("state") == "offline")
               .select("cluster", "broker", F.col("log_dir").alias("off_dir"), F.col("from_ms").alias("off_from"),
                       F.col("to_ms").alias("off_to")))
    hosted = (change_intervals(assignments, PKEY)
              .select("cluster", "from_ms", "to_ms", "log_dirs", F.posexplode("replicas").alias("pos", "broker"))
              .select("cluster", "broker", "from_ms", "to_ms",
                      F.try_element_at("log_dirs", F.col("pos") + 1).alias("log_dir")))
    same_dir = F.col("log_dir").isNull() | F.col("off_dir").isNull() | (F.col("log_dir") == F.col("off_dir"))
    lo = F.greatest("from_ms", "off_from")
    hi = F.least("to_ms", "off_to")
    return (hosted.join(offline, ["cluster", "broker"]).filter(same_dir)
            .select("cluster", "broker", lo.alias("from_ms"), hi.alias("to_ms"))
            .filter(F.col("to_ms").isNull() | (F.col("from_ms") < F.col("to_ms")))
            .withColumn("name", F.lit(OFFLINE_REPLICAS)))
