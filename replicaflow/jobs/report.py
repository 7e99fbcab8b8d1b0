"""`replicaflow report`: ``analysis/`` → report.html, metrics.om and summary.json."""

from __future__ import annotations

from pathlib import Path

from replicaflow.report.build import build_report


def report(directory: Path) -> Path:
    """Render the analysis in ``directory``; returns the path of report.html."""
    return build_report(directory)
