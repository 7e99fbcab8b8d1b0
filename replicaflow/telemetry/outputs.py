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

Each generation holds ``.manifest.json``: every file the tool wrote, per output. A file a user puts
into one of the tool's outputs (``OUT/telemetry/scenario.yaml`` lands in the current generation,
through the link) is not in it, so a command that would replace or drop that output refuses,
naming the file, before any work; outputs a command keeps are carried over with such files in them.

``REPLICAFLOW_FAULT_AT=<step>`` makes the process exit with status 137 just before that step —
the kill tests use it to stop between any two filesystem operations; ``#n`` stops at the n-th
point the process reaches, so a test can walk through every one. Temporary links are made inside
``.replicaflow/`` and collected with the staging folders of dead processes.
"""

from __future__ import annotations

import errno
import json
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
SNAPSHOTS = "snapshots"  # simulate --logs: Kafka tool outputs, apart from logs/ (which the log reader walks)
SIMULATION = ("telemetry", "truth", "logs", SNAPSHOTS)  # logs/ and snapshots/ only with --logs
ANALYSIS = ("analysis",)
REPORT = ("report.html", "metrics.om", "summary.json")
MANIFEST = ".manifest.json"
STEPS = ("prepare", "collect", "stage", "carry", "seal", "link", "switch", "clean")
_GEN = re.compile(r"^gen-(\d+)-(\d+)(\.tmp)?$")
_SEALED = re.compile(r"^gen-\d+-\d+$")
# a write the file system refused for want of room, whoever wrote (pyarrow's OSError names no file)
NO_ROOM = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})


_STEPS_TAKEN = [0]
_TEMP_LINK = re.compile(r"^\.(?:link|current)-(\d+)-")


def _step(name: str) -> None:
    """A point between two filesystem operations of the commit (fault injection for the kill tests):
    ``REPLICAFLOW_FAULT_AT`` names a step of :data:`STEPS` (or a finer one, ``link:telemetry``), or
    ``#n`` for the n-th point this process reaches, so a test can stop at every one in turn."""
    at = os.environ.get("REPLICAFLOW_FAULT_AT")
    taken, _STEPS_TAKEN[0] = _STEPS_TAKEN[0], _STEPS_TAKEN[0] + 1
    if at is not None and at in (name, f"#{taken}"):
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
    if not parent.is_dir():
        raise ReplicaflowError(f"{parent}: is a file, so --out {out} cannot be created as a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ReplicaflowError(f"{parent}: cannot write here (permission denied)")
    _refuse_inside_an_output(out)
    return out


def _refuse_inside_an_output(out: Path) -> None:
    """``--out`` must not lie inside another output folder's outputs (``OUT/telemetry/x``) or its ``.replicaflow/``:
    through the link, it would write into that folder's current generation, files its manifest does not list,
    which the next command there refuses to replace."""
    path = out.absolute()
    for folder in path.parents:
        if not (folder / HOME).is_dir():
            continue
        first = path.relative_to(folder).parts[0]
        if first == HOME or (folder / first).is_symlink() and _ours(folder, first):
            raise ReplicaflowError(f"--out {out}: inside {folder / first}, an output replicaflow wrote into {folder}; "
                                   "choose a folder outside it")


def _ours(out: Path, name: str) -> bool:
    """Is ``OUT/name`` absent or the link this module creates?"""
    path = out / name
    if not path.exists() and not path.is_symlink():
        return True
    return path.is_symlink() and os.readlink(path) == f"{HOME}/{CURRENT}/{name}"


def _refuse_a_home_not_ours(out: Path) -> None:
    """``OUT/.replicaflow`` holds only what this module writes: generation folders, ``current`` (a link to one) and
    temporary links. A copy that resolved the links (``cp -rL``, ``rsync -L``, a zip) turns ``current`` into a
    folder: the tool could then no longer tell its outputs from a user's, and the switch would fail half-way."""
    home = out / HOME
    if not home.exists() and not home.is_symlink():
        return
    if not home.is_dir():
        raise ReplicaflowError(f"{home}: not a folder replicaflow wrote; move it away or choose another folder")
    for entry in sorted(home.iterdir()):
        if entry.name == CURRENT:
            if entry.is_symlink() and _SEALED.match(os.readlink(entry)):
                continue
            raise ReplicaflowError(f"{home} was copied with its links resolved ({entry} is not the link replicaflow "
                                   f"wrote), so replicaflow cannot tell its outputs from yours; copy outputs with "
                                   f"`cp -a`, or remove {home}")
        if _TEMP_LINK.match(entry.name) and entry.is_symlink():
            continue
        if _GEN.match(entry.name) and entry.is_dir() and not entry.is_symlink():
            continue
        raise ReplicaflowError(f"{entry}: not written by replicaflow, which keeps only its own outputs in {home}; "
                               f"move it away (or remove {home})")


def _files(path: Path) -> list[str]:
    """Every file under an output, relative to it ('' for an output that is one file), sorted."""
    if not path.is_dir():
        return [""] if path.exists() else []
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if not p.is_dir())


def foreign_entries(out: Path, names: Iterable[str]) -> list[Path]:
    """Entries named like an output that the tool did not write (a user's folder or file)."""
    return [out / n for n in names if not _ours(out, n)]


class Commit:
    """One command's outputs: ``stage`` is where it writes them; :meth:`done` makes them current."""

    def __init__(self, out: Path, writes: Iterable[str], drops: Iterable[str] = (), out_flag: bool = True):
        """``out_flag``: the folder is a command's ``--out`` (False for ``report DIR``, which has none)."""
        self.out = check_out_dir(out)
        _refuse_a_home_not_ours(self.out)
        self.writes, self.drops = set(writes), set(drops)
        foreign = foreign_entries(self.out, sorted(self.writes | self.drops))
        if foreign:
            instead = " or choose another --out" if out_flag else ""
            raise ReplicaflowError(f"{foreign[0]}: not written by replicaflow; move it away{instead} "
                                   "(replicaflow never replaces what it did not write)")
        self.home = self.out / HOME
        self.stage: Path | None = None
        self.created: list[Path] = []  # folders this commit made, removed again if it aborts
        self.sealed: Path | None = None  # the new generation, until current names it
        self.links: list[Path] = []  # OUT/<name> links this commit made, removed again if the switch fails
        self._refuse_files_put_into(sorted(self.writes | self.drops))

    def manifest(self) -> dict[str, list[str]] | None:
        """What the tool wrote into the current generation, per output; None for none (or one written
        before generations carried a manifest, whose files are then all taken as the tool's)."""
        current = self.current()
        if current is None or not (current / MANIFEST).is_file():
            return None
        try:
            parts = json.loads((current / MANIFEST).read_text())
            return {str(k): [str(f) for f in v] for k, v in parts.items()}
        except (OSError, ValueError, AttributeError, TypeError, RecursionError):
            raise ReplicaflowError(f"{current / MANIFEST}: unreadable; remove {self.home} to start over") from None

    def _refuse_files_put_into(self, names: list[str]) -> None:
        """A file in one of the tool's outputs that the tool did not write would be lost by replacing or
        dropping that output: name it instead."""
        current, written = self.current(), self.manifest()
        if current is None or written is None:
            return
        for name in names:
            if (self.out / name).is_symlink() and (current / name).exists():
                known = set(written.get(name, ()))
                extra = [f for f in _files(current / name) if f not in known]
                if extra:
                    raise ReplicaflowError(f"{self.out / name / extra[0]}: not written by replicaflow; move it out of "
                                           f"{self.out / name} first (replicaflow never replaces what it did not write)")

    def refuse_inputs_replaced(self, inputs: dict[str, Path | None]) -> None:
        """An input file (``flag: path``) inside an output this commit replaces or drops would be gone when the
        command ends, while what it printed still names it (``plan --reassignment OUT/plan/reassignment.json -o
        OUT`` evaluated the plan it had generated, then removed it): one sentence, before any work."""
        for flag, path in inputs.items():
            if path is None:
                continue
            real = Path(path).resolve()
            for name in sorted(self.writes | self.drops):
                output = (self.out / name).resolve()
                if real == output or output in real.parents:
                    raise ReplicaflowError(f"{flag} {path}: inside {self.out / name}, which this command replaces; "
                                           "copy it elsewhere first, or choose another --out")

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
        for entry in self.home.iterdir():  # temporary links of a commit killed between two of its steps
            m = _TEMP_LINK.match(entry.name)
            if m and (not _alive(int(m.group(1))) or int(m.group(1)) == os.getpid()):
                entry.unlink(missing_ok=True)
        _step("stage")
        self.stage = self.home / f"gen-{time.time_ns()}-{os.getpid()}.tmp"
        self.stage.mkdir()
        return self.stage

    def done(self) -> None:
        """Carry over, seal, link, switch, clean (see the module docstring)."""
        assert self.stage is not None
        current = self.current()
        written = self.manifest() or {}
        manifest = {p.name: _files(p) for p in self.stage.iterdir() if not p.name.startswith(".")}
        _step("carry")
        if current is not None:
            for entry in current.iterdir():
                if entry.name.startswith("."):
                    continue
                if entry.name not in self.writes | self.drops and not (self.stage / entry.name).exists():
                    if entry.is_dir():
                        shutil.copytree(entry, self.stage / entry.name, copy_function=os.link, symlinks=True)
                    else:
                        os.link(entry, self.stage / entry.name)
                    manifest[entry.name] = written.get(entry.name, _files(entry))
                    _step(f"carry:{entry.name}")
        (self.stage / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        _step("seal")
        sealed = self.stage.with_name(self.stage.name.removesuffix(".tmp"))
        os.replace(self.stage, sealed)
        self.sealed, self.stage = sealed, None
        _step("link")
        names = sorted(p.name for p in sealed.iterdir() if not p.name.startswith("."))
        for name in names:
            target = f"{HOME}/{CURRENT}/{name}"
            link = self.out / name
            if not (link.is_symlink() and os.readlink(link) == target):
                # made in HOME (same file system) so a kill before the rename leaves nothing in OUT itself
                tmp = self.home / f".link-{os.getpid()}-{name}"
                tmp.unlink(missing_ok=True)
                os.symlink(target, tmp)  # relative to OUT once renamed there; dangling until then
                _step(f"link:{name}")
                existed = link.is_symlink()
                os.replace(tmp, link)
                if not existed:
                    self.links.append(link)
        _step("switch")
        tmp = self.home / f".{CURRENT}-{os.getpid()}-"
        tmp.unlink(missing_ok=True)
        try:
            os.symlink(sealed.name, tmp)
            _step("switch:rename")
            os.replace(tmp, self.home / CURRENT)
        except OSError:
            tmp.unlink(missing_ok=True)
            raise
        self.sealed, self.links = None, []
        _step("clean")
        for path, _, staging in self._generations():
            if path != sealed and not staging:
                shutil.rmtree(path, ignore_errors=True)
                _step(f"clean:{path.name}")
        for name in sorted(self.writes | self.drops):
            link = self.out / name
            if link.is_symlink() and not link.exists():
                link.unlink()
                _step(f"clean:{name}")

    @contextmanager
    def staged(self) -> Iterator[Path]:
        """The staging folder; the outputs become current when the block ends without an error. A file
        system that refuses (read-only, no space, not permitted) is one sentence naming the path."""
        try:
            stage = self.begin()
        except OSError as exc:
            self.abort()
            raise self._cannot_write(exc) from None
        except BaseException:  # Ctrl-C or SIGTERM (cli.main) while the staging folder is made
            self.abort()
            raise
        try:
            yield stage
        except ReplicaflowError as exc:  # a sentence naming a staged file names it where it would have been
            self.abort()
            exc.args = (str(exc).replace(str(stage), str(self.out)),)
            raise
        except OSError as exc:
            self.abort()
            if not self._writing(exc, stage):
                raise
            raise self._cannot_write(exc, stage) from None
        except BaseException:
            self.abort()
            raise
        try:
            self.done()
        except OSError as exc:
            self.abort()
            raise self._cannot_write(exc) from None
        except BaseException:  # before the switch: the new generation and its links go; after it, nothing does
            self.abort()
            raise

    @staticmethod
    def _writing(exc: OSError, stage: Path) -> bool:
        """Whether ``exc`` is a refused write of the outputs (a disk full while the simulator writes Parquet was
        pyarrow's traceback), not a failure to read an input, which keeps its own sentence (cli.main)."""
        if exc.filename is None:
            return exc.errno in NO_ROOM
        return str(exc.filename).startswith(str(stage))

    def _cannot_write(self, exc: OSError, stage: Path | None = None) -> ReplicaflowError:
        where = str(exc.filename or self.out)
        if stage is not None:
            where = where.replace(str(stage), str(self.out))
        reason = os.strerror(exc.errno) if exc.errno else exc.strerror or str(exc)
        return ReplicaflowError(f"{where}: cannot write the output ({reason})")

    def abort(self) -> None:
        """Remove the staging folder (or the generation sealed but never made current), the links to it
        made in OUT, this process's temporary links, and the folders this commit created when they hold
        nothing else."""
        for link in self.links:
            if link.is_symlink():
                link.unlink(missing_ok=True)
        self.links = []
        if self.home.is_dir():  # an interrupt between making a temporary link and renaming it
            for entry in self.home.iterdir():
                m = _TEMP_LINK.match(entry.name)
                if m and int(m.group(1)) == os.getpid():
                    entry.unlink(missing_ok=True)
        for folder in (self.stage, self.sealed):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        self.stage = self.sealed = None
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
