"""`replicaflow report`: ``analysis/`` → report.html, metrics.om and summary.json."""

from __future__ import annotations

from pathlib import Path

from replicaflow.report.build import build_report


def report(directory: Path, naming: str = "strimzi") -> Path:
    """Render the analysis in ``directory``; returns the path of report.html. ``naming``: the Prometheus
    names of metrics.om, ``strimzi`` or ``confluent``."""
    return build_report(directory, naming=naming)
