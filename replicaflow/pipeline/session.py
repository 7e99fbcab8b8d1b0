"""The one place a SparkSession is built, with settings sized for replicaflow's jobs."""

from __future__ import annotations

import os

from pyspark.sql import SparkSession


def get_spark(master: str = "local[2]", app_name: str = "replicaflow") -> SparkSession:
    """Return a SparkSession on ``master`` (reuses an active one), quiet and with UTC time.

    Shuffle partitions default to twice the cores Spark sees (``REPLICAFLOW_SHUFFLE_PARTITIONS``
    overrides): replicaflow's tables are narrow, and Spark's 200 would make hundreds of tiny tasks
    per stage on a laptop; adaptive execution coalesces further. Spark's console progress bar is
    off because the CLI shows its own (rich) progress.
    """
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", os.environ.get("REPLICAFLOW_DRIVER_MEMORY", "4g"))
    )
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    partitions = os.environ.get("REPLICAFLOW_SHUFFLE_PARTITIONS") or str(2 * session.sparkContext.defaultParallelism)
    session.conf.set("spark.sql.shuffle.partitions", partitions)
    return session
