"""The `replicaflow` command: a thin shell over jobs/, one job per command (DESIGN.md §2).

Every command turns a ReplicaflowError into one sentence on stderr and exit status 2. Jobs are
imported inside the commands, so `--help` answers without loading Spark or the simulator.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console

from replicaflow import __version__
from replicaflow.errors import ReplicaflowError

app = typer.Typer(
    name="replicaflow",
    help=(
        "Simulate and analyze Apache Kafka replication health: ISR membership, under-replicated and "
        "under-min-ISR partitions, reassignments and their throttles, fetcher partition failures -- "
        "with the semantics of Kafka's KIPs, per Kafka version."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)
MAX_WORK_HELP = ("Raise the bound on a run's work, in replica-ticks (replicas × duration/tick); a scenario "
                 "above the bound is refused with its estimate before anything runs.")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"replicaflow {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", callback=_version,
                                 is_eager=True),
) -> None:
    """replicaflow: Kafka replication health, simulated and analyzed."""

@app.command()
def simulate(
    scenario: Path = typer.Argument(..., help="Scenario YAML (see docs/scenarios.md)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory: telemetry/ and truth/ are written here."),
    logs: bool = typer.Option(False, "--logs", help="Also write broker logs in Kafka's own format for the version."),
    max_work: int | None = typer.Option(None, "--max-work", min=1, help=MAX_WORK_HELP),
) -> None:
    """Run a scenario through the vectorized Kafka replication engine and write telemetry + ground truth."""
    from replicaflow.jobs.simulate import simulate as simulate_job

    try:
        simulate_job(scenario, out, logs=logs, progress=True, max_work=max_work)
    except ReplicaflowError as exc:
        fail(exc)


@app.command()
def analyze(
    telemetry_dir: Path = typer.Argument(..., help="A directory holding telemetry/ (the output of `simulate`)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory: analysis/ is written here, atomically."),
    master: str = typer.Option("local[2]", "--master", help="Spark master URL, e.g. local[4] or spark://host:7077."),
    logs: list[str] = typer.Option(None, "--logs", help="Broker logs of the same cluster (file, directory or glob; "
                                   "repeatable): adds log_events and rejects (docs/logs.md)."),
) -> None:
    """Reconstruct every partition's state with Spark and compute the KIP metrics, incidents and reassignments."""
    from replicaflow.jobs.analyze import analyze as analyze_job

    try:
        analyze_job(telemetry_dir, out, master=master, progress=True, logs=logs or None)
    except ReplicaflowError as exc:
        fail(exc)


@app.command()
def report(
    directory: Path = typer.Argument(..., help="A directory holding analysis/ (and telemetry/)."),
) -> None:
    """Write report.html (self-contained, offline), metrics.om (OpenMetrics) and summary.json."""
    from replicaflow.jobs.report import report as report_job

    try:
        path = report_job(directory)
    except ReplicaflowError as exc:
        fail(exc)
    typer.echo(f"report: {path}")


@app.command()
def run(
    scenario: Path = typer.Argument(..., help="Scenario YAML."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    master: str = typer.Option("local[2]", "--master", help="Spark master URL."),
    logs: bool = typer.Option(False, "--logs", help="Also write broker logs, read them back and show their events "
                              "in the report."),
    max_work: int | None = typer.Option(None, "--max-work", min=1, help=MAX_WORK_HELP),
) -> None:
    """simulate + analyze + report in one go."""
    from replicaflow.jobs.run import run as run_job

    try:
        path = run_job(scenario, out, master=master, logs=logs, progress=True, max_work=max_work)
    except ReplicaflowError as exc:
        fail(exc)
    typer.echo(f"report: {path}")


@app.command()
def demo(
    out: Path = typer.Option(Path("out/demo"), "--out", "-o", help="Where the demo writes its outputs."),
) -> None:
    """Run the five KIP before/after stories and write one side-by-side report."""
    from replicaflow.jobs.demo import run_demo

    try:
        path = run_demo(out)
    except ReplicaflowError as exc:
        fail(exc)
    typer.echo(f"demo report: {path}")


def main() -> None:
    try:
        app(standalone_mode=True)
    except ReplicaflowError as exc:  # raised outside a command (e.g. at import of a sub-command)
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)


def fail(exc: ReplicaflowError) -> None:
    """Print one error sentence and exit 2 -- the CLI's only way out on bad input."""
    err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


if __name__ == "__main__":
    main()
