"""The CLI shell: help, version, and one-sentence errors without tracebacks."""

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from replicaflow import __version__
from replicaflow.cli import app
from tests.test_hostile_cli import GOOD

runner = CliRunner()


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"replicaflow {__version__}"


def test_help_lists_every_command():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("simulate", "analyze", "report", "run", "demo"):
        assert command in result.output


def test_unknown_option_is_a_usage_error_not_a_traceback():
    proc = subprocess.run([sys.executable, "-m", "replicaflow.cli", "simulate", "--bogus"], capture_output=True,
                          text=True)
    assert proc.returncode == 2
    assert proc.stderr == ("error: No such option: --bogus (Possible options: --logs, --out); "
                           "see 'python -m replicaflow.cli simulate --help'\n")


@pytest.mark.parametrize(("argv", "sentence"), [
    (["frob"], "No such command 'frob'; see 'replicaflow --help'"),
    (["simulate"], "Missing argument 'SCENARIO.yaml'; see 'replicaflow simulate --help'"),
    (["plan", "--throttle"], "Option '--throttle' requires an argument"),
    (["plan", "--max-moves-per-broker", "abc"],
     "Invalid value for '--max-moves-per-broker': Input should be a valid integer, unable to parse string as an "
     "integer; see 'replicaflow plan --help'"),
])
def test_a_command_line_click_refuses_is_one_error_sentence(argv, sentence):
    """The project's one ``error:`` sentence and exit 2, not click's usage block (``cli._OneSentenceGroup``)."""
    result = runner.invoke(app, argv)
    assert result.exit_code == 2
    assert result.output == f"error: {sentence}\n"


def test_no_command_shows_the_help():
    result = runner.invoke(app, [])
    assert result.exit_code == 2 and result.output.startswith("Usage: replicaflow [OPTIONS] COMMAND [ARGS]...")


TINY = GOOD  # a two-minute scenario of three brokers


def test_simulate_piped_prints_only_the_paths_on_stdout(tmp_path):
    """The progress bar went to stdout: piped, it left an empty line before the paths written."""
    (tmp_path / "s.yaml").write_text(TINY)
    for quiet in ([], ["-q"]):
        proc = subprocess.run([sys.executable, "-m", "replicaflow.cli", *quiet, "simulate", "s.yaml", "--out", "o"],
                              cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"})
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "wrote telemetry/, truth/ in o/\n"
        assert proc.stderr == ("" if quiet else "next: replicaflow analyze o --out o\n")


def test_simulate_with_logs_names_the_snapshots_it_wrote(tmp_path):
    """With --logs, simulate writes the describe (and log-dirs) outputs that docs/real-cluster.md feeds to
    `analyze --topics`, into snapshots/; its line said only "telemetry/, truth/, logs/"."""
    (tmp_path / "s.yaml").write_text(TINY)
    proc = subprocess.run([sys.executable, "-m", "replicaflow.cli", "-q", "simulate", "s.yaml", "--out", "o", "--logs"],
                          cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "wrote telemetry/, truth/, logs/, snapshots/ in o/\n"
    assert (tmp_path / "o" / "snapshots" / "kafka-topics-describe-end.txt").is_file()


def test_every_help_fits_80_columns_explains_each_option_and_shows_an_example():
    """run's options said only 'Output directory.' and 'Spark master URL.'; simulate, report, run and the
    top level showed no command line to start from; --max-work did not say what it raises; plan's --version
    said 'default 3.7' where a --cluster scenario's release is the default."""
    import typer.main

    from replicaflow.sim.scenario import DEFAULT_MAX_WORK

    group = typer.main.get_command(app)
    for name in ("", *group.commands):
        out = runner.invoke(app, [*([name] if name else []), "--help"], env={"COLUMNS": "80"}).output
        assert max(map(len, out.splitlines())) <= 80, name
        if name in ("", "simulate", "report", "run", "plan"):
            assert "Example: replicaflow " in out, name
        if name:
            short = [p.name for p in group.commands[name].params if p.name != "help" and len(p.help or "") <= 30]
            assert not short, (name, short)
    assert f"default {DEFAULT_MAX_WORK:,}" in runner.invoke(app, ["run", "--help"], env={"COLUMNS": "80"}).output
