"""Replica fetcher threads and partition failure (docs/semantics.md §4, KIP-461)."""

from __future__ import annotations

import numpy as np

from replicaflow.errors import ReplicaflowError
from replicaflow.model.version import KafkaVersion

# §4: errors that mark the partition failed (2.3+) / kill the thread (≤ 2.2), and errors that are retried.
FAILING_ERRORS = frozenset({"storage", "unexpected", "fenced_leader_epoch"})
RETRIED_ERRORS = frozenset({"corrupt_records", "not_leader", "unknown_leader_epoch", "unknown_topic",
                            "offset_out_of_range", "request_failure"})
FETCH_ERRORS = FAILING_ERRORS | RETRIED_ERRORS
RETRY_BACKOFF_MS = 1000


def java_string_hash(s: str) -> int:
    """Java ``String.hashCode`` (UTF-16 code units, 32-bit signed overflow)."""
    h = 0
    for unit in np.frombuffer(s.encode("utf-16-be"), dtype=">u2"):
        h = (31 * h + int(unit)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def _java_abs(x: np.ndarray) -> np.ndarray:
    """Kafka's ``Utils.abs``: abs with Integer.MIN_VALUE mapped to 0."""
    return np.where(x == np.iinfo(np.int32).min, 0, np.abs(x)).astype(np.int64)


def fetcher_ids(topic_hash, partition, num_fetchers: int) -> np.ndarray:
    """Vectorized ``abs(31 * topic.hashCode + partition) % num.replica.fetchers`` with int32 overflow."""
    mixed = (np.asarray(topic_hash, dtype=np.int64) * 31 + np.asarray(partition, dtype=np.int64)) & 0xFFFFFFFF
    signed = np.where(mixed >= (1 << 31), mixed - (1 << 32), mixed).astype(np.int32)
    return _java_abs(signed) % num_fetchers


def fetcher_id(topic: str, partition: int, num_fetchers: int) -> int:
    """The fetcher thread index of one partition (A15)."""
    return int(fetcher_ids(np.array([java_string_hash(topic)]), np.array([partition]), num_fetchers)[0])


def fetcher_thread_name(fetcher_id_: int, leader_id: int) -> str:
    return f"ReplicaFetcherThread-{fetcher_id_}-{leader_id}"


def fetch_error_problem(version: KafkaVersion, error: str) -> str | None:
    """Why ``version`` cannot raise the fetch error, or None: FENCED_LEADER_EPOCH came with KIP-320 (2.1)."""
    if error == "fenced_leader_epoch" and not version.leader_epoch_fencing:
        return f"a fenced leader epoch needs Kafka 2.1+ (KIP-320), found {version}"
    return None


def fetch_error_outcome(version: KafkaVersion, error: str) -> str:
    """'failed' (KIP-461, 2.3+), 'thread_died' (≤ 2.2), 'fenced', 'retried' (backoff 1000 ms) or 'halted' for an
    error kind. Before 1.0 a storage error halts the broker (ReplicaFetcherThread.processPartitionData catches
    ``KafkaStorageException``: FATAL "Disk error while replicating data", then ``Runtime.getRuntime.halt(1)``).

    1.0 – 2.2 retry a storage error (``AbstractFetcherThread.processFetchRequest`` catches
    ``KafkaStorageException`` apart from the other errors that kill the thread). On 2.1 – 2.2 a fenced leader
    epoch never reaches the thread's error handling: ``AbstractFetcherThread.onPartitionFenced`` only removes
    the partition from the thread's ``partitionStates`` ('fenced'), which fetches it again at the next
    LeaderAndIsr with a new epoch; from 2.3 the same method marks it failed.
    """
    if error not in FETCH_ERRORS:
        raise ReplicaflowError(f"error: unknown fetch error '{error}', expected one of {', '.join(sorted(FETCH_ERRORS))}")
    if (problem := fetch_error_problem(version, error)) is not None:
        raise ReplicaflowError(f"error: {problem}")
    if error == "storage" and version.storage_error_halts_broker:
        return "halted"
    if error in RETRIED_ERRORS or (error == "storage" and version.storage_error_retried):
        return "retried"
    if version.fetcher_failure_isolated:
        return "failed"
    return "fenced" if error == "fenced_leader_epoch" else "thread_died"


def takes_log_dir_offline(version: KafkaVersion, error: str) -> bool:
    """Whether the error also fails the follower's log directory: from 1.0 (KIP-112) a storage error while
    appending is an I/O error that ``Log.maybeHandleIOException`` has reported to the
    ``LogDirFailureChannel`` before it throws ``KafkaStorageException``, so besides the fetcher's own
    handling (retried on 1.0 – 2.2, marked failed from 2.3) the broker's ``LogDirFailureHandler`` takes the
    directory offline (docs/semantics.md §4, §6.1). Before 1.0 the error halts the broker
    (``fetch_error_outcome``)."""
    return error == "storage" and not version.storage_error_halts_broker
