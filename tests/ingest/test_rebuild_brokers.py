"""The rebuilt ``brokers`` table: a broker's own lifecycle lines, and the controller's view of it, which is all a
crash leaves in the logs (docs/real-cluster.md, "What comes from where")."""

from __future__ import annotations

import pytest

from replicaflow.ingest.rebuild import rebuild
from replicaflow.ingest.sources import ClusterInputs, RebuildOptions
from tests.ingest.log_cases import write_files

pytestmark = pytest.mark.spark

SHRINK = ("[2021-03-04 05:00:05,000] INFO [Partition orders-0 broker=2] Shrinking ISR from 2,3,1 to 2,1. Leader: "
          "(highWatermark: 10, endOffset: 12). Out of sync replicas: (brokerId: 3, endOffset: 10). "
          "(kafka.cluster.Partition)\n")


def brokers(spark, tmp_path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    """(HH:MM:SS.mmm, broker, state) of the rebuilt brokers table, in time (seq) order; the rows of one instant by
    broker (the start's rows have no order of their own)."""
    paths = write_files(tmp_path, files)
    tables = rebuild(spark, [ClusterInputs("c", tuple(paths))], RebuildOptions(scrape_interval_ms=1000)).tables
    rows = tables["brokers"].orderBy("ts_ms", "broker", "seq").collect()
    clock = {r["ts_ms"]: f"{r['ts_ms'] // 3_600_000 % 24:02d}:{r['ts_ms'] // 60_000 % 60:02d}:"
                         f"{r['ts_ms'] // 1000 % 60:02d}.{r['ts_ms'] % 1000:03d}" for r in rows}
    return [(clock[r["ts_ms"]], r["broker"], r["state"]) for r in rows]


def test_a_zookeeper_controller_tells_a_crash_and_the_first_line_of_each_change_counts(spark, tmp_path):
    """KafkaController.onBrokerFailure and onBrokerStartup (ZooKeeper controller, 0.8-3.x) log `Broker failure callback
    for 2` when broker 2's registration leaves ZooKeeper and `New broker startup callback for 2` when it is back
    (BrokerChange). Broker 2 crashed (no "shut down completed"): without the controller's lines it stayed up until
    it started again. Broker 3 shut down cleanly: the controller saw its registration go 200 ms before the broker
    logged "shut down completed", one down row. Broker 4 crashed and came back twice: two lifetimes from its own
    "started" lines alone (KafkaServer.startup), as before."""
    got = brokers(spark, tmp_path, {
        "broker-1/controller.log":
            "[2021-03-04 05:01:00,000] INFO [Controller id=1] Newly added brokers: , deleted brokers: 2, bounced "
            "brokers: , all live brokers: 1,3,4 (kafka.controller.KafkaController)\n"
            "[2021-03-04 05:01:00,010] INFO [Controller id=1] Broker failure callback for 2 "
            "(kafka.controller.KafkaController)\n"
            "[2021-03-04 05:01:59,900] INFO [Controller id=1] New broker startup callback for 2 "
            "(kafka.controller.KafkaController)\n"
            "[2021-03-04 05:03:00,000] INFO [Controller id=1] Broker failure callback for 3 "
            "(kafka.controller.KafkaController)\n",
        "broker-1/server.log": "[2021-03-04 05:00:00,100] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n",
        "broker-2/server.log":
            "[2021-03-04 05:00:00,000] INFO [KafkaServer id=2] started (kafka.server.KafkaServer)\n" + SHRINK +
            "[2021-03-04 05:02:00,000] INFO [KafkaServer id=2] started (kafka.server.KafkaServer)\n",
        "broker-3/server.log":
            "[2021-03-04 05:00:00,500] INFO [KafkaServer id=3] started (kafka.server.KafkaServer)\n"
            "[2021-03-04 05:03:00,200] INFO [KafkaServer id=3] shut down completed (kafka.server.KafkaServer)\n",
        "broker-4/server.log":
            "[2021-03-04 05:00:00,700] INFO [KafkaServer id=4] started (kafka.server.KafkaServer)\n"
            "[2021-03-04 05:04:00,000] INFO [KafkaServer id=4] started (kafka.server.KafkaServer)\n",
    })
    assert got == [
        ("05:00:00.000", 2, "up"), ("05:00:00.100", 1, "up"), ("05:00:00.500", 3, "up"), ("05:00:00.700", 4, "up"),
        ("05:01:00.010", 2, "down"), ("05:01:59.900", 2, "up"), ("05:03:00.000", 3, "down"), ("05:04:00.000", 4, "up")]


def test_a_broker_only_the_controller_names_is_up_until_it_fails(spark, tmp_path):
    """A failure callback for a broker whose own log was not given (the usual case: the operator collected the
    controller's logs): it was live before it failed, so it is up from the start of the logs; a broker the
    callback lists with another (`Broker failure callback for 5,6`) is each one's row."""
    got = brokers(spark, tmp_path, {"broker-1/controller.log":
        "[2021-03-04 05:00:00,000] INFO [Controller id=1] 1 successfully elected as the controller. Epoch "
        "incremented to 3 and epoch zk version is now 3 (kafka.controller.KafkaController)\n"
        "[2021-03-04 05:00:30,000] INFO [Controller id=1] Broker failure callback for 5,6 "
        "(kafka.controller.KafkaController)\n"})
    assert got == [("05:00:00.000", 1, "up"), ("05:00:00.000", 5, "up"), ("05:00:00.000", 6, "up"),
                   ("05:00:30.000", 5, "down"), ("05:00:30.000", 6, "down")]


def test_a_broker_serving_as_a_replica_before_its_started_line_is_up_from_just_before(spark, tmp_path):
    """KafkaServer.startup registers the broker in ZooKeeper, and the controller sends it LeaderAndIsr, before it logs
    "started"; a broker leads, follows and changes ISRs only once registered (ingest/broker_sessions.SERVING). Broker 1
    shut down and logs a leader line (state-change.log) 3 s before "started": up 1 ms before that line, one lifetime.
    Broker 2's first lifecycle line is "started", after a shrink it logged as leader: up before the shrink. Broker 3
    logs an ISR change in the millisecond after "shut down completed" (its last lines, not a new start), broker 4 its
    leader line in the millisecond of "started": both left to the lifecycle lines. Broker 5 (the real 3.9 cluster of
    docs/real-cluster.md: a start that failed) is down from the controller's line, and its own two "shut down
    completed" stay as before: the first repeats the controller, the second ends another process."""
    leader = ("[2021-03-04 05:{t}] TRACE [Broker id={b}] Leader orders-0 starts at leader epoch 6 from offset 40 with "
              "high watermark 40 ISR [{b}] addingReplicas [] removingReplicas []. Previous leader epoch was 5. "
              "(state.change.logger)\n")
    shrink3 = SHRINK.replace("05:00:05,000", "05:10:00,001").replace("broker=2", "broker=3").replace("from 2,3,1 to 2,1",
                                                                                                      "from 3,2 to 3")

    def server(b: int, *lines: tuple[str, str]) -> str:
        return "".join(f"[2021-03-04 05:{t}] INFO [KafkaServer id={b}] {m} (kafka.server.KafkaServer)\n" for t, m in lines)

    got = brokers(spark, tmp_path, {
        "broker-1/server.log": server(1, ("00:00,000", "started"), ("10:00,000", "shut down completed"),
                                      ("20:03,000", "started")),
        "broker-1/state-change.log": leader.format(t="20:00,000", b=1),
        "broker-2/server.log": SHRINK + server(2, ("00:30,000", "started")),
        "broker-3/server.log": server(3, ("00:00,000", "started"), ("10:00,000", "shut down completed")) + shrink3,
        "broker-4/server.log": server(4, ("00:00,000", "started"), ("10:00,000", "shut down completed"),
                                      ("20:00,000", "started")),
        "broker-4/state-change.log": leader.format(t="20:00,000", b=4),
        "broker-1/controller.log": "[2021-03-04 05:05:00,000] INFO [Controller id=1] Broker failure callback for 5 "
                                   "(kafka.controller.KafkaController)\n",
        "broker-5/server.log": server(5, ("05:00,100", "shut down completed"), ("12:00,000", "shut down completed")),
        "broker-5/state-change.log": leader.format(t="15:00,000", b=5),
    })
    assert got == [
        ("05:00:00.000", 1, "up"), ("05:00:00.000", 3, "up"), ("05:00:00.000", 4, "up"), ("05:00:00.000", 5, "up"),
        ("05:00:04.999", 2, "up"), ("05:05:00.000", 5, "down"), ("05:10:00.000", 1, "down"),
        ("05:10:00.000", 3, "down"), ("05:10:00.000", 4, "down"), ("05:12:00.000", 5, "down"),
        ("05:14:59.999", 5, "up"), ("05:19:59.999", 1, "up"), ("05:20:00.000", 4, "up")]


def test_a_kraft_controller_fences_a_broker_whose_session_timed_out(spark, tmp_path):
    """ReplicationControlManager.maybeFenceOneStaleBroker (3.0+): the active controller fences a broker that sent no
    heartbeat within broker.session.timeout.ms (a crash, or a broker cut off); BrokerHeartbeatManager grants its
    unfence request when it is back and caught up. Those two are the controller acting; the records it replays
    (`Fenced broker: ...`, `Replayed BrokerRegistrationChangeRecord ...`) are also logged by every standby
    controller and again when a controller replays its log at start, so they are not taken as the broker's state."""
    got = brokers(spark, tmp_path, {
        "controller-9/controller.log":
            "[2024-05-01 10:00:40,000] INFO [QuorumController id=9] Fencing broker 2 because its session has timed "
            "out. (org.apache.kafka.controller.ReplicationControlManager)\n"
            "[2024-05-01 10:00:40,001] INFO [QuorumController id=9] Replayed BrokerRegistrationChangeRecord modifying "
            "the registration for broker 2: BrokerRegistrationChangeRecord(brokerId=2, brokerEpoch=40, fenced=1, "
            "inControlledShutdown=0, logDirs=[]) (org.apache.kafka.controller.ClusterControlManager)\n"
            "[2024-05-01 10:02:10,000] INFO [QuorumController id=9] The request from broker 2 to unfence has been "
            "granted because it has caught up with the offset of its register broker record 812. "
            "(org.apache.kafka.controller.BrokerHeartbeatManager)\n"
            "[2024-05-01 10:03:00,000] INFO [QuorumController id=9] Replayed BrokerRegistrationChangeRecord modifying "
            "the registration for broker 3: BrokerRegistrationChangeRecord(brokerId=3, brokerEpoch=41, fenced=1, "
            "inControlledShutdown=0, logDirs=[]) (org.apache.kafka.controller.ClusterControlManager)\n",
        "broker-2/server.log":
            "[2024-05-01 10:00:00,000] INFO [KafkaRaftServer nodeId=2] Kafka Server started "
            "(kafka.server.KafkaRaftServer)\n"
            "[2024-05-01 10:02:10,300] INFO [KafkaRaftServer nodeId=2] Kafka Server started "
            "(kafka.server.KafkaRaftServer)\n",
    })
    # node 9 logs only as a controller (QuorumController) and holds no replica: no broker (test below)
    assert got == [("10:00:00.000", 2, "up"), ("10:00:40.000", 2, "down"), ("10:02:10.000", 2, "up")]


def test_a_kraft_controller_alone_is_no_broker_and_a_combined_node_is_one(spark, tmp_path):
    """KafkaRaftServer (3.0+) builds a ControllerServer, a BrokerServer or both from ``process.roles``, and logs
    `Kafka Server started` either way; QuorumController and ControllerServer exist only on a controller. Node 1 is
    a controller alone: its start, its restart and its active-controller line are events, not a broker's
    lifetime, and it gets no row (no broker metric, not the lowest live broker that reports the controller's
    gauges). Node 2 runs both roles: it logs as the quorum's controller and as a partition's leader, and stays a
    broker. Node 3 is named only by the controller's fencing line: a broker, as before. Node 5 is a controller alone
    of 3.3, whose QuorumController wrote `[Controller 5] ` (`[QuorumController id=5] ` from 3.5)."""
    got = brokers(spark, tmp_path, {
        "controller-1/server.log":
            "[2024-05-01 10:00:00,000] INFO [KafkaRaftServer nodeId=1] Kafka Server started "
            "(kafka.server.KafkaRaftServer)\n"
            "[2024-05-01 10:00:01,000] INFO [QuorumController id=1] Becoming the active controller at epoch 7, next "
            "write offset 120. (org.apache.kafka.controller.QuorumController)\n"
            "[2024-05-01 10:00:40,000] INFO [QuorumController id=1] Fencing broker 3 because its session has timed "
            "out. (org.apache.kafka.controller.ReplicationControlManager)\n"
            "[2024-05-01 10:01:00,000] INFO [KafkaRaftServer nodeId=1] Kafka Server started "
            "(kafka.server.KafkaRaftServer)\n",
        "controller-5/server.log":
            "[2024-05-01 10:00:02,000] INFO [KafkaRaftServer nodeId=5] Kafka Server started "
            "(kafka.server.KafkaRaftServer)\n"
            "[2024-05-01 10:00:03,000] INFO [Controller 5] Becoming the active controller at epoch 2, committed offset "
            "7, committed epoch 1 (org.apache.kafka.controller.QuorumController)\n",
        "combined-2/server.log":
            "[2024-05-01 10:00:00,500] INFO [KafkaRaftServer nodeId=2] Kafka Server started "
            "(kafka.server.KafkaRaftServer)\n"
            "[2024-05-01 10:00:50,000] INFO [QuorumController id=2] Becoming the active controller at epoch 8, next "
            "write offset 130. (org.apache.kafka.controller.QuorumController)\n"
            "[2024-05-01 10:00:55,000] INFO [Partition orders-0 broker=2] ISR updated to 2,4 and version updated "
            "to 12 (kafka.cluster.Partition)\n",
    })
    assert got == [("10:00:00.000", 3, "up"), ("10:00:00.000", 4, "up"), ("10:00:00.500", 2, "up"),
                   ("10:00:40.000", 3, "down")]


def test_the_nodes_of_a_combined_4_1_cluster_are_brokers_the_controller_fences(spark, tmp_path):
    """Three 4.1.1 nodes with both roles (lines verbatim from a public cluster, github.com/Loi-ND/kafka-cluster-setup):
    4.1's BrokerServer lines are no events, so no line of a broker's own names them; the active controller grants
    their unfence requests (BrokerHeartbeatManager) and fences one whose session timed out, a line that from 4.1 names
    the broker's epoch (ReplicationControlManager.maybeFenceOneStaleBroker: `Fencing broker 2 at epoch 10 because
    ...`). Before, the three were controllers alone and the fencing no event: the rebuilt cluster had no broker."""
    ctl = "(org.apache.kafka.controller.BrokerHeartbeatManager)"
    got = brokers(spark, tmp_path, {
        "server-3/controller.log":
            "[2025-11-27 07:30:31,724] INFO [QuorumController id=3] Becoming the active controller at epoch 1, next "
            "write offset 3. (org.apache.kafka.controller.QuorumController)\n"
            + "".join(f"[2025-11-27 07:30:32,{ms}] INFO [QuorumController id=3] The request from broker {b} to unfence "
                      f"has been granted because it has caught up with the offset of its register broker record "
                      f"{r}. {ctl}\n" for b, ms, r in ((3, 534, 12), (1, 623, 11), (2, 677, 10)))
            + "[2025-11-27 07:40:07,302] INFO [QuorumController id=3] Fencing broker 2 at epoch 10 because its session "
            "has timed out. (org.apache.kafka.controller.ReplicationControlManager)\n",
        **{f"server-{n}/server.log": f"[2025-11-27 07:30:32,{ms}] INFO [KafkaRaftServer nodeId={n}] Kafka Server "
                                     f"started (kafka.server.KafkaRaftServer)\n"
           for n, ms in ((3, 619), (1, 692), (2, 738))},
    })
    assert got == [("07:30:32.534", 3, "up"), ("07:30:32.623", 1, "up"), ("07:30:32.677", 2, "up"),
                   ("07:40:07.302", 2, "down")]


def story(release: str, controller: str) -> str:
    return f"""name: crash-{controller}
seed: 3
duration: 60s
tick: 1s
kafka:
  version: "{release}"
  controller: {controller}
cluster:
  brokers: 3
topics:
  - name: orders
    partitions: 3
    replication_factor: 3
    produce_rate: 100KB/s
events:
  - {{at: 5s, broker_down: 2}}
  - {{at: 30s, broker_up: 2}}
  - {{at: 40s, broker_down: {{broker: 3, controlled: true}}}}
  - {{at: 50s, broker_up: 3}}
"""


@pytest.mark.parametrize("release, controller, session_s", [("2.4", "zookeeper", 6), ("3.7", "kraft", 9)])
def test_a_simulated_crash_is_down_from_the_controllers_line_a_session_timeout_later(spark, tmp_path, release,
                                                                                     controller, session_s):
    """The simulator writes the controller's lines as Kafka does (KafkaController.onBrokerFailure/onBrokerStartup;
    ReplicationControlManager.maybeFenceOneStaleBroker and BrokerHeartbeatManager's unfence grant under KRaft), and
    the logs alone give broker 2 down when its session expired (zookeeper.session.timeout.ms 6 s up to 2.4, KRaft's
    broker.session.timeout.ms 9 s): the simulator's truth has it down at the crash, 5 s in, which no log line
    shows. Both restarts are one row each, as in the truth; broker 3's controlled shutdown is shutting_down then
    down, as in the truth: the simulator writes KafkaServer's `Starting controlled shutdown` (ZooKeeper) and
    BrokerLifecycleManager's `Beginning controlled shutdown.` (KRaft, BrokerServer.shutdown)."""
    from replicaflow.sim.runner import simulate

    path = tmp_path / "story.yaml"
    path.write_text(story(release, controller))
    out = simulate(path, tmp_path / "run", logs=True)
    files = tuple(str(p) for p in sorted((out / "logs").rglob("*.log")))
    tables = rebuild(spark, [ClusterInputs("c", files)], RebuildOptions(scrape_interval_ms=1000)).tables
    rows = tables["brokers"].orderBy("seq").collect()
    start = min(r["ts_ms"] for r in rows)
    got = [((r["ts_ms"] - start) // 1000, r["broker"], r["state"]) for r in rows]
    assert sorted(got) == sorted([(0, 1, "up"), (0, 2, "up"), (0, 3, "up"), (5 + session_s, 2, "down"), (30, 2, "up"),
                                  (40, 3, "shutting_down"), (40, 3, "down"), (50, 3, "up")])
    assert [r["state"] for r in rows if r["broker"] == 3][1:] == ["shutting_down", "down", "up"]


def test_failures_before_counts_the_clusters_failures_at_or_before_each_row(spark):
    """``broker_sessions.failures_before``: how many session ends (ZooKeeper's failure callback, KRaft's fencing
    on a session timeout) the controller logged at or before a row of the same cluster; a replayed fence record
    and another cluster's failure do not count. ``log_changes`` keeps an ISR equal to the one before it when a
    failure lies between (the controller wrote another ISR there)."""
    from replicaflow.ingest.broker_sessions import failures_before

    events = spark.createDataFrame(
        [("a", 10, "broker_failed", 3, None), ("a", 15, "broker_fenced", 2, "session timed out"),
         ("a", 12, "broker_fenced", 4, None), ("b", 1, "broker_failed", 1, None)],
        "cluster string, ts_ms bigint, kind string, target_broker int, state string")
    rows = spark.createDataFrame([("a", 5), ("a", 10), ("a", 14), ("a", 20), ("c", 30)], "cluster string, ts_ms bigint")
    got = sorted(tuple(r) for r in failures_before(rows, events).collect())
    assert got == [("a", 5, 0), ("a", 10, 1), ("a", 14, 1), ("a", 20, 2), ("c", 30, 0)]


def test_brokers_a_new_controller_finds_unregistered_are_down_from_its_list(spark, tmp_path):
    """KafkaController.initializeControllerContext (ZooKeeper, 0.8-3.x) logs `Currently active brokers in the cluster:
    Set(…)`, the brokers registered in ZooKeeper when it takes over: its whole view. The public 2.5 cluster's new
    controller 0 listed itself alone while brokers 1 and 2, last seen started, had gone with the old controller and no
    failure callback: they are down from the list until their startup callback (1) or the end (2). Broker 3, listed,
    stays up; broker 5, already shut down, gets no second down row; broker 4, whose first line comes after the list,
    is not up before it (a down row for it would have made it up from the start of the logs)."""
    ctrl = "[2022-10-04 {t}] INFO [Controller id=0] {m} (kafka.controller.KafkaController)\n"

    def server(b: int, *lines: tuple[str, str]) -> str:
        return "".join(f"[2022-10-04 {t}] INFO [KafkaServer id={b}] {m} (kafka.server.KafkaServer)\n" for t, m in lines)

    got = brokers(spark, tmp_path, {
        "broker-0/controller.log": ctrl.format(t="16:08:16,844", m="Currently active brokers in the cluster: Set(0, 3)")
        + ctrl.format(t="16:09:32,207", m="New broker startup callback for 1"),
        "broker-0/server.log": server(0, ("15:13:00,000", "started")),
        "broker-1/server.log": server(1, ("15:13:06,277", "started"), ("16:09:34,584", "started")),
        "broker-2/server.log": server(2, ("15:13:23,248", "started")),
        "broker-3/server.log": server(3, ("15:14:00,000", "started")),
        "broker-4/server.log": server(4, ("16:09:00,000", "started")),
        "broker-5/server.log": server(5, ("15:13:30,000", "started"), ("15:30:00,000", "shut down completed")),
    })
    assert got == [
        ("15:13:00.000", 0, "up"), ("15:13:06.277", 1, "up"), ("15:13:23.248", 2, "up"), ("15:13:30.000", 5, "up"),
        ("15:14:00.000", 3, "up"), ("15:30:00.000", 5, "down"), ("16:08:16.844", 1, "down"),
        ("16:08:16.844", 2, "down"), ("16:09:00.000", 4, "up"), ("16:09:32.207", 1, "up")]


def test_a_halted_broker_is_down_from_its_last_line(spark, tmp_path):
    """LogManager.handleLogDirFailure (1.0+) logs `Shutdown broker because all log dirs in D have failed` and calls
    Exit.halt: no "shut down completed" follows. The public 2.5 cluster's last live broker halted so, with no
    controller left to log its failure, and stayed up for 34 minutes. Before 1.0 an I/O error appending to a log halts
    the broker too (ReplicaManager.appendToLocalLog, Runtime.halt). Broker 2's controller failure callback 6 s after
    its halt repeats the down row. The halt names no broker, only every configured dir: in the one file brokers 3 and
    4 share (that public cluster's brokers wrote one folder) it is broker 4's, not the file's first broker's, as the
    `[ReplicaManager broker=4] Stopping serving replicas in dir` before it tells (ReplicaManager.handleLogDirFailure
    hands the dir to LogManager after that line). The halt at 12:30, with no such line for its dirs, is not taken."""
    got = brokers(spark, tmp_path, {
        "broker-1/server.log":
            "[2022-10-04 12:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n"
            "[2022-10-04 12:56:08,036] ERROR Shutdown broker because all log dirs in C:\\kafka\\data\\broker-1 have "
            "failed (kafka.log.LogManager)\n",
        "broker-2/server.log":
            "[2022-10-04 12:00:01,000] INFO [KafkaServer id=2] started (kafka.server.KafkaServer)\n"
            "[2022-10-04 12:10:00,000] FATAL [Replica Manager on Broker 2]: Halting due to unrecoverable I/O error while "
            "handling produce request:  (kafka.server.ReplicaManager)\n"
            "kafka.common.KafkaStorageException: I/O exception in append to log 'orders-0'\n",
        "broker-1/controller.log": "[2022-10-04 12:10:06,000] INFO [Controller id=1] Broker failure callback for 2 "
                                   "(kafka.controller.KafkaController)\n",
        "host/server.log":
            "[2022-10-04 12:00:02,000] INFO [KafkaServer id=3] started (kafka.server.KafkaServer)\n"
            "[2022-10-04 12:00:03,000] INFO [KafkaServer id=4] started (kafka.server.KafkaServer)\n"
            "[2022-10-04 12:19:00,000] WARN [ReplicaManager broker=3] Stopping serving replicas in dir /data/broker-3 "
            "(kafka.server.ReplicaManager)\n"
            "[2022-10-04 12:20:00,000] WARN [ReplicaManager broker=4] Stopping serving replicas in dir /data/broker-4b "
            "(kafka.server.ReplicaManager)\n"
            "[2022-10-04 12:20:00,100] ERROR Shutdown broker because all log dirs in /data/broker-4a, /data/broker-4b "
            "have failed (kafka.log.LogManager)\n"
            "[2022-10-04 12:30:00,000] ERROR Shutdown broker because all log dirs in /data/broker-5 have failed "
            "(kafka.log.LogManager)\n",
    })
    assert got == [("12:00:00.000", 1, "up"), ("12:00:01.000", 2, "up"), ("12:00:02.000", 3, "up"),
                   ("12:00:03.000", 4, "up"), ("12:10:00.000", 2, "down"), ("12:20:00.100", 4, "down"),
                   ("12:56:08.036", 1, "down")]


def test_a_new_controller_takes_the_brokers_it_finds_unregistered_out_of_isrs_and_leaderships(spark, tmp_path):
    """From 2.3 a new ZooKeeper controller moves the replicas of brokers missing from its `Currently active brokers`
    to OfflineReplica (ReplicaStateMachine.startup, removeReplicasFromIsr), after electing a leader from the live ISR
    for each partition such a broker led (PartitionStateMachine.initializePartitionState, OfflinePartitionLeader-
    ElectionStrategy): the same ISR and leader rows as a failure callback (broker_sessions.isr_removals,
    elected_at_removals), at the list's line. Broker 1, left out, led orders-0 (ISR 1,0,2: broker 0 is elected, the
    first live ISR member) and followed ssl-topic-0 (ISR 0,1,2 → 0,2); the controller's own LeaderAndIsr lines on that
    public 2.5 cluster named the one-member ISR that this left."""
    part = "[2022-10-04 15:13:{s}] INFO [Partition {tp} broker={b}] {m} (kafka.cluster.Partition)\n"
    files = write_files(tmp_path, {
        "broker-0/controller.log": "[2022-10-04 16:08:16,844] INFO [Controller id=0] Currently active brokers in the "
                                   "cluster: Set(0, 2) (kafka.controller.KafkaController)\n",
        "broker-0/server.log": "".join([
            "[2022-10-04 15:13:00,000] INFO [KafkaServer id=0] started (kafka.server.KafkaServer)\n",
            part.format(s="10,000", tp="ssl-topic-0", b=0, m="ssl-topic-0 starts at leader epoch 16 from offset 6 with "
                                                         "high watermark 6. Previous leader epoch was 15."),
            part.format(s="26,879", tp="ssl-topic-0", b=0, m="Expanding ISR from 0 to 0,1,2"),
            part.format(s="26,892", tp="ssl-topic-0", b=0, m="ISR updated to [0,1,2] and zkVersion updated to [32]")]),
        "broker-1/server.log": "".join([
            "[2022-10-04 15:13:06,277] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n",
            part.format(s="10,000", tp="orders-0", b=1, m="orders-0 starts at leader epoch 5 from offset 6 with high "
                                                       "watermark 6. Previous leader epoch was 4."),
            part.format(s="30,000", tp="orders-0", b=1, m="Expanding ISR from 1 to 1,0,2"),
            part.format(s="30,010", tp="orders-0", b=1, m="ISR updated to [1,0,2] and zkVersion updated to [9]")]),
        "broker-2/server.log": "[2022-10-04 15:13:23,248] INFO [KafkaServer id=2] started (kafka.server.KafkaServer)\n",
    })
    tables = rebuild(spark, [ClusterInputs("c", tuple(files))], RebuildOptions(scrape_interval_ms=1000)).tables
    at = 1664899696844  # 2022-10-04 16:08:16.844 UTC
    isr = {(r["topic"], r["ts_ms"]): sorted(r["isr"]) for r in tables["isr"].collect()}
    leaders = {(r["topic"], r["ts_ms"]): r["leader"] for r in tables["leaders"].collect()}
    assert isr[("ssl-topic", at)] == [0, 2] and isr[("orders", at)] == [0, 2]
    assert leaders[("orders", at)] == 0 and ("ssl-topic", at) not in leaders
    assert max(k[1] for k in isr) == at and max(k[1] for k in leaders) == at
    # before 2.3 ReplicaStateMachine.startup moves only the live replicas: the ISRs keep broker 1, which is down
    old = rebuild(spark, [ClusterInputs("c", tuple(files))],
                  RebuildOptions(scrape_interval_ms=1000, kafka_version="2.2")).tables
    assert max(r["ts_ms"] for r in old["isr"].collect()) < at and max(r["ts_ms"] for r in old["leaders"].collect()) < at
    assert [(r["broker"], r["state"]) for r in old["brokers"].where(f"ts_ms = {at}").collect()] == [(1, "down")]


def test_a_stop_after_a_start_that_only_replica_lines_tell_is_a_down_row(spark, tmp_path):
    """A public 3.0 broker halted (its last log directory failed), started again a day later with no "started" line in
    the files (only its leader line, state-change.log, tells it), and then shut down cleanly. Its own "shut down
    completed" repeats the halt's down row, but the leader line between made it up (``serving_while_down``): the
    repeats are dropped only once the inferred rows are in, else the broker stayed up to the end of the logs and the
    partition it alone held was never offline. The same holds after a KRaft controller's fencing (a public 3.9
    cluster's broker was up for 23 days after it stopped)."""
    got = brokers(spark, tmp_path, {
        "broker-0/server.log":
            "[2021-12-06 22:00:00,000] INFO [KafkaServer id=0] started (kafka.server.KafkaServer)\n"
            "[2021-12-06 23:39:45,666] ERROR Shutdown broker because all log dirs in /data/kafka have failed "
            "(kafka.log.LogManager)\n"
            "[2021-12-07 22:05:03,706] INFO [KafkaServer id=0] shut down completed (kafka.server.KafkaServer)\n",
        "broker-0/state-change.log":
            "[2021-12-07 21:48:57,905] INFO [Broker id=0] Leader my-first-topic-0 starts at leader epoch 0 from offset "
            "11 with high watermark 11 ISR [0] addingReplicas [] removingReplicas []. Previous leader epoch was -1. "
            "(state.change.logger)\n",
    })
    assert got == [("22:00:00.000", 0, "up"), ("23:39:45.666", 0, "down"), ("21:48:57.904", 0, "up"),
                   ("22:05:03.706", 0, "down")]


def test_a_new_controller_that_finds_no_broker_registered_leaves_every_broker_down(spark, tmp_path):
    """A public 0.10.2 cluster's brokers all lost their ZooKeeper sessions; the new controller listed `Set()` (a 0.10
    controller elected at start-up logs it before any broker, itself included, registers) and took the three back
    with one startup callback 5 s later: down in between, not up throughout."""
    ctrl = "[2017-06-26 {t}] INFO [Controller {c}]: {m} (kafka.controller.KafkaController)\n"
    got = brokers(spark, tmp_path, {"broker-2/controller.log": "".join([
        ctrl.format(t="19:33:19,310", c=1, m="New broker startup callback for 0,1,2"),
        ctrl.format(t="21:13:53,249", c=2, m="Currently active brokers in the cluster: Set()"),
        ctrl.format(t="21:13:58,497", c=2, m="New broker startup callback for 0,1,2")])})
    assert got == [(t, b, s) for t, s in (("19:33:19.310", "up"), ("21:13:53.249", "down"), ("21:13:58.497", "up"))
                   for b in (0, 1, 2)]


def test_a_controlled_shutdown_is_shutting_down_from_its_first_line_and_a_crash_has_none(spark, tmp_path):
    """KafkaServer.controlledShutdown (0.9-3.x) logs `Starting controlled shutdown` once, before its retries, and only
    once the start completed; the broker serves, and leads what the controller has not moved yet, until `shut down
    completed`: ``shutting_down`` from that line, live (``LIVE_STATES``) as in the simulator's table, down at the end.
    Broker 1 (2.8) stops cleanly; the controller's failure callback when its session closes repeats the down row.
    Broker 2 is a ZooKeeper broker in migration to KRaft (3.6): KafkaServer's line, then BrokerLifecycleManager's
    `Beginning controlled shutdown.` (prefix `isZkBroker=true`) in the same shutdown: one row, the first. Broker 3
    crashed: no shutdown line, up then the controller's down. Broker 4's logs end in its controlled shutdown:
    shutting_down to the end. Broker 5 started before the logs: up from their start, then shutting_down, down."""
    def server(b: int, *lines: tuple[str, str]) -> str:
        return "".join(f"[2021-03-04 05:{t}] INFO [KafkaServer id={b}] {m} (kafka.server.KafkaServer)\n" for t, m in lines)

    got = brokers(spark, tmp_path, {
        "broker-1/server.log": server(1, ("00:00,100", "started"), ("02:00,000", "shutting down"),
                                      ("02:00,002", "Starting controlled shutdown"),
                                      ("02:00,950", "Controlled shutdown succeeded"),
                                      ("02:01,500", "shut down completed")),
        "broker-1/controller.log":
            "[2021-03-04 05:02:00,010] INFO [Controller id=5] Shutting down broker 1 "
            "(kafka.controller.KafkaController)\n"
            "[2021-03-04 05:02:01,600] INFO [Controller id=5] Broker failure callback for 1 "
            "(kafka.controller.KafkaController)\n"
            "[2021-03-04 05:03:00,000] INFO [Controller id=5] Broker failure callback for 3 "
            "(kafka.controller.KafkaController)\n",
        "broker-2/server.log": server(2, ("00:00,200", "started"), ("04:00,000", "shutting down"),
                                      ("04:00,001", "Starting controlled shutdown"),
                                      ("04:00,002", "Notifying KRaft of controlled shutdown")) +
            "[2021-03-04 05:04:00,003] INFO [BrokerLifecycleManager id=2 isZkBroker=true] Beginning controlled "
            "shutdown. (kafka.server.BrokerLifecycleManager)\n" + server(2, ("04:03,000", "shut down completed")),
        "broker-3/server.log": server(3, ("00:00,300", "started")) + SHRINK.replace("broker=2", "broker=3"),
        "broker-4/server.log": server(4, ("00:00,400", "started"), ("05:00,000", "shutting down"),
                                      ("05:00,001", "Starting controlled shutdown")),
        "broker-5/server.log": server(5, ("06:00,000", "shutting down"), ("06:00,001", "Starting controlled shutdown"),
                                      ("06:02,000", "shut down completed")),
    })
    assert got == [
        ("05:00:00.000", 5, "up"), ("05:00:00.100", 1, "up"), ("05:00:00.200", 2, "up"), ("05:00:00.300", 3, "up"),
        ("05:00:00.400", 4, "up"), ("05:02:00.002", 1, "shutting_down"), ("05:02:01.500", 1, "down"),
        ("05:03:00.000", 3, "down"), ("05:04:00.001", 2, "shutting_down"), ("05:04:03.000", 2, "down"),
        ("05:05:00.001", 4, "shutting_down"), ("05:06:00.001", 5, "shutting_down"), ("05:06:02.000", 5, "down")]


def test_a_kraft_broker_is_shutting_down_from_its_lifecycle_managers_line_only_when_running(spark, tmp_path):
    """BrokerServer.shutdown (KRaft 2.8+) logs `shutting down`, then BrokerLifecycleManager's BeginControlledShutdownEvent
    `Beginning controlled shutdown.` where the broker is RUNNING (unfenced), or `Skipping controlled shutdown because
    we are in state S.` and no controlled shutdown; `shut down completed` last (3.8.0 BrokerServer.scala,
    BrokerLifecycleManager.scala). Broker 2 (3.8, running) is shutting_down from that line until its end; broker 3,
    still in RECOVERY, stops without one; broker 4's `Beginning controlled shutdown.` follows no lifecycle line of its
    own and an ISR change as leader: it was up from the logs' start, and is shutting_down to their end."""
    def server(b: int, t: str, m: str) -> str:
        return f"[2024-08-01 10:{t}] INFO [BrokerServer id={b}] {m} (kafka.server.BrokerServer)\n"

    def manager(b: int, t: str, m: str) -> str:
        return f"[2024-08-01 10:{t}] INFO [BrokerLifecycleManager id={b}] {m} (kafka.server.BrokerLifecycleManager)\n"

    started = "[2024-08-01 10:00:0{b},000] INFO [KafkaRaftServer nodeId={b}] Kafka Server started (kafka.server.KafkaRaftServer)\n"
    got = brokers(spark, tmp_path, {
        "broker-2/server.log": started.format(b=2) + server(2, "05:00,000", "Transition from STARTED to SHUTTING_DOWN")
        + server(2, "05:00,001", "shutting down") + manager(2, "05:00,002", "Beginning controlled shutdown.")
        + manager(2, "05:02,300", "The controller has asked us to exit controlled shutdown.")
        + manager(2, "05:02,301", "Transitioning from PENDING_CONTROLLED_SHUTDOWN to SHUTTING_DOWN.")
        + server(2, "05:03,000", "shut down completed"),
        "broker-3/server.log": started.format(b=3) + server(3, "06:00,000", "shutting down")
        + manager(3, "06:00,001", "Skipping controlled shutdown because we are in state RECOVERY.")
        + server(3, "06:01,000", "shut down completed"),
        "broker-4/server.log":
            "[2024-08-01 10:00:30,000] INFO [Partition orders-0 broker=4] ISR updated to 4,2 and version updated to 9 "
            "(kafka.cluster.Partition)\n" + manager(4, "07:00,000", "Beginning controlled shutdown."),
    })
    assert got == [
        ("10:00:02.000", 2, "up"), ("10:00:02.000", 4, "up"), ("10:00:03.000", 3, "up"),
        ("10:05:00.002", 2, "shutting_down"), ("10:05:03.000", 2, "down"), ("10:06:01.000", 3, "down"),
        ("10:07:00.000", 4, "shutting_down")]


def test_a_start_refused_as_already_registered_ends_no_lifetime_of_the_broker(spark, tmp_path):
    """ZooKeeper 0.9+ refuses a broker whose /brokers/ids/N is another session's: KafkaServer.startup logs `Fatal error
    during KafkaServer startup`, under it KafkaZkClient.checkedEphemeralCreate's NodeExistsException (1.1+; 0.9-1.0
    ZkUtils.registerBrokerInZk's `A broker is already registered on the path …`), then shuts its own process down.
    Broker 1 (2.4) was killed at 05:00:30 and restarted 3 s later, inside its old session: the failed process's `shut
    down completed` said it went down at 05:00:34; it ended after its last line before the new process began
    (unlogged_ends), and is up again at the start after its session expired. Broker 2 (0.10) runs on while a second
    host configured with its id fails to start: before, down at that host's `shut down completed`. Broker 3 (2.4) is
    killed after its line at 05:00:20 and its restart at 05:00:40 refused, with no start after it and no controller's
    log: down from 05:00:20.001, not up to the end of the logs (the refused start in its own file ends the process
    before it, unlogged_ends._refused_pairs). Broker 4 is broker 3 with its last start in `server.log.2021-03-04-05`,
    the copy log4j's DailyRollingFileAppender rotated, and its refused start in `server.log`: the same file
    (unlogged_ends.log_series); before, it stayed up."""
    def line(t: str, b: int, m: str, zk: bool = True) -> str:
        ident = f"[KafkaServer id={b}] " if zk else f"[Kafka Server {b}], "
        return f"[2021-03-04 05:{t}] INFO {ident}{m} (kafka.server.KafkaServer)\n"

    refused_24 = (line("00:33,000", 1, "starting")
                  + "[2021-03-04 05:00:33,800] ERROR Error while creating ephemeral at /brokers/ids/1, node already "
                    "exists and owner '72058748988424192' does not match current session '72057853619470336' "
                    "(kafka.zk.KafkaZkClient$CheckedEphemeral)\n"
                    "[2021-03-04 05:00:33,810] ERROR [KafkaServer id=1] Fatal error during KafkaServer startup. Prepare "
                    "to shutdown (kafka.server.KafkaServer)\n"
                    "org.apache.zookeeper.KeeperException$NodeExistsException: KeeperErrorCode = NodeExists\n"
                    "\tat kafka.zk.KafkaZkClient.registerBroker(KafkaZkClient.scala:96)\n"
                  + line("00:33,820", 1, "shutting down") + line("00:34,000", 1, "shut down completed"))
    refused_010 = ("[2021-03-04 05:01:00,000] FATAL [Kafka Server 2], Fatal error during KafkaServer startup. Prepare "
                   "to shutdown (kafka.server.KafkaServer)\n"
                   "java.lang.RuntimeException: A broker is already registered on the path /brokers/ids/2. This "
                   "probably indicates that you either have configured a brokerid that is already in use, or else you "
                   "have shutdown this broker and restarted it faster than the zookeeper timeout so it appears to be "
                   "re-registering.\n"
                   + line("01:00,010", 2, "shutting down", zk=False) + line("01:00,100", 2, "shut down completed", zk=False))
    got = brokers(spark, tmp_path, {
        "broker-1/server.log": line("00:00,000", 1, "started") + SHRINK.replace("broker=2", "broker=1").replace(
            "05:00:05,000", "05:00:30,000").replace("from 2,3,1 to 2,1", "from 1,2 to 1").replace("brokerId: 3", "brokerId: 2") + refused_24
            + line("00:45,000", 1, "starting") + line("00:46,000", 1, "started"),
        "broker-2/server.log": line("00:00,000", 2, "started", zk=False),
        "host-b/server.log": refused_010,
        "broker-3/server.log": line("00:00,000", 3, "started") + line("00:20,000", 3, "Starting log cleanup")
        + refused_24.replace("id=1", "id=3").replace("ids/1", "ids/3").replace("05:00:3", "05:00:4"),
        # the same as broker 3, its last start in a file log4j's DailyRollingFileAppender rotated
        "broker-4/server.log.2021-03-04-05": line("00:00,000", 4, "started") + line("00:20,000", 4, "Starting log "
                                                                                        "cleanup"),
        "broker-4/server.log": refused_24.replace("id=1", "id=4").replace("ids/1", "ids/4").replace("05:00:3", "05:00:4"),
    })
    assert got == [("05:00:00.000", 1, "up"), ("05:00:00.000", 2, "up"), ("05:00:00.000", 3, "up"),
                   ("05:00:00.000", 4, "up"), ("05:00:20.001", 3, "down"), ("05:00:20.001", 4, "down"),
                   ("05:00:30.001", 1, "down"), ("05:00:46.000", 1, "up")]


@pytest.mark.parametrize("release", ["0.10", "2.4"])
def test_a_simulated_restart_zookeeper_refuses_is_read_as_the_failed_start_it_was(spark, tmp_path, release):
    """Broker 2 crashes at 5 s and is started at 8 s, inside its ZooKeeper session (6 s): ZooKeeper 0.9+ refuses the
    registration and the process exits (model.election.registration_ms; the simulator's truth keeps the broker down),
    then the start at 30 s works. The simulator writes the failed start as KafkaServer.startup does: `starting`, the
    fatal line with ZkUtils.registerBrokerInZk's RuntimeException (0.10) or KafkaZkClient's NodeExistsException (2.4),
    `shutting down`, `shut down completed`. Read back: a startup_failed event at 8 s, and the broker down from the
    crash itself, 5 s (the refused process's `starting` opens a new process, so the old one ended before it, and the
    controller's failure callback at 11 s less the session timeout puts the end at 5 s), not at 8 s, up at 30 s."""
    from replicaflow.sim.runner import simulate

    path = tmp_path / "story.yaml"
    path.write_text(story(release, "zookeeper").replace("{at: 30s, broker_up: 2}",
                                                        "{at: 8s, broker_up: 2}\n  - {at: 30s, broker_up: 2}"))
    out = simulate(path, tmp_path / "run", logs=True)
    files = tuple(str(p) for p in sorted((out / "logs").rglob("*.log")))
    rebuilt = rebuild(spark, [ClusterInputs("c", files)], RebuildOptions(scrape_interval_ms=1000))
    tables = rebuilt.tables
    rows = tables["brokers"].where("broker = 2").orderBy("seq").collect()
    start = tables["brokers"].agg({"ts_ms": "min"}).first()[0]
    assert [(r["ts_ms"] - start, r["state"]) for r in rows] == [(0, "up"), (5_000, "down"), (30_000, "up")]
    failed = rebuilt.log_events.where("kind = 'startup_failed'").collect()
    assert [(r["ts_ms"] - start, r["broker"], r["state"]) for r in failed] == [(8_000, 2, "already registered")]
