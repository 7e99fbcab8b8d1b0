"""Pipeline benchmark (README, Performance): `analyze` on local[2] against a floor job, and at twice the input.

Writes a 50-broker, 50,000-partition (RF 3) scenario of 1 hour (and the same of 2 hours) into a
temporary directory, simulates both, then times on one local[2] SparkSession:
- floor: read the Parquet of every telemetry table and one groupBy over replica_offsets;
- analyze: `replicaflow.pipeline.runner.analyze` writing every analysis table.
Goals: analyze ≤ 3× floor; 2-hour analyze ≤ 2.2× the 1-hour one. Each job runs twice in one session
and both times are printed; the ratios use the second (steady-state) runs.

    .venv/bin/python benchmarks/bench_pipeline.py [--partitions 50000] [--brokers 50] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from pyspark.sql import functions as F
from rich.console import Console
from rich.table import Table

from replicaflow.pipeline.runner import analyze
from replicaflow.pipeline.session import get_spark
from replicaflow.telemetry.schema import TELEMETRY

SCENARIO = """\
name: bench-{hours}h
seed: 42
duration: {hours}h
tick: {tick}
scrape_interval: {scrape}
kafka:
  version: "3.7"
cluster:
  brokers: {brokers}
  racks: 5
topics:
{topics}
events:
  - {{at: 10m, broker_down: 7}}
  - {{at: 20m, broker_up: 7}}
  - {{at: 30m, broker_down: 19}}
  - {{at: 34m, broker_up: 19}}
"""

TOPIC = """  - name: t{i:03d}
    partitions: {partitions}
    replication_factor: 3
    min_insync_replicas: 2
    produce_rate: 5MB/s
    message_size: 1KiB
    initial_size: 100MB
"""


def write_scenario(path: Path, hours: int, brokers: int, partitions: int, topics: int, tick: str,
                   scrape: str) -> Path:
    per_topic = partitions // topics
    text = SCENARIO.format(hours=hours, brokers=brokers, tick=tick, scrape=scrape,
                           topics="".join(TOPIC.format(i=i, partitions=per_topic) for i in range(topics)))
    path.write_text(text)
    return path


def floor_job(spark, root: Path) -> float:
    """Read every table's Parquet fully and run one groupBy on replica_offsets (the floor)."""
    start = time.perf_counter()
    for name in TELEMETRY:
        df = spark.read.parquet(str(root / "telemetry" / name))
        if name == "replica_offsets":
            df = df.groupBy("cluster", "topic", "partition").agg(F.max("log_end_offset").alias("leo"),
                                                                  F.sum("size_bytes").alias("size"))
        df.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - start


def timed_analyze(spark, root: Path, out: Path) -> float:
    start = time.perf_counter()
    analyze(root, out, spark=spark)
    return time.perf_counter() - start


def rows(root: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in (root / "telemetry" / "replica_offsets").glob("*.parquet"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=50_000)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--tick", default="1s", help="simulation tick (a divisor of the scrape interval)")
    ap.add_argument("--scrape", default="30s", help="scrape interval")
    ap.add_argument("--keep", type=Path, help="keep the generated telemetry here instead of a temp dir")
    args = ap.parse_args()
    from replicaflow.sim.runner import simulate

    console = Console()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        runs = {}
        for hours in (1, 2):
            root = work / f"{hours}h"
            if not (root / "telemetry" / "_meta.json").exists():
                scenario = write_scenario(work / f"bench-{hours}h.yaml", hours, args.brokers, args.partitions,
                                          args.topics, args.tick, args.scrape)
                t0 = time.perf_counter()
                simulate(scenario, root, progress=True)
                console.print(f"simulated {hours}h in {time.perf_counter() - t0:.0f}s")
            runs[hours] = root
        spark = get_spark("local[2]", app_name="bench-pipeline")
        figures = {}
        for hours, root in runs.items():
            # every job runs twice in the same session: the first pays the JVM's JIT and Spark's code
            # generation for its plans, the second is the steady state that a long-running session sees
            floor = [floor_job(spark, root) for _ in range(2)]
            took = [timed_analyze(spark, root, work / f"out-{hours}h") for _ in range(2)]
            figures[hours] = (rows(root), floor, took)
        table = Table(title=f"analyze on local[2]: {args.brokers} brokers, {args.partitions:,} partitions, RF 3, "
                            f"scrape {args.scrape}")
        for col in ("input", "replica_offsets rows", "floor (1st / 2nd)", "analyze (1st / 2nd)",
                    "analyze / floor, 2nd runs (goal ≤ 3×)"):
            table.add_column(col, justify="right")
        for hours, (n, floor, took) in figures.items():
            table.add_row(f"{hours}h", f"{n:,}", f"{floor[0]:.1f}s / {floor[1]:.1f}s", f"{took[0]:.1f}s / {took[1]:.1f}s",
                          f"{took[1] / floor[1]:.2f}×")
        console.print(table)
        console.print(f"2h / 1h analyze time, 2nd runs (goal ≤ 2.2×): {figures[2][2][1] / figures[1][2][1]:.2f}×; "
                      f"1st runs: {figures[2][2][0] / figures[1][2][0]:.2f}×")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
