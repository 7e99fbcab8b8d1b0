"""Text files an operator hands us (scenarios, plans, Kafka's tool outputs), read defensively.

One place decides what a readable text file is: bounded in size, UTF-8 with or without a byte-order
mark, and — for outputs captured on Windows, where PowerShell's ``>`` writes UTF-16 — UTF-16 with a
byte-order mark, or ASCII text in UTF-16 without one, where the caller accepts it. Every refusal is one
sentence naming the file (and the line, for a byte that is not text). JSON in such a file gives each key of an object once (``loads_json``).
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import os
import re
import stat
import sys
from pathlib import Path

from replicaflow.errors import ReplicaflowError

MAX_BYTES = 256 * 2**20  # the largest input text file read at all
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def read_text(path: Path, what: str, *, utf16: bool = True, max_bytes: int = MAX_BYTES) -> str:
    """The file as text; a missing, unreadable, oversized or undecodable file is one sentence."""
    try:
        if path.stat().st_size > max_bytes:
            raise ReplicaflowError(f"{path}: the {what} is larger than {max_bytes // 2**20} MiB")
        # a named pipe nobody writes to blocks open() forever: opened without waiting, it reads as empty;
        # a pipe with a writer (bash's <(...)) is then read to its end as usual
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as f:  # bounded: a pipe or a device (/dev/zero) has no size to check first
            data = f.read(max_bytes + 1)
            pipe = stat.S_ISFIFO(os.fstat(f.fileno()).st_mode)
        if len(data) > max_bytes:
            raise ReplicaflowError(f"{path}: the {what} is larger than {max_bytes // 2**20} MiB")
        if pipe and not data:
            raise ReplicaflowError(f"{path}: the {what} is a pipe that gave no data (no program writes to it)")
    except FileNotFoundError:
        raise ReplicaflowError(f"{path}: {what} does not exist") from None
    except IsADirectoryError:
        raise ReplicaflowError(f"{path}: expected a {what}, found a directory") from None
    except OSError as exc:
        raise ReplicaflowError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    if data.startswith(_UTF16_BOMS):
        if not utf16:
            raise ReplicaflowError(f"{path}: the {what} is UTF-16; save it as UTF-8")
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise ReplicaflowError(f"{path}: the {what} is not valid UTF-16 (at byte offset {exc.start})") from None
    wide = _utf16_without_bom(data)
    if wide and not utf16:
        raise ReplicaflowError(f"{path}: the {what} is {wide} without a byte-order mark (a NUL byte beside every "
                               "character); save it as UTF-8")
    if wide:  # ASCII two bytes a character, as the log reader takes it (docs/logs.md)
        try:
            return data.decode(wide.lower())
        except UnicodeDecodeError as exc:
            raise ReplicaflowError(f"{path}: the {what} is not valid {wide} (at byte offset {exc.start})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ReplicaflowError(f"{path}:{line}: the {what} is not UTF-8 text "
                               f"(byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def _utf16_without_bom(data: bytes) -> str | None:
    """``UTF-16LE``/``UTF-16BE`` when the first bytes are ASCII text written two bytes a character (every odd or
    every even byte NUL), which UTF-8 would read as text with a NUL between characters."""
    head = data[:4096]
    if len(head) < 4:
        return None
    for order, zeros, chars in (("UTF-16LE", head[1::2], head[0::2]), ("UTF-16BE", head[0::2], head[1::2])):
        if zeros.count(0) == len(zeros) and chars.count(0) == 0:
            return order
    return None


def read_json(path: Path, what: str, *, utf16: bool = True, max_bytes: int = MAX_BYTES) -> object:
    """The file as JSON (``read_text``, then ``loads_json``); invalid JSON is one sentence naming its line."""
    text = read_text(path, what, utf16=utf16, max_bytes=max_bytes)
    try:
        return loads_json(text)
    except json.JSONDecodeError as exc:
        raise ReplicaflowError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise ReplicaflowError(f"{path}: not valid JSON (nested too deeply)") from None


class _Duplicated(Exception):
    """A key met twice in one JSON object (``_unique``)."""


def _repeated_key(pairs: list[tuple[str, object]]) -> str | None:
    """The first key of a JSON object's pairs that an earlier pair already holds."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    return None


def _unique(pairs: list[tuple[str, object]]) -> dict:
    if _repeated_key(pairs) is not None:
        raise _Duplicated
    return dict(pairs)


def _located_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):
    """``json.decoder.JSONObject`` that refuses a repeated key at the object's opening brace (``s_and_end``:
    the document and the index just past that brace)."""
    s, end = s_and_end

    def unique(pairs: list[tuple[str, object]]) -> dict:
        key = _repeated_key(pairs)
        if key is not None:
            raise json.JSONDecodeError(f"the object starting on this line has the key {key!r} twice; "
                                       "give each key once", s, end - 1)
        return dict(pairs)
    return json.decoder.JSONObject(s_and_end, strict, scan_once, object_hook, unique, memo)


def _long_integer(text: str, exc: ValueError) -> json.JSONDecodeError:
    """Python converts at most ``sys.get_int_max_str_digits()`` digits to an int (conversion is quadratic), and
    ``json`` lets that ``ValueError`` out bare: as a decode error at the first integer that long outside a string."""
    limit = sys.get_int_max_str_digits()
    for m in re.finditer(rf'"(?:[^"\\]|\\.)*"|-?[0-9]{{{limit + 1},}}', text):
        if not m.group().startswith('"'):
            return json.JSONDecodeError(f"a number of {len(m.group().lstrip('-')):,} digits; at most {limit:,}",
                                        text, m.start())
    raise exc


def loads_json(text: str) -> object:
    """``json.loads``, refusing an object that holds one key twice and an integer too long to convert.

    Python's parser keeps the last value silently, and so does the Jackson parser of Kafka's tools; either way
    one of the two values an operator wrote is dropped unseen, as the YAML reader refuses too (sim/scenario/
    yamldoc.py). The refusal is a ``json.JSONDecodeError`` at the object's opening brace, naming the key, so
    each caller reports it as it reports any invalid JSON (file and line). Parsing runs at the C scanner's speed;
    only a document found to hold a duplicate is parsed again, by the Python scanner, to find where.
    """
    try:
        return json.loads(text, object_pairs_hook=_unique)
    except _Duplicated:
        pass
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError) or "integer string conversion" not in str(exc):
            raise
        raise _long_integer(text, exc) from None
    decoder = json.JSONDecoder()
    decoder.parse_object = _located_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    return decoder.decode(text)
