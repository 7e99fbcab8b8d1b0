"""`replicaflow simulate`: a scenario → ``telemetry/``, ``truth/`` (and ``logs/``)."""

from __future__ import annotations

from pathlib import Path

from replicaflow.sim.runner import simulate as run_simulation


def simulate(scenario: Path, out: Path, logs: bool = False, progress: bool = True,
             max_work: int | None = None) -> Path:
    """Simulate ``scenario`` into ``out``; returns ``out``."""
    return run_simulation(scenario, out, logs=logs, progress=progress, max_work=max_work)
