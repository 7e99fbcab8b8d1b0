"""The `replicaflow` command: a thin shell over jobs/, one job per command (docs/architecture.md).

Every command turns a ReplicaflowError into one sentence on stderr and exit status 2. Jobs are
imported inside the commands, so `--help` answers without loading Spark or the simulator.
"""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

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
    rich_markup_mode=None,  # click's plain help: flags without a `<bool>` metavar, fits 80 columns
)
err = Console(stderr=True)
MAX_WORK_HELP = ("Raise the bound on a run's work, in replica-ticks (replicas × duration/tick); a scenario "
                 "above the bound is refused with its estimate before anything runs.")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"replicaflow {__version__}")
        raise typer.Exit()


class Naming(StrEnum):
    strimzi = "strimzi"
    confluent = "confluent"


# -q / -v of the root command, read by every command
_VERBOSITY = {"quiet": False}


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", callback=_version,
                                 is_eager=True),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print errors and the paths written, nothing else."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also show Spark's JVM output on the terminal."),
) -> None:
    """replicaflow: Kafka replication health, simulated and analyzed."""
    _VERBOSITY["quiet"] = quiet
    if verbose:
        os.environ["REPLICAFLOW_SPARK_LOG"] = "-"


def _out(value: str) -> Path:
    """``--out`` as given: an empty one would silently mean the current folder."""
    if not value.strip():
        raise ReplicaflowError("--out: expected a folder path, found an empty one")
    return Path(value)


def _progress() -> bool:
    return not _VERBOSITY["quiet"]


def _said(text: str) -> None:
    """A line about what was written and what to run next (not with ``-q``)."""
    if not _VERBOSITY["quiet"]:
        err.print(text, highlight=False, markup=False, soft_wrap=True)

@app.command()
def simulate(
    scenario: Path = typer.Argument(..., metavar="SCENARIO.yaml", help="Scenario YAML (see docs/scenarios.md)."),
    out: str = typer.Option(..., "--out", "-o", metavar="DIR",
                             help="Output directory: telemetry/ and truth/ are written here."),
    logs: bool = typer.Option(False, "--logs", help="Also write broker logs in Kafka's own format for the version."),
    max_work: int | None = typer.Option(None, "--max-work", min=1, metavar="N", help=MAX_WORK_HELP),
) -> None:
    """Run a scenario through the vectorized Kafka replication engine and write telemetry + ground truth."""
    from replicaflow.jobs.simulate import simulate as simulate_job

    try:
        simulate_job(scenario, _out(out), logs=logs, progress=_progress(), max_work=max_work)
    except ReplicaflowError as exc:
        fail(exc)
    wrote = ", ".join(f"{Path(out) / d}/" for d in ("telemetry", "truth", *(("logs",) if logs else ())))
    typer.echo(f"wrote {wrote}")
    _said(f"next: replicaflow analyze {out} --out {out}")


@app.command()
def analyze(
    telemetry_dir: Path = typer.Argument(..., metavar="DIR",
                                         help="A directory holding telemetry/ (the output of `simulate`)."),
    out: str = typer.Option(..., "--out", "-o", metavar="OUT",
                             help="Output directory: analysis/ is written here, atomically."),
    master: str = typer.Option("local[2]", "--master", metavar="URL",
                               help="Spark master URL, e.g. local[4] or spark://host:7077."),
    allow_empty: bool = typer.Option(False, "--allow-empty",
                                     help="Analyze telemetry whose tables are all empty (refused otherwise)."),
    logs: list[str] = typer.Option(None, "--logs", metavar="GLOB", help="Broker logs of the same cluster (file, directory or glob; "
                                   "repeatable): adds log_events and rejects (docs/logs.md)."),
) -> None:
    """Reconstruct every partition's state with Spark and compute the KIP metrics, incidents and reassignments."""
    from replicaflow.jobs.analyze import analyze as analyze_job

    try:
        analyze_job(telemetry_dir, _out(out), master=master, progress=_progress(), logs=logs or None,
                    allow_empty=allow_empty)
    except ReplicaflowError as exc:
        fail(exc)
    typer.echo(f"wrote {Path(out) / 'analysis'}/")
    _said(f"next: replicaflow report {out}")


@app.command()
def report(
    directory: Path = typer.Argument(..., metavar="DIR", help="A directory holding analysis/ (and telemetry/)."),
    naming: Naming = typer.Option(Naming.strimzi, "--naming", case_sensitive=False,
                                  help="Prometheus names in metrics.om: Strimzi's JMX exporter profile or "
                                       "Confluent's (jmx-monitoring-stacks)."),
) -> None:
    """Write report.html (self-contained, offline), metrics.om (OpenMetrics) and summary.json."""
    from replicaflow.jobs.report import report as report_job

    try:
        path = report_job(directory, naming=naming.value)
    except ReplicaflowError as exc:
        fail(exc)
    typer.echo(f"report: {path}")


@app.command()
def run(
    scenario: Path = typer.Argument(..., metavar="SCENARIO.yaml", help="Scenario YAML."),
    out: str = typer.Option(..., "--out", "-o", metavar="DIR", help="Output directory."),
    master: str = typer.Option("local[2]", "--master", metavar="URL", help="Spark master URL."),
    logs: bool = typer.Option(False, "--logs", help="Also write broker logs, read them back and show their events "
                              "in the report."),
    max_work: int | None = typer.Option(None, "--max-work", min=1, metavar="N", help=MAX_WORK_HELP),
) -> None:
    """simulate + analyze + report in one go."""
    from replicaflow.jobs.run import run as run_job

    try:
        path = run_job(scenario, _out(out), master=master, logs=logs, progress=_progress(), max_work=max_work)
    except ReplicaflowError as exc:
        fail(exc)
    typer.echo(f"report: {path}")


@app.command()
def demo(
    out: str = typer.Option("out/demo", "--out", "-o", metavar="DIR", help="Where the demo writes its outputs."),
) -> None:
    """Run the five KIP before/after stories and write one side-by-side report."""
    from replicaflow.jobs.demo import run_demo

    try:
        path = run_demo(_out(out), progress=_progress())
    except ReplicaflowError as exc:
        fail(exc)
    typer.echo(f"demo report: {path}")


def main() -> None:
    try:
        app(standalone_mode=True)
    except ReplicaflowError as exc:  # raised outside a command (e.g. at import of a sub-command)
        _print_error(exc)
        sys.exit(2)


def _print_error(exc: ReplicaflowError) -> None:
    """The sentence as it is: a value like ``[/bold]`` in it is text, never terminal markup."""
    err.print(Text.assemble(("error:", "bold red"), " ", str(exc)), highlight=False, soft_wrap=True)


def fail(exc: ReplicaflowError) -> None:
    """Print one error sentence and exit 2 -- the CLI's only way out on bad input."""
    _print_error(exc)
    raise typer.Exit(code=2)


if __name__ == "__main__":
    main()
