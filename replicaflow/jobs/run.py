"""`replicaflow run`: simulate → analyze → report into one directory."""

from __future__ import annotations

from pathlib import Path

from replicaflow.jobs.analyze import analyze
from replicaflow.jobs.report import report
from replicaflow.jobs.simulate import simulate


def run(scenario: Path, out: Path, master: str = "local[2]", logs: bool = False, progress: bool = True,
        max_work: int | None = None) -> Path:
    """The three commands in a row; with ``logs`` the simulated broker logs are read back as a real
    cluster's would be, so the report shows their events. Returns the path of report.html."""
    out = Path(out)
    simulate(scenario, out, logs=logs, progress=progress, max_work=max_work)
    analyze(out, out, master=master, progress=progress, logs=[str(out / "logs")] if logs else None)
    return report(out)
