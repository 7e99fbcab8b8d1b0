"""The data contract (docs/design.md, telemetry, §5): Arrow schemas of every table replicaflow writes or reads.

Telemetry tables are change logs except `replica_offsets`, `traffic` and `produce_errors`, which are
sampled on the scrape grid. A scrape at T sees every change with ``ts_ms <= T``. Rows that share a ``ts_ms`` are
ordered by ``seq`` (a per-cluster, strictly increasing change number) so a reader can replay
several changes of one partition at one instant in the order they happened.
"""

from __future__ import annotations

import pyarrow as pa

_I32 = pa.int32()
_I64 = pa.int64()
_STR = pa.string()
_LIST = pa.list_(pa.int32())
# The leader epoch of an isr row the controller wrote when a broker failed, rebuilt from its logs: under an epoch
# no line shows (ZooKeeper bumps it, KRaft 3.6+ keeps it); also of the ISR a leader line names as in force before it
# after changes no line shows (ingest/holders.py). No leader's own change: the ISR meters compare the next row's
# epoch with the epoch before it (pipeline/state.py, ingest/broker_sessions.py).
CONTROLLER_ISR_EPOCH = -2


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field("cluster", _STR, nullable=False), pa.field("ts_ms", _I64, nullable=False)]
                     + [pa.field(n, t) for n, t in fields])


TELEMETRY: dict[str, pa.Schema] = {
    # log_dirs: the directory of each replica, in replicas order (as KRaft's PartitionRecord.directories
    # does, KIP-858); null when unknown (then a failed directory of the broker counts for the replica)
    "assignments": _schema(("seq", _I64), ("topic", _STR), ("partition", _I32),
                           ("replicas", _LIST), ("adding", _LIST), ("removing", _LIST),
                           ("log_dirs", pa.list_(_STR))),
    # start_offset: the leader's log end offset when its epoch starts (Partition.makeLeader's leader-epoch
    # start offset, on its "starts at leader epoch N from offset O" line; null without a leader);
    # replicas_end_offset: the highest log end offset among the replicas at that moment (null: unknown).
    # What lies between them is lost when the leader was elected uncleanly (docs/semantics.md §6).
    "leaders": _schema(("seq", _I64), ("topic", _STR), ("partition", _I32),
                       ("leader", _I32), ("leader_epoch", _I32), ("start_offset", _I64),
                       ("replicas_end_offset", _I64)),
    # leader_epoch: the epoch under which the ISR was committed, so the leader's own shrinks and
    # expansions (same epoch) can be told from the controller's (new epoch) -- IsrShrinksPerSec; from logs,
    # -1 when no line names it and CONTROLLER_ISR_EPOCH for an ISR the controller wrote that no line shows.
    # elr / last_known_elr: KIP-966's eligible leader replicas written with the ISR, as KRaft's
    # PartitionChangeRecord carries them ([] when the feature is off; null when unknown, e.g. from logs);
    # a change of the ELR alone is a row too.
    "isr": _schema(("seq", _I64), ("topic", _STR), ("partition", _I32), ("isr", _LIST),
                   ("leader_epoch", _I32), ("elr", _LIST), ("last_known_elr", _LIST)),
    "configs": _schema(("seq", _I64), ("entity_type", _STR), ("entity", _STR), ("name", _STR), ("value", _STR)),
    "brokers": _schema(("seq", _I64), ("broker", _I32), ("state", _STR)),
    # state: 'offline' when one of the broker's log directories failed (1.0+, KIP-112), 'online' when it came
    # back (after a restart); log_dir null: every directory of the broker (a reader that cannot tell them apart)
    "log_dirs": _schema(("seq", _I64), ("broker", _I32), ("log_dir", _STR), ("state", _STR)),
    "fetchers": _schema(("seq", _I64), ("broker", _I32), ("leader", _I32), ("fetcher_id", _I32), ("topic", _STR),
                        ("partition", _I32), ("action", _STR)),
    "replica_offsets": _schema(("topic", _STR), ("partition", _I32), ("broker", _I32),
                               ("log_end_offset", _I64), ("high_watermark", _I64), ("size_bytes", _I64)),
    "traffic": _schema(("broker", _I32), ("name", _STR), ("bytes", _I64)),
    # Produce requests the leader `broker` rejected with `error` since the previous scrape, one row per
    # partition and leader with any (sparse sample); `requests` drive the produce error meters.
    "produce_errors": _schema(("topic", _STR), ("partition", _I32), ("broker", _I32), ("error", _STR),
                              ("requests", _I64), ("messages", _I64), ("bytes", _I64)),
}

# An unclean leader election (docs/semantics.md §6): the leader it elected, the epoch and the messages lost.
UNCLEAN_ELECTIONS = _schema(("topic", _STR), ("partition", _I32), ("leader", _I32), ("leader_epoch", _I32),
                            ("messages_lost", _I64))

TRUTH: dict[str, pa.Schema] = {
    "broker_metrics": _schema(("broker", _I32), ("name", _STR), ("value", pa.float64())),
    "partition_metrics": _schema(("topic", _STR), ("partition", _I32), ("broker", _I32), ("name", _STR),
                                 ("value", pa.float64())),
    "unclean_elections": UNCLEAN_ELECTIONS,
}

ANALYSIS: dict[str, pa.Schema] = {
    "partition_state": pa.schema([
        ("cluster", _STR), ("topic", _STR), ("partition", _I32), ("from_ms", _I64), ("to_ms", _I64),
        ("leader", _I32), ("leader_epoch", _I32), ("replicas", _LIST), ("adding", _LIST), ("removing", _LIST),
        ("isr", _LIST), ("elr", _LIST), ("last_known_elr", _LIST), ("min_isr", _I32), ("urp", pa.bool_()),
        ("urp_kip352", pa.bool_()), ("urp_legacy", pa.bool_()), ("under_min_isr", pa.bool_()), ("at_min_isr", pa.bool_()),
        ("offline", pa.bool_()), ("reassigning", pa.bool_()),
    ]),
    "broker_metrics": TRUTH["broker_metrics"],
    "unclean_elections": UNCLEAN_ELECTIONS,
    "topic_metrics": pa.schema([
        ("cluster", _STR), ("ts_ms", _I64), ("topic", _STR), ("urp", _I64), ("urp_kip352", _I64),
        ("urp_legacy", _I64), ("under_min_isr", _I64), ("at_min_isr", _I64), ("offline", _I64),
        ("reassigning", _I64), ("reassignment_induced_urp", _I64),
    ]),
    "cluster_metrics": pa.schema([
        ("cluster", _STR), ("ts_ms", _I64), ("urp", _I64), ("urp_kip352", _I64), ("urp_legacy", _I64),
        ("under_min_isr", _I64), ("at_min_isr", _I64), ("offline", _I64), ("reassigning", _I64),
        ("reassignment_induced_urp", _I64),
    ]),
    "incidents": pa.schema([
        ("cluster", _STR), ("topic", _STR), ("partition", _I32), ("kind", _STR), ("start_ms", _I64),
        ("end_ms", _I64), ("duration_ms", _I64), ("worst_value", pa.float64()), ("out_of_sync_replicas", _LIST),
    ]),
    "reassignments": pa.schema([
        ("cluster", _STR), ("topic", _STR), ("partition", _I32), ("replica", _I32), ("start_ms", _I64),
        ("end_ms", _I64), ("bytes_to_move", _I64), ("messages_to_move", _I64), ("bytes_moved", _I64),
        ("messages_moved", _I64), ("rate_bps", pa.float64()), ("leader_growth_bps", pa.float64()),
        ("eta_ms", _I64), ("status", _STR), ("throttled", pa.bool_()),
    ]),
    "reassignment_progress": pa.schema([
        ("cluster", _STR), ("ts_ms", _I64), ("topic", _STR), ("partition", _I32), ("replica", _I32),
        ("bytes_moved", _I64), ("bytes_remaining", _I64), ("rate_bps", pa.float64()),
    ]),
    # Events recognised in broker logs (ingest/): one row per recognised line; `message` is the raw
    # message text (untrusted: the report escapes it).
    "log_events": pa.schema([
        ("cluster", _STR), ("ts_ms", _I64), ("broker", _I32), ("source", _STR), ("line_number", _I64),
        ("kind", _STR), ("topic", _STR), ("partition", _I32), ("isr", _LIST), ("leader_epoch", _I32),
        ("message", _STR),
        # what the line says beyond the partition (docs/logs.md): the leader it names, the broker it is
        # about when that is not the logging one (fenced broker, controller, previous leader), replica
        # lists, the partition epoch (zkVersion), an offset, min.insync.replicas of a refused produce,
        # a state word (target state, `refused`, `under-min-isr`), the log directory, the error name
        ("leader", _I32), ("target_broker", _I32), ("replicas", _LIST), ("adding", _LIST), ("removing", _LIST),
        ("partition_epoch", _I32), ("offset", _I64), ("min_isr", _I32), ("state", _STR), ("log_dir", _STR),
        ("error", _STR),
    ]),
    "rejects": pa.schema([("source", _STR), ("line_number", _I64), ("raw_line", _STR), ("reason", _STR)]),
}
