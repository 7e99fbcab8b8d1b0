"""Field types of the scenario models: human units in, normalized values out (docs/scenarios.md).

``*_ms`` ints, ``*_bps`` floats and ``*_bytes`` ints, each converted by the one parser of
``model/units.py``; topic names pass Kafka's own rule (``model/topic.py``). A converter raises
ValueError with the sentence the user sees after the field path.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from replicaflow.errors import show
from replicaflow.model.configs import MAX_MIN_ISR
from replicaflow.model.topic import cluster_name_problem, topic_name_problem
from replicaflow.model.units import INT32_MAX, INT64_MAX, parse_bytes, parse_duration_ms, parse_rate_bps

DEFAULT_START_MS = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1000)
# The last instant Kafka's log timestamps (and Python's datetime) can write: 9999-12-31.
MAX_TS_MS = int(datetime(9999, 12, 31, tzinfo=UTC).timestamp() * 1000)


def _number_or_text(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _convert(parse: Callable, expected: str) -> Callable:
    """A BeforeValidator from a units parser: strings and numbers only, one message naming the format."""
    def convert(value):
        if _number_or_text(value):
            try:
                return parse(value)
            except ValueError as exc:
                if "64 bits" in str(exc) or "whole milliseconds" in str(exc):
                    raise
        raise ValueError(f"expected {expected}, found {show(value)}")
    return convert


def optional(convert: Callable) -> Callable:
    return lambda value: None if value is None else convert(value)


def _whole_bytes(value):
    if isinstance(value, float):
        raise ValueError("fractional bytes")
    return parse_bytes(value)


rate = _convert(parse_rate_bps, "a rate like '5MB/s'")
duration = _convert(parse_duration_ms, "a duration like '30s' or '100ms'")
size = _convert(_whole_bytes, "a size like '1MiB' or '500MB'")


def throttle_rate(value):
    """A throttle as Kafka holds it: a LONG of bytes/s (the tool's ``--throttle``, the ``*.throttled.rate``
    configs); '0.5B/s' was written as the config "0", a stopped replication, and '1.0000005MB/s' cut to 1MB/s."""
    bps = rate(value)
    if bps != int(bps):
        raise ValueError(f"expected a whole number of bytes/s (Kafka's throttle rates are longs), found {show(value)}")
    return bps


def positive_duration(value):
    ms = duration(value)
    if ms <= 0:
        raise ValueError(f"expected a positive duration like '30s', found {show(value)}")
    return ms


def positive_rate(value):
    bps = rate(value)
    if bps <= 0:
        raise ValueError(f"expected a positive rate like '125MB/s', found {show(value)}")
    return bps


def _str(value) -> str:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"expected a name, found {show(value)}")


def _text(value):
    name = _str(value)
    if not name.isprintable():  # a rack or log dir is written into broker logs: no forged lines
        raise ValueError(f"expected a name of printable characters (no newline, tab or control character), "
                         f"found {show(name)}")
    return name


def _named(problem_of):
    """A validator of a name by its rule (``topic_name_problem``, ``cluster_name_problem``)."""
    def validate(value):
        name = _str(value)
        problem = problem_of(name)
        if problem:
            raise ValueError(f"{problem}, found {show(name)}")
        return name
    return validate


def start_ms(value):
    """``start``: an ISO timestamp (UTC unless it says otherwise), a date, or epoch milliseconds."""
    expected = "a UTC timestamp like 2026-01-01T00:00:00Z"
    if isinstance(value, bool):
        raise ValueError(f"expected {expected}, found {show(value)}")
    if isinstance(value, int):
        if not 0 <= value <= MAX_TS_MS:
            raise ValueError(f"expected {expected} between 1970 and 9999, found {show(value)}")
        return value
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"expected {expected}, found {show(value)}") from None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        ms = int(round(value.timestamp() * 1000))
        if ms < 0:
            raise ValueError(f"expected {expected} from 1970 on, found {show(value.isoformat())}")
        return ms
    raise ValueError(f"expected {expected}, found {show(value)}")


DurationMs = Annotated[int, BeforeValidator(duration)]
PositiveMs = Annotated[int, BeforeValidator(positive_duration)]
RateBps = Annotated[float, BeforeValidator(rate)]
PositiveRateBps = Annotated[float, BeforeValidator(positive_rate)]  # a NIC: 0 bytes/s is no broker at all
OptRateBps = Annotated[float | None, BeforeValidator(optional(rate))]
OptThrottleBps = Annotated[float | None, BeforeValidator(optional(throttle_rate))]
SizeBytes = Annotated[int, BeforeValidator(size)]
StartMs = Annotated[int, BeforeValidator(start_ms)]
Name = Annotated[str, BeforeValidator(_text)]
TopicName = Annotated[str, BeforeValidator(_named(topic_name_problem))]
ClusterName = Annotated[str, BeforeValidator(_named(cluster_name_problem))]
BrokerId = Annotated[int, Field(strict=True, ge=0, le=INT32_MAX)]  # Kafka's broker.id is an int32
PartitionId = Annotated[int, Field(strict=True, ge=0, le=INT32_MAX)]
MinIsr = Annotated[int, Field(strict=True, ge=1, le=MAX_MIN_ISR)]  # min.insync.replicas
Count = Annotated[int, Field(strict=True, ge=1, le=INT64_MAX)]


class FrozenModel(BaseModel):
    """Scenario models are values: frozen, and unknown fields are errors rather than ignored."""

    model_config = ConfigDict(frozen=True, extra="forbid")
