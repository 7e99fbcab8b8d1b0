"""The documentation's examples run as written: every ```bash block of README.md and docs/*.md made of
`replicaflow` commands is executed (outputs redirected into a temporary folder), and every YAML
scenario shown in docs/ is a file under docs/examples/ that loads."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replicaflow.sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)


def blocks(kind: str) -> list[tuple[Path, str]]:
    return [(page, body) for page in PAGES for lang, body in BLOCK.findall(page.read_text()) if lang == kind]


def replicaflow_blocks() -> list[tuple[Path, list[str]]]:
    out = []
    for page, body in blocks("bash"):
        lines = [ln.split("  #")[0].strip() for ln in body.splitlines() if ln.strip() and not ln.startswith("#")]
        if lines and all(ln.startswith(("replicaflow ", ".venv/bin/replicaflow ")) for ln in lines):
            out.append((page, lines))
    return out


def test_there_are_runnable_examples():
    pages = {page.name for page, _ in replicaflow_blocks()}
    assert {"README.md", "scenarios.md"} <= pages


@pytest.mark.slow
@pytest.mark.parametrize(("page", "lines"), replicaflow_blocks(), ids=lambda v: v.name if isinstance(v, Path) else "")
def test_documented_commands_run_as_written(page, lines, tmp_path):
    """Run in a folder that sees the repository's files (``out/`` lands there); each command exits 0
    without a traceback, and no line of its output is wider than 80 columns or carries JVM noise."""
    binary = Path(sys.executable).parent / "replicaflow"
    env = {**os.environ, "COLUMNS": "80"}
    for name in ("scenarios", "docs", "alerts"):
        (tmp_path / name).symlink_to(ROOT / name)
    for line in lines:
        argv = shlex.split(line)
        argv[0] = str(binary)
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        text = done.stdout + done.stderr
        assert done.returncode == 0, f"{page.name}: {line}\n{text[-3000:]}"
        assert "Traceback" not in text and "WARN" not in text and ".py:" not in text, text
        assert max((len(x) for x in text.splitlines()), default=0) <= 80, text


def test_documented_scenarios_are_shipped_examples_that_load():
    shown = [body for _, body in blocks("yaml") if "kafka:" in body]
    assert shown
    examples = {p.read_text(): p for p in (ROOT / "docs" / "examples").glob("*.yaml")}
    for body in shown:
        assert body in examples, "a scenario shown in the docs must be a file under docs/examples/"
        s = load_scenario(examples[body])
        assert s.events and s.topics


def test_the_example_plan_is_kafkas_format(tmp_path):
    shutil.copytree(ROOT / "docs" / "examples", tmp_path / "ex")
    s = load_scenario(tmp_path / "ex" / "reassignment-during-bounce.yaml")
    moves = [m for e in s.events if e.kind == "reassign" for m in e.partitions]
    assert [(m.topic, m.partition, m.replicas) for m in moves] == [("orders", 0, (4, 5, 6)), ("orders", 1, (5, 6, 4))]
