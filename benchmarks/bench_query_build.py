"""Query-building benchmark (docs/pipeline-measurements.md): the driver's cost of *building* the log reader's
query, before any Spark job runs.

For a few small files, `analyze --logs` is fixed cost: building the reader's large plan through py4j, planning
it, generating its code. This script measures the first of these, with py4j's class references on the JVM
view as replicaflow keeps them (``session.StaticMethodsKept``: a static method such as ``functions.col`` looked
up once) against py4j's plain ``JavaClass`` (looked up at every call). It simulates docs/examples/real-cluster.yaml
with --logs, then in one local[2] session builds ``ingest.logs.read_logs`` ``--builds`` times per side,
alternating, and prints each side's median of all but the first two builds, their ratio and the py4j round
trips of one build.

    .venv/bin/python benchmarks/bench_query_build.py [--builds 8]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import py4j.clientserver
from py4j.java_gateway import JavaClass
from rich.console import Console
from rich.table import Table

from replicaflow.ingest.logs import read_logs
from replicaflow.pipeline.session import PYSPARK_JVM_CLASSES, StaticMethodsKept, get_spark
from replicaflow.sim.runner import simulate

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "real-cluster.yaml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builds", type=int, default=8, help="builds per side (the first two are not counted)")
    args = ap.parse_args()
    if args.builds < 3:
        ap.error("--builds: at least 3 (the first two warm the JVM)")
    console = Console()
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        simulate(EXAMPLE, Path(tmp), logs=True)
        logs = str(Path(tmp) / "logs")
        spark = get_spark("local[2]")
        jvm = spark.sparkContext._jvm
        kinds = {"kept": StaticMethodsKept, "plain": JavaClass}
        seconds: dict[str, list[float]] = {side: [] for side in kinds}
        trips: dict[str, int] = {}
        client = py4j.clientserver.JavaClient
        send = client.send_command
        for _ in range(args.builds):
            for side, kind in kinds.items():
                for name in PYSPARK_JVM_CLASSES:
                    known = vars(jvm)[name]
                    vars(jvm)[name] = kind(known._fqn, known._gateway_client)
                calls = [0]

                def counted(self, *a, _calls=calls, **k):
                    _calls[0] += 1
                    return send(self, *a, **k)
                client.send_command = counted
                try:
                    t0 = time.perf_counter()
                    read_logs(spark, logs, "shop")
                    seconds[side].append(time.perf_counter() - t0)
                finally:
                    client.send_command = send
                trips[side] = calls[0]
        table = Table(title=f"building the log reader's query ({args.builds} builds per side, alternating)")
        for col in ("side", "median", "py4j round trips"):
            table.add_column(col, justify="right")
        median = {side: statistics.median(s[2:]) for side, s in seconds.items()}
        for side in kinds:
            table.add_row(side, f"{median[side]:.2f}s", f"{trips[side]:,}")
        console.print(table)
        console.print(f"kept / plain: {median['kept'] / median['plain']:.2f}×")


if __name__ == "__main__":
    main()
