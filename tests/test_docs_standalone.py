"""The repository's documentation stands on its own: no page points outside the repository, every
relative link resolves, and every module path docs/architecture.md names exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_reference_outside_the_repository(page):
    text = page.read_text()
    assert "../shared" not in text and "/work/" not in text
    assert not re.search(r"\b(DESIGN|SEMANTICS|REFERENCE)(\.md)?\b", text), "cite docs/design.md or docs/semantics.md"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
        if "://" in target:
            continue
        assert (page.parent / target).exists(), f"{page.name}: broken link {target}"


def test_architecture_names_real_modules():
    text = (ROOT / "docs" / "architecture.md").read_text()
    paths = set(re.findall(r"`((?:replicaflow/)?(?:model|sim|telemetry|ingest|pipeline|report|jobs)/[\w/]+\.py)`", text))
    assert len(paths) >= 10
    for path in paths:
        full = ROOT / (path if path.startswith("replicaflow/") else f"replicaflow/{path}")
        assert full.exists(), path
    for module in re.findall(r"^\| `(\w+)\.py`", text, re.M):
        assert list((ROOT / "replicaflow").rglob(f"{module}.py")), module


def test_readme_links_the_architecture():
    assert "docs/architecture.md" in (ROOT / "README.md").read_text()
