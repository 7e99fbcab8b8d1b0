"""Telemetry rows name only what the cluster has, where ``_meta.json`` says what it has (docs/pipeline.md,
"Input checks"): a leader or a replica that is no broker of the cluster, a row of a topic the meta does not
list, or a partition number at or past its topic's count. Each was analyzed with exit 0: a partition led by
broker 99 of a three-broker cluster counted as led, a topic that never existed got incidents.

What the meta promises: the simulator writes every broker and every topic with its partition count (a
scenario has at least one of each, and no event creates a topic or adds partitions). The log rebuild writes
neither (its meta knows the topics only from a describe, if any), and hand-made test metas write empty lists,
so an absent or empty ``brokers`` or ``topics`` checks nothing, and a topic without a partition count only its
name. The brokers of the cluster are the meta's and any the ``brokers`` table names.

Vectorized: a topic is checked once per distinct value of a dictionary-read column, a partition against its
topic's count through the dictionary's indices. The large sample tables (``replica_offsets``,
``produce_errors``) are watched in the batches the duplicate search reads anyway (:class:`Watch`); only when
a batch is suspect is the file read again to name the row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from replicaflow.errors import ReplicaflowError, quote, show
from replicaflow.telemetry.keys import column_statistics
from replicaflow.telemetry.schema import TELEMETRY

NO_LEADER = -1  # Kafka's leader id of a partition without a leader (LeaderAndIsr.NoLeader)
_UNCOUNTED = np.int64(2**31)  # the "count" of a topic the meta lists without its partitions: any id passes
# the columns of broker ids each table's rows must take from the cluster's brokers
BROKER_COLUMNS = {"leaders": ("leader",), "assignments": ("replicas", "adding", "removing"),
                  "isr": ("isr", "elr", "last_known_elr"), "fetchers": ("broker", "leader")}


@dataclass(frozen=True)
class Known:
    """What ``_meta.json`` (and the ``brokers`` table) say the cluster has; None where they say nothing."""

    brokers: np.ndarray | None  # sorted ids
    topics: pa.Array | None  # names, in the meta's order
    counts: np.ndarray | None  # each topic's partition count (``_UNCOUNTED`` where the meta gives none)

    def brokers_shown(self) -> str:
        return f"{show(self.brokers.tolist())}, from _meta.json's brokers and the brokers table"


def known_of(meta: dict, broker_files: Sequence[Path]) -> Known:
    """The cluster's brokers and topics as ``meta`` lists them (checked by ``checks.checked_meta``), the brokers
    of ``broker_files`` (the ``brokers`` table) added."""
    brokers = None
    if meta.get("brokers"):
        named = [pq.read_table(f, columns=["broker"])["broker"] for f in broker_files]
        ids = np.concatenate([np.asarray(meta["brokers"], dtype=np.int64),
                              *(c.drop_null().to_numpy().astype(np.int64) for c in named)])
        brokers = np.unique(ids)
    topics = meta.get("topics") or []
    if not topics or not all(isinstance(t.get("name"), str) for t in topics):
        return Known(brokers, None, None)
    counts = np.array([_UNCOUNTED if t.get("partitions") is None else t["partitions"] for t in topics], np.int64)
    return Known(brokers, pa.array([t["name"] for t in topics], pa.string()), counts)


def _has_partitions(name: str) -> bool:
    return {"topic", "partition"} <= set(TELEMETRY[name].names)


def _checks_topics(name: str, known: Known) -> bool:
    return known.topics is not None and _has_partitions(name)


def _limits(topic: pa.Array, known: Known) -> tuple[np.ndarray, np.ndarray]:
    """For a dictionary array of topics: whether each dictionary value is a listed topic, and its partition
    count (0 for an unlisted one), by dictionary index."""
    at = pc.index_in(topic.dictionary, value_set=known.topics).to_numpy(zero_copy_only=False)
    listed = ~np.isnan(at) if at.dtype.kind == "f" else np.ones(len(at), dtype=bool)
    counts = np.zeros(len(at), dtype=np.int64)
    counts[listed] = known.counts[at[listed].astype(np.int64)]
    return listed, counts


def _as_dictionary(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``values`` as one dictionary array (a column read in several chunks has a dictionary per chunk)."""
    if isinstance(values, pa.ChunkedArray):
        if pa.types.is_dictionary(values.type):
            values = values.unify_dictionaries()
        values = values.combine_chunks()
    return values if pa.types.is_dictionary(values.type) else pc.dictionary_encode(values)


def _stranger_rows(topic: pa.Array, partition: np.ndarray, known: Known) -> tuple[np.ndarray, np.ndarray]:
    """Per row: of a topic the meta does not list; at or past its topic's partition count (null topics: neither,
    since the null checks decide whether a table may hold one)."""
    listed, counts = _limits(topic, known)
    valid = ~np.asarray(pc.is_null(topic).to_numpy(zero_copy_only=False), dtype=bool)
    index = pc.fill_null(topic.indices, 0).to_numpy(zero_copy_only=False)
    unlisted = valid & ~listed[index] if len(listed) else np.zeros(len(topic), dtype=bool)
    beyond = valid & ~unlisted & (partition.astype(np.int64) >= counts[index]) if len(listed) else unlisted
    return unlisted, beyond


@dataclass
class Watch:
    """A cheap look at the batches of a sample table that the duplicate search reads (``keys.first_duplicate``):
    ``suspect`` once a batch may hold a row of an unlisted topic or partition; then :func:`refuse_strangers`
    reads the files again to name the row. A batch's dictionary may list values that none of its rows hold,
    so a suspicion is not yet a refusal."""

    known: Known
    suspect: bool = field(default=False)

    def __call__(self, batch: pa.RecordBatch) -> None:
        if self.suspect or not batch.num_rows:
            return
        topic = _as_dictionary(batch.column("topic"))
        listed, counts = _limits(topic, self.known)
        if not listed.all():
            self.suspect = True
            return
        partition = batch.column("partition").to_numpy(zero_copy_only=False)
        if not len(counts) or int(partition.max()) < int(counts.min()):  # below every count: no row to compare
            return
        index = pc.fill_null(topic.indices, 0).to_numpy(zero_copy_only=False)
        if bool((partition >= counts[index]).any()):
            self.suspect = True  # only ever set: the slices of one table call this from their threads


def watch(name: str, keys: tuple[str, ...], known: Known | None) -> Watch | None:
    """A :class:`Watch` for a table whose duplicate search reads its topic and partition in batches, else None."""
    if known is None or not _checks_topics(name, known) or not {"topic", "partition"} <= set(keys):
        return None
    return Watch(known)


def _partition_below_counts(md: pq.FileMetaData, known: Known) -> bool:
    """True when the statistics show every partition number below the smallest partition count listed."""
    stats = column_statistics(md, "partition")
    return stats is not None and max((st.max for st in stats), default=-1) < int(known.counts.min())


def refuse_strangers(file: Path, name: str, known: Known | None, topics: bool = True) -> None:
    """The first row of ``file`` that names what the cluster lacks, as one sentence (``topics=False``: brokers
    only, the topics having been watched)."""
    if known is None:
        return
    md = pq.ParquetFile(file).metadata
    if topics and _checks_topics(name, known) and md.num_rows:
        _refuse_topics(file, md, name, known)
    if known.brokers is not None:
        for column in BROKER_COLUMNS.get(name, ()):
            _refuse_brokers(file, name, column, known)


def _refuse_topics(file: Path, md: pq.FileMetaData, name: str, known: Known) -> None:
    skip_partition = _partition_below_counts(md, known)
    table = pq.read_table(file, columns=["topic"] if skip_partition else ["topic", "partition"],
                          read_dictionary=["topic"])
    topic = _as_dictionary(table["topic"])
    partition = (np.zeros(len(topic), dtype=np.int32) if skip_partition
                 else table["partition"].to_numpy().astype(np.int64))
    unlisted, beyond = _stranger_rows(topic, partition, known)
    if unlisted.any():
        row = int(np.argmax(unlisted))
        raise ReplicaflowError(f"{file}: row {row} of {name} is of topic {quote(topic[row].as_py())}, which "
                               f"_meta.json's topics do not list ({show(known.topics.to_pylist())}); the "
                               "telemetry's rows are of the cluster's topics")
    if beyond.any():
        row = int(np.argmax(beyond))
        t = topic[row].as_py()
        count = int(known.counts[known.topics.to_pylist().index(t)])
        raise ReplicaflowError(f"{file}: row {row} of {name} has partition {int(partition[row])} of topic "
                               f"{quote(t)}, which has {count} partitions in _meta.json (0 to {count - 1})")


def _refuse_brokers(file: Path, name: str, column: str, known: Known) -> None:
    values = pq.read_table(file, columns=[column])[column].combine_chunks()
    if pa.types.is_list(values.type):
        flat = values.flatten()
        ids = flat.fill_null(NO_LEADER).to_numpy(zero_copy_only=False).astype(np.int64)
        bad = flat.is_valid().to_numpy(zero_copy_only=False) & ~np.isin(ids, known.brokers)
        if bad.any():
            at = int(np.argmax(bad))
            row = pc.list_parent_indices(values)[at].as_py()
            raise ReplicaflowError(f"{file}: row {row} of {name} names broker {ids[at]} in {column}, "
                                   f"{show(values[row].as_py())}, which is not a broker of the cluster "
                                   f"({known.brokers_shown()})")
        return
    ids = values.fill_null(NO_LEADER).to_numpy(zero_copy_only=False).astype(np.int64)
    bad = (ids != NO_LEADER) & ~np.isin(ids, known.brokers)
    if bad.any():
        row = int(np.argmax(bad))
        raise ReplicaflowError(f"{file}: row {row} of {name} has {column} {ids[row]}, neither {NO_LEADER} (no leader) "
                               f"nor a broker of the cluster ({known.brokers_shown()})")
