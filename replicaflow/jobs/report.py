"""`replicaflow report`: ``analysis/`` → report.html, metrics.om and summary.json, committed together."""

from __future__ import annotations

from pathlib import Path

from replicaflow.errors import ReplicaflowError
from replicaflow.report.build import build_report
from replicaflow.telemetry.outputs import REPORT, Commit


def report(directory: Path, naming: str = "strimzi") -> Path:
    """Render the analysis in ``directory``; returns the path of report.html. ``naming``: the Prometheus
    names of metrics.om, ``strimzi`` or ``confluent``."""
    if not Path(directory).is_dir():
        raise ReplicaflowError(f"report directory '{directory}' is not a directory")
    with Commit(directory, writes=REPORT, out_flag=False).staged() as stage:
        build_report(directory, naming=naming, dest=stage)
    return Path(directory) / REPORT[0]
