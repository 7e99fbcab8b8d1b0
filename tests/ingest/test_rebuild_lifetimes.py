"""Lives the lines split: a partition deleted and created again under its name, a leader elected from an ISR no
line of the files shows, a broker whose own lines prove it ran, a second process of a running broker, a broker a
new controller does not list. Real lines of four public clusters (tests/ingest/data/real_files/README.md,
``lifetimes/``), one cluster per case, analyzed as `replicaflow analyze --logs --cluster-from-path` does
(docs/real-cluster.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from replicaflow.jobs.analyze import analyze_logs

pytestmark = pytest.mark.spark

LIFETIMES = Path(__file__).resolve().parent / "data" / "real_files" / "lifetimes"


def _clock(ms: int) -> str:
    return f"{ms // 3_600_000 % 24:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


@pytest.fixture(scope="module")
def out(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lifetimes")
    analyze_logs([str(LIFETIMES)], root / "out", cluster_from_path=True, spark=spark)
    return root / "out"


def _rows(out: Path, table: str, cluster: str) -> list[dict]:
    rows = [r for r in pq.read_table(out / table).to_pylist() if r["cluster"] == cluster]
    return sorted(rows, key=lambda r: (r.get("from_ms", r.get("ts_ms")), r.get("seq", 0)))


def _summary(out: Path, cluster: str) -> dict:
    return json.loads((out / "analysis" / "_summary.json").read_text(encoding="utf-8"))[cluster]


def test_an_election_from_an_online_partition_is_judged_on_the_isr_its_line_names(out):
    """PartitionStateMachine.doHandleStateChanges (1.1+) logs `Changed partition t-p from OnlinePartition to
    OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=2, isr=List(0, 2, 1), …)` after a preferred-replica,
    controlled-shutdown or reassignment election: each picks a member of the ISR in force and keeps the others
    (PartitionLeaderElectionAlgorithms, 2.1.1 PartitionStateMachine.scala lines 428-437, 493-495); only the offline
    election marks UncleanLeaderElectionsPerSec. The leader's expansion that took broker 1 back in was in an hour
    another broker's roll overwrote, so the ISR the logs last told is [0, 2]: the auto-rebalance read as an unclean
    election. The release is 1.1+ from that line's form alone (1.0 wrote `… with leader L`)."""
    assert _rows(out, "analysis/unclean_elections", "online21") == []
    states = [(_clock(r["from_ms"]), r["leader"], sorted(r["isr"])) for r in _rows(out, "analysis/partition_state",
                                                                                  "online21")]
    assert states[-1] == ("19:57:28.764", 1, [0, 1, 2])
    assert _summary(out, "online21")["kafka_version"] == "1.1"


def test_a_leader_line_after_unseen_epochs_takes_the_isr_of_its_leaderandisr_request(out):
    """Before 2.6 Partition.makeLeader's line (`starts at Leader Epoch 7 … Previous Leader Epoch was: 6`) names no ISR.
    Epoch 6 is in no file (a controlled shutdown of broker 2, ReplicaStateMachine.doRemoveReplicasFromIsr keeping the
    leader), so the ISR the logs last told, [0], is stale. The LeaderAndIsr request broker 1 received 26 ms before
    (`PartitionState(… leader=1, leaderEpoch=7, isr=0,1, …)`) is the controller's decision for that epoch: leader 1 in
    ISR [0, 1], no unclean election (it was one against [0])."""
    assert _rows(out, "analysis/unclean_elections", "gap21") == []
    last = _rows(out, "analysis/partition_state", "gap21")[-1]
    assert (_clock(last["from_ms"]), last["leader"], sorted(last["isr"]), last["urp"]) == ("02:32:35.654", 1, [0, 1], True)


def test_a_partition_created_again_under_its_name_is_a_new_partition(out):
    """A ZooKeeper controller that takes office lists every topic (KafkaController.initializeControllerContext): a
    wiped ZooKeeper's lists none, and the topics are created again later (`… state from NonExistentPartition to
    NewPartition`, leader epoch 0, PartitionStateMachine.initializeLeaderAndIsrForPartitions). The partition does not
    exist in between, and a creation elects no one (only offlinePartitionLeaderElection marks the unclean meter): a
    public 2.8 cluster counted 84 unclean elections from the old partitions' ISRs. The new leader's line (`Leader
    storage-system-0 starts at leader epoch 0 … ISR [1,2,0]`) is that partition's ISR: it had been dropped as a repeat
    of the old partition's `ISR [0,2,1]` at the same epoch, and the partition stayed under-replicated under ISR [0]
    (the brokers the new controller found unregistered taken out) to the end of the logs."""
    for cluster in ("recreated28", "recreated28b"):
        assert _rows(out, "analysis/unclean_elections", cluster) == []
    replicas = [(_clock(r["ts_ms"]), r["replicas"]) for r in _rows(out, "telemetry/assignments", "recreated28")]
    assert replicas[1:] == [("23:28:16.891", []), ("02:33:34.235", [2])] and replicas[0][1] == [0]
    states = [r for r in _rows(out, "analysis/partition_state", "recreated28b") if r["topic"] == "storage-system"]
    assert (_clock(states[-1]["from_ms"]), states[-1]["leader"], states[-1]["isr"], states[-1]["urp"]) == \
        ("00:11:31.140", 1, [1, 2, 0], False)
    assert _summary(out, "recreated28b")["urp_minutes"] < 0.01  # the 145 ms from the creation to the leader's line
    # the same controller's list of live brokers, two lines before its topics' (initializeControllerContext), leaves
    # out broker 1, the only replica of __consumer_offsets-5: the topic was gone already, no millisecond offline
    offsets = [(_clock(r["ts_ms"]), r["replicas"]) for r in _rows(out, "telemetry/assignments", "recreated28b")
               if r["topic"] == "__consumer_offsets"]
    assert offsets[-3:] == [("02:33:34.236", [1]), ("00:08:03.727", []), ("00:12:19.524", [1])]
    assert [r for r in _rows(out, "analysis/incidents", "recreated28b") if r["kind"] == "offline"] == []


def test_a_topic_a_wiped_zookeeper_no_longer_lists_is_offline_only_until_that_list(out):
    """A 3.8 broker stopped; its restart found an empty ZooKeeper (`Current list of topics in the cluster:
    HashSet()`), and the topic was created again 11 hours later with a new topic id. The partition was offline while
    its only broker was down, until the list: 2.4 minutes, not the 669.7 it counted when a later line of the
    partition kept the old one alive. Kafka's OfflinePartitionsCount counts no partition that does not exist."""
    incidents = [(_clock(r["start_ms"]), _clock(r["end_ms"]) if r["end_ms"] is not None else None)
                 for r in _rows(out, "analysis/incidents", "wiped38") if r["kind"] == "offline"]
    assert incidents == [("15:38:52.309", "15:41:14.862")]  # the last millisecond offline
    assert _summary(out, "wiped38")["offline_minutes"] == pytest.approx(2.376, abs=0.001)


def test_a_second_process_that_fails_on_the_lock_of_the_log_dirs_leaves_the_broker_up(out):
    """LogManager.lockLogDirs throws `Failed to acquire lock on file .lock in D. A Kafka instance in another process or
    thread is using this directory.` when the broker's process runs: the second one logs `Fatal error during
    KafkaServer startup`, then KafkaServer.shutdown's "shut down completed" (3.8.1 KafkaServer.scala lines 671-673).
    The running broker went on leading until its own controlled shutdown 16 s later (shutting_down from `Starting
    controlled shutdown`, down at its `shut down completed`)."""
    rows = [(_clock(r["ts_ms"]), r["state"]) for r in _rows(out, "telemetry/brokers", "lock38")]
    assert ("04:23:03.692", "down") not in rows
    assert rows[-3:] == [("04:23:19.926", "shutting_down"), ("04:23:21.883", "down"), ("04:23:36.584", "up")]


def test_a_broker_that_starts_a_controlled_shutdown_was_up(out):
    """KafkaServer.controlledShutdown runs only once the start completed (`startupComplete`, 0.9-3.x): a broker that
    logs `Starting controlled shutdown` was up, though the lines of its restart were lost (the shared folder's hourly
    rolls overwrote them). Broker 2 stayed down from its failure callback through its own shutdown. It is up from 1 ms
    before that line and shutting_down from it (live, as the simulator's table has a controlled shutdown) until
    `shut down completed`."""
    rows = [(_clock(r["ts_ms"]), r["broker"], r["state"]) for r in _rows(out, "telemetry/brokers", "stopping21")
            if r["broker"] == 2]
    assert rows[-4:] == [("23:37:46.174", 2, "down"), ("02:32:35.528", 2, "up"), ("02:32:35.529", 2, "shutting_down"),
                         ("02:32:39.482", 2, "down")]


def test_a_broker_only_named_as_a_replica_is_down_from_a_new_controllers_list_without_it(out):
    """KafkaController.initializeControllerContext (2.5.1) logs `Currently active brokers in the cluster: Set(1, 2)`
    from ZooKeeper's registrations: broker 0, the old controller, whose own lines are in a file not read
    (kafkaServer.out), had none. It was up from the start only as a replica of the LeaderAndIsr requests' lists; now
    it is down from that line, so once 2 and then 1 shut down, first-topic-0 and -1 (ISR [1]) have no live broker:
    offline for the 6.267 s from 1's `shut down completed` to the end of the logs (two partitions: 0.209
    partition-minutes). Before, broker 0 stayed up and nothing went offline."""
    states = [(_clock(r["ts_ms"]), r["broker"], r["state"]) for r in _rows(out, "telemetry/brokers", "unregistered25")]
    assert states == [("00:53:00.000", 0, "up"), ("00:53:06.296", 1, "up"), ("00:53:07.453", 0, "down"),
                      ("00:53:07.453", 2, "up"), ("00:53:13.334", 2, "down"), ("00:53:23.733", 1, "down")]
    summary = _summary(out, "unregistered25")
    assert (summary["peak_offline"], summary["offline_minutes"]) == (2, 0.209)
