"""The command lines the docs show but do not run (README's and design.md's synopses, real-cluster.md's
example on a cluster's own paths) name only options their command has, and design.md lists every
command. tests/test_docs_examples.py runs the ```bash blocks; a synopsis in ```text goes stale unseen."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.main import get_command

from replicaflow.cli import app

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
GROUP = get_command(app)


def command_lines() -> list[tuple[str, str]]:
    """(page, line) for every `replicaflow COMMAND ...` of a code block, continuation lines joined."""
    out = []
    for page in PAGES:
        for _lang, body in BLOCK.findall(page.read_text(encoding="utf-8")):
            entry = None
            for raw in body.splitlines():
                line = raw.split("  #")[0].rstrip()
                if re.match(r"(\.venv/bin/)?replicaflow ", line.strip()):
                    if entry:
                        out.append((page.name, entry))
                    entry = line.strip()
                elif entry and raw[:1].isspace() and line.strip():
                    entry += " " + line.strip()
                else:
                    if entry:
                        out.append((page.name, entry))
                    entry = None
            if entry:
                out.append((page.name, entry))
    return out


def _options(command) -> set[str]:
    return {o for p in command.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}


@pytest.mark.parametrize(("page", "line"), command_lines(), ids=lambda v: v[:60])
def test_documented_options_exist(page, line):
    words = line.split()
    name = next(w for w in words[1:] if not w.startswith("-"))
    assert name in GROUP.commands, f"{page}: no command {name!r}: {line}"
    unknown = set(OPTION.findall(line)) - _options(GROUP.commands[name]) - {"--help"}
    assert not unknown, f"{page}: replicaflow {name} has no {sorted(unknown)}: {line}"


def test_design_lists_every_command():
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    block = text[text.index("## Commands"):].split("```")[1]
    assert {w.split()[1] for w in block.splitlines() if w.startswith("replicaflow ")} == set(GROUP.commands)
