"""The replication fetcher's lines (AbstractFetcherManager, AbstractFetcherThread, ReplicaFetcherThread) per release,
rendered from the simulator's events: fetchers added and removed, a partition failed or fenced, a thread that died."""

from __future__ import annotations

from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.log_lines import (
    FETCHER_MANAGER_LOGGER,
    FETCHER_THREAD_LOGGER,
    FETCHER_TP_SINCE,
    OLD_FAMILY,
    SERVER,
    Line,
    format_line,
    partition_name,
    topic_id,
    topic_partition_since,
)


def fetcher_prefix(family: str, broker: int, leader: int, fetcher_id: int, v: KafkaVersion) -> str:
    """ShutdownableThread.logIdent: `[name], ` up to 0.10.2, `[name]: ` at 0.11; 1.0 names the replica and leader."""
    if family == OLD_FAMILY:
        return f"[ReplicaFetcherThread-{fetcher_id}-{leader}]" + (": " if v.at_least("0.11") else ", ")
    return f"[ReplicaFetcher replicaId={broker}, leaderId={leader}, fetcherId={fetcher_id}] "


def fetcher_added(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    pre = f"[ReplicaFetcherManager on broker {e['broker']}] "
    leader, parts = int(e["leader"]), [(str(t), int(p), int(o)) for t, p, o in e["partitions"]]
    if not v.at_least("2.1"):  # AbstractFetcherManager.addFetcherForPartitions: each partition's leader
        endpoint = f"BrokerEndPoint({leader},broker-{leader},9092)"
        items = [f"[{topic_partition_since(v, FETCHER_TP_SINCE, t, p)}, initOffset {o} to broker {endpoint}] "
                 for t, p, o in parts]
        msg = f"Added fetcher for partitions List({', '.join(items)})"
    else:
        # each partition's initial state as the map's value prints it: OffsetAndEpoch (2.1-2.7), InitialFetchState, a
        # case class (2.8+: leader, epoch, offset; 3.1+ the topic id first); the leader as its BrokerEndPoint (2.1-2.4),
        # then its id
        endpoint, epoch = f"BrokerEndPoint(id={leader}, host=broker-{leader}:9092)", e.get("leader_epoch", 0)
        if v.at_least("2.8"):
            items = [f"{t}-{p} -> InitialFetchState({f'Some({topic_id(t)}),' if v.at_least('3.1') else ''}{endpoint},"
                     f"{epoch},{o})" for t, p, o in parts]
        else:
            items = [f"{t}-{p} -> (offset={o}, leaderEpoch={epoch})" for t, p, o in parts]
        msg = f"Added fetcher to broker {leader if v.at_least('2.5') else endpoint} for partitions Map({', '.join(items)})"
    return [(SERVER, format_line(e["ts_ms"], "INFO", pre + msg, FETCHER_MANAGER_LOGGER))]


def fetcher_removed(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    pre = f"[ReplicaFetcherManager on broker {e['broker']}] "
    parts = [topic_partition_since(v, FETCHER_TP_SINCE, str(t), int(p)) for t, p in e["partitions"]]
    # `partitions.mkString(",")` up to 2.0; from 2.1 the Scala Set itself
    listed = f"Set({', '.join(parts)})" if v.at_least("2.1") else ",".join(parts)
    return [(SERVER, format_line(e["ts_ms"], "INFO", pre + f"Removed fetcher for partitions {listed}",
                                 FETCHER_MANAGER_LOGGER))]


def partition_failed(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    if not v.fetcher_failure_isolated:
        raise ValueError(f"event 'partition_failed' needs Kafka 2.3+ (KIP-461); {v} logs 'thread_died'")
    pre = fetcher_prefix(fam, e["broker"], e["leader"], e["fetcher_id"], v)
    msg = f"Partition {e['topic']}-{e['partition']} marked as failed"
    return [(SERVER, format_line(e["ts_ms"], "WARN", pre + msg, FETCHER_THREAD_LOGGER))]


def partition_fenced(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """AbstractFetcherThread.onPartitionFenced (2.1+, KIP-320): the same INFO line before 2.3's "marked as failed"."""
    if not v.leader_epoch_fencing:
        raise ValueError(f"event 'partition_fenced' needs Kafka 2.1+ (KIP-320); {v} has no fenced leader epoch")
    pre = fetcher_prefix(fam, e["broker"], e["leader"], e["fetcher_id"], v)
    msg = (f"Partition {e['topic']}-{e['partition']} has an older epoch ({e['leader_epoch']}) than the current "
           "leader. Will await the new LeaderAndIsr state before resuming fetching.")
    return [(SERVER, format_line(e["ts_ms"], "INFO", pre + msg, FETCHER_THREAD_LOGGER))]


def thread_died(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    if v.fetcher_failure_isolated:
        raise ValueError(f"event 'thread_died' is Kafka <= 2.2 behaviour; {v} logs 'partition_failed'")
    pre = fetcher_prefix(fam, e["broker"], e["leader"], e["fetcher_id"], v)
    word = "error" if fam == OLD_FAMILY else "Error"
    return [
        (SERVER, format_line(e["ts_ms"], "ERROR", pre + "Error due to", FETCHER_THREAD_LOGGER)),
        (SERVER, f"kafka.common.KafkaException: {word} processing data for partition "
                 f"{partition_name(fam, e['topic'], e['partition'])} offset {e['offset']}"),
        (SERVER, "\tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:210)"),
        (SERVER, "\tat kafka.server.AbstractFetcherThread.doWork(AbstractFetcherThread.scala:111)"),
    ]


def fetch_storage_halt(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """ReplicaFetcherThread.processPartitionData before 1.0: a KafkaStorageException appending the fetched data is
    FATAL and halts the broker (``Runtime.getRuntime.halt(1)``, 0.11 ``Exit.halt(1)``); 0.9 names no partition,
    0.10.0 its TopicAndPartition. From 1.0 (KIP-112) the directory goes offline instead (``log_dir_failed``)."""
    if v.at_least("1.0"):
        raise ValueError(f"event 'fetch_storage_halt' is Kafka < 1.0 behaviour; {v} logs 'log_dir_failed'")
    pre = fetcher_prefix(fam, e["broker"], e["leader"], e["fetcher_id"], v)
    named = f" for {topic_partition_since(v, FETCHER_TP_SINCE, e['topic'], e['partition'])}" if v.at_least("0.10") else "."
    return [(SERVER, format_line(e["ts_ms"], "FATAL", pre + f"Disk error while replicating data{named}",
                                 FETCHER_THREAD_LOGGER)),
            (SERVER, f"kafka.common.KafkaStorageException: I/O exception in append to log "
                     f"'{e['topic']}-{e['partition']}'")]
