"""All outputs of a command appear together or not at all, and nothing the tool did not write is touched.

Layout of an output folder ``OUT`` (docs/design.md, "Outputs"):

    OUT/.replicaflow/gen-<n>/          one complete generation: telemetry/, truth/, analysis/, report.html …
    OUT/.replicaflow/current  →  gen-<n>   the one switch (a symlink replaced atomically)
    OUT/telemetry  →  .replicaflow/current/telemetry     one relative symlink per output name

A command stages its outputs in a new generation (``gen-<n>.tmp``), carries over by hard link the
entries of the current generation it keeps, renames the staging folder, creates any missing
``OUT/<name>`` link (dangling until the switch, so it reads as absent), and then replaces
``current`` — the only step a reader can observe. A reader therefore sees the previous complete
output or the new complete output, never a mix and never a missing folder. Old generations and
the staging folders of killed runs are collected by the next command.

``REPLICAFLOW_FAULT_AT=<step>`` makes the process exit with status 137 just before that step —
the kill tests use it to stop between any two filesystem operations.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from replicaflow.errors import ReplicaflowError

HOME = ".replicaflow"
CURRENT = "current"
# what each command writes into OUT (one home for the names)
SIMULATION = ("telemetry", "truth", "logs")
ANALYSIS = ("analysis",)
REPORT = ("report.html", "metrics.om", "summary.json")
STEPS = ("prepare", "collect", "stage", "carry", "seal", "link", "switch", "clean")
_GEN = re.compile(r"^gen-(\d+)-(\d+)(\.tmp)?$")


def _step(name: str) -> None:
    """A point between two filesystem operations of the commit (fault injection for the kill tests)."""
    if os.environ.get("REPLICAFLOW_FAULT_AT") == name:
        os._exit(137)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def check_out_dir(out: Path | str) -> Path:
    """``--out`` as a usable folder: not empty text, not a file, writable; one sentence otherwise."""
    if str(out).strip() == "":
        raise ReplicaflowError("--out: expected a folder path, found an empty one")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ReplicaflowError(f"{out}: --out is a file, expected a folder")
    parent = out if out.exists() else next((p for p in out.parents if p.exists()), Path("."))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ReplicaflowError(f"{parent}: cannot write here (permission denied)")
    return out


def _ours(out: Path, name: str) -> bool:
    """Is ``OUT/name`` absent or the link this module creates?"""
    path = out / name
    if not path.exists() and not path.is_symlink():
        return True
    return path.is_symlink() and os.readlink(path) == f"{HOME}/{CURRENT}/{name}"


def foreign_entries(out: Path, names: Iterable[str]) -> list[Path]:
    """Entries named like an output that the tool did not write (a user's folder or file)."""
    return [out / n for n in names if not _ours(out, n)]


class Commit:
    """One command's outputs: ``stage`` is where it writes them; :meth:`done` makes them current."""

    def __init__(self, out: Path, writes: Iterable[str], drops: Iterable[str] = ()):
        self.out = check_out_dir(out)
        self.writes, self.drops = set(writes), set(drops)
        foreign = foreign_entries(self.out, sorted(self.writes | self.drops))
        if foreign:
            raise ReplicaflowError(f"{foreign[0]}: not written by replicaflow; move it away or choose another "
                                   "--out (replicaflow never replaces what it did not write)")
        self.home = self.out / HOME
        self.stage: Path | None = None
        self.created: list[Path] = []  # folders this commit made, removed again if it aborts

    def _generations(self) -> list[tuple[Path, int, bool]]:
        if not self.home.is_dir():
            return []
        out = []
        for entry in self.home.iterdir():
            m = _GEN.match(entry.name)
            if m:
                out.append((entry, int(m.group(2)), bool(m.group(3))))
        return out

    def current(self) -> Path | None:
        link = self.home / CURRENT
        return self.home / os.readlink(link) if link.is_symlink() and link.exists() else None

    def begin(self) -> Path:
        _step("prepare")
        self.created = [p for p in (*reversed(self.home.parents), self.home) if not p.exists()]
        self.home.mkdir(parents=True, exist_ok=True)
        _step("collect")
        current = self.current()
        for path, pid, staging in self._generations():
            if path != current and (not staging or not _alive(pid) or pid == os.getpid()):
                shutil.rmtree(path, ignore_errors=True)
        _step("stage")
        self.stage = self.home / f"gen-{time.time_ns()}-{os.getpid()}.tmp"
        self.stage.mkdir()
        return self.stage

    def done(self) -> None:
        """Carry over, seal, link, switch, clean (see the module docstring)."""
        assert self.stage is not None
        current = self.current()
        _step("carry")
        if current is not None:
            for entry in current.iterdir():
                if entry.name not in self.writes | self.drops and not (self.stage / entry.name).exists():
                    if entry.is_dir():
                        shutil.copytree(entry, self.stage / entry.name, copy_function=os.link, symlinks=True)
                    else:
                        os.link(entry, self.stage / entry.name)
        _step("seal")
        sealed = self.stage.with_name(self.stage.name.removesuffix(".tmp"))
        os.replace(self.stage, sealed)
        _step("link")
        names = sorted(p.name for p in sealed.iterdir())
        for name in names:
            target = f"{HOME}/{CURRENT}/{name}"
            link = self.out / name
            if not (link.is_symlink() and os.readlink(link) == target):
                tmp = self.out / f".{name}.link-{os.getpid()}"
                tmp.unlink(missing_ok=True)
                os.symlink(target, tmp)
                os.replace(tmp, link)
        _step("switch")
        tmp = self.home / f".{CURRENT}-{os.getpid()}"
        tmp.unlink(missing_ok=True)
        os.symlink(sealed.name, tmp)
        os.replace(tmp, self.home / CURRENT)
        _step("clean")
        for path, _, staging in self._generations():
            if path != sealed and not staging:
                shutil.rmtree(path, ignore_errors=True)
        for name in self.writes | self.drops:
            link = self.out / name
            if link.is_symlink() and not link.exists():
                link.unlink()
        self.stage = None

    @contextmanager
    def staged(self) -> Iterator[Path]:
        """The staging folder; the outputs become current when the block ends without an error."""
        stage = self.begin()
        try:
            yield stage
        except BaseException:
            self.abort()
            raise
        self.done()

    def abort(self) -> None:
        """Remove the staging folder, and the folders this commit created when they hold nothing else."""
        if self.stage is not None:
            shutil.rmtree(self.stage, ignore_errors=True)
            self.stage = None
        for folder in reversed(self.created):
            try:
                folder.rmdir()
            except OSError:
                break
        self.created = []


@contextmanager
def commit(out: Path, writes: Iterable[str], drops: Iterable[str] = ()) -> Iterator[Path]:
    """``with commit(OUT, writes={"telemetry", "truth"}) as stage:`` write into ``stage``; on success the
    outputs become ``OUT/<name>`` at once; on error nothing changes."""
    with Commit(out, writes, drops).staged() as stage:
        yield stage
