"""`replicaflow setup`: record the class archive that later Spark JVMs map (pipeline/class_archive.py).

The archive holds the classes one analysis loads, so the training run is the demo's analysis: the ten
story scenarios simulated into a temporary folder and analyzed in one job, as `replicaflow demo` does.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from rich.console import Console

from replicaflow.jobs.demo import load_stories
from replicaflow.pipeline import class_archive
from replicaflow.pipeline.runner import analyze
from replicaflow.pipeline.session import record_class_archive
from replicaflow.sim.runner import simulate


def setup(progress: bool = True, if_missing: bool = False) -> tuple[Path | None, bool]:
    """Record the class archive of this JVM and these Spark jars; (its path or None, whether it was recorded now).

    ``if_missing``: keep an archive already recorded for them. None: this JVM cannot write one (it needs
    Java 13+ with the JDK's own class archive); replicaflow then runs without it.
    """
    target = class_archive.archive_path()
    if if_missing and target is not None and class_archive.usable(target):
        return target, False
    stories = load_stories()
    console = Console(stderr=True)
    status = (console.status("setup: recording the JVM classes of a Spark analysis (under a minute)") if progress
              else contextlib.nullcontext())
    with status, tempfile.TemporaryDirectory(prefix="replicaflow-setup-") as tmp:
        def train(spark) -> None:
            dirs = [simulate(scenario, Path(tmp) / name, logs=False, progress=False) for name, scenario in stories]
            analyze(dirs, Path(tmp), spark=spark)

        return record_class_archive(train, rows=sum(s.telemetry_rows for _, s in stories)), True
