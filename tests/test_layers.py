"""The layer rule of docs/architecture.md as import-linter contracts (pyproject.toml): kept by the package, and
broken -- naming the contract and the import -- as soon as a forbidden import is added to a copy of it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())", "--no-logo", "--no-cache"]


def lint(root: Path) -> subprocess.CompletedProcess:
    """lint-imports over the package in ``root`` (found first on the path), with ``root/pyproject.toml``."""
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}
    return subprocess.run(LINT, cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_the_package_keeps_every_contract():
    res = lint(ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Contracts: 5 kept, 0 broken." in res.stdout


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(ROOT / "replicaflow", root / "replicaflow", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize(("module", "inject", "contract", "says"), [
    ("model/units.py", "import replicaflow.report.build", "layers:",
     "replicaflow.model is not allowed to import replicaflow.report"),
    ("pipeline/runner.py", "import replicaflow.ingest.logs", "layers:",
     "replicaflow.pipeline is not allowed to import replicaflow.ingest"),
    ("report/data.py", "import replicaflow.jobs.demo", "layers:",
     "replicaflow.report is not allowed to import replicaflow.jobs"),
    ("cli.py", "import replicaflow.sim.runner", "the CLI calls jobs",
     "replicaflow.cli is not allowed to import replicaflow.sim"),
    ("sim/runner.py", "import pyspark.sql", "run without Spark",
     "replicaflow.sim is not allowed to import pyspark"),
    ("report/stories.py", "import replicaflow.report.build", "no import cycle",
     "No cycles are allowed in replicaflow.report."),
])
def test_a_forbidden_import_breaks_its_contract(copy, module, inject, contract, says):
    path = copy / "replicaflow" / module
    original = path.read_text()
    path.write_text(original + f"\n{inject}  # injected by the test\n")
    try:
        res = lint(copy)
    finally:
        path.write_text(original)
    assert res.returncode != 0
    broken = [line for line in res.stdout.splitlines() if " BROKEN" in line]
    assert any(contract in line for line in broken), res.stdout
    assert says in res.stdout
