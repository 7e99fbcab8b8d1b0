"""Scenario and plan files read defensively: UTF-8 only, bounded YAML, and a line for every field.

PyYAML builds Python objects without saying where they came from, accepts duplicate keys (the
last one wins, silently), expands aliases without bound (a "billion laughs" file takes minutes
and gigabytes) and recurses once per nesting level. Here the node graph is composed first and
walked without recursion: the walk records the line of each field path, refuses duplicate keys,
and counts nodes as if aliases were expanded, so a hostile file is refused in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from replicaflow.errors import ReplicaflowError, quote
from replicaflow.telemetry import textfile

MAX_DEPTH = 64  # nesting levels; a scenario needs about 6
MAX_NODES = 1_000_000  # values after alias expansion; a 50,000-move inline plan is about 250,000
MAX_BYTES = textfile.MAX_BYTES  # the largest scenario or plan file read at all
MAX_NUMBER_CHARS = 100  # int64 has 19 digits; Python refuses to convert more than 4300


@dataclass(frozen=True)
class Document:
    """A loaded YAML (or JSON) document: the data, the line of each field path, and the source text of
    scalars that YAML would have turned into numbers (``version: 3.10`` is the release 3.10, not 3.1)."""

    data: Any
    lines: dict[tuple, int]
    raw_numbers: dict[tuple, str]


def read_text(path: Path, what: str) -> str:
    """The file as UTF-8 text (a scenario or plan is ours to define: no UTF-16), bounded in size."""
    return textfile.read_text(path, what, utf16=False, max_bytes=MAX_BYTES)


def load(text: str, where: str) -> Document:
    """Compose, check and construct one YAML document; ``where`` names the file in error sentences."""
    loader = None
    try:
        loader = yaml.SafeLoader(text)  # the reader refuses control characters here
        node = loader.get_single_node()
        if node is None:
            return Document(None, {}, {})
        lines, raw_numbers = _walk(node, where)
        return Document(loader.construct_document(node), lines, raw_numbers)
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise ReplicaflowError(f"{where}:{line}: invalid YAML (control character #x{exc.character:02x} "
                               "is not allowed)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise ReplicaflowError(f"{where}{line}: invalid YAML ({problem})") from None
    except RecursionError:
        raise ReplicaflowError(f"{where}: YAML nested deeper than {MAX_DEPTH} levels") from None
    except (ValueError, OverflowError) as exc:  # a value the constructor cannot convert (e.g. a huge date)
        raise _unconvertible(node, where) or ReplicaflowError(
            f"{where}: a YAML value cannot be read ({quote(str(exc))})") from None
    finally:
        if loader is not None:
            loader.dispose()


def field_path(loc: tuple) -> str:
    """``("events", 2, "slow_network", "for")`` → ``events[2].slow_network.for``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _unconvertible(root: yaml.Node, where: str) -> ReplicaflowError | None:
    """The first scalar YAML types but cannot convert (``start: 2026-01-01T00:00:00+25:00``, a 30 February),
    named by its line and field rather than by Python's words for the failure."""
    constructor = yaml.constructor.SafeConstructor()
    stack: list[tuple[yaml.Node, tuple]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            try:
                constructor.construct_object(node)
            except (ValueError, OverflowError):
                kind = {"timestamp": "date and time"}.get(node.tag.rsplit(":", 1)[-1], node.tag.rsplit(":", 1)[-1])
                return ReplicaflowError(f"{where}:{node.start_mark.line + 1}: {field_path(path) or 'the document'}: "
                                        f"{quote(node.value)} is no valid {kind}")
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, path + (i,)) for i, item in reversed(list(enumerate(node.value))))
        elif isinstance(node, yaml.MappingNode):
            stack.extend((value, path + (key.value,) if isinstance(key, yaml.ScalarNode) else path)
                         for key, value in reversed(node.value))
    return None


_NUMBER_TAGS = ("tag:yaml.org,2002:float", "tag:yaml.org,2002:int")
_KEY_TAGS = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:merge")  # a field name, or `<<: *anchor`


def _walk(root: yaml.Node, where: str) -> tuple[dict[tuple, int], dict[tuple, str]]:
    """Depth-first over the node graph with an explicit stack; aliases are visited each time they
    occur, so ``MAX_NODES`` bounds the expanded size."""
    lines: dict[tuple, int] = {(): root.start_mark.line + 1}
    raw_numbers: dict[tuple, str] = {}
    stack: list[tuple[yaml.Node, tuple]] = [(root, ())]
    visited = 0
    while stack:
        node, path = stack.pop()
        visited += 1
        if visited > MAX_NODES:
            raise ReplicaflowError(f"{where}: the YAML expands to more than {MAX_NODES:,} values "
                                   "(aliases repeated too often?)")
        if len(path) > MAX_DEPTH:
            raise ReplicaflowError(f"{where}:{node.start_mark.line + 1}: YAML nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, yaml.ScalarNode):
            if node.tag in _NUMBER_TAGS and not node.style:
                if len(node.value) > MAX_NUMBER_CHARS:
                    raise ReplicaflowError(f"{where}:{node.start_mark.line + 1}: a number of {len(node.value):,} "
                                           f"characters (at most {MAX_NUMBER_CHARS})")
                raw_numbers[path] = node.value
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines.setdefault(path + (i,), item.start_mark.line + 1)
                stack.append((item, path + (i,)))
        elif isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, value in node.value:
                if not isinstance(key, yaml.ScalarNode):
                    stack.append((value, path))
                    continue
                line = key.start_mark.line + 1
                if key.tag not in _KEY_TAGS:  # pydantic named it '[1]: expected Keys should be strings' at line 1
                    raise ReplicaflowError(f"{where}:{line}: expected a field name as key, found {quote(key.value)}, "
                                           f"which YAML reads as {key.tag.rsplit(':', 1)[-1]}")
                if key.value in seen and key.value != "<<":
                    raise ReplicaflowError(f"{where}:{line}: duplicate key {quote(key.value)} "
                                           f"(first at line {seen[key.value]})")
                seen[key.value] = line
                lines.setdefault(path + (key.value,), line)
                stack.append((value, path + (key.value,)))
    return lines, raw_numbers
