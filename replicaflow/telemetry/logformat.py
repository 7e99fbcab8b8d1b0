"""Kafka broker log lines per release (docs/semantics.md §7), rendered from the simulator's structured events.

The simulator records what a broker would log as plain dicts (``ts_ms``, ``broker``, ``kind`` and
kind-specific keys); this module turns them into the lines Kafka itself writes, in the log4j layout
``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)`` (UTC), one file per broker and appender:
``broker-N/server.log``, ``broker-N/state-change.log``, ``broker-N/controller.log``. The wording of
each message follows the release family (``KafkaVersion.log_family``); where docs/semantics.md §7 is silent
the choice is written down in ``docs/logs.md`` (controller lines are KRaft's from 3.3). The replication fetcher's
lines are in ``fetcher_lines``; the layout, files and partition forms all of them share in ``log_lines``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.config_lines import config_changed
from replicaflow.telemetry.fetcher_lines import (
    fetch_storage_halt,
    fetcher_added,
    fetcher_removed,
    partition_failed,
    partition_fenced,
    thread_died,
)
from replicaflow.telemetry.io import atomic_dir
from replicaflow.telemetry.lifecycle_lines import (
    broker_shutdown,
    broker_started,
    registration_refused,
    startup_failed,
)
from replicaflow.telemetry.log_lines import (
    BECOME_LEADER_TP_SINCE,
    CONTROLLER,
    HEARTBEAT_MANAGER_LOGGER,
    KRAFT_CONTROLLER_LOGGER,
    OLD_FAMILY,
    PARTITION_LOGGER,
    SERVER,
    STATE_CHANGE,
    STATE_CHANGE_LOGGER,
    ZK_CONTROLLER_LOGGER,
    Line,
    broker_list,
    broker_seq,
    fatal_level,
    format_line,
    is_kraft,
    partition_name,
    partition_prefix,
    topic_id,
    topic_partition_since,
)

# --- one renderer per event kind -------------------------------------------------------------

def _isr_shrink(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    pre = partition_prefix(fam, e["topic"], e["partition"], e["broker"])
    # 0.10 names the partition again: `[t,p]` when shrinking, TopicPartition's `t-p` when expanding
    whose = "" if v.at_least("0.11") else f"for partition [{e['topic']},{e['partition']}] "
    msg = f"Shrinking ISR {whose}from {broker_list(e['old_isr'])} to {broker_list(e['new_isr'])}"
    if v.at_least("2.2"):
        items = []
        for r in e.get("out_of_sync", []):
            leo = r.get("leo")
            end = "unknown" if (leo is None or leo < 0) and v.at_least("3.0") else str(-1 if leo is None else leo)
            item = f"(brokerId: {r['broker']}, endOffset: {end}"
            if v.at_least("3.6"):
                lcu = r.get("last_caught_up_ms")
                item += f", lastCaughtUpTimeMs: {'unknown' if lcu is None or lcu < 0 else lcu}"
            items.append(item + ")")
        msg += (f". Leader: (highWatermark: {e['hw']}, endOffset: {e['leo']}). "
                f"Out of sync replicas: {' '.join(items)}.")
    return [(SERVER, format_line(e["ts_ms"], "INFO", pre + msg, PARTITION_LOGGER))]


def _isr_expand(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    if v.at_least("2.8"):  # from 2.8 the expansion is only visible as "ISR updated"
        return []
    pre = partition_prefix(fam, e["topic"], e["partition"], e["broker"])
    whose = "" if v.at_least("0.11") else f"for partition {e['topic']}-{e['partition']} "
    msg = f"Expanding ISR {whose}from {broker_list(e['old_isr'])} to {broker_list(e['new_isr'])}"
    return [(SERVER, format_line(e["ts_ms"], "INFO", pre + msg, PARTITION_LOGGER))]


def _isr_updated(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    pre = partition_prefix(fam, e["topic"], e["partition"], e["broker"])
    isr, epoch = broker_list(e["isr"]), int(e["partition_epoch"])
    if v.at_least("3.5"):
        mark = "(under-min-isr)" if e.get("under_min_isr") else ""
        msg = f"ISR updated to {isr} {mark} and version updated to {epoch}"
    elif v.at_least("3.1"):
        msg = f"ISR updated to {isr} and version updated to {epoch}"
    elif v.at_least("2.8"):
        msg = f"ISR updated to {isr} and version updated to [{epoch}]"
    elif v.alter_partition:
        msg = f"ISR updated from AlterIsr to {isr} and version updated to [{epoch}]"
    else:
        msg = f"ISR updated to [{isr}] and zkVersion updated to [{epoch}]"
    # Partition.updateIsr logged the ZooKeeper write at TRACE until 2.4 (INFO from 2.4)
    level = "INFO" if v.at_least("2.4") else "TRACE"
    return [(SERVER, format_line(e["ts_ms"], level, pre + msg, PARTITION_LOGGER))]


def _isr_update_failed(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    if v.alter_partition:
        raise ValueError("event 'isr_update_failed' is a ZooKeeper-era line (Kafka < 2.7)")
    pre = partition_prefix(fam, e["topic"], e["partition"], e["broker"])
    ver = str(e["partition_epoch"]) if v.at_least("2.4") else f"[{e['partition_epoch']}]"
    msg = f"Cached zkVersion {ver} not equal to that in zookeeper, skip updating ISR"
    return [(SERVER, format_line(e["ts_ms"], "INFO", pre + msg, PARTITION_LOGGER))]


def _leader_start(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    tp = partition_name(fam, e["topic"], e["partition"])
    epoch, prev = int(e["leader_epoch"]), int(e["prev_leader_epoch"])
    if not v.at_least("0.11"):
        # No Partition line before KIP-101's leader epoch (0.11): the leader's only record is ReplicaManager's
        # TRACE line in state-change.log (Kafka's log4j.properties keeps state.change.logger at TRACE). The
        # request's correlation id is not modelled: the leader epoch stands in for it.
        named = topic_partition_since(v, BECOME_LEADER_TP_SINCE, e["topic"], e["partition"])
        msg = (f"Broker {e['broker']} completed LeaderAndIsr request correlationId {epoch} from controller "
               f"{e.get('controller', e['broker'])} epoch 1 for the become-leader transition for partition {named}")
        return [(STATE_CHANGE, format_line(e["ts_ms"], "TRACE", msg, STATE_CHANGE_LOGGER))]
    if not v.at_least("2.6"):
        # Before 2.6 the leader logs through its Partition logger (server.log), without the ISR; 2.4.1 adds the HW
        # (KAFKA-9491 on the 2.4 branch: 2.4.0 `Leader Epoch`, 2.4.1 and 2.5.0 the form below)
        pre = partition_prefix(fam, e["topic"], e["partition"], e["broker"])
        if v.at_least("2.4.1"):
            msg = (f"{e['topic']}-{e['partition']} starts at leader epoch {epoch} from offset {e['leo']} with high "
                   f"watermark {e['hw']}. Previous leader epoch was {prev}.")
        else:
            msg = (f"{e['topic']}-{e['partition']} starts at Leader Epoch {epoch} from offset {e['leo']}. "
                   f"Previous Leader Epoch was: {prev}")
        return [(SERVER, format_line(e["ts_ms"], "INFO", pre + msg, PARTITION_LOGGER))]
    isr, adding, removing = broker_list(e["isr"]), broker_list(e.get("adding", [])), broker_list(e.get("removing", []))
    if not v.at_least("3.3"):
        msg = (f"Leader {tp} starts at leader epoch {epoch} from offset {e['leo']} with high watermark "
               f"{e['hw']} ISR [{isr}] addingReplicas [{adding}] removingReplicas [{removing}]. "
               f"Previous leader epoch was {prev}.")
    else:
        msg = (f"Leader {tp} with topic id Some({e.get('topic_id') or topic_id(e['topic'])}) starts at leader "
               f"epoch {epoch} from offset {e['leo']} with partition epoch {e['partition_epoch']}, high "
               f"watermark {e['hw']}, ISR [{isr}], adding replicas [{adding}] and removing replicas [{removing}]")
        if v.at_least("3.5"):
            # Partition.makeLeader writes `removing replicas [..] ${marker}.`: a space, then the marker or "".
            msg += " (under-min-isr)." if e.get("under_min_isr") else " ."
            if v.at_least("3.6"):
                prev_leader = int(e.get("prev_leader", -1))
                who = f"Some({prev_leader})" if prev_leader >= 0 else "None"
                msg += f" Previous leader {who} and previous leader epoch was {prev}."
            else:
                msg += f" Previous leader epoch was {prev}."
        else:
            msg += f". Previous leader epoch was {prev}."
    return [(STATE_CHANGE, format_line(e["ts_ms"], "INFO", f"[Broker id={e['broker']}] " + msg,
                                       STATE_CHANGE_LOGGER))]


def _controller_prefix(v: KafkaVersion, fam: str, e: dict) -> str:
    broker = e["broker"]
    if is_kraft(v, e):  # QuorumController's logIdent: `[Controller N] ` up to 3.4 (KAFKA #13390 renamed it in 3.5)
        return f"[QuorumController id={broker}] " if v.at_least("3.5") else f"[Controller {broker}] "
    return f"[Controller {broker}]: " if fam == OLD_FAMILY else f"[Controller id={broker}] "


def _reassignment_started(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    pre = _controller_prefix(v, fam, e)
    tp, replicas = partition_name(fam, e["topic"], e["partition"]), list(e["replicas"])
    if v.at_least("2.4"):  # KIP-455 controllers log the full assignment: target, then the removing origin replicas
        adding, removing = list(e["adding"]), list(e["removing"])
        replicas += [r for r in removing if r not in replicas]
    if is_kraft(v, e):
        msg = _assignment_change_record(e, None, -2, replicas, removing, adding)
        return [(CONTROLLER, format_line(e["ts_ms"], "INFO", pre + msg, KRAFT_CONTROLLER_LOGGER))]
    if v.at_least("2.4"):
        msg = (f"Successfully updated assignment of partition {tp} to ReplicaAssignment(replicas="
               f"{broker_list(replicas)}, addingReplicas={broker_list(adding)}, removingReplicas={broker_list(removing)})")
    else:
        msg = f"Handling reassignment of partition {tp} to new replicas {broker_list(replicas)}"
    return [(CONTROLLER, format_line(e["ts_ms"], "INFO", pre + msg, ZK_CONTROLLER_LOGGER))]


def _assignment_change_record(e: dict, isr: list[int] | None, leader: int, replicas: list[int], removing: list[int],
                              adding: list[int]) -> str:
    """ReplicationControlManager.replay's INFO for a PartitionChangeRecord that sets the reassignment lists (KRaft):
    ``isr`` None and ``leader`` -2 where the record leaves them unchanged."""
    listed = "null" if isr is None else f"[{broker_seq(isr)}]"
    return (f"Replayed partition assignment change PartitionChangeRecord(partitionId={e['partition']}, "
            f"topicId={e.get('topic_id') or topic_id(e['topic'])}, isr={listed}, leader={leader}, "
            f"replicas=[{broker_seq(replicas)}], removingReplicas=[{broker_seq(removing)}], "
            f"addingReplicas=[{broker_seq(adding)}], leaderRecoveryState=-1) for topic {e['topic']}")


def _reassignment_completed(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """The end of a reassignment (``cancelled``: KIP-455's cancel, back to the origin replicas, which are in sync
    already). KRaft: the leader's AlterPartition that brings the last target replica into the ISR (not for a
    cancel; it says so where the completion moves the leadership away from that leader), then the
    PartitionChangeRecord that empties both lists (ReplicationControlManager.replay, INFO, with the ISR and, where
    it changed, the leader: -2 is no change). ZooKeeper 2.4+: KafkaController's caught-up line (not for a cancel,
    which completes inside onPartitionReassignment), then the assignment it writes."""
    pre = _controller_prefix(v, fam, e)
    tp, replicas = partition_name(fam, e["topic"], e["partition"]), list(e["replicas"])
    cancelled = bool(e.get("cancelled", False))
    if is_kraft(v, e):
        old = int(e.get("leader", replicas[0]))  # the leader before; -1: none (the first replica stands in)
        node, new_leader = old if old >= 0 else replicas[0], int(e.get("new_leader", old))
        # the sender leads no more: AlterPartition v2+ (3.3+) answers NEW_LEADER_ELECTED
        moved = " and triggered a leadership change. Returning NEW_LEADER_ELECTED" if new_leader != old >= 0 else ""
        msgs = [] if cancelled else [
            f"AlterPartition request from node {node} for {tp} completed the ongoing partition reassignment{moved}."]
        if "isr" in e:
            msgs.append(_assignment_change_record(e, e["isr"], -2 if new_leader == old else new_leader, replicas, [], []))
        return [(CONTROLLER, format_line(e["ts_ms"], "INFO", pre + m, KRAFT_CONTROLLER_LOGGER)) for m in msgs]
    if v.at_least("2.4"):
        caught_up = f"Target replicas ArrayBuffer({broker_seq(replicas)}) have all caught up with the leader for " \
                    f"reassigning partition {tp}"
        msgs = ([] if cancelled else [caught_up]) + [
            f"Successfully updated assignment of partition {tp} to ReplicaAssignment(replicas="
            f"{broker_list(replicas)}, addingReplicas=, removingReplicas=)"]
    elif v.at_least("2.0"):  # KafkaController.removePartitionsFromReassignedPartitions: a Set of them
        msgs = [f"Removing partitions Set({tp}) from the list of reassigned partitions in zookeeper"]
    elif v.at_least("1.1"):
        msgs = [f"Removing partition {tp} from the list of reassigned partitions in zookeeper"]
    else:
        msgs = [f"Removed partition {tp} from the list of reassigned partitions in zookeeper"]
    return [(CONTROLLER, format_line(e["ts_ms"], "INFO", pre + m, ZK_CONTROLLER_LOGGER)) for m in msgs]


def _unclean_leader_election(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """The controller's unclean election (§6): ZooKeeper ≤ 1.0 warns (``OfflinePartitionLeaderSelector``),
    KRaft from 3.6 logs INFO (``PartitionChangeBuilder``); 1.1 – 3.x ZooKeeper and KRaft 3.3 – 3.5 write
    no line (only the UncleanLeaderElectionsPerSec meter moves). An election at KRaft's periodic check of
    leaderless partitions (3.9+) adds ``ReplicationControlManager.maybeTriggerUncleanLeaderElectionForLeaderlessPartitions``'
    line: ERROR in 3.9, INFO from 4.0."""
    if is_kraft(v, e):
        if not v.at_least("3.6"):
            return []
        msg = (f"Setting new leader for topicId {e.get('topic_id') or topic_id(e['topic'])}, partition "
               f"{e['partition']} to {e['leader']} using an unclean election")
        lines = [(CONTROLLER, format_line(e["ts_ms"], "INFO", msg, "org.apache.kafka.controller.PartitionChangeBuilder"))]
        if e.get("periodic"):
            lines.append((CONTROLLER, format_line(
                e["ts_ms"], "INFO" if v.at_least("4.0") else "ERROR",
                f"Triggering unclean leader election for offline partition {e['topic']}-{e['partition']}.",
                "org.apache.kafka.controller.ReplicationControlManager")))
        return lines
    if v.at_least("1.1"):
        return []
    msg = (f"[OfflinePartitionLeaderSelector]: No broker in ISR is alive for [{e['topic']},{e['partition']}]. "
           f"Elect leader {e['leader']} from live brokers {broker_list(e['live'])}. There's potential data loss.")
    return [(CONTROLLER, format_line(e["ts_ms"], "WARN", msg, "kafka.controller.OfflinePartitionLeaderSelector"))]


def _election_started(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """KafkaController is about to elect the leaders of ``partitions`` (ZooKeeper controller; KRaft's writes no such
    line): onPreferredReplicaElection's `Starting preferred replica leader election for partitions ...` up to 2.3,
    onReplicaElection's `Starting replica leader election (TYPE) for partitions ... triggered by TRIGGER` from 2.4
    (KIP-460). An operator's election (``requested``: the partitions asked for) lists them all up to 2.1, and from 2.2
    (KIP-183) only those it elects for (``partitions``: not led by the preferred replica, or without a live leader for
    an unclean one). An automatic rebalance (``trigger`` AutoTriggered) elects one partition per line up to 1.1 and, from 2.0
    (checkAndTriggerAutoLeaderRebalance), the partitions of one preferred broker (``preferred``) per line."""
    if is_kraft(v, e):
        return []
    tps = [(t, int(p)) for t, p in e["partitions"]]
    if e["trigger"] != "AutoTriggered":  # up to 2.1 every partition asked for, from 2.2 those not led as asked
        groups = [tps if v.at_least("2.2") else [(t, int(p)) for t, p in e.get("requested", tps)]]
    elif v.at_least("2.0"):
        by_broker: dict[int, list] = {}
        for tp, b in zip(tps, e["preferred"], strict=True):
            by_broker.setdefault(int(b), []).append(tp)
        groups = [by_broker[b] for b in sorted(by_broker)]
    else:
        groups = [[tp] for tp in tps]
    lines = []
    for group in groups:
        listed = ",".join(partition_name(fam, t, p) for t, p in group)
        msg = (f"Starting replica leader election ({e['election_type']}) for partitions {listed} triggered by "
               f"{e['trigger']}" if v.at_least("2.4") else f"Starting preferred replica leader election for partitions "
                                                           f"{listed}")
        lines.append((CONTROLLER, format_line(e["ts_ms"], "INFO", _controller_prefix(v, fam, e) + msg,
                                              ZK_CONTROLLER_LOGGER)))
    return lines


def _broker_failed(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """The controller drops a broker whose session ended: ZooKeeper's KafkaController.onBrokerFailure (its
    registration left ZooKeeper: a crash once the session expired, or a shutdown), KRaft's
    ReplicationControlManager.maybeFenceOneStaleBroker (no heartbeat within the session timeout)."""
    pre, target = _controller_prefix(v, fam, e), e["target_broker"]
    if is_kraft(v, e):
        msg = f"Fencing broker {target} because its session has timed out."
        return [(CONTROLLER, format_line(e["ts_ms"], "INFO", pre + msg, KRAFT_CONTROLLER_LOGGER))]
    return [(CONTROLLER, format_line(e["ts_ms"], "INFO", f"{pre}Broker failure callback for {target}",
                                     ZK_CONTROLLER_LOGGER))]


def _controlled_shutdown(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """The controller takes a broker's controlled shutdown request: ZooKeeper's KafkaController.doControlledShutdown,
    KRaft's BrokerHeartbeatManager.calculateNextBrokerState (a broker that leads partitions first hands them over;
    one that leads none is fenced at once)."""
    pre, target = _controller_prefix(v, fam, e), e["target_broker"]
    if is_kraft(v, e):
        granted = "a controlled shutdown" if e.get("leaderships", True) else "an immediate shutdown"
        msg = f"Unfenced broker {target} has requested and been granted {granted}."
        return [(CONTROLLER, format_line(e["ts_ms"], "INFO", pre + msg, HEARTBEAT_MANAGER_LOGGER))]
    return [(CONTROLLER, format_line(e["ts_ms"], "INFO", f"{pre}Shutting down broker {target}", ZK_CONTROLLER_LOGGER))]


def _broker_registered(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """The controller takes a (re)started broker in: ZooKeeper's KafkaController.onBrokerStartup, KRaft's
    BrokerHeartbeatManager granting the unfence request of a broker caught up with its registration record
    (3.0-3.2: the last committed metadata offset; ``it's`` in 3.3-3.4, ``its`` from 3.5; ``metadata_offset``: that
    offset in the metadata log)."""
    pre, target = _controller_prefix(v, fam, e), e["target_broker"]
    if is_kraft(v, e):
        its = "its" if v.at_least("3.5") else "it's"
        caught_up = f"offset of {its} register broker record" if v.at_least("3.3") else "last committed metadata offset"
        msg = (f"The request from broker {target} to unfence has been granted because it has caught up with the "
               f"{caught_up} {e.get('metadata_offset', 0)}.")
        return [(CONTROLLER, format_line(e["ts_ms"], "INFO", pre + msg, HEARTBEAT_MANAGER_LOGGER))]
    return [(CONTROLLER, format_line(e["ts_ms"], "INFO", f"{pre}New broker startup callback for {target}",
                                     ZK_CONTROLLER_LOGGER))]


# --- producers and storage (docs/logs.md, "Producers and log directories") ----------------------

REPLICA_MANAGER_LOGGER = "kafka.server.ReplicaManager"
LOG_MANAGER_LOGGER = "kafka.log.LogManager"


def _replica_manager_prefix(v: KafkaVersion, broker: int) -> str:
    return f"[ReplicaManager broker={broker}] " if v.at_least("1.0") else f"[Replica Manager on Broker {broker}]: "


def not_enough_replicas_message(v: KafkaVersion, topic: str, partition: int, isr: list[int], min_isr: int) -> str:
    """Partition.appendRecordsToLeader's NotEnoughReplicasException: counts up to 2.0 (`[t,p]` < 0.10.2), the ISR Set."""
    if v.at_least("2.1"):
        return (f"The size of the current ISR Set({broker_seq(isr)}) is insufficient to "
                f"satisfy the min.isr requirement of {min_isr} for partition {topic}-{partition}")
    return (f"Number of insync replicas for partition {topic_partition_since(v, BECOME_LEADER_TP_SINCE, topic, partition)} "
            f"is [{len(isr)}], below required minimum [{min_isr}]")


def _produce_rejected(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    pre = _replica_manager_prefix(v, e["broker"])
    msg = f"Error processing append operation on partition {e['topic']}-{e['partition']}"
    cause = not_enough_replicas_message(v, e["topic"], e["partition"], list(e["isr"]), int(e["min_isr"]))
    return [(SERVER, format_line(e["ts_ms"], "ERROR", pre + msg, REPLICA_MANAGER_LOGGER)),
            (SERVER, f"org.apache.kafka.common.errors.NotEnoughReplicasException: {cause}")]


def _log_dir_failed(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """LogDirFailureChannel's ERROR, then ReplicaManager.handleLogDirFailure (INFO up to 2.4, WARN from 2.5), which
    calls LogManager.handleLogDirFailure before its last line: LogManager lists the offline partitions again, or,
    when it was the broker's last live directory (``halt_log_dirs``: all of them), halts the broker."""
    if not v.at_least("1.0"):
        raise ValueError(f"event 'log_dir_failed' needs Kafka 1.0+ (KIP-112); {v} logs 'storage_halt'")
    b, d, ts = e["broker"], e["log_dir"], e["ts_ms"]
    tps = [f"{t}-{p}" for t, p in e["partitions"]]
    pre, level = _replica_manager_prefix(v, b), "WARN" if v.at_least("2.5") else "INFO"
    lines = [(SERVER, format_line(ts, "ERROR", f"Error while appending records to {tps[0] + ' ' if tps else ''}in dir {d}",
                                  "kafka.server.LogDirFailureChannel")),
             (SERVER, "java.io.IOException: Input/output error"),
             (SERVER, format_line(ts, level, f"{pre}Stopping serving replicas in dir {d}", REPLICA_MANAGER_LOGGER))]
    listed = ",".join(tps)
    offline = (f"Logs for partitions {listed} are offline and logs for future partitions  are offline" if v.at_least(
        "1.1") else f"Partitions {listed} are offline") + f" due to failure on log directory {d}"  # LogManager's
    msgs = ([f"Broker {b} stopped fetcher for partitions {listed} and stopped moving logs for partitions  because they"
             f" are in the failed log directory {d}."] if v.at_least("1.1") else
            [offline, f"Broker {b} stopped fetcher for partitions {', '.join(tps)} because they are in the failed log dir {d}"])
    lines += [(SERVER, format_line(ts, level, pre + m, REPLICA_MANAGER_LOGGER)) for m in msgs]
    lines.append((SERVER, format_line(ts, level, f"Stopping serving logs in dir {d}", LOG_MANAGER_LOGGER)))
    if e.get("halt_log_dirs"):
        return lines + [(SERVER, format_line(ts, fatal_level(v), "Shutdown broker because all log dirs in "
                                             f"{', '.join(e['halt_log_dirs'])} have failed", LOG_MANAGER_LOGGER))]
    return lines + [(SERVER, format_line(ts, level, offline, LOG_MANAGER_LOGGER)),
                    (SERVER, format_line(ts, level, f"{pre}Stopped serving replicas in dir {d}", REPLICA_MANAGER_LOGGER))]


def _storage_halt(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """Before 1.0 a KafkaStorageException on the produce path halts the broker (ReplicaManager.appendToLocalLog)."""
    if v.at_least("1.0"):
        raise ValueError(f"event 'storage_halt' is Kafka < 1.0 behaviour; {v} logs 'log_dir_failed'")
    msg = _replica_manager_prefix(v, e["broker"]) + "Halting due to unrecoverable I/O error while handling produce request: "
    return [(SERVER, format_line(e["ts_ms"], fatal_level(v), msg, REPLICA_MANAGER_LOGGER)),
            (SERVER, f"kafka.common.KafkaStorageException: I/O exception in append to log "
                     f"'{e['topic']}-{e['partition']}'")]


RENDERERS: dict[str, Callable[[dict, KafkaVersion, str], list[Line]]] = {
    "isr_shrink": _isr_shrink,
    "isr_expand": _isr_expand,
    "isr_updated": _isr_updated,
    "isr_update_failed": _isr_update_failed,
    "leader_start": _leader_start,
    "fetcher_added": fetcher_added,
    "fetcher_removed": fetcher_removed,
    "partition_failed": partition_failed,
    "partition_fenced": partition_fenced,
    "thread_died": thread_died,
    "fetch_storage_halt": fetch_storage_halt,
    "reassignment_started": _reassignment_started,
    "reassignment_completed": _reassignment_completed,
    "broker_started": broker_started,
    "unclean_leader_election": _unclean_leader_election,
    "election_started": _election_started,
    "broker_shutdown": broker_shutdown,
    "startup_failed": startup_failed,
    "registration_refused": registration_refused,
    "broker_failed": _broker_failed,
    "broker_registered": _broker_registered,
    "controlled_shutdown": _controlled_shutdown,
    "produce_rejected": _produce_rejected,
    "config_changed": config_changed,
    "log_dir_failed": _log_dir_failed,
    "storage_halt": _storage_halt,
}


def render_event(event: dict, version: KafkaVersion, start_ms: int = 0) -> list[tuple[str, str]]:
    """The ``(relative path, line)`` pairs one event produces (possibly none, e.g. expand on 2.8+)."""
    kind = event.get("kind")
    renderer = RENDERERS.get(kind)  # type: ignore[arg-type]
    if renderer is None:
        raise ValueError(f"unknown log event kind {kind!r}; expected one of {', '.join(sorted(RENDERERS))}")
    e = dict(event)
    try:
        e["ts_ms"] = int(e["ts_ms"]) + int(start_ms)
        e["broker"] = int(e["broker"])
        lines = renderer(e, version, version.log_family)
    except KeyError as exc:
        raise ValueError(f"log event {kind!r} at ts_ms={event.get('ts_ms')} lacks key {exc.args[0]!r}") from None
    return [(f"broker-{e['broker']}/{name}", line) for name, line in lines]


def render_logs(events: Iterable[dict], version: KafkaVersion, start_ms: int = 0) -> dict[str, list[str]]:
    """Render events into Kafka's log files: ``{'broker-1/server.log': [line, ...], ...}``.

    ``start_ms`` is added to every event's ``ts_ms`` (0 when events carry epoch milliseconds).
    Lines of one file keep event order, sorted stably by time as log4j appends them.
    """
    files: dict[str, list[tuple[int, int, str]]] = {}
    for n, event in enumerate(events):
        ts = int(event.get("ts_ms", 0)) + int(start_ms)
        for path, line in render_event(event, version, start_ms):
            files.setdefault(path, []).append((ts, n, line))
    return {path: [line for _, _, line in sorted(rows, key=lambda r: (r[0], r[1]))]
            for path, rows in sorted(files.items())}


def write_logs(events: Iterable[dict], version: KafkaVersion, out_dir: Path, start_ms: int = 0) -> None:
    """Write ``out_dir/logs/broker-N/*.log`` atomically (the whole ``logs/`` directory appears at once)."""
    rendered = render_logs(events, version, start_ms)
    with atomic_dir(Path(out_dir) / "logs") as tmp:
        for rel, lines in rendered.items():
            path = Path(tmp) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
