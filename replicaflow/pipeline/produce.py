"""What producers feel, from telemetry ``produce_errors`` (docs/metrics.md, docs/semantics.md §1.5).

The leader's rejected produce requests since the previous scrape become the increments of its
FailedProduceRequestsPerSec and ErrorsPerSec{request=Produce,error=...} meters; the rows sit on the
scrape grid already, and each is tagged with the broker's process lifetime at that scrape so the
meter restarts with the broker, like the traffic meters of ``metrics.py``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from replicaflow.model.metrics import REQ, jmx

FAILED_PRODUCE = jmx("FailedProduceRequestsPerSec")


def errors_per_sec(error: Column) -> Column:
    """The RequestMetrics ErrorsPerSec JMX name of a produce error code."""
    return F.concat(F.lit(REQ + "ErrorsPerSec,request=Produce,error="), error)


def produce_meter_deltas(produce_errors: DataFrame, grid: DataFrame) -> DataFrame:
    """(cluster, broker, name, restart, ts_ms, delta) of the produce error meters.

    Every failed append marks FailedProduceRequestsPerSec (ReplicaManager.appendToLocalLog: NotEnoughReplicas
    is not one of the errors it leaves out) and the response's error count (RequestChannel.updateRequestMetrics).
    """
    per_broker = (produce_errors.groupBy("cluster", "broker", "ts_ms", "error")
                  .agg(F.sum("requests").alias("delta"))
                  .join(grid.select("cluster", "broker", "ts_ms", "restart"), ["cluster", "broker", "ts_ms"]))
    names = F.array(F.lit(FAILED_PRODUCE), errors_per_sec(F.col("error")))
    return per_broker.select("cluster", "broker", F.explode(names).alias("name"), "restart", "ts_ms", "delta")

