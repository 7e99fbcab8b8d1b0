"""A broker's log directories (JBOD, KIP-112; docs/semantics.md §6.1): where a new replica's log goes, when
JBOD is allowed, and whether a failed directory halts the broker.

Pure functions; the simulator's ``Faults`` and ``KafkaController`` call them.
"""

from __future__ import annotations

import numpy as np

from replicaflow.model.election import KRAFT
from replicaflow.model.version import KafkaVersion


def next_log_dir(logs_per_dir, live) -> int:
    """The directory a new log is created in (``LogManager.nextLogDirs``, its first choice): the live
    directory holding the fewest logs, ties in ``log.dirs`` order. Kafka sorts a map of the directories
    by count with a stable sort; up to four directories Scala's small maps keep ``log.dirs`` order, so
    ties go to the first; with more, its hash order decides (replicaflow keeps ``log.dirs`` order).
    -1 when no directory is live."""
    counts = np.where(np.asarray(live, dtype=bool), np.asarray(logs_per_dir, dtype=np.int64), np.iinfo(np.int64).max)
    return int(np.argmin(counts)) if np.asarray(live).any() else -1


def initial_log_dirs(replica_brokers, n_dirs) -> np.ndarray:
    """The directory of each replica of a new cluster, ``replica_brokers`` in creation order (partition
    by partition): ``next_log_dir`` in turn from empty directories, which is round-robin over each
    broker's ``log.dirs`` — its k-th log goes to directory k mod D."""
    brokers = np.asarray(replica_brokers, dtype=np.int64)
    order = np.argsort(brokers, kind="stable")
    ranked = brokers[order]
    starts = np.searchsorted(ranked, ranked, side="left")
    rank = np.empty_like(brokers)
    rank[order] = np.arange(len(brokers)) - starts
    return (rank % np.asarray(n_dirs, dtype=np.int64)[brokers]).astype(np.int16)


def jbod_problem(version: KafkaVersion, controller: str, n_dirs: int) -> str | None:
    """Why a broker cannot have ``n_dirs`` log directories (one sentence), or None: KRaft brokers support
    JBOD from 3.7 (KIP-858: directory assignment and failure reporting to the controller); before, a KRaft
    broker's failed directory never reached the controller (``ReplicaManager.handleLogDirFailure``:
    "Unable to propagate log dir failure via Zookeeper in KRaft mode") and Kafka listed JBOD as missing."""
    if n_dirs > 1 and controller == KRAFT and not version.at_least("3.7"):
        return f"several log directories (JBOD) need Kafka 3.7 or later under KRaft (KIP-858), not {version}"
    return None


def failure_halts_broker(version: KafkaVersion, live_dirs_left: int) -> bool:
    """Whether a failed log directory stops the whole broker. Before 1.0 every storage error halts it
    (``ReplicaManager.appendToLocalLog``: "Halting due to unrecoverable I/O error"); from 1.0 (KIP-112) the
    broker stops serving that directory's replicas and halts only when no live directory is left
    (``LogManager.handleLogDirFailure``: "Shutdown broker because all log dirs in … have failed")."""
    return version.storage_error_halts_broker or live_dirs_left == 0
