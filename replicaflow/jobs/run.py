"""`replicaflow run`: simulate → analyze → report into one directory, committed once.

All three stages write into one staging folder of ``out`` and the commit makes telemetry, truth,
logs, analysis and the report files appear together (telemetry/outdir.py): a run that fails or is
killed in its report leaves the previous run's outputs, not new telemetry beside an old report.
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console

from replicaflow.jobs.analyze import analyze_staged, check_logs
from replicaflow.pipeline.load import check_telemetry
from replicaflow.pipeline.session import check_environment
from replicaflow.report.build import build_report
from replicaflow.report.console import print_analyze
from replicaflow.sim.runner import load, simulate_into
from replicaflow.telemetry.outdir import ANALYZE, REPORT, SIMULATE, output


def run(scenario: Path, out: Path, master: str = "local[2]", logs: bool = False, progress: bool = True,
        max_work: int | None = None) -> Path:
    """The three commands in a row; with ``logs`` the simulated broker logs are read back as a real
    cluster's would be, so the report shows their events. Returns the path of report.html."""
    out = Path(out)
    check_environment(master)
    loaded = load(scenario, max_work)
    writes = (*(n for n in SIMULATE if logs or n != "logs"), *ANALYZE, *REPORT)
    with output(out, writes, drops=SIMULATE) as staging:
        simulate_into(loaded, staging, logs=logs, progress=progress)
        check_telemetry(staging)
        shown_as = (os.path.abspath(staging), os.path.abspath(out))
        summary = analyze_staged(staging, staging, master=master, progress=progress,
                                 logs=check_logs(staging, [str(staging / "logs")] if logs else None),
                                 shown_as=shown_as)
        build_report(staging, into=staging, shown=out)
    if progress:
        print_analyze(Console(stderr=True), summary)
    return out / "report.html"
