"""The values of the telemetry columns the pipeline compares with fixed words or parses (docs/design.md, the
contract's tables), checked before Spark starts.

The pipeline reads a word it does not know as none of the ones it looks for, and a config value it cannot
parse as no value: a ``brokers`` row in state ``UP`` was a broker that is not up, a ``fetchers`` action
``junk`` no change, a ``traffic`` row of a misspelt meter was dropped, ``min.insync.replicas`` = ``two`` was the
default 1, and an ISR list holding a null counted a member no broker is -- each analyzed with exit 0. Each is now
one sentence naming the file, the row and the value.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from replicaflow.errors import ReplicaflowError, quote, show
from replicaflow.model.configs import MAX_MIN_ISR, MIN_ISR, QUOTA_RATES, THROTTLED_REPLICAS_LISTS
from replicaflow.model.metrics import TRAFFIC_METRICS
from replicaflow.model.units import INT64_MAX
from replicaflow.telemetry.schema import TELEMETRY

# (table, column) → the words the column holds (docs/design.md), none of them null
WORDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("brokers", "state"): ("up", "shutting_down", "down"),
    ("log_dirs", "state"): ("offline", "online"),
    ("fetchers", "action"): ("added", "removed", "failed"),
    ("configs", "entity_type"): ("broker", "topic"),
    ("traffic", "name"): TRAFFIC_METRICS,
}
# the ``brokers`` states of a live broker: one in controlled shutdown serves, and leads, until its down row
LIVE_STATES = ("up", "shutting_down")
_DIGITS = re.compile(r"\s*[0-9]{1,19}\s*")  # Kafka's INT and LONG configs: trimmed, then Integer/Long.parseLong
_PAIR = re.compile(r"(?:[0-9]+:[0-9]+)?")  # ThrottledReplicaListValidator: each item, trimmed, or '*' alone


def refuse_unknown_values(file: Path, name: str) -> None:
    """The words of :data:`WORDS`, the broker lists without a null member and the configs the pipeline parses
    (``configs``: min ISR, throttle rates and throttled-replica lists, each null or as Kafka validates it)."""
    for (table, column), words in WORDS.items():
        if table == name:
            values = pq.read_table(file, columns=[column])[column]
            bad = pc.invert(pc.fill_null(pc.is_in(values, pa.array(words)), False))
            if pc.any(bad).as_py():
                row = pc.index(bad, True).as_py()
                raise ReplicaflowError(f"{file}: row {row} of {name} has {column} {_shown(values[row].as_py())}; "
                                       f"expected one of {', '.join(words)}")
    lists = [f.name for f in TELEMETRY[name] if pa.types.is_list(f.type) and pa.types.is_integer(f.type.value_type)]
    if lists:
        table = pq.read_table(file, columns=lists)
        for column in lists:
            values = table.column(column).combine_chunks()
            nulls = _row_with_null_member(values)
            if nulls is not None:
                raise ReplicaflowError(f"{file}: row {nulls} of {name} has {column} {show(values[nulls].as_py())}, "
                                       "a list with a null member; every member is a broker id")
    if name == "configs":
        _refuse_unparsable_configs(file)


def _row_with_null_member(lists: pa.ListArray) -> int | None:
    """The first row whose list holds a null (a null list is 'unknown' and allowed), or None."""
    members = lists.flatten()
    if members.null_count == 0:
        return None
    return pc.list_parent_indices(lists)[pc.index(pc.is_null(members), True).as_py()].as_py()


def _refuse_unparsable_configs(file: Path) -> None:
    table = pq.read_table(file, columns=["name", "value"])  # a few rows a config change: read whole
    parsed = {MIN_ISR, *QUOTA_RATES, *THROTTLED_REPLICAS_LISTS}
    for row, (config, value) in enumerate(zip(table["name"].to_pylist(), table["value"].to_pylist(), strict=True)):
        problem = _config_problem(config, value) if config in parsed and value is not None else None
        if problem:
            raise ReplicaflowError(f"{file}: row {row} of configs has {config} = {quote(value)}; {problem}")


def _config_problem(name: str, value: str) -> str | None:
    """Why Kafka would not hold ``value`` for ``name`` (null, a deleted config, is checked by the caller)."""
    if name == MIN_ISR:
        if not _DIGITS.fullmatch(value) or not 1 <= int(value) <= MAX_MIN_ISR:
            return f"expected a whole number of replicas from 1 to {MAX_MIN_ISR:,} (null: deleted)"
    elif name in QUOTA_RATES:
        if not _DIGITS.fullmatch(value) or int(value) > INT64_MAX:
            return "expected a whole number of bytes/s, 0 or more (Kafka's LONG; null: deleted)"
    elif value.strip() != "*" and not all(_PAIR.fullmatch(item.strip()) for item in value.split(",")):
        return "expected 'partition:broker,...' or '*' (Kafka's ThrottledReplicaListValidator; null: deleted)"
    return None


def _shown(value: object) -> str:
    return "null" if value is None else show(value)
