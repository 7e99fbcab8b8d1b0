"""What a log file is before Spark reads it: the paths ``--logs`` names, and the checks that refuse a file Spark
could not read as broker log text, in one sentence naming it, before Spark starts (docs/logs.md, "Reading real
logs"): one over 2 GiB, a cut or corrupt ``.gz``, an archive or a compression Spark would read as text, a link to
nothing, a pipe or a device."""

from __future__ import annotations

import bz2
import functools
import glob
import gzip
import os
import re
import zlib
from collections.abc import Iterable
from pathlib import Path

from replicaflow.errors import ReplicaflowError, utf8_path
from replicaflow.model.units import INT32_MAX

MAX_LOG_FILE_BYTES = INT32_MAX  # Java's largest array: one file's bytes in Spark's wholetext
_REMOTE = re.compile(r"^[A-Za-z][\w+.-]*://")  # a URI Spark reads (hdfs://, s3a://), not a local path


def resolve_paths(paths: str | Path | Iterable[str | Path]) -> list[str]:
    """Local files, directories (recursively) and globs (``**`` allowed); remote URIs pass through. A
    ``kafkaServer.out`` beside a ``server.log`` that is read is left out (``_without_console_copies``). A file
    reached twice (a ``current`` link beside the versioned folder it names) is read once, under the first name it
    was reached by: read twice, every event counted twice. A directory or a ``**`` follows no link below it, so a
    link back up (``up -> ..``) cannot loop.

    Raises ReplicaflowError naming the first path or glob that matches no file.
    """
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    if not items:
        raise ReplicaflowError("--logs: no log file, directory or glob was given")
    out: list[str] = []
    for item in items:
        text = str(item)
        if _REMOTE.match(text) and not text.startswith("file:"):
            out.append(text)
            continue
        local = re.sub(r"^file:(//)?", "", text)
        literal = Path(local).expanduser()  # an existing path is itself, even with `[1]` in its name
        candidates = _glob(local) if glob.has_magic(local) and not literal.exists() else [literal]
        found: list[Path] = []
        for c in candidates:
            if c.is_dir():
                inside = sorted(f for f in c.rglob("*") if not any(p.startswith(".") for p in f.relative_to(c).parts))
                found += [f for f in inside if _readable(f, str(f))]
            elif _readable(c, text if c == literal else str(c)):
                found.append(c)
        if not found:
            raise ReplicaflowError(f"--logs: '{text}' matches no file")
        for f in found:
            _check_name(f)
            _check_file(f)
        out += [os.path.abspath(f) for f in found]  # not resolve(): a log behind a link keeps the name given
    return _without_console_copies(_once(out))


def _readable(path: Path, named: str) -> bool:
    """Whether ``path`` is a log file to read: a directory is not (its files are walked), a regular file (or a link to
    one) is. A pipe, device or socket, read whole, never ends, and a link to nothing would leave its broker's events
    out without a word: each refuses the run, named, whether given or found in a folder or by a glob."""
    if path.is_dir():
        return False
    if path.is_file():
        return True
    if path.is_symlink() and not path.exists():
        raise ReplicaflowError(f"--logs: {named} is a link to a missing file ({os.readlink(path)}); remove the link "
                               "or name the files to read")
    if path.exists():
        raise ReplicaflowError(f"--logs: {named} is not a regular file (a device, pipe or socket); copy the "
                               "log into a file")
    return False


def _glob(pattern: str) -> list[Path]:
    """The matches of ``pattern``, whose ``**`` follows no link to a directory (``glob.glob`` follows every one:
    a link loop repeated a file 41 times, two of them never ended); a name starting with '.' only where the
    pattern's part does (as ``glob.glob``)."""
    parts = Path(pattern).parts
    first = next(i for i, p in enumerate(parts) if glob.has_magic(p))
    root, rest = Path(*parts[:first]) if first else Path(), parts[first:]
    hidden_ok = any(p.startswith(".") for p in rest)
    return sorted(m for m in root.glob(str(Path(*rest)))
                  if hidden_ok or not any(p.startswith(".") for p in m.relative_to(root).parts))


def _once(paths: list[str]) -> list[str]:
    """``paths`` less each later path to a file already in them (the same device and inode)."""
    seen: set[tuple[int, int]] = set()
    out = []
    for p in dict.fromkeys(paths):
        if not _REMOTE.match(p):
            st = os.stat(p)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
        out.append(p)
    return out


# kafka-server-start.sh -daemon sends the JVM's stdout to LOG_DIR/kafkaServer.out (kafka-run-class.sh), and
# log4j's root logger writes every server.log record to stdout too: the same lines twice
_CONSOLE_COPY = re.compile(r"^kafkaServer\.out(?:\.\d+)?(?:\.gz)?$")
_SERVER_LOG = re.compile(r"^server\.log(?:\.[\w.-]+)?$")


def _without_console_copies(paths: list[str]) -> list[str]:
    """The files to read, less each ``kafkaServer.out`` beside a ``server.log`` that is read: read both, every
    event of the broker's server.log counted twice (its meters, its produce rejections)."""
    with_server_log = {os.path.dirname(p) for p in paths if _SERVER_LOG.match(os.path.basename(p))}
    return [p for p in paths if not (_CONSOLE_COPY.match(os.path.basename(p)) and os.path.dirname(p) in with_server_log)]


def _check_name(path: Path) -> None:
    """A name Spark cannot hand to Hadoop: not UTF-8 (``utf8_path``), or with a ':' (a Hadoop path reads it as a URI
    scheme, and the read failed with a cut-off Java message)."""
    text = os.path.abspath(path)
    utf8_path("--logs", text)
    if ":" in text:
        raise ReplicaflowError(f"--logs: {text} has a ':' in its path, which Spark (Hadoop) cannot read by name; "
                               "rename or copy the file")


def _check_file(path: Path) -> None:
    """One file's checks before Spark starts (its size, a ``.gz``'s stream, its format), from one ``stat``; the
    ones that read the file are cached by its size and time: ``analyze`` resolves its log paths more than once."""
    stat = path.stat()
    _check_size(path, stat.st_size)
    _check_gzip(path, stat.st_size, stat.st_mtime_ns)
    problem = _format_problem(str(path), stat.st_size, stat.st_mtime_ns)
    if problem:
        raise ReplicaflowError(f"--logs: {path} {problem}")


def _check_gzip(path: Path, size: int, mtime_ns: int) -> None:
    """A cut or corrupt ``.gz`` failed the run once Spark had read and rebuilt everything before it, as a
    Java error (``FAILED_READ_FILE``). Every ``.gz`` is decompressed once here instead, before Spark starts
    (zlib; the output is dropped), and the sentence names the file and what is wrong with it."""
    if path.name.endswith(".gz"):
        problem = _gzip_problem(str(path), size, mtime_ns)
        if problem:
            raise ReplicaflowError(f"--logs: {path} is a cut or corrupt .gz file ({problem}); `gzip -t` checks a "
                                   "file, and `zcat FILE > FILE.log` keeps the part that reads")


@functools.lru_cache(maxsize=4096)
def _gzip_problem(path: str, size: int, mtime_ns: int) -> str | None:  # noqa: ARG001 -- size and mtime key the cache
    """Why the gzip file at ``path`` does not decompress whole (every member, RFC 1952), or None."""
    d = zlib.decompressobj(wbits=31)
    try:
        with open(path, "rb") as f:
            while data := f.read(1 << 20):
                while data:
                    if d.eof:  # the next member (`cat a.gz b.gz` is a valid gzip file)
                        d = zlib.decompressobj(wbits=31)
                    d.decompress(data, 1 << 24)  # bounded output: a small file can expand a thousandfold
                    data = d.unconsumed_tail or d.unused_data
    except zlib.error as exc:
        return str(exc).removeprefix("Error -3 while decompressing data: ")
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None if d.eof else "its stream ends before its last member does"


def _check_size(path: Path, size: int) -> None:
    """A file is read whole into one Java array, so one over 2 GiB cannot be read at all: the JVM died
    reading it. Its size is known now, before Spark starts."""
    if size > MAX_LOG_FILE_BYTES:
        raise ReplicaflowError(f"--logs: {path} is {size / 2**30:.1f} GiB; a log file is read whole, so at most "
                               f"2 GiB (split it, e.g. split -C 1G)")


# suffixes of the codecs Hadoop picks by name, whose text size a file does not say (gzip's trailer does)
_COMPRESSED = (".bz2", ".zst", ".lz4", ".snappy", ".deflate", ".br", ".xz")
# What rotation adds to a log file's name, a compression suffix after it: log4j's DailyRollingFileAppender
# (`server.log.2021-03-04-05`, `.2021-03-04`), RollingFileAppender (`server.log.1`), logrotate's dateext
# (`server.log-20210304`) and numbered copies (`server.log.1.gz`). Without it, the name of the file a broker writes.
ROTATION_SUFFIX = (r"(?:\.\d{4}-\d{2}-\d{2}(?:-\d{2})?|\.\d{1,4}|-(?:19|20)\d{6}(?:\d{2})?)?"
                   r"(?:" + "|".join(re.escape(s) for s in (".gz", *_COMPRESSED)) + ")?$")


def text_bytes(files: Iterable[str]) -> int | None:
    """The bytes of log text ``files`` (``resolve_paths``) hold, known before Spark starts: a plain file's
    size, a ``.gz`` file's own count of what it expands to (its last four bytes, RFC 1952's ISIZE: modulo
    4 GiB and of its last member, so never less than the file itself); None when a file is remote or in
    another compressed format. It decides the JVM's compilers (``session.SHORT_RUN_LOG_BYTES``)."""
    total = 0
    for name in files:
        path = Path(name)
        if _REMOTE.match(name) or name.lower().endswith(_COMPRESSED) or not path.is_file():
            return None
        size = path.stat().st_size
        if name.lower().endswith(".gz") and size >= 18:  # header 10 + trailer 8
            with path.open("rb") as f:
                f.seek(-4, os.SEEK_END)
                size = max(size, int.from_bytes(f.read(4), "little"))
        total += size
    return total


# What a file starts with where it is no text Spark can read: (magic bytes, what the file is, the command that
# makes a log of it). Spark picks a codec by the file's name, and Hadoop has none for these: it reads their bytes.
_NOT_TEXT = (
    (b"PK\x03\x04", "a zip archive", "extract it (`unzip {f} -d DIR`) and give DIR"),
    (b"PK\x05\x06", "a zip archive", "extract it (`unzip {f} -d DIR`) and give DIR"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "extract it (`7z x {f} -oDIR`) and give DIR"),
    (b"Rar!\x1a\x07", "a RAR archive", "extract it (`unrar x {f} DIR/`) and give DIR"),
    (b"\xfd7zXZ\x00", "xz-compressed", "decompress it (`xz -dk {f}`) and give what that writes"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "decompress it (`zstd -d {f}`) and give what that writes"),
    (b"\x04\x22\x4d\x18", "lz4-compressed", "decompress it (`lz4 -d {f}`) and give what that writes"),
)
_TAR_BLOCK = 512  # a tar header block: `ustar` at offset 257 (POSIX and GNU)


@functools.lru_cache(maxsize=4096)
def _format_problem(path: str, size: int, mtime_ns: int) -> str | None:  # noqa: ARG001 -- size and mtime key the cache
    """What makes the file at ``path`` no text Spark can read, as the end of a sentence naming it, or None: an
    archive (a tar's members, read as one file, run together behind their headers: one broker's stack trace under
    another's record), a compression Hadoop has no codec for, or a gzip or bzip2 file not named so (Spark picks
    the codec by the name). Its first bytes tell, and for gzip and bzip2 the first bytes it expands to."""
    with open(path, "rb") as f:
        head = raw = f.read(_TAR_BLOCK)
    for magic, what, how in _NOT_TEXT:
        if head.startswith(magic):
            return f"is {what}, which Spark cannot read as a log: {how.format(f=path)}"
    opener = gzip.open if head.startswith(b"\x1f\x8b") else bz2.open if re.match(rb"BZh[1-9]1AY&SY", head) else None
    if opener is not None:
        try:
            with opener(path, "rb") as f:
                head = f.read(_TAR_BLOCK)
        except (OSError, EOFError, zlib.error):
            return None  # _check_gzip names a cut .gz; Spark a cut .bz2
    if head[257:262] == b"ustar":
        return (f"is a tar archive: read as one file, its members' lines would run together; extract it "
                f"(`mkdir DIR && tar xf {path} -C DIR`) and give DIR")
    codec = {gzip.open: ("gzip", ".gz"), bz2.open: ("bzip2", ".bz2")}.get(opener)
    if codec and not path.endswith(codec[1]):
        return (f"is {codec[0]}-compressed but its name does not end in {codec[1]}: Spark picks the codec by the "
                f"name and would read the compressed bytes as text; give it a name ending in {codec[1]}")
    named = next((c for c in _NAMED_CODECS if path.lower().endswith(c[0])), None)
    if named and size and not named[2](raw):
        return (f"is named like a {named[1]} file but its bytes are not {named[1]}-compressed: Spark picks the codec "
                f"by the name and would drop or fail on its lines; give it a name without {named[0]}")
    return None


def _zlib_header(head: bytes) -> bool:
    """RFC 1950's two header bytes (deflate, a 32 KiB window at most, the check bits)."""
    return len(head) >= 2 and head[0] & 0x0F == 8 and head[0] >> 4 <= 7 and (head[0] << 8 | head[1]) % 31 == 0


# the codecs Hadoop picks by a file's name that a file's first bytes can confirm: (suffix, codec, check)
_NAMED_CODECS = (
    (".bz2", "bzip2", lambda head: re.match(rb"BZh[1-9]", head) is not None),
    (".deflate", "deflate", _zlib_header),
    (".zst", "zstd", lambda head: head.startswith(b"\x28\xb5\x2f\xfd")),
)
