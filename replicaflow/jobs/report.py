"""`replicaflow report`: ``analysis/`` → report.html, metrics.om and summary.json, committed together."""

from __future__ import annotations

from pathlib import Path

from replicaflow.report.build import build_report, check_report_dir
from replicaflow.telemetry.outputs import REPORT, Commit


def report(directory: Path, naming: str = "strimzi") -> Path:
    """Render the analysis in ``directory``; returns the path of report.html. ``naming``: the Prometheus
    names of metrics.om, ``strimzi`` or ``confluent``."""
    check_report_dir(directory)
    with Commit(directory, writes=REPORT, out_flag=False).staged() as stage:
        build_report(directory, naming=naming, dest=stage)
    return Path(directory) / REPORT[0]
