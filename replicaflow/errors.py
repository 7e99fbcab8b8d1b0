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
    text = value if isinstance(value, str) else repr(value)
    shown = text[:limit]
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in shown)
    more = f"… ({len(text) - limit} more characters)" if len(text) > limit else ""
    return f"'{shown}'{more}"
