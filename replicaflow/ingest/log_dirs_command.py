"""``kafka-log-dirs --describe`` output (Kafka's ``LogDirsCommand``, 1.0+): partition sizes per replica.

The tool prints two text lines ("Querying brokers for log directories information", "Received log
directory information from brokers 1,2,3") and then one JSON document, version 1:
``{"brokers": [{"broker": 1, "logDirs": [{"logDir": "/d", "error": null, "partitions":
[{"partition": "t-0", "size": 123, "offsetLag": 0, "isFuture": false}]}]}]}``.
A log directory with an ``error`` (the exception's class name, e.g. ``KafkaStorageException``) is
offline: its replicas are listed as such, not dropped. ``isFuture`` replicas are the targets of an
intra-broker move (``alterReplicaLogDirs``) and are kept apart from the current ones. An ``offsetLag``
of -1 is Kafka's ``INVALID_OFFSET_LAG``: a log on disk whose partition the broker does not host (yet).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replicaflow.errors import ReplicaflowError, quote, show
from replicaflow.model.topic import topic_name_problem
from replicaflow.model.units import INT32_MAX, parse_id
from replicaflow.telemetry.textfile import loads_json, read_text

WHAT = "kafka-log-dirs --describe output"
_PREAMBLE = ("Querying brokers for log directories information", "Received log directory information from brokers")


@dataclass(frozen=True)
class ReplicaLogDir:
    """One replica's log on one broker: its size in bytes and how far it is behind (``offsetLag``; None for
    Kafka's -1, not known)."""

    broker: int
    log_dir: str
    topic: str
    partition: int
    size_bytes: int
    offset_lag: int | None
    is_future: bool
    dir_error: str | None


def read_log_dirs(path: Path) -> list[ReplicaLogDir]:
    """Every replica in ``path``; the first problem is one sentence naming ``path:line`` and the field."""
    return parse_log_dirs(read_text(path, WHAT), str(path))


def parse_log_dirs(text: str, where: str) -> list[ReplicaLogDir]:
    """Every replica of the JSON document in ``text``, after the tool's text lines."""
    lines = text.splitlines(keepends=True)
    skipped = 0
    while skipped < len(lines) and (not lines[skipped].strip() or lines[skipped].lstrip().startswith(_PREAMBLE)
                                    or lines[skipped].lstrip().startswith(("SLF4J:", "log4j:", "WARNING:"))):
        skipped += 1
    body = "".join(lines[skipped:])
    if not body.strip():
        raise ReplicaflowError(f"{where}: no JSON document after the tool's text lines")
    first = next(n for n, line in enumerate(lines[skipped:], skipped + 1) if line.strip())
    if not lines[first - 1].lstrip().startswith(("{", "[")):  # the tool's error (a timeout, an exception) instead
        raise ReplicaflowError(f"{where}:{first}: expected the JSON document of kafka-log-dirs --describe "
                               f"({{\"version\": 1, \"brokers\": […]}}), found {quote(lines[first - 1].strip())}")
    try:
        doc = loads_json(body)
    except json.JSONDecodeError as exc:
        raise ReplicaflowError(f"{where}:{exc.lineno + skipped}: invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise ReplicaflowError(f"{where}: the JSON document is nested too deeply") from None
    at = f"{where}:{skipped + 1}"
    brokers = _list(_get(doc, "brokers", at, "the document"), at, "brokers")
    version = doc.get("version", 1)  # LogDirsCommand writes 1, the only version there is
    if type(version) is not int or version != 1:
        raise ReplicaflowError(f"{at}: version: kafka-log-dirs --describe writes version 1, found {show(version)}")
    out: list[ReplicaLogDir] = []
    seen: dict[tuple, str] = {}
    described: dict[int, str] = {}
    for i, b in enumerate(brokers):
        path = f"brokers[{i}]"
        broker = _id(_get(b, "broker", at, path), at, f"{path}.broker", INT32_MAX)  # a Java int, as every broker id
        if broker in described:  # one entry per broker queried: a second is two outputs pasted together
            raise ReplicaflowError(f"{at}: {path}: broker {broker} is described twice (also at {described[broker]})")
        described[broker] = path
        for j, d in enumerate(_list(_get(b, "logDirs", at, path), at, f"{path}.logDirs")):
            dpath = f"{path}.logDirs[{j}]"
            log_dir = _get(d, "logDir", at, dpath)
            error = d.get("error")
            if not isinstance(log_dir, str) or (error is not None and not isinstance(error, str)):
                raise ReplicaflowError(f"{at}: {dpath}: expected a logDir string and an error string or null")
            for k, p in enumerate(_list(_get(d, "partitions", at, dpath), at, f"{dpath}.partitions")):
                ppath = f"{dpath}.partitions[{k}]"
                topic, partition = split_topic_partition(_get(p, "partition", at, ppath), f"{at}: {ppath}.partition")
                future, lag = _get(p, "isFuture", at, ppath), _get(p, "offsetLag", at, ppath)
                if not isinstance(future, bool):
                    raise ReplicaflowError(f"{at}: {ppath}.isFuture: expected true or false, found {show(future)}")
                key = (broker, topic, partition, future)
                if key in seen:
                    raise ReplicaflowError(f"{at}: {ppath}: {topic}-{partition} on broker {broker} is listed twice "
                                           f"(also at {seen[key]})")
                seen[key] = ppath
                out.append(ReplicaLogDir(
                    broker=broker, log_dir=log_dir, topic=topic, partition=partition,
                    size_bytes=_id(_get(p, "size", at, ppath), at, f"{ppath}.size"),
                    offset_lag=None if type(lag) is int and lag == -1 else _id(lag, at, f"{ppath}.offsetLag"),
                    is_future=future, dir_error=error))
    return out


def split_topic_partition(value: Any, at: str) -> tuple[str, int]:
    """``orders-3`` as Kafka's ``TopicPartition.toString`` writes it (the partition after the last dash), or
    ``[orders,3]`` as the pre-1.0 tools' ``TopicAndPartition.toString`` did."""
    if isinstance(value, str) and value.startswith("[") and value.endswith("]") and "," in value:
        topic, dash, number = value[1:-1].rpartition(",")
    else:
        topic, dash, number = value.rpartition("-") if isinstance(value, str) else ("", "", "")
    partition = parse_id(number) if number == number.strip() else None
    if not dash or partition is None or topic_name_problem(topic):
        raise ReplicaflowError(f"{at}: expected a topic-partition such as 'orders-3' (partition 0 to {INT32_MAX:,}, "
                               f"Kafka's int32), found {show(value)}")
    return topic, partition


def _get(obj: Any, key: str, at: str, path: str) -> Any:
    if not isinstance(obj, dict):
        raise ReplicaflowError(f"{at}: {path}: expected a JSON object, found {show(obj)}")
    if key not in obj:
        raise ReplicaflowError(f"{at}: {path}: missing field {quote(key)}")
    return obj[key]


def _list(value: Any, at: str, path: str) -> list:
    if not isinstance(value, list):
        raise ReplicaflowError(f"{at}: {path}: expected a JSON list, found {show(value)}")
    return value


def _id(value: Any, at: str, path: str, most: int = 2**63 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        bound = f" of at most {most:,} (Kafka's int32)" if most == INT32_MAX else ""
        raise ReplicaflowError(f"{at}: {path}: expected a non-negative integer{bound}, found {show(value)}")
    return value
