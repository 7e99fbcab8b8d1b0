"""A follower's fetch error at the releases where Kafka changed what it does (docs/semantics.md §4, §6.1): the
storage error at 0.11/1.0 (the broker halts; from 1.0 the log directory fails) and 2.2/2.3 (retried with the
thread alive; from 2.3 marked failed first), and the unexpected error at 2.2/2.3 (the thread dies; KIP-461
isolates the partition).

Broker 1 leads t-0 and t-1, both fetched by one fetcher thread on broker 2 (lag 10 s, checks every 5 s); broker
2 gets the error on t-0 at 5 s. With two log directories broker 2 holds t-0 in /a and t-1 in /b.
"""

from __future__ import annotations

import pytest

from replicaflow.errors import ReplicaflowError
from tests.sim.conftest import simulate, small

TWO_DIRS = ["/a", "/b"]


def story(version: str, error: str, dirs: list[str] | None) -> dict:
    t = {"name": "t", "partitions": 2, "replication_factor": 3, "assignment": [[1, 2, 3], [1, 2, 3]],
         "produce_rate": "100KB/s", "message_size": "1KB", "initial_size": "1MB"}
    cluster = {"brokers": 3, "network_in": "1GB/s", "network_out": "1GB/s", **({"log_dirs": dirs} if dirs else {})}
    return small(kafka={"version": version, "replica_lag_time_max": "10s"}, cluster=cluster, duration="40s",
                 topics=[t], events=[{"at": "5s", "fail_partition": {"topic": "t", "partition": 0, "broker": 2,
                                                                     "error": error}}])


def outcome(version: str, error: str, dirs: list[str] | None = None) -> dict:
    logs: list = []
    run = simulate(story(version, error, dirs), log_events=logs)
    start = run.scenario.start_ms
    isr = run.table("telemetry", "isr")
    brokers = run.table("telemetry", "brokers")

    def at_10s(short):
        return run.metric(short).loc[10.0].tolist() if run.has_metric(short) else None
    return {"isr": [((r.ts_ms - start) / 1000, r.partition, list(r.isr)) for r in isr.itertuples() if r.ts_ms > start],
            "down": [((r.ts_ms - start) / 1000, r.broker) for r in brokers.itertuples() if r.ts_ms > start],
            "offline": at_10s("OfflineReplicaCount"), "failed": at_10s("FailedPartitionsCount"),
            "logged": sorted({e["kind"] for e in logs if e["ts_ms"] == start + 5000})}


@pytest.mark.parametrize(("version", "dirs", "isr", "down", "offline", "logged"), [
    # ReplicaFetcherThread.processPartitionData 0.9 – 0.11 catches the KafkaStorageException itself: FATAL "Disk
    # error while replicating data", then Exit.halt(1) whatever the directories: a crash, removed from both ISRs
    # after the 6 s session (no OfflineReplicaCount before 1.0)
    ("0.11", TWO_DIRS, [(11.0, 0, [1, 3]), (11.0, 1, [1, 3])], [(5.0, 2)], None, ["fetch_storage_halt"]),
    # 1.0: Log.maybeHandleIOException hands the directory to the LogDirFailureChannel: with one directory
    # LogManager.handleLogDirFailure halts the broker, a crash removed from the ISRs after the 6 s session
    ("1.0", None, [(11.0, 0, [1, 3]), (11.0, 1, [1, 3])], [(5.0, 2)], [0.0, None, 0.0], ["log_dir_failed"]),
    # 1.0 – 2.2 with two directories: the thread lives (KafkaStorageException is retried) and t-1 goes on; /a's
    # replica of t-0 goes offline and the controller takes it out of the ISR at once (onReplicasBecomeOffline)
    ("1.0", TWO_DIRS, [(5.0, 0, [1, 3])], [], [0.0, 1.0, 0.0], ["fetcher_removed", "leader_start", "log_dir_failed"]),
    ("2.2", TWO_DIRS, [(5.0, 0, [1, 3])], [], [0.0, 1.0, 0.0], ["fetcher_removed", "leader_start", "log_dir_failed"]),
    # 2.3 (KIP-461): marked failed first, then the directory handler removes the fetcher and the failed mark
    ("2.3", TWO_DIRS, [(5.0, 0, [1, 3])], [], [0.0, 1.0, 0.0],
     ["fetcher_removed", "leader_start", "log_dir_failed", "partition_failed"]),
])
def test_a_storage_error_per_release(version, dirs, isr, down, offline, logged):
    got = outcome(version, "storage", dirs)
    assert got["isr"] == isr and got["down"] == down and got["logged"] == logged
    if offline is None:
        assert got["offline"] is None
    else:
        assert [None if v != v else v for v in got["offline"]] == offline  # NaN: broker 2 is down
    if version == "2.3":
        assert got["failed"] == [0.0, 0.0, 0.0]  # the mark does not outlive the directory handler


@pytest.mark.parametrize(("version", "isr", "failed", "logged"), [
    ("2.2", [(15.0, 0, [1, 3]), (15.0, 1, [1, 3])], None, ["thread_died"]),   # the thread dies: t-1 stops too
    ("2.3", [(15.0, 0, [1, 3])], [0.0, 1.0, 0.0], ["partition_failed"]),      # KIP-461: t-0 alone, FailedPartitionsCount
])
def test_an_unexpected_error_at_2_2_and_2_3(version, isr, failed, logged):
    """AbstractFetcherThread.processFetchRequest: 2.2 throws KafkaException out of the thread; 2.3 marks the
    partition failed (markPartitionFailed) and the thread goes on. No directory fails."""
    got = outcome(version, "unexpected")
    assert got["isr"] == isr and got["logged"] == logged and got["offline"] == [0.0, 0.0, 0.0]
    assert got["failed"] == failed


@pytest.mark.parametrize(("version", "action", "failed", "logged"), [
    ("2.2", "removed", None, ["partition_fenced"]),
    ("2.3", "failed", [0.0, 1.0, 0.0], ["partition_failed", "partition_fenced"]),
])
def test_a_fenced_leader_epoch_at_2_2_and_2_3(version, action, failed, logged):
    """AbstractFetcherThread.onPartitionFenced (KIP-320, 2.1+) logs "has an older epoch ... Will await the new
    LeaderAndIsr state" and, at 2.1.0 and 2.2.0, only removes the partition from the thread's partitionStates:
    no exception reaches doWork, so the thread and t-1 go on (not 'thread_died', as an unexpected error at 2.2).
    2.3.0 marks it failed (markPartitionFailed) after the same line."""
    logs: list = []
    run = simulate(story(version, "fenced_leader_epoch", None), log_events=logs)
    start = run.scenario.start_ms
    isr = [((r.ts_ms - start) / 1000, r.partition, list(r.isr)) for r in run.table("telemetry", "isr").itertuples()
           if r.ts_ms > start]
    assert isr == [(15.0, 0, [1, 3])]
    rows = [(r.action, r.leader) for r in run.table("telemetry", "fetchers").itertuples()
            if r.ts_ms == start + 5000 and r.broker == 2 and r.partition == 0]
    assert rows == [(action, 1)]
    assert (run.metric("FailedPartitionsCount").loc[10.0].tolist() if run.has_metric("FailedPartitionsCount")
            else None) == failed
    assert sorted({e["kind"] for e in logs if e["ts_ms"] == start + 5000}) == logged
    (fenced,) = [e for e in logs if e["kind"] == "partition_fenced"]
    assert (fenced["broker"], fenced["leader"], fenced["leader_epoch"]) == (2, 1, 0)


def test_a_fenced_leader_epoch_before_2_1_is_refused():
    """FENCED_LEADER_EPOCH came with KIP-320 (Errors.java at 2.1.0): a 2.0 fetcher can never receive it."""
    with pytest.raises(ReplicaflowError, match=r"fail_partition\.error: .*needs Kafka 2\.1\+ \(KIP-320\), found 2\.0"):
        simulate(story("2.0", "fenced_leader_epoch", None))


@pytest.mark.parametrize(("version", "line"), [
    ("0.9", "FATAL [ReplicaFetcherThread-0-1], Disk error while replicating data. (kafka.server.ReplicaFetcherThread)"),
    ("0.10.0", "FATAL [ReplicaFetcherThread-0-1], Disk error while replicating data for [t,0] "
               "(kafka.server.ReplicaFetcherThread)"),
    ("0.11", "FATAL [ReplicaFetcherThread-0-1]: Disk error while replicating data for t-0 "
             "(kafka.server.ReplicaFetcherThread)"),
])
def test_the_halt_is_logged_as_each_release_writes_it(version, line):
    """ReplicaFetcherThread.processPartitionData: `fatal("Disk error while replicating data.", e)` at 0.9, then with
    the TopicAndPartition (0.10.0) or TopicPartition (0.10.1+), and the exception's first line under it."""
    from replicaflow.model.version import KafkaVersion
    from replicaflow.telemetry.logformat import render_logs

    logs: list = []
    simulate(story("0.11", "storage", None), log_events=logs)
    halt = [e for e in logs if e["kind"] == "fetch_storage_halt"]
    assert len(halt) == 1 and halt[0]["broker"] == 2
    got = render_logs(halt, KafkaVersion.parse(version))["broker-2/server.log"]
    assert got[0].split(" ", 2)[2] == line
    assert got[1] == "kafka.common.KafkaStorageException: I/O exception in append to log 't-0'"
