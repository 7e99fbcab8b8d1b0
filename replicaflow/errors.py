"""The one exception type the CLI turns into a one-sentence error and a non-zero exit."""

from __future__ import annotations

QUOTE_LIMIT = 100


class ReplicaflowError(Exception):
    """Bad input or environment, described in one sentence that names the field, file or line."""


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``value`` as it may appear in an error sentence: single-quoted, at most ``limit`` characters of it.

    Hostile inputs (a 300 MB plan, a line of NUL bytes) must not turn one sentence into megabytes or
    into terminal control sequences: control characters are shown escaped and the rest is cut with
    a note of how much was left out.
    """
    shown, more = _bounded(value if isinstance(value, str) else repr(value), limit)
    return f"'{shown}'{more}"


def show(value: object, limit: int = QUOTE_LIMIT) -> str:
    """A found value in an error sentence: strings as :func:`quote` does, anything else bare
    (``found -5``, ``found [1, 2, 2]``), bounded the same way."""
    if isinstance(value, str):
        return quote(value, limit)
    shown, more = _bounded(repr(value), limit)
    return shown + more


def _bounded(text: str, limit: int) -> tuple[str, str]:
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    more = f"… ({len(text) - limit} more characters)" if len(text) > limit else ""
    return shown, more


def utf8_path(what: str, path: object) -> None:
    """Refuses a path whose name is not UTF-8: Python keeps its bytes as surrogates, which neither Arrow nor the
    JVM's bridge can encode (a traceback, or a run that stopped as if out of memory)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = str(path).encode("utf-8", "replace").decode()
        raise ReplicaflowError(f"{what}: the path {quote(shown)} is not valid UTF-8; rename it, or give another path") \
            from None


def out_of_memory(source: str, brokers: int, replicas: int) -> ReplicaflowError:
    """A scenario the engine ran out of memory on (the replica bound admits scenarios that need more than a
    small machine has): one sentence with its size, raised after the engine's arrays were let go."""
    return ReplicaflowError(f"{source}: the scenario needs more memory than this machine has ({brokers:,} brokers, "
                            f"{replicas:,} replicas); reduce the partitions or brokers")
