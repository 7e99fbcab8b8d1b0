"""Telemetry checked before Spark starts: a directory that would give a wrong answer with exit 0 is
refused with one sentence naming the table and the first offending row (docs/pipeline.md,
"Input checks").

- ``_meta.json``: the keys the pipeline needs, integers where it needs them, a positive scrape
  interval, a time range that is not absurd (it sizes the scrape grid Spark builds) and within years
  1970..9999 (later instants cannot be formatted as dates);
- every table: present, readable, the contract's columns and types;
- the ``cluster`` of every row equals the meta's (a directory holds one cluster); read from the
  Parquet statistics when they are there, so it costs no scan;
- no null key, partition or broker (a null topic was silently left out of the analysis), and no
  negative partition or broker id;
- no row outside the meta's ``start_ms..end_ms`` (its changes were reported as incidents the telemetry never saw);
- no leader or replica that is no broker of the cluster, no row of a topic ``_meta.json`` does not list or past
  its partition count, where the meta lists them (``references.py``);
- the words and config values the pipeline compares or parses, as the contract and Kafka define them
  (``values.py``);
- no duplicated key: a change log has one row per ``seq``, a sample one row per what it samples
  (a duplicated traffic row would double the bytes meters);
- not empty, unless asked (an empty directory would give a healthy-looking all-zero report).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from replicaflow.errors import ReplicaflowError, quote, show, utf8_path
from replicaflow.model import election
from replicaflow.model.units import INT32_MAX, format_ts_ms
from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry import io, references
from replicaflow.telemetry.keys import column_statistics, first_duplicate
from replicaflow.telemetry.schema import TELEMETRY
from replicaflow.telemetry.values import refuse_unknown_values

META_KEYS = ("cluster", "kafka_version", "start_ms", "end_ms", "scrape_interval_ms")
MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z: later instants cannot be shown as dates
MAX_SCRAPES = 10_000_000  # a year at one scrape every 3 s; beyond, end_ms or the interval is wrong
# the key of one row of each table: a change log by its change number, a sample by what it samples
KEYS: dict[str, tuple[str, ...]] = {
    **{name: ("seq",) for name, schema in TELEMETRY.items() if "seq" in schema.names},
    "replica_offsets": ("ts_ms", "topic", "partition", "broker"),
    "traffic": ("ts_ms", "broker", "name"),
    "produce_errors": ("ts_ms", "topic", "partition", "broker", "error"),
}
# columns a row means nothing without: its key, and the partition or broker a change is about (a null
# topic was dropped by the joins, and the analysis left that partition's changes out with exit 0)
NOT_NULL: dict[str, tuple[str, ...]] = {
    **KEYS, **{name: ("seq", "topic", "partition") for name in ("assignments", "leaders", "isr")},
    **{name: ("seq", "broker") for name in ("brokers", "log_dirs")},
}


@dataclass(frozen=True)
class Checked:
    """One telemetry directory that passed: its meta and the Parquet directory of each table."""

    root: Path
    meta: dict
    tables: dict[str, Path]
    rows: int


def check_meta(root: Path) -> dict:
    """``<root>/telemetry/_meta.json`` with the keys the pipeline needs, checked."""
    tele = root / "telemetry"
    if root.exists() and not root.is_dir():
        raise ReplicaflowError(f"{root}: is a file, expected a folder holding telemetry/ (the output of `simulate`)")
    if not root.is_dir():
        raise ReplicaflowError(f"{root}: telemetry directory does not exist")
    if not tele.is_dir():
        if not any(root.iterdir()):
            raise ReplicaflowError(f"{root}: directory is empty, expected telemetry/ (the output of `simulate`)")
        raise ReplicaflowError(f"{tele}: missing, expected the telemetry/ directory written by `simulate`")
    return checked_meta(io.read_meta(root), str(tele / io.META_FILE))


def check_metas(root: Path) -> list[dict]:
    """``<root>/telemetry/_metas.json``, the metas of a fleet analyzed from its logs alone (``jobs/analyze.py``):
    a list of objects, each checked as ``_meta.json`` is."""
    path = root / "telemetry" / io.METAS_FILE
    return [checked_meta(m, f"{path}: [{i}]") for i, m in enumerate(io.read_metas(root))]


def checked_meta(meta: dict, path: str) -> dict:
    """One cluster's meta with the keys the pipeline needs, and those the report shows, checked; ``path`` names
    it in the sentence."""
    for key in META_KEYS:
        if key not in meta:
            raise ReplicaflowError(f"{path}: key '{key}' is missing")
    if not isinstance(meta["cluster"], str) or not meta["cluster"]:
        raise ReplicaflowError(f"{path}: 'cluster' must be a non-empty string, found {show(meta['cluster'])}")
    for key in ("start_ms", "end_ms", "scrape_interval_ms"):
        if not isinstance(meta[key], int) or isinstance(meta[key], bool) or abs(meta[key]) > 2**62:
            raise ReplicaflowError(f"{path}: '{key}' must be an integer (epoch ms), found {show(meta[key])}")
    if meta["scrape_interval_ms"] <= 0 or meta["end_ms"] < meta["start_ms"]:
        raise ReplicaflowError(f"{path}: needs scrape_interval_ms > 0 and end_ms >= start_ms")
    scrapes = (meta["end_ms"] - meta["start_ms"]) // meta["scrape_interval_ms"] + 1
    if scrapes > MAX_SCRAPES:
        raise ReplicaflowError(f"{path}: start_ms..end_ms every scrape_interval_ms makes {scrapes:,} scrapes "
                               f"(at most {MAX_SCRAPES:,}); is end_ms or the interval wrong?")
    for key in ("start_ms", "end_ms"):
        if not 0 <= meta[key] <= MAX_MS:
            raise ReplicaflowError(f"{path}: '{key}' {meta[key]} is not an instant between 1970 and 9999 "
                                   f"(0..{MAX_MS} epoch ms)")
    try:
        KafkaVersion.parse(str(meta["kafka_version"]), bool(meta.get("kip542", False)))
    except ReplicaflowError as exc:
        raise ReplicaflowError(f"{path}: {exc}") from None
    if meta.get("controller", election.ZOOKEEPER) not in election.CONTROLLERS:
        raise ReplicaflowError(f"{path}: 'controller' must be one of {', '.join(election.CONTROLLERS)}, "
                               f"found {show(meta['controller'])}")
    problem = shown_keys_problem(meta)
    if problem:
        raise ReplicaflowError(f"{path}: {problem}")
    return meta


def is_number(value: object, low: float = -math.inf, high: float = math.inf) -> bool:
    """A JSON number in ``[low, high]``: an int or a finite float, not a bool (``True`` is an int to Python)."""
    return type(value) in (int, float) and math.isfinite(value) and low <= value <= high


def _count(value: object) -> bool:
    return type(value) is int and is_number(value, 0, 2**62)


def _amount(value: object) -> bool:
    """A rate or size as the simulator writes it: a finite non-negative number, or null."""
    return value is None or is_number(value, 0, 2**63)


def _topic_problem(t: object) -> str | None:
    if not isinstance(t, dict):
        return f"expected an object, found {show(t)}"
    if "name" in t and not isinstance(t["name"], str):
        return f"name: expected a string, found {show(t['name'])}"
    for key in ("partitions", "replication_factor", "min_insync_replicas"):
        if key in t and t[key] is not None and not _count(t[key]):
            return f"{key}: expected a non-negative integer, found {show(t[key])}"
    for key in ("produce_rate_bps", "initial_size_bytes"):
        if key in t and not _amount(t[key]):
            return f"{key}: expected a finite non-negative number, found {show(t[key])}"
    return None


def _event_problem(e: object) -> str | None:
    if not isinstance(e, dict):
        return f"expected an object, found {show(e)}"
    if type(e.get("ts_ms")) is not int or not 0 <= e["ts_ms"] <= MAX_MS:
        return f"ts_ms: expected epoch ms between 1970 and 9999, found {show(e.get('ts_ms'))}"
    for key in ("kind", "text"):
        if key in e and not isinstance(e[key], str):
            return f"{key}: expected a string, found {show(e[key])}"
    return None


def shown_keys_problem(meta: dict) -> str | None:
    """What is wrong with the keys of ``_meta.json`` that the pipeline's summary and the report show, when
    present (``sim/runner.meta_for`` and the log rebuild write them): a mangled one was analyzed with exit 0
    and then made ``report`` fail with a traceback (``len()`` of an int, ``int('x')``)."""
    if "kip542" in meta and not isinstance(meta["kip542"], bool):
        return f"'kip542' must be true or false, found {show(meta['kip542'])}"
    for key in ("replica_lag_time_max_ms", "tick_ms"):
        if key in meta and not _count(meta[key]):
            return f"'{key}' must be a non-negative integer (ms), found {show(meta[key])}"
    if "seed" in meta and meta["seed"] is not None and (type(meta["seed"]) is not int or abs(meta["seed"]) > 2**63):
        return f"'seed' must be an integer, found {show(meta['seed'])}"
    for key in ("source", "scenario", "kafka_version_source"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            return f"'{key}' must be a string, found {show(meta[key])}"
    brokers = meta.get("brokers", [])
    if not isinstance(brokers, list) or any(type(b) is not int or not 0 <= b <= INT32_MAX for b in brokers):
        return f"'brokers' must be a list of broker ids (0 to {INT32_MAX}), found {show(brokers)}"
    provenance = meta.get("provenance", {})
    if not isinstance(provenance, dict) or not all(isinstance(v, str) for v in provenance.values()):
        return f"'provenance' must be an object of table: origin strings, found {show(provenance)}"
    for key, problem_of in (("topics", _topic_problem), ("events", _event_problem)):
        items = meta.get(key, [])
        if not isinstance(items, list):
            return f"'{key}' must be a list, found {show(items)}"
        for i, item in enumerate(items):
            problem = problem_of(item)
            if problem:
                return f"{key}[{i}]: {problem}"
    names = [t.get("name") for t in meta.get("topics", [])]
    twice = next((i for i, n in enumerate(names) if n is not None and n in names[:i]), None)
    if twice is not None:  # a row's partition was checked against the first one's count, the report listed both
        return f"topics[{twice}]: topic {quote(names[twice])} is listed twice"
    return None


def _type_name(t) -> str:
    return str(t).replace("list<item: ", "list<").replace("list<element: ", "list<")


def _arrow_reason(exc: BaseException) -> str:
    """Arrow's message on one line (a corrupt page's spans two), bounded."""
    return quote(" ".join(str(exc).split()), 200)


@contextmanager
def _readable(path: Path) -> Iterator[None]:
    """Reading ``path``'s data pages: a file whose footer is intact and whose pages are not was an ``OSError``
    traceback ('Couldn't deserialize thrift') from the row checks, the footer having passed ``check_table``."""
    try:
        yield
    except (OSError, pa.ArrowException) as exc:
        raise ReplicaflowError(f"{path}: not a readable Parquet file ({_arrow_reason(exc)})") from None


def check_table(root: Path, name: str) -> tuple[Path, list[Path]]:
    """The Parquet directory of one table and its files, columns compared with :data:`TELEMETRY`."""
    path = root / "telemetry" / name
    files = sorted(path.glob("*.parquet")) if path.is_dir() else []
    # Spark reads every entry of the folder but those named `_…` or `.…` (Hadoop's hidden files): a file of other
    # rows under another name was analyzed with exit 0, unchecked
    stray = sorted(e for e in path.iterdir() if not e.name.startswith(("_", ".")) and e not in files) \
        if path.is_dir() else []
    if stray:
        raise ReplicaflowError(f"{stray[0]}: not a .parquet file of table '{name}', and Spark would read it with the "
                               "table; move it out of the folder (or start its name with '_' or '.')")
    if not files:
        raise ReplicaflowError(f"{path}: table '{name}' is missing (no Parquet files)")
    for file in files:
        try:
            found = pq.read_schema(file)
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise ReplicaflowError(f"{file}: not a readable Parquet file ({_arrow_reason(exc)})") from None
        for field in TELEMETRY[name]:
            if field.name not in found.names:
                raise ReplicaflowError(f"{file}: column {name}.{field.name} is missing")
        problem = type_problem(found, TELEMETRY[name], name)
        if problem:
            raise ReplicaflowError(f"{file}: {problem}")
    return path, files


def type_problem(found: pa.Schema, contract: pa.Schema, name: str) -> str | None:
    """The first column of the ``contract`` that ``found`` holds with another type, as a phrase; None if none."""
    for field in contract:
        if field.name in found.names:
            got = found.field(field.name).type
            if _type_name(got) != _type_name(field.type):
                return f"column {name}.{field.name} has type {_type_name(got)}, expected {_type_name(field.type)}"
    return None


def _clusters_from_statistics(md: pq.FileMetaData) -> set[str] | None:
    """The cluster values of a file from its row-group statistics (None when they are missing)."""
    stats = column_statistics(md, "cluster")
    if stats is None:
        return None
    return {v if isinstance(v, str) else v.decode() for s in stats for v in (s.min, s.max)}


def _first_row(file: Path, column: str, bad) -> tuple[int, object] | None:
    """The index and value of the first row whose ``column`` is ``bad`` (an Arrow predicate), or None: read
    only where the statistics could not rule it out."""
    values = pq.read_table(file, columns=[column])[column]
    hit = bad(values)
    if not pc.any(hit).as_py():
        return None
    i = pc.index(hit, True).as_py()
    return i, values[i].as_py()


def _refuse_nulls(file: Path, md: pq.FileMetaData, name: str) -> None:
    """No null in the :data:`NOT_NULL` columns; read from the row-group statistics when they count nulls."""
    for column in NOT_NULL[name]:
        index = md.schema.names.index(column)
        stats = [md.row_group(g).column(index).statistics for g in range(md.num_row_groups)]
        if all(st is not None and st.has_null_count and st.null_count == 0 for st in stats):
            continue
        found = _first_row(file, column, pc.is_null)
        if found:
            raise ReplicaflowError(f"{file}: row {found[0]} of {name} has no {column} (null); every row of {name} "
                                   f"needs {', '.join(NOT_NULL[name])}")


# Columns that are never negative, and why; a null is "unknown". An id of -1 means "none" only in columns such as
# ``leader``, which are not listed; a negative offset or size gave a lag or a move's progress that no broker had.
NON_NEGATIVE = {
    **dict.fromkeys(("partition", "broker"), "Kafka's {column} ids start at 0"),
    **dict.fromkeys(("log_end_offset", "high_watermark"), "offsets start at 0 (null: unknown)"),
    **dict.fromkeys(("size_bytes", "bytes", "requests", "messages"), "sizes and counts are never negative"),
}


def _refuse_negative(file: Path, md: pq.FileMetaData, name: str) -> None:
    """No negative value in a :data:`NON_NEGATIVE` column: from the statistics' minimum when there is one."""
    for column, reason in NON_NEGATIVE.items():
        if column not in md.schema.names:
            continue
        stats = column_statistics(md, column)
        if stats is not None and min((st.min for st in stats), default=0) >= 0:
            continue
        found = _first_row(file, column, lambda v: pc.less(v, 0))
        if found:
            raise ReplicaflowError(f"{file}: row {found[0]} of {name} has {column} {found[1]}; "
                                   + reason.format(column=column))


def _refuse_repeated_brokers(file: Path, name: str) -> None:
    """No broker twice in one row's list of brokers (replicas, ISR, ELR, adding, removing): a replica appears once
    in each. `isr = [1, 1, 1]` counted three members, and a partition was analyzed as fully replicated with exit 0.
    Vectorized over the rows: the i-th and j-th value of every list at least j + 1 long, for each pair i < j (lists
    hold a handful of brokers)."""
    columns = [f.name for f in TELEMETRY[name] if pa.types.is_list(f.type) and pa.types.is_integer(f.type.value_type)]
    if not columns:
        return
    table = pq.read_table(file, columns=columns)
    for column in columns:
        lists = table.column(column).combine_chunks()
        starts = lists.offsets.to_numpy()[:-1]
        lengths = pc.fill_null(pc.list_value_length(lists), 0).to_numpy()
        values = lists.values.to_numpy(zero_copy_only=False)
        twice = np.zeros(len(lists), dtype=bool)
        for j in range(1, int(lengths.max(initial=0))):
            long_enough = np.flatnonzero(lengths > j)
            for i in range(j):
                twice[long_enough] |= values[starts[long_enough] + i] == values[starts[long_enough] + j]
        if twice.any():
            row = int(np.argmax(twice))
            raise ReplicaflowError(f"{file}: row {row} of {name} lists a broker twice in {column}, "
                                   f"{show(lists[row].as_py())}; a broker holds one replica of a partition")


def _instant(ts_ms: int) -> str:
    """``ts_ms`` with its UTC date where it has one: ``1767225600000 (2026-01-01 00:00:00 UTC)``."""
    return f"{ts_ms} ({format_ts_ms(ts_ms)} UTC)" if 0 <= ts_ms <= MAX_MS else str(ts_ms)


def _refuse_outside_span(file: Path, md: pq.FileMetaData, name: str, start_ms: int, end_ms: int) -> None:
    """No row before ``start_ms`` or after ``end_ms``: the telemetry claims that span, and a change outside it
    was reported as an incident the telemetry never saw (one after the end started after it). From the
    statistics' minimum and maximum when they are there."""
    stats = column_statistics(md, "ts_ms")
    if (stats is not None and min((st.min for st in stats), default=start_ms) >= start_ms
            and max((st.max for st in stats), default=end_ms) <= end_ms):
        return
    for bad, side, bound in ((pc.less, "before start_ms", start_ms), (pc.greater, "after end_ms", end_ms)):
        found = _first_row(file, "ts_ms", lambda v, bad=bad, bound=bound: bad(v, pa.scalar(bound, pa.int64())))
        if found:
            raise ReplicaflowError(f"{file}: row {found[0]} of {name} has ts_ms {_instant(found[1])}, {side} "
                                   f"{_instant(bound)} in _meta.json; the telemetry must span every row")


def check_rows(name: str, files: Sequence[Path], meta: dict, known: references.Known | None = None) -> int:
    """Rows of one table belong to the meta's cluster, lie within its start_ms..end_ms, name only the brokers,
    topics and partitions ``known`` lists, and have no duplicated key; returns the row count."""
    watch = references.watch(name, KEYS[name], known)
    cluster = meta["cluster"]
    rows = 0
    for file in files:
        with _readable(file):
            md = pq.ParquetFile(file).metadata  # the footer once: statistics and row count
            clusters = _clusters_from_statistics(md)
            if clusters is None or clusters - {cluster}:
                found = _first_row(file, "cluster", lambda v: pc.not_equal(v, pa.scalar(cluster)))
                if found:
                    raise ReplicaflowError(f"{file}: row {found[0]} of {name} belongs to cluster "
                                           f"{quote(found[1])}, but _meta.json says {quote(cluster)}")
            rows += md.num_rows
            _refuse_nulls(file, md, name)
            _refuse_negative(file, md, name)
            _refuse_repeated_brokers(file, name)
            _refuse_outside_span(file, md, name, meta["start_ms"], meta["end_ms"])
            refuse_unknown_values(file, name)
            references.refuse_strangers(file, name, known, topics=watch is None)
    try:
        found = first_duplicate(files, KEYS[name], watch)
    except (OSError, pa.ArrowException) as exc:
        for file in files:  # which one: each read alone
            with _readable(file):
                pq.read_table(file, columns=list(KEYS[name]))
        raise ReplicaflowError(f"{files[0].parent}: the Parquet files of {name} are not readable "
                               f"({_arrow_reason(exc)})") from None
    if watch is not None and watch.suspect:  # a batch may hold a stranger: which row, if any
        for file in files:
            with _readable(file):
                references.refuse_strangers(file, name, known)
    if found:
        first, count = found
        raise ReplicaflowError(f"{files[0].parent}: {name} has {count} rows with "
                               f"{', '.join(f'{k}={v}' for k, v in first.items())}; each must appear once")
    return rows


def check_telemetry(dirs: Sequence[Path], allow_empty: bool = False) -> list[Checked]:
    """Every directory checked as the module docstring says, and cluster names distinct across them.

    The cheap checks (meta, cluster names, every table's files and columns) run first for all directories;
    then the row checks, which read the key columns, run one table per thread on every core (Arrow and
    NumPy release the GIL: a fleet's tables are read side by side). The error reported is the first in
    directory and table order, whichever thread finds it first."""
    found: list[tuple[Path, dict, dict[str, tuple[Path, list[Path]]]]] = []
    seen: dict[str, Path] = {}
    for root in dirs:
        root = Path(root)
        utf8_path("telemetry", root)
        meta = check_meta(root)
        same = next((p for p in seen.values() if p.resolve() == root.resolve()), None)
        if same is not None:
            raise ReplicaflowError(f"{root}: this telemetry directory is given twice (also as {same}); give it once")
        if meta["cluster"] in seen:
            raise ReplicaflowError(f"{root}: cluster name '{meta['cluster']}' is also used by {seen[meta['cluster']]}; "
                                   "clusters analyzed together need distinct names")
        seen[meta["cluster"]] = root
        tables = {name: check_table(root, name) for name in TELEMETRY}
        with _readable(tables["brokers"][0]):
            known = references.known_of(meta, tables["brokers"][1])
        found.append((root, meta, tables, known))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="replicaflow-check") as pool:
        counted = [[pool.submit(check_rows, name, files, meta, known) for name, (_, files) in tables.items()]
                   for _, meta, tables, known in found]
        try:
            rows = [sum(f.result() for f in futures) for futures in counted]
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise
    out: list[Checked] = []
    for (root, meta, tables, _), n in zip(found, rows, strict=True):
        if n == 0 and not allow_empty:
            raise ReplicaflowError(f"{root / 'telemetry'}: every table is empty; an analysis of it would report a "
                                   "healthy cluster that was never observed (--allow-empty to analyze it anyway)")
        out.append(Checked(root, meta, {name: path for name, (path, _) in tables.items()}, n))
    return out
