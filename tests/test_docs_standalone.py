"""The repository's documentation stands on its own and names code that exists.

No page points outside the repository (the docs are read on GitHub, in a wheel's sdist or offline),
every relative link resolves, and docs/architecture.md — the page a newcomer follows file by file —
names only modules, classes and functions that are really there: a rename that forgets the page
fails here instead of sending a reader to grep for nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "replicaflow"
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
ARCHITECTURE = ROOT / "docs" / "architecture.md"

TICKED = re.compile(r"`([^`\n]+)`")
PACKAGE = re.compile(r"^(?:replicaflow/)?((?:model|sim|telemetry|ingest|pipeline|report|jobs|plan)(?:/\w+)*)/$")
MODULE = re.compile(r"^[\w/]+\.py$")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_reference_outside_the_repository(page):
    text = page.read_text()
    assert "../shared" not in text and "/work/" not in text
    assert not re.search(r"\b(DESIGN|SEMANTICS|REFERENCE)(\.md)?\b", text), (
        "cite docs/design.md or docs/semantics.md"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    text = page.read_text()
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target).resolve().is_file(), f"{page.name}: broken link {target}"
    for mention in re.findall(r"(?<![\w/.])docs/\w+\.md", text):
        assert (ROOT / mention).is_file(), f"{page.name}: names {mention}, which does not exist"


def module_path(token: str, package: str | None) -> Path | None:
    """Where a backticked ``*.py`` token of architecture.md lives: repository paths as written,
    package paths under replicaflow/, bare module names in the package the text is describing."""
    if token.startswith(("tests/", "benchmarks/", "replicaflow/")):
        return ROOT / token
    if "/" in token or token in ("cli.py", "errors.py"):
        return PKG / token
    return PKG / package / token if package else None


def architecture_modules() -> list[tuple[int, str, Path]]:
    """Every ``*.py`` the page names, with its line, resolved in the package the text is about.

    The package in force is set by a heading (``### `model/` — …``), by a bullet that starts with
    one (``- `pipeline/`: `load.py` …``, for that bullet and its continuation lines) and by a
    sentence that names one (``… the package `sim/scenario/`:`` for the table after it).
    """
    found, section, bullet = [], None, None
    for n, line in enumerate(ARCHITECTURE.read_text().splitlines(), 1):
        ticks = TICKED.findall(line)
        packages = [m.group(1) for t in ticks if (m := PACKAGE.match(t))]
        if line.startswith("#"):
            section, bullet = (packages[0] if packages else None), None
        elif line.startswith("- "):
            bullet = packages[0] if packages and line.startswith(f"- `{ticks[0]}`") else None
        elif not line.startswith((" ", "|")):
            bullet = None
            if packages:
                section = packages[-1]
        package = bullet or section
        for token in ticks:
            if MODULE.match(token):
                path = module_path(token, package)
                assert path is not None, f"architecture.md:{n}: `{token}` outside any package's section"
                found.append((n, token, path))
    return found


def test_architecture_names_real_modules():
    modules = architecture_modules()
    assert len(modules) >= 40, "the package map lists every module"
    missing = [
        f"architecture.md:{n}: `{token}` → {path.relative_to(ROOT)}"
        for n, token, path in modules
        if not path.is_file()
    ]
    assert not missing, "\n".join(missing)


def test_architecture_maps_every_package():
    """Each package of replicaflow/ (and its scenario sub-package) has its place on the map."""
    text = ARCHITECTURE.read_text()
    packages = sorted(p.parent.relative_to(PKG).as_posix() for p in PKG.glob("*/__init__.py"))
    packages += ["sim/scenario"]
    for package in packages:
        assert f"`{package}/`" in text, f"architecture.md does not place {package}/"
    for module in (PKG / "sim" / "scenario").glob("*.py"):
        if module.name != "__init__.py":
            assert f"`{module.name}`" in text, (
                f"architecture.md: sim/scenario/{module.name} missing from the map"
            )


def defined(name: str, source: str) -> bool:
    return re.search(rf"^\s*(?:def|class)\s+{name}\b|^\s*{name}\s*[:=]", source, re.M) is not None


def shrink_walk() -> str:
    text = ARCHITECTURE.read_text()
    start = text.index("## One ISR shrink")
    return text[start : text.index("\n## ", start + 1)]


def test_shrink_walk_names_real_functions():
    """In the walk, ``path.py` `name`` must be defined in that file, and ``Class.member`` on a class
    of replicaflow/ (a method, or a field of a state class)."""
    walk = shrink_walk()
    checked = 0
    for path, name in re.findall(r"`([\w/]+\.py)`\s+`(\w+)", walk):
        source = module_path(path, None).read_text()
        assert defined(name, source), f"`{path}` `{name}`: no such function, class or constant"
        checked += 1
    classes = {p: p.read_text() for p in PKG.rglob("*.py")}
    for cls, member in re.findall(r"`([A-Z]\w+)\.(\w+)", walk):
        homes = [src for src in classes.values() if re.search(rf"^class {cls}\b", src, re.M)]
        assert homes, f"`{cls}.{member}`: no class {cls} in replicaflow/"
        assert any(defined(member, src) for src in homes), f"`{cls}.{member}`: {cls} has no {member}"
        checked += 1
    assert checked >= 30, "the walk names the function of every step"


def test_shrink_walk_names_real_identifiers():
    """Every other ``snake_case`` name in a step of the walk is defined in, imported by, or a quoted
    key of one of the files that step names, by path or by a ``Class.member`` (record kinds such as
    ``isr_shrink`` are keys)."""
    steps = re.split(r"\n(?=\d+\. )", shrink_walk())[1:]
    assert len(steps) >= 8
    checked = 0
    for step in steps:
        ticks = TICKED.findall(step)
        files = [module_path(t, None) for t in ticks if MODULE.match(t)]
        files += [
            f
            for cls in re.findall(r"`([A-Z]\w+)\.", step)
            for f in PKG.rglob("*.py")
            if re.search(rf"^class {cls}\b", f.read_text(), re.M)
        ]
        sources = [f.read_text() for f in files]
        assert sources, f"step without a file: {step[:60]}"
        for name in {t for t in ticks if re.fullmatch(r"[A-Za-z]\w*_\w*", t)}:
            known = any(
                defined(name, src)
                or re.search(rf"^\s*from \S+ import .*\b{name}\b", src, re.M)
                or f'"{name}"' in src
                for src in sources
            )
            assert known, (
                f"step {step[:2]!r}: `{name}` is in none of {[str(f.relative_to(ROOT)) for f in files]}"
            )
            checked += 1
    assert checked >= 15


def test_readme_links_the_design_pages():
    readme = (ROOT / "README.md").read_text()
    for page in ("docs/architecture.md", "docs/design.md", "docs/semantics.md"):
        assert f"]({page})" in readme, f"README.md does not link {page}"
