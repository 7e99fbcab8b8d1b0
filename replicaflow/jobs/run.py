"""`replicaflow run`: simulate → analyze → report into one folder, committed once."""

from __future__ import annotations

import os
from pathlib import Path

from replicaflow.errors import out_of_memory
from replicaflow.jobs.analyze import analyze_into
from replicaflow.pipeline.load import check_inputs
from replicaflow.pipeline.session import get_spark_soon
from replicaflow.report.build import build_report
from replicaflow.report.console import print_analyze
from replicaflow.sim.runner import simulate as run_simulation
from replicaflow.sim.scenario import DEFAULT_MAX_WORK, load_scenario
from replicaflow.telemetry.outputs import ANALYSIS, REPORT, SIMULATION, Commit


def run(scenario: Path, out: Path, master: str = "local[2]", logs: bool = False, progress: bool = True,
        max_work: int | None = None) -> Path:
    """The three commands in a row, whose outputs appear together; with ``logs`` the simulated broker logs
    are read back as a real cluster's would be, so the report shows their events. Returns report.html."""
    loaded = load_scenario(Path(scenario), max_work=max_work or DEFAULT_MAX_WORK)
    commit = Commit(out, writes=SIMULATION + ANALYSIS + REPORT)
    with commit.staged() as stage:
        # checks --master; the JVM starts while the scenario runs, sized for the rows it will write
        session = get_spark_soon(master, rows=None if logs else loaded.telemetry_rows)
        try:
            run_simulation(loaded, stage, logs=logs, progress=progress)
        except MemoryError:
            failed = True  # the sentence is raised below, once the engine's arrays are let go
        else:
            failed = False
        if failed:
            raise out_of_memory(loaded.source, len(loaded.cluster.brokers), loaded.replicas)
        shown_as = (os.path.abspath(stage), os.path.abspath(out))
        summary = analyze_into(check_inputs([stage], allow_empty=True), stage, master, progress, None,
                               [str(stage / "logs")] if logs else None, shown_as, starting=session)
        build_report(stage, shown=Path(out))
    if progress:
        from rich.console import Console

        print_analyze(Console(stderr=True), summary)
    return Path(out) / REPORT[0]
