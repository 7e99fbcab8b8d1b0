"""A failed log directory (KIP-112, 1.0+): the broker stops serving its replicas and reports them in
OfflineReplicaCount (ReplicaManager.handleLogDirFailure); before 1.0 the broker halts
(ReplicaManager.appendToLocalLog: "Halting due to unrecoverable I/O error")."""

from __future__ import annotations

from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.logformat import render_logs
from tests.sim.conftest import simulate, small


def _failure(version: str) -> dict:
    """Broker 2 leads t-1 and follows t-0; its log directory fails at 10 s; it is restarted at 60 s / 61 s."""
    t = {"name": "t", "partitions": 2, "replication_factor": 3, "assignment": [[1, 2, 3], [2, 3, 1]],
         "produce_rate": "100KB/s", "message_size": "1KB", "initial_size": "1MB"}
    return small(kafka={"version": version, "replica_lag_time_max": "10s"}, duration="90s", topics=[t], events=[
        {"at": "10s", "log_dir_failure": {"broker": 2, "log_dir": "/data/kafka"}},
        {"at": "60s", "broker_down": {"broker": 2, "controlled": True}},
        {"at": "61s", "broker_up": 2}])


def _isr(run, partition: int) -> list:
    isr = run.table("telemetry", "isr")
    return isr[isr["partition"] == partition]["isr"].apply(list).tolist()


def test_1_0_takes_the_replicas_offline_and_keeps_the_broker_up():
    run = simulate(_failure("1.0"))
    offline, leaders = run.metric("OfflineReplicaCount"), run.metric("LeaderCount")
    assert offline.loc[9.0].sum() == 0 and offline.loc[10.0].tolist() == [0, 2, 0]
    assert (offline.loc[10.0:59.0][2] == 2).all() and offline.loc[61.0:].sum().sum() == 0
    assert leaders.loc[9.0].tolist() == [1, 1, 0] and leaders.loc[10.0].tolist() == [1, 0, 1]
    assert run.metric("PartitionCount").loc[30.0].tolist() == [2, 2, 2]  # offline replicas are still hosted
    assert [2, 3, 1] in _isr(run, 1) and _isr(run, 1)[1] == [3, 1] and _isr(run, 0)[1] == [1, 3]
    brokers = run.table("telemetry", "brokers")
    assert (brokers[brokers["broker"] == 2]["state"].tolist()) == ["up", "shutting_down", "down", "up"]
    dirs = run.table("telemetry", "log_dirs")
    assert dirs[["broker", "state"]].values.tolist() == [[2, "offline"], [2, "online"]]
    fetchers = run.table("telemetry", "fetchers")
    removed = fetchers[(fetchers["broker"] == 2) & (fetchers["ts_ms"] == run.scenario.start_ms + 10_000)]
    assert set(removed["action"]) == {"removed"} and set(removed["partition"]) == {0}
    # after the restart broker 2 fetches again and rejoins both ISRs
    assert sorted(_isr(run, 0)[-1]) == [1, 2, 3] and sorted(_isr(run, 1)[-1]) == [1, 2, 3]


def test_0_11_halts_the_broker():
    run = simulate(_failure("0.11"))
    assert not run.has_metric("OfflineReplicaCount")
    brokers = run.table("telemetry", "brokers")
    assert brokers[brokers["broker"] == 2]["state"].tolist() == ["up", "down", "up"]
    assert run.table("telemetry", "log_dirs").empty
    # a crash: t-1 is led by the dead broker until its ZooKeeper session expires (6 s up to 2.4, so at 16 s),
    # then elects broker 3
    leaders = run.metric("LeaderCount")
    assert leaders.loc[10.0, [1, 3]].tolist() == [1, 0] and leaders.loc[20.0, [1, 3]].tolist() == [1, 1]


def test_log_lines_per_release():
    for version, level, lines in [
        ("1.0", "INFO", ["Stopping serving replicas in dir /data/kafka",
                         "Partitions t-0,t-1 are offline due to failure on log directory /data/kafka",
                         "Broker 2 stopped fetcher for partitions t-0, t-1 because they are in the failed log dir "
                         "/data/kafka", "Stopped serving replicas in dir /data/kafka"]),
        ("2.5", "WARN", ["Stopping serving replicas in dir /data/kafka",
                         "Broker 2 stopped fetcher for partitions t-0,t-1 and stopped moving logs for partitions  "
                         "because they are in the failed log directory /data/kafka.",
                         "Stopped serving replicas in dir /data/kafka"]),
    ]:
        logs: list = []
        simulate(_failure(version), log_events=logs)
        server = render_logs([e for e in logs if e["kind"] == "log_dir_failed"], KafkaVersion.parse(version))
        got = server["broker-2/server.log"]
        assert "ERROR Error while appending records to t-0 in dir /data/kafka (kafka.server.LogDirFailureChannel)" in got[0]
        assert [line.split(" ", 3)[3] for line in got[2:]] == [
            f"[ReplicaManager broker=2] {m} (kafka.server.ReplicaManager)" for m in lines]
        assert all(f"] {level} [ReplicaManager" in line for line in got[2:])
    logs = []
    simulate(_failure("0.11"), log_events=logs)
    halt = render_logs([e for e in logs if e["kind"] == "storage_halt"], KafkaVersion.parse("0.11"))
    assert halt["broker-2/server.log"][0].endswith(
        "FATAL [Replica Manager on Broker 2]: Halting due to unrecoverable I/O error while handling produce request: "
        " (kafka.server.ReplicaManager)")
    assert halt["broker-2/server.log"][1] == "kafka.common.KafkaStorageException: I/O exception in append to log 't-1'"


def test_kafka_log_dirs_reports_the_failed_directory():
    """kafka-log-dirs --describe (DescribeLogDirs): an offline directory answers KafkaStorageException, no partitions."""
    import json

    from replicaflow.sim.snapshot import log_dirs_now

    raw = _failure("1.0")
    run = simulate({**raw, "events": raw["events"][:1], "duration": "20s"})
    brokers = {b["broker"]: b["logDirs"][0] for b in json.loads(log_dirs_now(run.engine.s).splitlines()[2])["brokers"]}
    assert brokers[2] == {"logDir": "/tmp/kafka-logs", "error": "KafkaStorageException", "partitions": []}
    assert brokers[1]["error"] is None and len(brokers[1]["partitions"]) == 2
