"""Kafka's rule for legal topic names (``org.apache.kafka.common.internals.Topic.validate``).

A name outside it could never exist in a real cluster, and one carrying a newline or markup would
forge broker log lines and report labels, so every name that reaches the simulator passes here.
"""

from __future__ import annotations

import re

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def cluster_name_problem(name: str) -> str | None:
    """What a cluster name (a scenario's ``name``, ``--cluster``) is not, or None: it is the ``cluster``
    column of every table and a label in the report and metrics.om, so one line of printable text (an
    empty name made telemetry that ``analyze`` refuses)."""
    if not name.strip():
        return "expected a non-empty cluster name"
    if len(name) > MAX_NAME_LENGTH:
        return f"expected a cluster name of at most {MAX_NAME_LENGTH} characters"
    if not name.isprintable():
        return "expected a cluster name of printable characters (no newline, tab or control character)"
    return None


def topic_name_problem(name: str) -> str | None:
    """What Kafka expects that ``name`` is not (``expected …``), or None when the name is legal."""
    if not name:
        return "expected a non-empty topic name"
    if name in (".", ".."):
        return "expected a topic name other than '.' and '..'"
    if len(name) > MAX_NAME_LENGTH:
        return f"expected a topic name of at most {MAX_NAME_LENGTH} characters"
    if not _LEGAL.fullmatch(name):
        return "expected a topic name of ASCII letters, digits, '.', '_' and '-' (Kafka's legal characters)"
    return None
