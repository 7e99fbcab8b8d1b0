"""The CLI shell: help, version, and one-sentence errors without tracebacks."""

import subprocess
import sys

from typer.testing import CliRunner

from replicaflow import __version__
from replicaflow.cli import app

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
    assert "Traceback" not in proc.stderr
