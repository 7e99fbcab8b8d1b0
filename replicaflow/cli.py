"""The `replicaflow` command: a thin shell over jobs/, one job per command (docs/architecture.md).

Every command turns a ReplicaflowError into one sentence on stderr and exit status 2. Jobs are
imported inside the commands, so `--help` answers without loading Spark or the simulator.
"""

from __future__ import annotations

import os
import signal
import sys
from enum import StrEnum
from pathlib import Path

import typer
import typer.core
from rich.console import Console
from rich.text import Text

from replicaflow import __version__
from replicaflow.errors import ReplicaflowError, quote, utf8_path
from replicaflow.jobs import stop_spark  # no Spark: the jobs themselves are imported by each command
from replicaflow.model.units import INT32_MAX, parse_id


class _OneSentenceGroup(typer.core.TyperGroup):
    """click's own refusals of the command line (an unknown option, a value that is not a number, a missing
    argument) as the one ``error:`` sentence every other bad input gets, with where to read the options, instead of
    click's usage block; the rest (help, exit codes, Ctrl-C) as click does it. Typer vendors click from 0.2x, so
    its exceptions are known by what they carry (``format_message``, ``exit_code``), not by their module."""

    def main(self, *args, standalone_mode: bool = True, **kwargs):
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except typer.Abort:
            err.print("Aborted!", highlight=False)
            sys.exit(1)
        except Exception as exc:
            if not (hasattr(exc, "format_message") and hasattr(exc, "exit_code")):
                raise
            if type(exc).__name__ == "NoArgsIsHelpError":  # `replicaflow` alone: the help, as click shows it
                exc.show()
                sys.exit(exc.exit_code)
            ctx = getattr(exc, "ctx", None)
            where = f"; see '{ctx.command_path} --help'" if ctx is not None else ""
            _print_error(ReplicaflowError(exc.format_message().rstrip(".") + where))
            sys.exit(exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=_OneSentenceGroup,
    name="replicaflow",
    help=(
        "Simulate and analyze Apache Kafka replication health: ISR membership, under-replicated and "
        "under-min-ISR partitions, reassignments and their throttles, fetcher partition failures -- "
        "with the semantics of Kafka's KIPs, per Kafka version."
    ),
    epilog=("\b\nExample: replicaflow run scenarios/kip542-before.yaml --out out/kip542\n"
            "Each command's options: replicaflow COMMAND --help"),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: flags without a `<bool>` metavar, fits 80 columns
)
err = Console(stderr=True)
MAX_WORK_HELP = ("Raise the bound on a run's work, in replica-ticks (replicas × duration/tick; default "
                 "20,000,000,000, about 15 minutes on 2 cores); a scenario above the bound is refused with its "
                 "estimate before anything runs.")


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
    utf8_path("--out", value)
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
    """Run a scenario through the vectorized Kafka replication engine and write telemetry + ground truth.

    \b
    Example: replicaflow simulate scenarios/kip16-before.yaml --out out/kip16
    """
    from replicaflow.jobs.simulate import folders_written
    from replicaflow.jobs.simulate import simulate as simulate_job

    try:
        simulate_job(scenario, _out(out), logs=logs, progress=_progress(), max_work=max_work)
    except ReplicaflowError as exc:
        fail(exc)
    wrote = ", ".join(f"{d}/" for d in folders_written(logs))
    typer.echo(f"wrote {wrote} in {Path(out)}/")
    _said(f"next: replicaflow analyze {out} --out {out}")


ANALYZE_HELP = """Reconstruct every partition's state with Spark and compute the KIP metrics, incidents and reassignments.

From telemetry: `replicaflow analyze DIR --out OUT` (DIR holds telemetry/, the output of simulate; several
DIRs are analyzed in one Spark job). With `--logs` the same cluster's broker logs add log_events and
rejects.

From a real cluster, without telemetry: `replicaflow analyze --logs GLOB --topics DESCRIBE.txt --out OUT`
rebuilds the telemetry tables from the broker logs and a `kafka-topics --describe` snapshot (written to
OUT/telemetry/), then analyzes them. Lag gauges and byte meters are unknown from logs and stay absent
(docs/real-cluster.md has the table of what comes from where)."""


@app.command(help=ANALYZE_HELP)
def analyze(
    telemetry_dirs: list[Path] = typer.Argument(None, metavar="DIR", show_default=False,
                                                help="Directories holding telemetry/ (the output of `simulate`); "
                                                     "none with --logs: analyze the logs alone."),
    out: str = typer.Option(..., "--out", "-o", metavar="OUT",
                             help="Output directory: analysis/ is written here, atomically."),
    master: str = typer.Option("local[2]", "--master", metavar="URL",
                               help="Spark master URL, e.g. local[4] or spark://host:7077."),
    allow_empty: bool = typer.Option(False, "--allow-empty",
                                     help="Analyze telemetry whose tables are all empty (refused otherwise)."),
    logs: list[str] = typer.Option(None, "--logs", metavar="GLOB", help="Broker logs (file, directory or glob; "
                                   "repeatable; .gz read as text): with DIR, the same cluster's logs add log_events "
                                   "and rejects (docs/logs.md); without DIR, the cluster is analyzed from them."),
    topics: list[str] = typer.Option(None, "--topics", metavar="DESCRIBE.txt",
                                     help="Output of kafka-topics --describe (repeatable, one per cluster): anchors "
                                          "the assignment, min.insync.replicas and throttled replicas."),
    topics_at: str = typer.Option("end", "--topics-at", metavar="WHEN",
                                  help="When --topics was taken: start or end of the logged period, or epoch ms."),
    log_dirs: list[str] = typer.Option(None, "--log-dirs", metavar="LOGDIRS.json",
                                       help="Output of kafka-log-dirs --describe (repeatable, one per cluster)."),
    cluster: str = typer.Option(None, "--cluster", metavar="NAME", help="The cluster's name (default: cluster)."),
    cluster_from_path: bool = typer.Option(False, "--cluster-from-path",
                                           help="A fleet: each file's cluster is the folder above its broker-N "
                                                "folder (logs/<cluster>/broker-N/...)."),
    kafka_version: str = typer.Option(None, "--kafka-version", metavar="X.Y",
                                      help="The brokers' Kafka release (default: inferred from the log forms, "
                                           "the earliest release they allow)."),
    log_timezone: str = typer.Option(None, "--log-timezone", metavar="TZ",
                                     help="Time zone of the log timestamps, e.g. Europe/Berlin (default UTC)."),
    scrape_interval: str = typer.Option("10s", "--scrape-interval", metavar="DURATION",
                                        help="Grid of the recomputed gauges when analyzing logs alone, e.g. 30s (at most 1h)."),
    min_insync_replicas: int = typer.Option(None, "--min-insync-replicas", metavar="N",
                                            help="The brokers' default min.insync.replicas (describe shows "
                                                 "topic overrides only; Kafka's default is 1)."),
) -> None:
    from replicaflow.jobs.analyze import analyze as analyze_job
    from replicaflow.jobs.analyze import analyze_logs

    logs_only = {"--topics": topics, "--log-dirs": log_dirs, "--cluster": cluster,
                 "--cluster-from-path": cluster_from_path, "--kafka-version": kafka_version,
                 "--log-timezone": log_timezone, "--min-insync-replicas": min_insync_replicas,
                 "--topics-at": topics_at != "end" or None, "--scrape-interval": scrape_interval != "10s" or None}
    try:
        if logs and any(not glob.strip() for glob in logs):  # '' would read every file under the current folder
            raise ReplicaflowError("--logs: expected a file, directory or glob, found an empty one")
        if telemetry_dirs:
            given = [name for name, value in logs_only.items() if value]
            if given:
                raise ReplicaflowError(f"{given[0]}: only for analyzing logs alone (no DIR); with telemetry the "
                                       "cluster's tables are already known")
            analyze_job(telemetry_dirs, _out(out), master=master, progress=_progress(), logs=logs or None,
                        allow_empty=allow_empty)
        elif logs:
            if allow_empty:  # rebuilt tables come from the logs: none with a replication event is always refused
                raise ReplicaflowError("--allow-empty: only with a telemetry DIR")
            analyze_logs(logs, _out(out), topics=topics or (), log_dirs=log_dirs or (), cluster=cluster,
                         cluster_from_path=cluster_from_path, kafka_version=kafka_version,
                         scrape_interval=scrape_interval, topics_at=topics_at, log_timezone=log_timezone,
                         min_insync_replicas=min_insync_replicas, master=master, progress=_progress())
        else:
            raise ReplicaflowError("analyze: give a telemetry DIR, or --logs to analyze a cluster from its logs")
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
    """Write report.html (self-contained, offline), metrics.om (OpenMetrics) and summary.json into DIR.

    \b
    Example: replicaflow report out/kip16
    """
    from replicaflow.jobs.report import report as report_job

    try:
        path = report_job(directory, naming=naming.value)
    except ReplicaflowError as exc:
        fail(exc)
    typer.echo(f"report: {path}")
    typer.echo(f"metrics: {path.with_name('metrics.om')}")
    typer.echo(f"summary: {path.with_name('summary.json')}")


@app.command()
def run(
    scenario: Path = typer.Argument(..., metavar="SCENARIO.yaml", help="Scenario YAML (see docs/scenarios.md)."),
    out: str = typer.Option(..., "--out", "-o", metavar="DIR",
                            help="Output directory: telemetry/, truth/, analysis/ and the report's three files "
                                 "are written here, together."),
    master: str = typer.Option("local[2]", "--master", metavar="URL",
                               help="Spark master URL, e.g. local[4] or spark://host:7077."),
    logs: bool = typer.Option(False, "--logs", help="Also write broker logs, read them back and show their events "
                              "in the report."),
    max_work: int | None = typer.Option(None, "--max-work", min=1, metavar="N", help=MAX_WORK_HELP),
) -> None:
    """simulate + analyze + report in one go, into one folder.

    \b
    Example: replicaflow run scenarios/kip542-before.yaml --out out/kip542
    """
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


@app.command()
def setup(
    if_missing: bool = typer.Option(False, "--if-missing", help="Keep a class archive already recorded for this "
                                    "Java and these Spark jars."),
) -> None:
    """Record the JVM classes a Spark analysis loads (under a minute, once per Java and Spark install): later
    commands' JVMs map them and start seconds sooner."""
    from replicaflow.jobs.setup import setup as setup_job

    try:
        path, recorded = setup_job(progress=_progress(), if_missing=if_missing)
    except ReplicaflowError as exc:
        fail(exc)
    if path is None:
        typer.echo("class archive: this Java cannot record one (it needs Java 13+ and\n"
                   "its own class archive); replicaflow runs without it")
    else:
        _said("recorded the JVM classes of a Spark analysis" if recorded else "already recorded for this Java and Spark")
        typer.echo(f"class archive: {path}")


def _broker_list(flag: str, text: str | None) -> list[int]:
    if text is None:
        return []
    if not text.strip():
        raise ReplicaflowError(f"{flag}: expected broker ids like 1,2,4, found none")
    ids = [parse_id(x) for x in text.split(",")]
    if None in ids:
        raise ReplicaflowError(f"{flag}: expected broker ids like 1,2,4 (each 0 to {INT32_MAX}, Kafka's int32), "
                               f"found {quote(text)}")
    return ids


@app.command()
def plan(
    reassignment: Path | None = typer.Option(None, "--reassignment", metavar="PLAN.json",
                                             help="kafka-reassign-partitions JSON (version 1) to evaluate."),
    topics: Path | None = typer.Option(None, "--topics", metavar="DESCRIBE.txt",
                                       help="kafka-topics --describe output of the cluster."),
    cluster: Path | None = typer.Option(None, "--cluster", metavar="CLUSTER.yaml",
                                        help="A scenario file as the cluster instead (its events are kept)."),
    log_dirs: Path | None = typer.Option(None, "--log-dirs", metavar="LOGDIRS.json",
                                         help="kafka-log-dirs --describe output: each partition's size "
                                              "(without it, --topics partitions start empty)."),
    version: str | None = typer.Option(None, "--version", metavar="X.Y",
                                       help="The brokers' Kafka release, e.g. 3.6 (default: the --cluster "
                                            "scenario's, else 3.7)."),
    produce_rate: list[str] = typer.Option(None, "--produce-rate", metavar="TOPIC=RATE",
                                           help="A topic's produce rate, e.g. orders=20MB/s or bytes/s (repeatable)."),
    metrics: Path | None = typer.Option(None, "--metrics", metavar="FILE.om",
                                        help="Produce rates from Prometheus text (BytesInPerSec per topic)."),
    throttle: list[str] = typer.Option(None, "--throttle", metavar="RATE",
                                       help="A throttle to simulate, e.g. 50MB/s or bytes/s as Kafka's tool "
                                            "takes it (repeatable); default: 20, 40 .. 100% of the headroom "
                                            "throttle (90% of each broker's spare NIC)."),
    deadline: str | None = typer.Option(None, "--deadline", metavar="DURATION",
                                        help="Recommend the smallest throttle finishing within it, e.g. 2h "
                                             "(else the smallest as fast as the largest keeping "
                                             "headroom)."),
    max_moves_per_broker: int | None = typer.Option(None, "--max-moves-per-broker", metavar="N",
                                                    help="Run the moves in batches, N per broker at a time, each "
                                                         "batch after the previous one completed."),
    kip542: bool = typer.Option(False, "--kip542", help="Recommend under KIP-542's reassignment quota (proposed, never "
                                                         "shipped in Kafka; else KIP-73's replication throttle); "
                                                         "every throttle runs in both."),
    generate: bool = typer.Option(False, "--generate", help="Write the plan as kafka-reassign-partitions "
                                                            "--generate would (with --remove-brokers/--brokers)."),
    remove_brokers: str | None = typer.Option(None, "--remove-brokers", metavar="IDS",
                                              help="With --generate: brokers to empty, e.g. 3."),
    brokers: str | None = typer.Option(None, "--brokers", metavar="IDS",
                                       help="With --generate: the brokers to lay the topics over, e.g. 1,2,4 "
                                            "(with --topics: the cluster's brokers, when some hold no replica)."),
    racks: str | None = typer.Option(None, "--racks", metavar="ID:RACK,...",
                                     help="Each broker's broker.rack, e.g. 1:a,2:b,3:c (replaces the racks of "
                                          "--cluster); --generate then places replicas rack-aware."),
    disable_rack_aware: bool = typer.Option(False, "--disable-rack-aware",
                                            help="With --generate: ignore racks, as Kafka's option of that name."),
    seed: int = typer.Option(0, "--seed", metavar="N",
                             help="With --generate: seed of each topic's start index and replica shift, "
                                  "which Kafka draws at random; another seed, another of Kafka's plans."),
    network: str | None = typer.Option(None, "--network", metavar="RATE",
                                       help="Each broker's NIC per direction (default 125MB/s = 1 Gbit/s)."),
    min_insync_replicas: int | None = typer.Option(
        None, "--min-insync-replicas", metavar="N",
        help="With --topics: the brokers' min.insync.replicas (server.properties), for topics the describe "
             "shows none for (a --zookeeper describe shows only topic overrides; default 1, Kafka's)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of the table (Cruise Control / Strimzi "
                                                          "field names, per-partition ETA)."),
    master: str = typer.Option("local[2]", "--master", metavar="URL",
                               help="Spark master URL: the candidates run as parallel Spark tasks."),
    out: str | None = typer.Option(None, "--out", "-o", metavar="OUT",
                                   help="Also write OUT/plan/: plan.json, plan.html (bytes left, a "
                                        "Gantt chart of the moves) and, with --generate, reassignment.json."),
) -> None:
    """How long a reassignment takes, whether producers go under min ISR, and which throttle to use.

    Give the cluster (--topics with --log-dirs, or --cluster) and the plan (--reassignment, or --generate
    with --remove-brokers/--brokers). Each candidate throttle is simulated under KIP-73 and KIP-542
    until every move completes or is shown unable to; see docs/plan.md.

    \b
    Example: replicaflow plan --reassignment move.json --topics describe.txt \\
               --log-dirs logdirs.json --produce-rate orders=10MB/s --deadline 2h
    """
    from replicaflow.jobs.plan import PlanArgs, reassignment_json
    from replicaflow.jobs.plan import plan as plan_job
    from replicaflow.model.reassign_tool import PROPOSED_HEADER

    try:
        args = PlanArgs(
            reassignment=reassignment, topics=topics, cluster=cluster, log_dirs=log_dirs, version=version,
            produce_rate=produce_rate or [], metrics=metrics, throttle=throttle or [], deadline=deadline,
            max_moves_per_broker=max_moves_per_broker, kip542=kip542, generate=generate,
            remove_brokers=_broker_list("--remove-brokers", remove_brokers),
            brokers=_broker_list("--brokers", brokers), racks=racks, disable_rack_aware=disable_rack_aware,
            seed=seed, network=network, min_insync_replicas=min_insync_replicas, master=master,
            out=_out(out) if out is not None else None, json_out=json_out, progress=_progress())
        prep, _choice, text = plan_job(args)
    except ReplicaflowError as exc:
        fail(exc)
    if prep.generated and out is None and not json_out:
        typer.echo(PROPOSED_HEADER)
        typer.echo(reassignment_json(prep.plan))
    typer.echo(text)
    if out is not None:
        _said(f"wrote {Path(out) / 'plan'}/")


# the signal that stopped the command, once one did (cli.main)
_STOPPED_BY: list[int] = []


def _stopped(signum: int, _frame) -> None:
    """Ctrl-C (SIGINT) and SIGTERM (``kill``, ``timeout``, a service manager): Spark's JVM is ended first and
    waited for (``jobs.stop_spark``; Ctrl-C used to wait 10-24 s for the cancelled jobs, docs/pipeline.md),
    then the command unwinds, so the output commit removes what it staged, where Python's default SIGTERM died
    without cleaning up; a second signal kills at once (its staging folder is collected by the next command)."""
    signal.signal(signum, signal.SIG_DFL)
    _STOPPED_BY.append(signum)
    stop_spark()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def main() -> None:
    """The command; stopped by Ctrl-C or SIGTERM, it exits 130 or 143 (128 + the signal) and says nothing,
    whatever the unwinding met: the JVM is gone by then (``_stopped``; a SIGTERM sent to the process group,
    ``kill -TERM -- -PGID`` as CI runners and supervisors stop a job, stops it too), and the calls that clean
    up after the interrupt then fail -- py4j's error, or "the JVM stopped answering (out of memory?)", named
    neither the cause nor the command's state."""
    signal.signal(signal.SIGTERM, _stopped)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where SIGINT is ignored (`cmd &`)
        signal.signal(signal.SIGINT, _stopped)
    try:
        _main()
    except BaseException:
        if _STOPPED_BY:
            sys.exit(128 + _STOPPED_BY[0])
        raise


def _main() -> None:
    try:
        app(standalone_mode=True)
    except ReplicaflowError as exc:  # raised outside a command (e.g. at import of a sub-command)
        _print_error(exc)
        sys.exit(2)
    except MemoryError:  # the traceback's frames (and their arrays) are let go before the sentence is printed
        pass
    except OSError as exc:
        if exc.filename is None:  # not about a path the user gave (a socket, a pipe): a bug to see whole
            raise
        _print_error(_path_error(exc))
        sys.exit(2)
    else:
        return
    # the command's outputs were staged, and the staging folder removed on the way out (Commit.staged)
    _print_error(ReplicaflowError("the command needs more memory than this machine has; give it smaller inputs "
                                  "(fewer partitions, brokers or files)"))
    sys.exit(2)


def _path_error(exc: OSError) -> ReplicaflowError:
    """A path the system refuses to look at (a name too long for it, a folder it may not enter) wherever
    a command first touches it: one sentence naming the path, not a traceback."""
    return ReplicaflowError(f"{quote(str(exc.filename), 200)}: {exc.strerror or exc}")


def _print_error(exc: ReplicaflowError) -> None:
    """The sentence as it is: a value like ``[/bold]`` in it is text, never terminal markup. None once SIGTERM
    stopped the command: what failed then failed because of it (main)."""
    if _STOPPED_BY:
        return
    err.print(Text.assemble(("error:", "bold red"), " ", str(exc)), highlight=False, soft_wrap=True)


def fail(exc: ReplicaflowError) -> None:
    """Print one error sentence and exit 2 -- the CLI's only way out on bad input."""
    _print_error(exc)
    raise typer.Exit(code=2)


if __name__ == "__main__":
    main()
