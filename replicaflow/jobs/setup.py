"""`replicaflow setup`: record the class archive that later Spark JVMs map (pipeline/class_archive.py).

The archive holds the classes one analysis loads, so the training run is the demo itself (``run_demo``
into a temporary folder): the ten story scenarios simulated and analyzed in one job.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from rich.console import Console

from replicaflow.jobs.demo import load_stories, run_demo, telemetry_rows
from replicaflow.pipeline import class_archive
from replicaflow.pipeline.session import record_class_archive


def setup(progress: bool = True, if_missing: bool = False) -> tuple[Path | None, bool]:
    """Record the class archive of this JVM and these Spark jars; (its path or None, whether it was recorded now).

    ``if_missing``: keep an archive already recorded for them. None: this JVM cannot write one (it needs
    Java 13+ with the JDK's own class archive); replicaflow then runs without it.
    """
    target = class_archive.archive_path()
    if if_missing and target is not None and class_archive.usable(target):
        return target, False
    status = (Console(stderr=True).status("setup: recording the JVM classes of a Spark analysis (under a minute)")
              if progress else contextlib.nullcontext())
    with status, tempfile.TemporaryDirectory(prefix="replicaflow-setup-") as tmp:
        def train(spark) -> None:
            run_demo(Path(tmp) / "demo", progress=False, spark=spark)

        return record_class_archive(train, rows=telemetry_rows(load_stories())), True
