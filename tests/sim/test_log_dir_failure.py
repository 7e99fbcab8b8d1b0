"""A failed log directory (KIP-112, docs/semantics.md §6.1): from 1.0 a broker with several directories (JBOD)
stops serving the failed one's replicas and reports them in OfflineReplicaCount
(ReplicaManager.handleLogDirFailure), and halts when no live directory is left
(LogManager.handleLogDirFailure); before 1.0 the broker halts (ReplicaManager.appendToLocalLog:
"Halting due to unrecoverable I/O error")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.model import log_dirs
from replicaflow.model.version import KafkaVersion
from replicaflow.sim.scenario import parse_scenario
from replicaflow.sim.snapshot import log_dirs_now
from replicaflow.telemetry.logformat import render_logs
from tests.sim.conftest import SCENARIOS, rows, simulate, small, started
from tests.sim.test_controller_releases import run_until

DIRS = ["/data/a", "/data/b"]


def _failure(version: str, dirs: list[str] | None = None, fail: str = "/data/a", **kafka) -> dict:
    """t-0 [1,2,3] and t-1 [2,3,1]: broker 2 leads t-1 and follows t-0; with ``dirs`` every broker has those
    directories and, by creation order, holds t-0 in /data/a and t-1 in /data/b. ``fail`` fails at
    10 s; broker 2 is restarted at 60 s / 61 s."""
    t = {"name": "t", "partitions": 2, "replication_factor": 3, "assignment": [[1, 2, 3], [2, 3, 1]],
         "produce_rate": "100KB/s", "message_size": "1KB", "initial_size": "1MB"}
    cluster = {"brokers": 3, "network_in": "1GB/s", "network_out": "1GB/s", **({"log_dirs": dirs} if dirs else {})}
    return small(kafka={"version": version, "replica_lag_time_max": "10s", **kafka}, cluster=cluster, duration="90s",
                 topics=[t], events=[
                     {"at": "10s", "log_dir_failure": {"broker": 2, **({"log_dir": fail} if dirs else {})}},
                     {"at": "60s", "broker_down": {"broker": 2, "controlled": True}},
                     {"at": "61s", "broker_up": 2}])


def _isr(run, partition: int) -> list:
    isr = run.table("telemetry", "isr")
    return isr[isr["partition"] == partition]["isr"].apply(list).tolist()


def test_new_logs_go_to_the_least_loaded_live_directory():
    """LogManager.nextLogDirs: the live directory with the fewest logs, ties in log.dirs order (a new cluster:
    round-robin over each broker's directories in partition order)."""
    assert log_dirs.next_log_dir([3, 1, 1], [True, True, True]) == 1
    assert log_dirs.next_log_dir([3, 1, 1], [True, False, True]) == 2
    assert log_dirs.next_log_dir([0, 0], [False, False]) == -1
    assert log_dirs.initial_log_dirs([0, 1, 0, 0, 1], [3, 2]).tolist() == [0, 0, 1, 2, 1]


def test_jbod_needs_zookeeper_or_kraft_3_7():
    """KRaft brokers handle several log directories from 3.7 (KIP-858); before, a failed directory never
    reached the KRaft controller, so replicaflow refuses the scenario with one sentence."""
    parse_scenario(_failure("3.7", DIRS, controller="kraft"), SCENARIOS, "<t>")
    parse_scenario(_failure("3.6", DIRS, controller="zookeeper"), SCENARIOS, "<t>")
    with pytest.raises(ReplicaflowError, match=r"cluster\.brokers\[0\]\.log_dirs: .*JBOD.* 3\.7 or later under KRaft"):
        parse_scenario(_failure("3.6", DIRS, controller="kraft"), SCENARIOS, "<t>")
    with pytest.raises(ReplicaflowError, match=r"log_dir: expected one of broker 2's log_dirs \(/data/a, /data/b\)"):
        parse_scenario(_failure("3.7", DIRS, fail="/data/c"), SCENARIOS, "<t>")


def test_1_0_with_two_directories_takes_only_the_failed_ones_replicas_offline():
    """Broker 2's /data/a holds its replica of t-0: it leaves t-0's ISR (onReplicasBecomeOffline), stops
    fetching, counts 1 in OfflineReplicaCount, and keeps leading t-1 from /data/b; a restart brings it back."""
    run = simulate(_failure("1.0", DIRS))
    offline, leaders = run.metric("OfflineReplicaCount"), run.metric("LeaderCount")
    assert offline.loc[9.0].sum() == 0 and offline.loc[10.0].tolist() == [0, 1, 0]
    assert (offline.loc[10.0:59.0][2] == 1).all() and offline.loc[61.0:].sum().sum() == 0
    assert leaders.loc[10.0].tolist() == [1, 1, 0]  # broker 2 still leads t-1
    assert run.metric("PartitionCount").loc[30.0].tolist() == [2, 2, 2]  # the offline replica is still hosted
    isr = run.table("telemetry", "isr")
    before_restart = isr[(isr["ts_ms"] < run.scenario.start_ms + 60_000)]
    assert [(r.partition, list(r.isr)) for r in before_restart.itertuples()] == [(0, [1, 2, 3]), (1, [2, 3, 1]),
                                                                                (0, [1, 3])]
    dirs = run.table("telemetry", "log_dirs")
    assert dirs[["broker", "log_dir", "state"]].values.tolist() == [[2, "/data/a", "offline"], [2, "/data/a", "online"]]
    assignments = run.table("telemetry", "assignments")
    assert [list(d) for d in assignments["log_dirs"]] == [["/data/a"] * 3, ["/data/b"] * 3]
    fetchers = run.table("telemetry", "fetchers")
    removed = fetchers[(fetchers["broker"] == 2) & (fetchers["ts_ms"] == run.scenario.start_ms + 10_000)]
    assert set(removed["action"]) == {"removed"} and set(removed["partition"]) == {0}
    assert sorted(_isr(run, 0)[-1]) == [1, 2, 3]  # after the restart broker 2 fetches again and rejoins


@pytest.mark.parametrize(("version", "dirs"), [("1.0", None), ("3.7", None), ("0.11", DIRS)])
def test_a_broker_without_a_live_directory_halts(version, dirs):
    """One directory on 1.0+: LogManager.handleLogDirFailure finds no live directory left and halts the broker
    ("Shutdown broker because all log dirs in … have failed"); before 1.0 any storage error halts it. A
    crash: t-1 keeps its dead leader until the session expires (6 s up to 2.4, 18 s from 2.5), then 3 leads."""
    run = simulate(_failure(version, dirs))
    brokers = run.table("telemetry", "brokers")
    assert brokers[brokers["broker"] == 2]["state"].tolist() == ["up", "down", "up"]
    session = 6 if version != "3.7" else 18
    leaders = run.metric("LeaderCount")
    assert leaders.loc[10.0 + session - 1, [1, 3]].tolist() == [1, 0]
    assert leaders.loc[10.0 + session, [1, 3]].tolist() == [1, 1]
    if version == "0.11":
        assert not run.has_metric("OfflineReplicaCount") and run.table("telemetry", "log_dirs").empty


def test_the_last_live_directory_failing_halts_the_broker():
    """/data/a fails at 10 s (the broker stays up), /data/b at 20 s: no live directory is left, so LogManager halts
    the broker; its restart brings both back."""
    raw = _failure("2.4", DIRS)
    raw["events"].insert(1, {"at": "20s", "log_dir_failure": {"broker": 2, "log_dir": "/data/b"}})
    run = simulate(raw)
    brokers = run.table("telemetry", "brokers")
    assert brokers[brokers["broker"] == 2][["ts_ms", "state"]].values.tolist()[1] == [run.scenario.start_ms + 20_000,
                                                                                     "down"]
    dirs = run.table("telemetry", "log_dirs")
    assert dirs[["log_dir", "state"]].values.tolist() == [["/data/a", "offline"], ["/data/b", "offline"],
                                                          ["/data/a", "online"], ["/data/b", "online"]]


def test_a_new_replica_goes_to_the_least_loaded_live_directory():
    """A reassignment adds broker 4's replica of t-1 after /data/a failed on it: /data/b (the live one)."""
    raw = small(kafka={"version": "2.4"}, cluster={"brokers": 4, "network_in": "1GB/s", "network_out": "1GB/s",
                                                   "log_dirs": DIRS},
                topics=[{"name": "t", "partitions": 2, "replication_factor": 3, "assignment": [[1, 2, 4], [1, 2, 3]],
                         "produce_rate": "10KB/s", "message_size": "1KB"}],
                events=[{"at": "1s", "log_dir_failure": {"broker": 4, "log_dir": "/data/a"}},
                        {"at": "2s", "reassign": {"version": 1, "partitions": [
                            {"topic": "t", "partition": 1, "replicas": [1, 2, 4]}]}}])
    engine, _, _ = started(raw)
    run_until(engine, 3)
    s = engine.s
    assert s.replica_dirs(1)[s.replica_ids(1).index(4)] == "/data/b" and s.logs_per_dir(3).tolist() == [1, 1]


LM = "LogManager: "  # a line LogManager writes (no logIdent), not ReplicaManager


def test_log_lines_per_release():
    """LogDirFailureChannel, ReplicaManager.handleLogDirFailure and LogManager.handleLogDirFailure (1.0.0, 2.5.0):
    LogManager lists the offline partitions again on every failure that does not halt the broker.
    Logging.fatal is log4j's FATAL up to 1.0.0; from 1.1.0 it is ``logger.error(FatalMarker, ...)``: ERROR."""
    for version, level, lines in [
        ("1.0", "INFO", ["Stopping serving replicas in dir /data/a",
                         "Partitions t-0 are offline due to failure on log directory /data/a",
                         "Broker 2 stopped fetcher for partitions t-0 because they are in the failed log dir "
                         "/data/a", LM + "Stopping serving logs in dir /data/a",
                         LM + "Partitions t-0 are offline due to failure on log directory /data/a",
                         "Stopped serving replicas in dir /data/a"]),
        ("2.5", "WARN", ["Stopping serving replicas in dir /data/a",
                         "Broker 2 stopped fetcher for partitions t-0 and stopped moving logs for partitions  "
                         "because they are in the failed log directory /data/a.",
                         LM + "Stopping serving logs in dir /data/a",
                         LM + "Logs for partitions t-0 are offline and logs for future partitions  are offline due to "
                         "failure on log directory /data/a", "Stopped serving replicas in dir /data/a"]),
    ]:
        logs: list = []
        simulate(_failure(version, DIRS), log_events=logs)
        server = render_logs([e for e in logs if e["kind"] == "log_dir_failed"], KafkaVersion.parse(version))
        got = server["broker-2/server.log"]
        assert "ERROR Error while appending records to t-0 in dir /data/a (kafka.server.LogDirFailureChannel)" in got[0]
        assert [line.split(" ", 3)[3] for line in got[2:]] == [
            f"{m[len(LM):]} (kafka.log.LogManager)" if m.startswith(LM) else
            f"[ReplicaManager broker=2] {m} (kafka.server.ReplicaManager)" for m in lines]
        assert all(f"] {level} " in line for line in got[2:])
    for version, stopping, fatal in [("1.0", "INFO", "FATAL"), ("1.1", "INFO", "ERROR"), ("2.5", "WARN", "ERROR")]:
        logs = []
        simulate(_failure(version), log_events=logs)  # one directory: LogManager halts before "Stopped serving"
        got = render_logs([e for e in logs if e["kind"] == "log_dir_failed"],
                          KafkaVersion.parse(version))["broker-2/server.log"]
        assert [line.split(" ", 2)[2] for line in got[-2:]] == [
            f"{stopping} Stopping serving logs in dir /tmp/kafka-logs (kafka.log.LogManager)",
            f"{fatal} Shutdown broker because all log dirs in /tmp/kafka-logs have failed (kafka.log.LogManager)"], version
    logs = []
    simulate(_failure("0.11"), log_events=logs)
    halt = render_logs([e for e in logs if e["kind"] == "storage_halt"], KafkaVersion.parse("0.11"))
    assert halt["broker-2/server.log"][0].endswith(
        "FATAL [Replica Manager on Broker 2]: Halting due to unrecoverable I/O error while handling produce request: "
        " (kafka.server.ReplicaManager)")
    assert halt["broker-2/server.log"][1] == "kafka.common.KafkaStorageException: I/O exception in append to log 't-1'"


def test_kafka_log_dirs_reports_the_failed_directory():
    """kafka-log-dirs --describe (DescribeLogDirs): each directory with its partitions, an offline one answering
    KafkaStorageException and no partitions."""
    raw = _failure("1.0", DIRS)
    run = simulate({**raw, "events": raw["events"][:1], "duration": "20s"})
    doc = json.loads(log_dirs_now(run.engine.s).splitlines()[2])
    brokers = {b["broker"]: b["logDirs"] for b in doc["brokers"]}
    assert brokers[2][0] == {"logDir": "/data/a", "error": "KafkaStorageException", "partitions": []}
    assert [p["partition"] for p in brokers[2][1]["partitions"]] == ["t-1"] and brokers[2][1]["error"] is None
    assert [[p["partition"] for p in d["partitions"]] for d in brokers[1]] == [["t-0"], ["t-1"]]
    assert np.array_equal(run.engine.s.dir_offline[:, :2], [[False, False], [True, False], [False, False]])


@pytest.mark.parametrize(("controller", "leader_epoch"), [("zookeeper", 1), ("kraft", 0)])
def test_the_controller_takes_the_directorys_replicas_out_of_the_isr(controller, leader_epoch):
    """3.7: ZooKeeper's onReplicasBecomeOffline removes broker 2's replica of t-0 with a new leader epoch
    (removeReplicasFromIsr); KRaft's handleDirectoriesOffline (KIP-858) writes the smaller ISR without one
    (KAFKA-15021). t-1, in broker 2's live directory, keeps its ISR and leader."""
    run = simulate(_failure("3.7", DIRS, controller=controller))
    isr = run.table("telemetry", "isr")
    at = isr[isr["ts_ms"] == run.scenario.start_ms + 10_000]
    assert [(r.partition, list(r.isr), r.leader_epoch) for r in at.itertuples()] == [(0, [1, 3], leader_epoch)]


def test_enabling_unclean_election_elects_nothing_when_the_only_live_replica_is_in_a_failed_directory():
    """ZooKeeper 3.7: t-0's ISR shrinks to [1] (3 stalled, out after 10 s), 1 and 2 crash at 20 s and the partition
    goes offline; at 30 s broker 3's /data/a, which holds t-0, fails. Enabling ``unclean.leader.election.enable`` on
    the topic at 45 s runs the offline election (``KafkaController.processTopicUncleanLeaderElectionEnable``), whose
    candidates are the online replicas: ``ControllerContext.isReplicaOnline`` leaves out a replica on an offline
    directory (``replicasOnOfflineDirs``). None is left, ``PartitionStateMachine.doElectLeaderForPartitions`` fails the
    election (NoReplicaOnlineException) and writes nothing: no leader epoch, no ``leaders`` or ``isr`` row."""
    t = {"name": "t", "partitions": 1, "replication_factor": 3, "assignment": [[1, 2, 3]],
         "produce_rate": "100KB/s", "message_size": "1KB", "initial_size": "1MB"}
    engine, writer, _ = started(small(
        kafka={"version": "3.7", "replica_lag_time_max": "10s"}, duration="60s", topics=[t],
        cluster={"brokers": 3, "network_in": "1GB/s", "network_out": "1GB/s", "log_dirs": DIRS},
        events=[{"at": "0s", "stall_follower": {"broker": 3}},
                {"at": "20s", "broker_down": 2}, {"at": "20s", "broker_down": 1},
                {"at": "30s", "log_dir_failure": {"broker": 3, "log_dir": "/data/a"}},
                {"at": "45s", "config": {"topic": "t", "unclean.leader.election.enable": "true"}}]))
    run_until(engine, 44)
    epoch, written = int(engine.s.leader_epoch[0]), {t: len(rows(writer, t)) for t in ("leaders", "isr")}
    assert engine.s.leader_id(0) == -1 and engine.s.offline_replica[0, 2]
    run_until(engine, 50)
    assert engine.s.leader_id(0) == -1 and engine.controller.unclean_elections == 0
    assert int(engine.s.leader_epoch[0]) == epoch
    assert {t: len(rows(writer, t)) for t in ("leaders", "isr")} == written
