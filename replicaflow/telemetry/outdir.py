"""One atomic commit per command: every output of a run appears at once, or none does (docs/outputs.md).

A command writes everything into a staging folder ``OUT/.replicaflow/staging-<pid>-<rand>/``. The
commit renames that folder into a generation ``OUT/.replicaflow/gen-<pid>-<rand>/`` and swaps one
symbolic link, ``OUT/.replicaflow/current``, onto it with ``os.replace`` -- the single atomic step.
The outputs a reader opens, ``OUT/telemetry``, ``OUT/analysis``, ``OUT/report.html`` ..., are
symbolic links through ``current``, so a reader sees the whole previous generation or the whole
new one and never a missing folder. Outputs of other commands found in the previous generation are
carried into the new one as hard links (``analyze`` keeps the telemetry beside it).

Ownership: each generation holds ``_manifest.json``, every file the tool wrote, per output. A path
in the way that the tool did not write -- a real ``OUT/logs/`` folder, a file a user put into
``OUT/telemetry/`` -- is an error naming it before any work; other files in ``OUT`` are never
touched. Staging folders of killed runs (their pid gone) and unreferenced generations are removed
by the next command.

``REPLICAFLOW_FAULT_AT`` (a step name or its index) makes the commit exit with status 137 at that
step, so tests can kill a run between any two filesystem operations of the commit.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from replicaflow.errors import ReplicaflowError

STATE = ".replicaflow"
CURRENT = "current"
MANIFEST = "_manifest.json"
FAULT_ENV = "REPLICAFLOW_FAULT_AT"

SIMULATE = ("telemetry", "truth", "logs")
ANALYZE = ("analysis",)
REPORT = ("report.html", "metrics.om", "summary.json")


class _Faults:
    """Deterministic kill points: the n-th step (or the step named) of this process exits with 137."""

    def __init__(self) -> None:
        self.count = 0

    def step(self, name: str) -> None:
        at = os.environ.get(FAULT_ENV)
        index, self.count = self.count, self.count + 1
        if at is not None and at in (name, str(index)):
            os._exit(137)


FAULTS = _Faults()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner_pid(name: str) -> int | None:
    """The pid in ``staging-<pid>-<rand>`` or ``current.tmp-<pid>``; None for other names."""
    for prefix in ("staging-", "current.tmp-"):
        if name.startswith(prefix):
            head = name[len(prefix):].split("-", 1)[0]
            return int(head) if head.isdigit() else None
    return None


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link (no bytes copied); a copy where the file system has none."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _files(path: Path) -> list[str]:
    """Every file under ``path`` (or ``path`` itself), relative, sorted."""
    if not path.is_dir():
        return [""] if path.exists() else []
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if not p.is_dir())


def _first_file(path: Path) -> Path:
    """The first file under a folder in the way (the folder itself when empty), for the error sentence."""
    found = _files(path) if path.is_dir() and not path.is_symlink() else [""]
    return path / found[0] if found and found[0] else path


class Output:
    """The staging folder of one command's outputs inside ``out``, and its commit.

    ``writes`` are the outputs the command produces (``telemetry``, ``report.html`` ...);
    ``drops`` are outputs it owns but did not produce this time (``logs`` of a ``simulate``
    without ``--logs``): the previous ones are not carried over, so the set stays consistent.
    """

    def __init__(self, out: Path, writes: Iterable[str], drops: Iterable[str] = ()):
        self.out = Path(out)
        self.writes = tuple(writes)
        self.drops = tuple(n for n in drops if n not in self.writes)
        self.state = self.out / STATE
        self.path: Path | None = None

    # --- before any work ---------------------------------------------------------------------------
    def open(self) -> Path:
        """Check ``out`` and create the staging folder; every refusal is one sentence naming the path."""
        out = self.out
        if out.exists() and not out.is_dir():
            raise ReplicaflowError(f"{out}: is a file, not a directory; choose another --out")
        try:
            out.mkdir(parents=True, exist_ok=True)
            if self.state.is_symlink() or (self.state.exists() and not self.state.is_dir()):
                raise ReplicaflowError(f"{self.state}: not written by replicaflow and in the way of its "
                                       "bookkeeping folder; move it away or choose another --out")
            self.state.mkdir(exist_ok=True)
            with self._locked():
                self._collect()
                self._check_foreign()
                staging = self.state / f"staging-{os.getpid()}-{secrets.token_hex(4)}"
                staging.mkdir()
        except OSError as exc:
            where = exc.filename or out
            raise ReplicaflowError(f"{where}: cannot write the output ({exc.strerror or exc})") from None
        self.path = staging
        return staging

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One commit or collection at a time in ``out`` (two runs into one folder do not interleave)."""
        with open(self.state / "lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def current(self) -> Path | None:
        """The committed generation, or None before the first commit."""
        link = self.state / CURRENT
        if not link.is_symlink():
            return None
        gen = self.state / os.readlink(link)
        return gen if gen.is_dir() else None

    def manifest(self) -> dict[str, list[str]]:
        gen = self.current()
        if gen is None:
            return {}
        try:
            parts = json.loads((gen / MANIFEST).read_text())["parts"]
        except (OSError, ValueError, KeyError, TypeError):
            raise ReplicaflowError(f"{gen / MANIFEST}: unreadable; remove {self.state} and run again") from None
        return {str(k): [str(f) for f in v] for k, v in parts.items()}

    def _ours(self, name: str) -> bool:
        """``out/name`` is the tool's link through ``current``."""
        entry = self.out / name
        return entry.is_symlink() and os.readlink(entry) == f"{STATE}/{CURRENT}/{name}"

    def _collect(self) -> None:
        """Remove what killed runs left: staging folders and link temporaries of dead pids, generations
        no longer current, and the tool's links to outputs the current generation does not hold."""
        gen = self.current()
        for entry in sorted(self.state.iterdir()):
            pid = _owner_pid(entry.name)
            stale = (pid is not None and not _pid_alive(pid)) or (entry.name.startswith("gen-") and entry != gen)
            if not stale:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        for name in {*SIMULATE, *ANALYZE, *REPORT}:
            if self._ours(name) and not (self.out / name).exists():
                (self.out / name).unlink()

    def _check_foreign(self) -> None:
        """A path in the way of an output that the tool did not write is an error naming it."""
        owned = self.manifest()
        gen = self.current()
        for name in self.writes:
            entry = self.out / name
            if self._ours(name):
                if gen is None or not (gen / name).exists():
                    continue
                known = set(owned.get(name, ()))
                extra = [f for f in _files(gen / name) if f not in known]
                if extra:
                    raise ReplicaflowError(f"{entry / extra[0]}: not written by replicaflow and in the way of "
                                           f"the new {name}; move it out of {entry} first")
            elif entry.is_symlink() or entry.exists():
                raise ReplicaflowError(f"{_first_file(entry)}: not written by replicaflow and in the way of "
                                       f"{name}; move it away or choose another --out")

    # --- the commit --------------------------------------------------------------------------------
    def commit(self) -> None:
        """Carry the other outputs over, write the manifest, rename, link, swap ``current``, collect."""
        staging = self._staging()
        FAULTS.step("staged")
        with self._locked():
            previous = self.current()
            owned = self.manifest()
            parts: dict[str, list[str]] = {}
            for name in self.writes:
                if (staging / name).exists():
                    parts[name] = _files(staging / name)
            if previous is not None:
                for name in sorted(owned):
                    if name in parts or name in self.drops or name in self.writes:
                        continue
                    src = previous / name
                    if src.is_dir():
                        shutil.copytree(src, staging / name, symlinks=True, copy_function=_link_or_copy)
                    elif src.exists():
                        _link_or_copy(str(src), str(staging / name))
                    else:
                        continue
                    parts[name] = owned[name]
                    FAULTS.step(f"carry:{name}")
            (staging / MANIFEST).write_text(json.dumps({"version": 1, "parts": parts}, indent=1, sort_keys=True))
            FAULTS.step("manifest")
            gen = self.state / ("gen-" + staging.name.removeprefix("staging-"))
            os.replace(staging, gen)
            FAULTS.step("rename")
            for name in sorted(parts):
                if not self._ours(name):
                    self._symlink(f"{STATE}/{CURRENT}/{name}", self.out / name)
                    FAULTS.step(f"link:{name}")
            self._symlink(gen.name, self.state / CURRENT)
            FAULTS.step("swap")
            for name in sorted(set(owned) - set(parts)):
                if self._ours(name):
                    (self.out / name).unlink()
                    FAULTS.step(f"unlink:{name}")
            if previous is not None and previous != gen:
                shutil.rmtree(previous, ignore_errors=True)
                FAULTS.step("collect")
        self.path = None

    def _symlink(self, target: str, at: Path) -> None:
        """Create or replace the link ``at`` atomically: a temporary link renamed over it."""
        tmp = self.state / f"current.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        os.symlink(target, tmp)
        FAULTS.step(f"tmp-link:{at.name}")
        os.replace(tmp, at)

    def abort(self) -> None:
        """Remove the staging folder: the previous generation stays as it was."""
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path = None

    def _staging(self) -> Path:
        if self.path is None:
            raise RuntimeError("Output.commit before Output.open")
        return self.path


@contextlib.contextmanager
def output(out: Path, writes: Iterable[str], drops: Iterable[str] = ()) -> Iterator[Path]:
    """Yield the staging folder of ``writes`` in ``out``; committed on success, removed on any error.

    ``out`` is checked (a file, unwritable, a foreign path in the way) before the body runs, so a
    command refuses before its expensive work.
    """
    target = Output(out, writes, drops)
    staging = target.open()
    try:
        yield staging
    except BaseException:
        target.abort()
        raise
    try:
        target.commit()
    except OSError as exc:
        target.abort()
        raise ReplicaflowError(f"{exc.filename or out}: cannot write the output ({exc.strerror or exc})") from None
