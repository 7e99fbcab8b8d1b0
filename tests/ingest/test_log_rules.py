"""The message families of log_messages.RULES (tests/ingest/log_cases.py: each line in the form Kafka's source
writes it, class named per case) and their forms across releases; the layouts are in test_log_layouts.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicaflow.ingest.logs import read_logs
from tests.ingest.log_cases import CASES, QUIET, T, read_file

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def read(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("rules")
    (root / "broker-1").mkdir()
    (root / "broker-1" / "server.log").write_text("".join(line + "\n" for line, _ in CASES), encoding="utf-8")
    (root / "broker-1" / "part.log").write_text(
        T + "WARN [ReplicaManager broker=1] Broker 1 stopped fetcher for partitions t-0,t-1 and stopped moving logs for "
            "partitions  because they are in the failed log directory /data/k1. (kafka.server.ReplicaManager)\n"
        + T + "INFO Logs for partitions t-0,t-1 are offline and logs for future partitions  are offline due to failure "
              "on log directory /data/k1 (kafka.log.LogManager)\n", encoding="utf-8")
    # no event, no reject: other threads' `shutting down` (only KafkaServer's logIdent is the broker), the tail
    # of a message holding a newline (ZooKeeper's Stat), a stack trace indented with spaces, log-dir fetchers
    (root / "broker-1" / "quiet.log").write_text("".join(line + "\n" for line in QUIET), encoding="utf-8")
    out = read_logs(spark, str(root), cluster="r", log_timezone="Europe/Paris")
    events = [r.asDict() for r in out["log_events"].collect()]
    return events, out["rejects"].collect()


def test_each_family_and_layout_gives_its_event(read):
    events, rejects = read
    assert not rejects
    by_line = {e["line_number"]: e for e in events if e["source"].endswith("server.log")}
    for n, (_, expect) in enumerate(CASES, start=1):
        if expect is None:
            assert n not in by_line, n
            continue
        expect = dict(expect)
        if "ts_ms" in expect:
            expect["ts_ms"] -= 3_600_000  # 03:04:05 in Paris is 02:04:05 UTC
        assert {k: by_line[n][k] for k in expect} == expect, n


def test_other_threads_shutdown_and_message_tails_give_no_event(read):
    events, _ = read
    assert [e for e in events if e["source"].endswith("quiet.log")] == []


def test_a_broker_failure_or_startup_callback_names_each_broker(spark, tmp_path):
    """KafkaController.onBrokerFailure (ZooKeeper controller, 0.8-3.x): `Broker failure callback for 1,2` lists the
    brokers whose registration left ZooKeeper, onBrokerStartup `New broker startup callback for 1,2` those whose
    registration appeared; a row per broker, written by the controller (the line's logIdent: `[Controller 3]: `
    0.8-0.11, `[Controller id=0] ` 1.0+). A new controller's `Currently active brokers in the cluster: Set(1, 0)`
    (initializeControllerContext, 0.8-3.x; a line of a public 3.6.1 cluster) names the brokers registered then, as
    started: without it a broker that started before the controller, with no line of its own, stayed down for
    hours; its rows' state, `active set`, tells the brokers it leaves out (broker_sessions.unregistered). An empty
    list, which leaves out every broker, is one row with no target broker. KRaft's fencing of a broker whose
    session timed out (ReplicationControlManager.maybeFenceOneStaleBroker) is told from a fence record replayed."""
    out = read_file(spark, tmp_path, "broker-9/controller.log",
        "[2015-09-01 09:54:30,030] INFO [Controller 3]: Broker failure callback for 1 (kafka.controller.KafkaController)\n"
        "[2021-03-04 05:06:07,008] INFO [Controller id=0] Broker failure callback for 1,2 "
        "(kafka.controller.KafkaController)\n"
        "[2021-03-04 05:06:08,000] INFO [Controller id=0] Broker failure callback for  (kafka.controller.KafkaController)\n"
        "[2021-03-04 05:07:00,000] INFO [Controller id=0] New broker startup callback for 2 "
        "(kafka.controller.KafkaController)\n"
        "[2024-05-01 10:00:40,000] INFO [QuorumController id=9] Fencing broker 2 because its session has timed out. "
        "(org.apache.kafka.controller.ReplicationControlManager)\n"
        "[2024-05-01 10:00:40,001] INFO [Controller 9] Fenced broker: FenceBrokerRecord(id=2, epoch=7) "
        "(org.apache.kafka.controller.ClusterControlManager)\n"
        "[2024-06-25 15:49:33,413] INFO [Controller id=0] Currently active brokers in the cluster: Set(1, 0) "
        "(kafka.controller.KafkaController)\n"
        "[2024-06-25 15:49:33,414] INFO [Controller id=0] Currently active brokers in the cluster: Set() "
        "(kafka.controller.KafkaController)\n"
        "[2024-06-25 15:49:34,000] INFO [Controller id=0] Currently active brokers in the cluster: HashSet(5, 1, 2, 3, "
        "4) (kafka.controller.KafkaController)\n")
    assert out["rejects"].count() == 0
    assert sorted((r["line_number"], r["kind"], r["broker"], r["target_broker"], r["topic"], r["partition"], r["state"])
                  for r in out["log_events"].collect()) == [
        (1, "broker_failed", 3, 1, None, None, None), (2, "broker_failed", 0, 1, None, None, None),
        (2, "broker_failed", 0, 2, None, None, None), (4, "broker_registered", 0, 2, None, None, None),
        (5, "broker_fenced", 9, 2, None, None, "session timed out"), (6, "broker_fenced", 9, 2, None, None, None),
        (7, "broker_registered", 0, 0, None, None, "active set"), (7, "broker_registered", 0, 1, None, None, "active set"),
        (8, "broker_registered", 0, None, None, None, "active set"),
        *[(9, "broker_registered", 0, b, None, None, "active set") for b in range(1, 6)]]


def test_log_dir_offline_names_each_partition(read):
    events, _ = read
    assert sorted((e["topic"], e["partition"], e["log_dir"]) for e in events if e["kind"] == "log_dir_offline") == \
        [("t", 0, "/data/k1"), ("t", 1, "/data/k1")]


def test_reassignments_completed_together_name_each_partition(read):
    """KafkaController.removePartitionsFromReassignedPartitions (2.0.0-2.3.0) logs the Scala Set of the partitions whose
    reassignment it removes from ZooKeeper: one row each."""
    events, _ = read
    assert sorted((e["topic"], e["partition"]) for e in events
                  if e["kind"] == "reassignment_completed" and e["topic"] == "moved") == [("moved", 0), ("moved", 1)]


def test_a_log_directory_whose_path_holds_spaces_is_read_whole(spark, tmp_path):
    """ReplicaManager.handleLogDirFailure and LogManager name a directory by its absolute path, which may hold spaces
    (`log.dirs=/var/lib/kafka data`): the path runs to where the message's own text ends it (` with uuid`, ` is
    offline`, `.`, ` has failed`, the line's end). Each line below gave no event while a path was one token. LogManager's
    `Stopping serving logs in dir` and LogDirFailureChannel's `Error while writing to checkpoint file` are read by no
    rule, as before."""
    rm, d, m = "(kafka.server.ReplicaManager)", "/var/lib/kafka data", "/mnt/kafka logs"
    out = read_file(spark, tmp_path, "broker-1/server.log", "".join(line + "\n" for line in [
        T + f"ERROR Error while writing to checkpoint file {d}/replication-offset-checkpoint "
            "(kafka.server.LogDirFailureChannel)",
        "java.io.IOException: No space left on device",
        T + f"WARN [ReplicaManager broker=1] Stopping serving replicas in dir {d} {rm}",  # 2.5-3.7
        T + f"WARN [ReplicaManager broker=1] Broker 1 stopped fetcher for partitions t-0,t-1 and stopped moving logs "
            f"for partitions  because they are in the failed log directory {d}. {rm}",
        T + f"WARN Stopping serving logs in dir {d} (kafka.log.LogManager)",
        T + f"WARN [ReplicaManager broker=1] Stopping serving replicas in dir {m} with uuid Some(2jG8lXaDR9mOQ8dA9KV1pg) "
            f"because the log directory has failed. {rm}",  # 3.8+
        T + f"INFO [ReplicaManager broker=1] Partitions t-2 are offline due to failure on log directory {m} {rm}",  # 1.0
        T + f"FATAL [ReplicaManager broker=1] Halting broker because dir {m} is offline {rm}",
        T + f"ERROR [ReplicaManager broker=1] Shutdown broker because the metadata log dir {m} meta has failed {rm}",
        T + f"ERROR [ReplicaManager broker=1] Shutdown broker because some log directory has failed during migration "
            f"mode: {m} {rm}",
        T + f"ERROR [ReplicaManager broker=1] Unable to propagate directory failure disabled because directory {m} "
            f"has no UUID {rm}",
    ]))
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["broker"], r["topic"], r["partition"], r["log_dir"])
                 for r in out["log_events"].collect())
    assert got == [
        (3, "log_dir_failed", 1, None, None, d),
        (4, "log_dir_offline", 1, "t", 0, d), (4, "log_dir_offline", 1, "t", 1, d),
        (6, "log_dir_failed", 1, None, None, m),
        (7, "log_dir_offline", 1, "t", 2, m),
        (8, "broker_halted", 1, None, None, m),
        (9, "broker_halted", 1, None, None, m + " meta"),
        (10, "broker_halted", 1, None, None, m),
        (11, "broker_halted", 1, None, None, m),
    ]


def test_log_dir_failure_halt_and_fetcher_forms_across_releases(spark, tmp_path):
    """ReplicaManager.handleLogDirFailure lists the partitions it takes offline (1.0 `Partitions ... are offline`,
    1.1+ `Broker N stopped fetcher ...`); LogManager.handleLogDirFailure lists them again (no row: one per partition),
    and a directory path ending in `-digits` is no partition. ReplicaManager 3.7+ halts for the metadata log's
    directory, in migration mode, and for a directory with no UUID. AbstractFetcherThread's 1.0-2.2 forms have no
    offset (`Error while processing data`, `Failed to truncate`), 0.10-1.0's invalid messages end in ` error <msg>`;
    ReplicaAlterLogDirsThread's lines are no replication events. KafkaController 2.4+: the target replicas as the
    request's ArrayBuffer. ReplicationControlManager.replay: a record that empties both lists ends a reassignment.
    Partition.appendRecordsToLeader on Scala 2.13: an ISR of five as `HashSet(...)`. AbstractFetcherThread's failed
    offset lookup and ReplicaFetcherThread's oversized message (all releases), and its 0.10-0.11 halt on a disk error.
    KafkaServer.controlledShutdown: 3.1+'s refused attempts, and the unclean shutdown after the last one.
    PartitionChangeRecord's leaderRecoveryState byte (LeaderRecoveryState: -1 no change, 0, 1) as its name."""
    out = read_file(spark, tmp_path, "broker-2/server.log", (Path(__file__).parent / "data" / "releases.log").read_text())
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["topic"], r["partition"], r["log_dir"], r["offset"], r["replicas"],
                  r["isr"]) for r in out["log_events"].collect())
    d0, d2 = "/var/lib/kafka/data-0/kafka-log2", "/kafka/kafka-logs-2"
    assert got == [
        (1, "log_dir_offline", "t", 0, d0, None, None, None), (1, "log_dir_offline", "t", 1, d0, None, None, None),
        (3, "log_dir_offline", "t", 0, d2, None, None, None), (3, "log_dir_offline", "t", 1, d2, None, None, None),
        (5, "broker_halted", None, None, "/data/meta", None, None, None),
        (6, "broker_halted", None, None, "/data/d1", None, None, None),
        (7, "broker_halted", None, None, "/data/d2", None, None, None),
        (8, "fetch_error", "t", 3, None, 100, None, None), (9, "fetch_error", "t", 3, None, None, None, None),
        (10, "truncation_failed", "t", 3, None, None, None, None),
        (13, "reassignment_caught_up", "t", 0, None, None, [4, 1, 2], [4, 1, 2]),
        (14, "reassignment_completed", "t", 0, None, None, [1, 2, 4], [1, 2, 4]),
        (15, "reassignment_started", "t", 0, None, None, [4, 1, 2, 3], [4, 1, 2, 3]),
        (17, "produce_rejected", "t", 0, None, None, None, [5, 1, 2, 3, 4]),
        (18, "fetch_error", "t", 3, None, None, None, None), (19, "fetch_error", "t", 3, None, None, None, None),
        (20, "fetch_error", "t", 3, None, None, None, None), (21, "storage_halt", "t", 3, None, None, None, None),
        (22, "controlled_shutdown", None, None, None, None, None, None),
        (23, "controlled_shutdown", None, None, None, None, None, None),
        (24, "controlled_shutdown", None, None, None, None, None, None),
        (25, "partition_change", "t", 1, None, None, None, [1])]
    states = {r["line_number"]: (r["state"], r["leader"]) for r in out["log_events"].collect()
              if r["line_number"] > 17 or r["line_number"] in (14, 15)}
    assert states == {18: ("offset lookup failed", 1), 19: ("offset lookup failed", 1), 20: ("message too large", 1),
                      21: (None, None), 22: ("refused", None), 23: ("refused", None), 24: ("failed", None),
                      14: (None, 1), 15: (None, 1), 25: ("RECOVERING", 1)}
    assert [r["error"] for r in out["log_events"].collect() if r["line_number"] == 22] == ["REQUEST_TIMED_OUT"]


def test_rules_without_a_logident_of_their_own_stay_two_runs():
    """Every record is matched against each run of rules without a logIdent (one regex call per run; docs/logs.md,
    Speed): a rule with one placed between them would split a run and cost every record one more call."""
    from replicaflow.ingest.log_match import MATCHERS

    assert sum(m.single is None for m in MATCHERS) == 2


SHUTDOWN_GRANTS_AND_RETRIES = """\
[2017-06-01 10:00:00,000] INFO [Controller 1]: Shutting down broker 2 (kafka.controller.KafkaController)
[2020-06-01 10:00:00,000] INFO [Controller id=1] Shutting down broker 3 (kafka.controller.KafkaController)
[2020-06-01 10:00:00,001] INFO [ExampleThread id=1] Shutting down broker 3 (com.example.Other)
[2024-06-01 10:00:01,000] INFO [QuorumController id=1] Unfenced broker 2 has requested and been granted a controlled \
shutdown. (org.apache.kafka.controller.BrokerHeartbeatManager)
[2024-06-01 10:00:01,001] INFO [QuorumController id=1] Unfenced broker 2 has requested and been granted an immediate \
shutdown. (org.apache.kafka.controller.BrokerHeartbeatManager)
[2024-06-01 10:00:01,002] INFO [QuorumController id=1] Unfenced broker 3 has requested and been granted fencing \
(org.apache.kafka.controller.BrokerHeartbeatManager)
[2019-06-01 10:00:01,003] ERROR Shutdown broker because none of the specified log dirs from /data/a, /data/b can be \
created or validated (kafka.log.LogManager)
[2021-06-01 10:00:02,000] INFO [ReplicaFetcher replicaId=1, leaderId=4, fetcherId=0] Could not fetch offset for t-3 due \
to error: For requests intended only for the leader, this error indicates that the broker is not the current leader. \
(kafka.server.ReplicaFetcherThread)
[2024-06-01 10:00:02,001] INFO [ReplicaFetcher replicaId=1, leaderId=4, fetcherId=0] Could not build remote log \
auxiliary state for t-3 due to error: The leader epoch in the request is newer than the epoch on the broker. \
(kafka.server.ReplicaFetcherThread)
[2024-06-01 10:00:02,002] ERROR [ReplicaFetcher replicaId=1, leaderId=4, fetcherId=0] Error building remote log \
auxiliary state for t-3 (kafka.server.ReplicaFetcherThread)
org.apache.kafka.common.errors.RemoteStorageException: Couldn't build the state from remote store for partition: t-3
\tat kafka.server.TierStateMachine.buildRemoteLogAuxState(TierStateMachine.java:250)
"""


def test_controller_shutdown_grants_and_retried_offset_lookups(spark, tmp_path):
    """KafkaController.doControlledShutdown (ZooKeeper, `[Controller N]: ` before 1.0, `[Controller id=N] ` from 1.0;
    another class's same text is no event) and BrokerHeartbeatManager.calculateNextBrokerState (KRaft 2.8+): a
    controlled shutdown under way, an unfenced broker stopping at once or asking to be fenced. LogManager 1.0+ halts
    a broker that can use none of its log directories at start-up. AbstractFetcherThread:
    handleOutOfRangeError's retried offset lookup (2.4+), handleOffsetsMovedToTieredStorage's (3.5+), whose ERROR
    line is logged with its exception (`error(msg, e)`): the class that opens the stack trace is the event's error."""
    out = read_file(spark, tmp_path, "broker-1/controller.log", SHUTDOWN_GRANTS_AND_RETRIES)
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["state"], r["broker"], r["target_broker"], r["topic"], r["partition"],
                  r["leader"]) for r in out["log_events"].collect())
    assert got == [
        (1, "controlled_shutdown", "requested", 1, 2, None, None, None),
        (2, "controlled_shutdown", "requested", 1, 3, None, None, None),
        (4, "controlled_shutdown", "granted", 1, 2, None, None, None),
        (5, "broker_fenced", "controlled shutdown", 1, 2, None, None, None),
        (6, "broker_fenced", "requested", 1, 3, None, None, None),
        (7, "broker_halted", "at startup", 1, None, None, None, None),
        (8, "fetch_error", "offset lookup failed", 1, None, "t", 3, 4),
        (9, "fetch_error", "remote log state failed", 1, None, "t", 3, 4),
        (10, "fetch_error", "remote log state failed", 1, None, "t", 3, 4)]
    # the ERROR line's exception is its stack trace's first line; the lines logged without one have no error
    assert {r["line_number"]: r["error"] for r in out["log_events"].collect() if r["error"]} == {
        10: "org.apache.kafka.common.errors.RemoteStorageException"}
    assert [r["log_dir"] for r in out["log_events"].collect() if r["kind"] == "broker_halted"] == ["/data/a, /data/b"]


def test_an_events_error_is_the_exception_its_stack_trace_opens_with(spark, tmp_path):
    """AbstractFetcherThread 1.1+ logs `Error for partition t-p at offset O` with the exception apart
    (`error(msg, e)`): its class, the first line of the trace, is the event's error. In `docker compose logs` the
    trace follows its own service's record, across another broker's line (kafka-1's error is UnknownServerException;
    kafka-2's shrink, with no trace, has none). After grep's `--` a trace continues no record (the fetch_error before
    it keeps none), and a continuation line that is no exception (`\\tat ...` alone) names no error."""
    fetch = ("ERROR [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error for partition t-0 at offset 7 "
             "(kafka.server.ReplicaFetcherThread)")
    out = read_file(spark, tmp_path, "compose.log",
        "kafka-1  | " + T + fetch + "\n"
        "kafka-2  | " + T + "INFO [Partition t-1 broker=2] Shrinking ISR from 2,1 to 2 (kafka.cluster.Partition)\n"
        "kafka-1  | org.apache.kafka.common.errors.UnknownServerException: The server experienced an unexpected error\n"
        "kafka-1  | \tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:367)\n"
        "kafka-1  | " + T + fetch + "\n"
        "--\n"
        "kafka-1  | org.apache.kafka.common.errors.NotLeaderOrFollowerException: not the leader\n"
        "kafka-1  | " + T + fetch + "\n"
        "kafka-1  | \tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:367)\n")
    got = sorted((r["line_number"], r["kind"], r["broker"], r["error"]) for r in out["log_events"].collect())
    assert got == [(1, "fetch_error", 1, "org.apache.kafka.common.errors.UnknownServerException"),
                   (2, "isr_shrink", 2, None), (5, "fetch_error", 1, None), (8, "fetch_error", 1, None)]


def test_a_records_leader_of_minus_2_names_no_broker(spark, tmp_path):
    """PartitionChangeRecord's leader -2 is NO_LEADER_CHANGE (PartitionChangeBuilder, KRaft): no leader is named,
    where -1 is no leader at all (offline). ReplicationControlManager.replay logs the record of a reassignment's start
    (leader unchanged) and of its completion (here the new leader, 2: the old one left the replicas)."""
    record = ("INFO [QuorumController id=1] Replayed partition assignment change PartitionChangeRecord(partitionId=0, "
              "topicId=AAAAAAAAAAAAAAAAAAAAAA, isr={isr}, leader={leader}, replicas=[2, 3, 4{extra}], removingReplicas="
              "[{removing}], addingReplicas=[{adding}], leaderRecoveryState=-1) for topic t "
              "(org.apache.kafka.controller.ReplicationControlManager)\n")
    out = read_file(spark, tmp_path, "broker-1/controller.log",
        T + record.format(isr="null", leader=-2, extra=", 1", removing="1", adding="4") +
        T + record.format(isr="[2, 3, 4]", leader=2, extra="", removing="", adding="") +
        T + record.format(isr="[]", leader=-1, extra="", removing="", adding=""))
    got = sorted((r["line_number"], r["kind"], r["leader"]) for r in out["log_events"].collect())
    assert got == [(1, "reassignment_started", None), (2, "reassignment_completed", 2),
                   (3, "reassignment_completed", -1)]


CONFIG_CHANGES = """\
[2024-01-26 10:07:10,015] INFO [Admin Manager on Broker 1]: Updating topic orders with new configuration : retention.ms -> 60000,min.insync.replicas -> 3 (kafka.server.ZkAdminManager)
[2024-01-26 10:07:10,097] INFO Processing override for entityPath: topics/orders with config: HashMap(retention.ms -> 60000, min.insync.replicas -> 3) (kafka.server.ZkConfigManager)
[2024-01-26 10:07:11,097] INFO Processing override for entityPath: topics/orders with config: Map(retention.ms -> 60000) (kafka.server.DynamicConfigManager)
[2024-01-26 10:07:12,097] INFO Processing override for entityType: topics, entity: payments with config: {min.insync.replicas=2, cleanup.policy=compact} (kafka.server.DynamicConfigManager)
[2024-01-26 10:07:13,097] INFO Processing override for entityPath: brokers/<default> with config: Map(min.insync.replicas -> 2) (kafka.server.ZkConfigManager)
[2024-01-26 10:07:14,097] INFO [DynamicConfigPublisher broker id=1] Updating topic orders with new configuration :  (kafka.server.metadata.DynamicConfigPublisher)
[2024-01-26 10:07:15,097] INFO [DynamicConfigPublisher broker id=1] Updating cluster configuration : min.insync.replicas -> 2,log.retention.ms -> 5 (kafka.server.metadata.DynamicConfigPublisher)
[2024-01-26 10:07:16,097] INFO [Admin Manager on Broker 1]: Updating topic orders with new configuration kafka.server.KafkaConfig@1a2b3c (kafka.server.AdminManager)
[2024-01-26 10:07:17,097] INFO Processing override for entityPath: topics/orders with config: Map(foo.min.insync.replicas -> 9) (kafka.server.ZkConfigManager)
[2024-01-26 10:07:18,097] INFO Processing override for entityPath: brokers/2 with config: Map(min.insync.replicas -> 5) (kafka.server.ZkConfigManager)
[2024-01-26 10:07:19,097] INFO [DynamicConfigPublisher broker id=3] Updating node 3 with new configuration : leader.replication.throttled.rate -> 1000 (kafka.server.metadata.DynamicConfigPublisher)
"""


def test_a_config_change_line_lists_a_topics_or_the_defaults_overrides(spark, tmp_path):
    """Every override of the entity after the change, min.insync.replicas among them or not (then removed):
    ZkConfigManager/DynamicConfigManager's `Processing override for entityPath: topics/T` on every broker
    (`Map(k -> v)`, `HashMap(k -> v)` on Scala 2.13, `{k=v}` Properties up to 0.10.2, the version-1 notification's
    `entityType: topics, entity: T`), ZkAdminManager 2.8+ and KRaft's DynamicConfigPublisher (`Updating topic T with
    new configuration : k -> v,…`, the default `Updating cluster configuration : …`), a broker's own (`brokers/N`,
    KRaft's `Updating node N`: state `broker`, target_broker N; its min ISR is not the cluster's). AdminManager
    2.4–2.7 printed its KafkaConfig object instead (no event); a longer name ending in min.insync.replicas is another
    config. The node is named by ZkAdminManager's logIdent (`[Admin
    Manager on Broker N]: `) and the publisher's (`[DynamicConfigPublisher broker id=N] `, 3.4 `nodeType=broker`)."""
    out = read_file(spark, tmp_path, "broker-9/server.log", CONFIG_CHANGES)
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["state"], r["topic"], r["partition"], r["min_isr"])
                 for r in out["log_events"].collect())
    # the broker from ZkAdminManager's and DynamicConfigPublisher's logIdents, else from the file's path
    assert {r["line_number"]: r["broker"] for r in out["log_events"].collect()} == {
        1: 1, 2: 9, 3: 9, 4: 9, 5: 9, 6: 1, 7: 1, 9: 9, 10: 9, 11: 3}
    assert got == [(1, "config_changed", "topic", "orders", None, 3), (2, "config_changed", "topic", "orders", None, 3),
                   (3, "config_changed", "topic", "orders", None, None),
                   (4, "config_changed", "topic", "payments", None, 2),
                   (5, "config_changed", "default", None, None, 2),
                   (6, "config_changed", "topic", "orders", None, None),
                   (7, "config_changed", "default", None, None, 2),
                   (9, "config_changed", "topic", "orders", None, None),
                   (10, "config_changed", "broker", None, None, None), (11, "config_changed", "broker", None, None, None)]
    assert {r["line_number"]: r["target_broker"] for r in out["log_events"].collect() if r["state"] == "broker"} == {
        10: 2, 11: 3}
