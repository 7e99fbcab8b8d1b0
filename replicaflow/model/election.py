"""The controller's rules (docs/semantics.md §6): which controller, how fast it notices a failure,
when it bumps the leader epoch, whom it elects, and when it rebalances leadership.

Pure functions over NumPy arrays (scalars work too); the simulator's ``KafkaController`` calls them.
"""

from __future__ import annotations

import numpy as np

from replicaflow.model import columns
from replicaflow.model.version import KafkaVersion

ZOOKEEPER, KRAFT = "zookeeper", "kraft"
CONTROLLERS = (ZOOKEEPER, KRAFT)

# The changes after which a controller may bump the leader epoch without electing a new leader: its own
# removal of a broker from the ISR, a reassignment's start and end, and the leader's own ISR shrink that
# the controller commits (AlterIsr/AlterPartition, or before 2.7 the leader's ZooKeeper write).
ISR_SHRINK, REASSIGNMENT_START, REPLICAS_REMOVED = "isr_shrink", "reassignment_start", "replicas_removed"
LEADER_ISR_SHRINK = "leader_isr_shrink"

KRAFT_BROKER_SESSION_TIMEOUT_MS = 9_000  # broker.session.timeout.ms (KafkaConfig.BrokerSessionTimeoutMs, 3.3+)
# the log_events state of a start ZooKeeper 0.9+ refuses (``registration_ms`` None): /brokers/ids/N is another session's
ALREADY_REGISTERED = "already registered"
# the error KRaft's controller returns for a registration while the old process's session is valid (Errors, 3.3+)
DUPLICATE_BROKER_REGISTRATION = "DUPLICATE_BROKER_REGISTRATION"
KRAFT_REGISTRATION_BACKOFF_MS = 100  # BrokerLifecycleManager's first retry of a refused registration, then doubling
LEADER_IMBALANCE_CHECK_INTERVAL_MS = 300_000  # leader.imbalance.check.interval.seconds = 300
LEADER_IMBALANCE_PER_BROKER_PERCENTAGE = 10  # leader.imbalance.per.broker.percentage (ZooKeeper controller only)
# unclean.leader.election.interval.ms (ReplicationConfigs, 3.9+): KRaft's check of leaderless partitions
KRAFT_UNCLEAN_CHECK_INTERVAL_MS = 300_000
ZK_FIRST_REBALANCE_CHECK_MS = 5_000  # KafkaController.onControllerFailover: scheduleAutoLeaderRebalanceTask(5 s)


def default_controller(version: KafkaVersion) -> str:
    """ZooKeeper up to 3.9 (it stays the quickstart's and the broker's default until 4.0), KRaft in 4.x."""
    return KRAFT if version.kraft_only else ZOOKEEPER


def next_controller(current, current_up, lowest_up):
    """The active controller after a broker's state changes (§6): it keeps the role while its broker is live (up, or
    in its controlled shutdown, which the controller takes itself before it resigns) — neither
    ZooKeeper's ``/controller`` znode (``KafkaController.elect`` stops where one exists) nor KRaft's quorum leader
    moves to a broker that comes back — and when it is down, the live broker with the lowest id takes it (Kafka's
    race for the znode or the vote, made deterministic), none (-1) while no broker is live. ``current_up``: whether
    ``current``'s broker is live; ``lowest_up``: the lowest live id, -1 if none. Arrays or Spark Columns."""
    return columns.where(current_up, current, lowest_up)


def controller_problem(version: KafkaVersion, controller: str) -> str | None:
    """Why ``controller`` cannot run ``version`` (one sentence), or None."""
    if controller == ZOOKEEPER and version.kraft_only:
        return f"Kafka {version} removed ZooKeeper mode; use 'kraft'"
    if controller == KRAFT and not version.kraft_production_ready:
        return f"KRaft is production-ready from Kafka 3.3, not in {version}; use 'zookeeper'"
    return None


def session_timeout_ms(version: KafkaVersion, controller: str) -> int:
    """How long a crashed broker stays registered: ``zookeeper.session.timeout.ms`` (6 s up to 2.4, 18 s from
    2.5, KIP-537) or KRaft's ``broker.session.timeout.ms`` (9 s)."""
    if controller == KRAFT:
        return KRAFT_BROKER_SESSION_TIMEOUT_MS
    return version.default_zookeeper_session_timeout_ms


def registration_ms(version: KafkaVersion, controller: str, crashed_ms: int, started_ms: int,
                    session_timeout_ms: int) -> int | None:
    """When a broker that crashed at ``crashed_ms`` and starts again at ``started_ms`` is registered (§6), None when
    its start fails: the last of :func:`registration_tries`."""
    tries = registration_tries(version, controller, crashed_ms, started_ms, session_timeout_ms)
    return None if tries is None else tries[-1]


def registration_tries(version: KafkaVersion, controller: str, crashed_ms: int, started_ms: int,
                       session_timeout_ms: int) -> tuple[int, ...] | None:
    """The instants a broker that crashed at ``crashed_ms`` and starts again at ``started_ms`` tries to register (§6),
    the last one registering it; None when its start fails. Once its old session expired (``crashed_ms +
    session_timeout_ms``) at once, one try; before, the old registration still stands:
    - ZooKeeper 0.8 finds its own ephemeral ``/brokers/ids`` node, sleeps a session timeout and tries again
      (``ZkUtils.createEphemeralPathExpectConflictHandleZKBug``): its first try after the node expired;
    - ZooKeeper 0.9+ finds another session's node: NodeExists, "restarted it faster than the zookeeper timeout"
      (``ZkUtils.registerBrokerInZk``; 1.1+ ``KafkaZkClient.getAfterNodeExists``), and the broker exits: None;
    - KRaft's controller refuses it (DUPLICATE_BROKER_REGISTRATION) while the old session is valid, up to and
      including its deadline (``ClusterControlManager.registerBroker``, ``BrokerHeartbeatManager.hasValidSession``),
      and ``BrokerLifecycleManager`` tries again after 100 ms, doubling up to the session timeout (half of it from
      4.0); its ±2 % jitter is left out."""
    expires_ms = crashed_ms + session_timeout_ms
    if controller == ZOOKEEPER:
        if started_ms >= expires_ms:
            return (started_ms,)
        if not version.zk_registration_waits_for_own_node:
            return None
        return tuple(range(started_ms, expires_ms + session_timeout_ms, session_timeout_ms))
    cap_ms = session_timeout_ms // 2 if version.kraft_registration_backoff_max_is_half_session else session_timeout_ms
    tries, delay_ms = [started_ms], KRAFT_REGISTRATION_BACKOFF_MS
    while tries[-1] <= expires_ms:
        tries.append(tries[-1] + min(delay_ms, cap_ms))
        delay_ms *= 2
    return tuple(tries)


def reads_unclean_config(version: KafkaVersion, controller: str) -> bool:
    """Whether the controller elects uncleanly where ``unclean.leader.election.enable`` says so: ZooKeeper's always,
    KRaft's from 3.9 (``version.kraft_reads_unclean_config``); before, only ``kafka-leader-election
    --election-type unclean`` elects outside the ISR."""
    return controller == ZOOKEEPER or version.kraft_reads_unclean_config


def bumps_leader_epoch(version: KafkaVersion, controller: str, change: str) -> bool:
    """Whether ``change`` gives the partition a new leader epoch when its leader stays (§6).

    ZooKeeper: every LeaderAndIsr the controller writes carries a new epoch — removing a broker from
    the ISR (``ReplicaStateMachine`` OfflineReplica → ``removeReplicasFromIsr``), the start of a
    reassignment (``KafkaController.onPartitionReassignment`` → ``updateLeaderEpochAndSendRequest``)
    and dropping replicas — but the leader's own ISR change keeps its epoch (written by the leader up to
    2.6, ``Partition.shrinkIsr``; from 2.7 ``KafkaController.processAlterIsr`` stores the proposed
    LeaderAndIsr as it is). KRaft (``PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded``, which
    ``ReplicationControlManager.alterPartition`` runs for the leader's AlterPartition too): a change that
    removes replicas bumps it; adding replicas does not; an ISR shrink, the controller's or the
    leader's, does only before metadata version 3.6 (``MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink``,
    KAFKA-15021). The partition epoch moves with every change in both.
    """
    if controller == ZOOKEEPER:
        return change != LEADER_ISR_SHRINK
    if change in (ISR_SHRINK, LEADER_ISR_SHRINK):
        return not version.kraft_keeps_epoch_on_isr_shrink
    return change == REPLICAS_REMOVED


def completion_epoch_bumps(controller: str, removed_in_isr):
    """Leader-epoch bumps when a reassignment completes without a leader change (§6, KIP-455).

    ZooKeeper (``KafkaController.onPartitionReassignment`` steps B3–B4): one LeaderAndIsr with the
    target replicas (``moveReassignedPartitionLeaderIfRequired``), then each removed replica that was in
    the ISR goes OfflineReplica, one ``removeReplicasFromIsr`` write (and epoch) per replica. KRaft
    writes one PartitionChangeRecord.
    """
    removed_in_isr = np.asarray(removed_in_isr)
    return 1 + removed_in_isr if controller == ZOOKEEPER else np.ones_like(removed_in_isr)


def removes_from_isr(isr_left, elr_enabled: bool):
    """Whether the controller takes a dead or shut-down broker's replica out of an ISR that would keep
    ``isr_left`` members (a count, NumPy or Spark Column): not the last member, whose partition goes offline
    with it still in the ISR (ZooKeeper ``ReplicaStateMachine.doRemoveReplicasFromIsr``, KRaft
    ``PartitionChangeBuilder``), unless eligible leader replicas are on (KIP-966: the ISR may empty)."""
    return (isr_left > 0) | elr_enabled


def elect_leader(live, in_isr, unclean, elr=None):
    """The new leader's slot of each partition row: the first live ISR member in assignment order — or,
    when the ISR is empty, the first live eligible leader replica (KIP-966, a clean election) — else,
    with ``unclean.leader.election.enable``, the first live replica, else -1 (offline); and whether
    the choice was unclean (``PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection``,
    KRaft ``PartitionChangeBuilder.electLeader`` / ``isValidNewLeader``).

    ``live``, ``in_isr`` and ``elr`` are [P, S] (assigned, live replicas; ISR members; ELR members),
    ``unclean`` is [P].
    """
    live, in_isr = np.atleast_2d(live), np.atleast_2d(in_isr)
    unclean = np.broadcast_to(np.asarray(unclean, dtype=bool), live.shape[:1])
    clean = live & in_isr
    if elr is not None:
        clean = clean | (live & np.atleast_2d(elr) & ~in_isr.any(axis=1)[:, None])
    has_clean = clean.any(axis=1)
    pool = np.where(has_clean[:, None], clean, live & unclean[:, None])
    slot = np.where(pool.any(axis=1), pool.argmax(axis=1), -1)
    return slot, (slot >= 0) & ~has_clean


def eligible_leader_replicas_problem(version: KafkaVersion, enabled: bool) -> str | None:
    """Why ``kafka.eligible_leader_replicas`` cannot be set for ``version`` (one sentence), or None."""
    if enabled and not version.elr_supported:
        return f"eligible leader replicas (KIP-966) need Kafka 4.0 or later, not {version}"
    return None


def next_elr(old_isr, new_isr, elr, last_known_elr, min_isr, unclean_shutdown=False):
    """The ELR and LastKnownElr after an ISR change, with eligible leader replicas on (KIP-966,
    ``PartitionChangeBuilder.maybePopulateTargetElr``).

    At or above min ISR both are empty. Below it, the ELR is the old ELR and old ISR less the new ISR
    and less the replicas whose broker shut down uncleanly; LastKnownElr gathers everything that has
    left (old ISR, ELR and LastKnownElr) that is in neither the new ISR nor the ELR. Arrays are [P, S]
    bool (``unclean_shutdown`` broadcasts), ``min_isr`` [P] (the topic's effective min ISR).
    """
    old_isr, new_isr = np.atleast_2d(old_isr), np.atleast_2d(new_isr)
    elr, last_known_elr = np.atleast_2d(elr), np.atleast_2d(last_known_elr)
    below = (new_isr.sum(axis=1) < np.asarray(min_isr))[:, None]
    candidates = elr | old_isr
    new_elr = below & candidates & ~new_isr & ~np.asarray(unclean_shutdown, dtype=bool)
    new_lke = below & (candidates | last_known_elr) & ~new_isr & ~new_elr
    return new_elr, new_lke


def election_was_clean(new_leader, prev_isr):
    """Whether the controller's UncleanLeaderElectionsPerSec meter leaves a leader change uncounted: no leader
    (-1), or a leader from the previous ISR (KRaft ``PartitionRegistration.electionWasClean``, which the
    ZooKeeper controller's unclean elections match). An ELR member elected from an empty ISR counts.
    ``new_leader`` [P] broker ids, ``prev_isr`` [P, S] broker ids (-1 padding)."""
    new_leader, prev_isr = np.asarray(new_leader), np.atleast_2d(prev_isr)
    return (new_leader < 0) | (prev_isr == np.asarray(new_leader)[..., None]).any(axis=-1)


def replicas_end_offset(log_end_offsets, assigned):
    """The highest log end offset among a partition's replicas (``log_end_offsets``/``assigned`` [.., S]): how
    far its log reached, on whichever replica, when the leader changes."""
    return np.where(assigned, log_end_offsets, np.iinfo(np.int64).min).max(axis=-1)


def messages_lost(replicas_end, start_offset):
    """Messages an unclean leader loses: everything any replica's log holds beyond the offset the new leader
    starts its epoch from (its log end offset); the others truncate to it when they follow it (KIP-101's
    leader-epoch truncation, §6). NumPy arrays or Spark Columns (``telemetry`` leaders rows carry both)."""
    return columns.maximum(replicas_end - start_offset, 0)


def imbalanced_partitions(controller: str, preferred, leader, preferred_ready):
    """Partitions a preferred-leader rebalance moves (``auto.leader.rebalance.enable``, §6).

    ZooKeeper (``KafkaController.checkAndTriggerAutoLeaderRebalance``): per preferred broker, the share of
    its partitions led elsewhere; above ``leader.imbalance.per.broker.percentage`` (10 %, strictly), its
    partitions whose preferred replica can lead (alive, in the ISR) are elected. KRaft
    (``ReplicationControlManager.maybeBalancePartitionLeaders``) has no threshold: every imbalanced
    partition whose preferred replica can lead. ``preferred``/``leader`` are broker ids [P]
    (-1 offline), ``preferred_ready`` [P] bool.
    """
    preferred, leader = np.asarray(preferred), np.asarray(leader)
    off = leader != preferred
    if controller == KRAFT:
        return off & preferred_ready
    ids, inverse = np.unique(preferred, return_inverse=True)
    ratio = np.bincount(inverse, weights=off) / np.bincount(inverse)
    over = ratio > LEADER_IMBALANCE_PER_BROKER_PERCENTAGE / 100
    return off & over[inverse] & preferred_ready


def next_rebalance_check_ms(controller: str, took_over_ms: int, now_ms: int) -> int:
    """When the controller next checks leader balance after ``now_ms``: the ZooKeeper controller 5 s after it
    took over at ``took_over_ms`` (``KafkaController.onControllerFailover``), then every
    ``leader.imbalance.check.interval.seconds`` (300 s); KRaft
    (``QuorumController.maybeScheduleNextBalancePartitionLeaders``) 300 s after it finds an imbalance, or after it
    takes over with one (``CompleteActivationEvent``)."""
    if controller == KRAFT:
        return now_ms + LEADER_IMBALANCE_CHECK_INTERVAL_MS
    first = took_over_ms + ZK_FIRST_REBALANCE_CHECK_MS
    if now_ms < first:
        return first
    return first + ((now_ms - first) // LEADER_IMBALANCE_CHECK_INTERVAL_MS + 1) * LEADER_IMBALANCE_CHECK_INTERVAL_MS
