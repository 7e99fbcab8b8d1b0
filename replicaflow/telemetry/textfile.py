"""Text files an operator hands us (scenarios, plans, Kafka's tool outputs), read defensively.

One place decides what a readable text file is: bounded in size, UTF-8 with or without a byte-order
mark, and — for outputs captured on Windows, where PowerShell's ``>`` writes UTF-16 — UTF-16 with a
byte-order mark where the caller accepts it. Every refusal is one sentence naming the file (and the
line, for a byte that is not text). JSON in such a file gives each key of an object once (``loads_json``).
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from pathlib import Path

from replicaflow.errors import ReplicaflowError

MAX_BYTES = 256 * 2**20  # the largest input text file read at all
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def read_text(path: Path, what: str, *, utf16: bool = True, max_bytes: int = MAX_BYTES) -> str:
    """The file as text; a missing, unreadable, oversized or undecodable file is one sentence."""
    try:
        if path.stat().st_size > max_bytes:
            raise ReplicaflowError(f"{path}: the {what} is larger than {max_bytes // 2**20} MiB")
        with path.open("rb") as f:  # bounded: a pipe or a device (/dev/zero) has no size to check first
            data = f.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise ReplicaflowError(f"{path}: the {what} is larger than {max_bytes // 2**20} MiB")
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
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ReplicaflowError(f"{path}:{line}: the {what} is not UTF-8 text "
                               f"(byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


class _Duplicated(Exception):
    """A key met twice in one JSON object (``_unique``)."""


def _unique(pairs: list[tuple[str, object]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicated
        out[key] = value
    return out


def loads_json(text: str) -> object:
    """``json.loads``, refusing an object that holds one key twice.

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
    decoder = json.JSONDecoder()

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):
        s, end = s_and_end

        def unique(pairs: list[tuple[str, object]]) -> dict:
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    raise json.JSONDecodeError(f"the object starting on this line has the key {key!r} twice; "
                                               "give each key once", s, end - 1)
                seen.add(key)
            return dict(pairs)
        return json.decoder.JSONObject(s_and_end, strict, scan_once, object_hook, unique, memo)

    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    return decoder.decode(text)
