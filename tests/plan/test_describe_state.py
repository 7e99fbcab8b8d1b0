"""What the describe says beyond the assignment: a topic marked for deletion (docs/plan.md, "Inputs")."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicaflow.cli import app
from tests.plan.kafka_files import describe, log_dirs

RR = [[(p + k) % 4 + 1 for k in range(3)] for p in range(8)]
runner = CliRunner()


def _files(tmp_path, marked: str = "header"):
    """orders (marked for deletion as ``marked`` says: on its header, on its partition lines, or not) and
    payments, on brokers 1-4."""
    path = describe(tmp_path / "describe.txt", {"orders": RR, "payments": RR})
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if "Topic: orders" in line and (line.startswith("Topic:") == (marked == "header")) and marked != "none":
            lines[i] = line + "\tMarkedForDeletion: true"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    log_dirs(tmp_path / "logdirs.json", {"orders": RR, "payments": RR}, 1000)
    return ["plan", "--topics", str(path), "--log-dirs", str(tmp_path / "logdirs.json"), "--master", "nonsense://x"]


def _move(tmp_path, topic: str) -> list[str]:
    (tmp_path / "plan.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [2, 3, 4]}]}), encoding="utf-8")
    return ["--reassignment", str(tmp_path / "plan.json")]


def test_a_topic_marked_for_deletion_is_not_reassigned(tmp_path):
    """KafkaController.maybeTriggerPartitionReassignment answers UNKNOWN_TOPIC_OR_PARTITION for a partition of a
    topic queued for deletion (``topicDeletionManager.isTopicQueuedUpForDeletion``, 'Skipping reassignment of
    ... since the topic is currently being deleted'): the plan is refused before Spark, naming the header line."""
    result = runner.invoke(app, _files(tmp_path) + _move(tmp_path, "orders"))
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"error: {tmp_path / 'describe.txt'}:1: topic 'orders' is marked for deletion; Kafka refuses to reassign its "
        "partitions (KafkaController: UNKNOWN_TOPIC_OR_PARTITION), and "
        f"{tmp_path / 'plan.json'} moves it: orders-0; plan once its deletion has completed"]


def test_marked_on_the_partition_lines_is_the_same(tmp_path):
    """TopicCommand (ZooKeeper describe, up to 2.8) also ends each partition line with MarkedForDeletion: true
    (``PartitionDescription.printDescription``); the first such line is named."""
    result = runner.invoke(app, _files(tmp_path, "partitions") + _move(tmp_path, "orders"))
    assert result.exit_code == 2 and "describe.txt:2: topic 'orders' is marked for deletion" in result.output, \
        result.output


def test_a_topic_marked_for_deletion_that_the_plan_leaves_alone(tmp_path):
    """Moving another topic is fine: the checks pass and only the nonsense --master stops it."""
    result = runner.invoke(app, _files(tmp_path) + _move(tmp_path, "payments"))
    assert result.exit_code == 2 and "--master" in result.output and "deletion" not in result.output, result.output


def test_generate_does_not_move_a_topic_marked_for_deletion(tmp_path):
    """kafka-reassign-partitions --generate (ReassignPartitionsCommand.getReplicaAssignmentForTopics, AdminClient
    describeTopics) fails with 'Topic orders not found.' once the deletion began, and the controller would refuse
    the move: --generate refuses too, naming the line."""
    result = runner.invoke(app, _files(tmp_path) + ["--generate", "--remove-brokers", "1"])
    assert result.exit_code == 2, result.output
    assert "describe.txt:1: topic 'orders' is marked for deletion" in result.output
    assert "--generate would move it (kafka-reassign-partitions --generate fails on it too" in result.output


# The describe's Leader and Isr. orders-0: Replicas 1,2,3, Leader 2, Isr 2 (brokers 1 and 3 fell out of it), with
# min.insync.replicas=2; the plan moves it to 1,2,4.
RR6 = [[(p + k) % 6 + 1 for k in range(3)] for p in range(12)]


def _isr_files(tmp_path):
    from tests.plan.kafka_files import args

    a = args(tmp_path, {"orders": RR6}, {("orders", 0): [1, 2, 4]}, 500_000_000, min_isr={"orders": 2},
             produce_rate=["orders=10MB/s"], throttle=["30MB/s"])
    text = a.topics.read_text(encoding="utf-8").replace("Partition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3",
                                                         "Partition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2")
    assert "Isr: 2\n" in text
    a.topics.write_text(text, encoding="utf-8")
    return a


def test_the_describes_leader_leads(tmp_path):
    """Partition.leaderReplicaIdOpt is the describe's Leader, not the first replica (that one leads only after a
    preferred election, KafkaController.onPreferredReplicaElection): the plan's moves, the steady traffic the
    headroom is taken from, Cruise Control's numLeaderMovements (2 → 1 is one) and the simulated partition
    start from broker 2."""
    from replicaflow.jobs.plan import prepare
    from replicaflow.plan.build import candidate, steady_traffic
    from replicaflow.plan.candidate import seed_leaders, seed_sizes
    from replicaflow.plan.render import proposal_summary
    from replicaflow.sim.engine import Engine
    from replicaflow.telemetry.io import DiscardingWriter

    prep = prepare(_isr_files(tmp_path))
    (m,) = prep.moves
    assert m.current_leader == 2
    assert proposal_summary(prep.moves)["numLeaderMovements"] == 1
    traffic = steady_traffic(prep.cluster)
    rate = 10e6 / 12  # each broker led two partitions; now broker 2 leads three and broker 1 one
    assert traffic[2][1] == pytest.approx(traffic[1][1] + 2 * 2 * rate)
    spec = candidate(prep.cluster, prep.moves, 30e6, False, None, "t")
    engine = Engine(spec.scenario, DiscardingWriter("t"))
    seed_sizes(engine, spec.size_messages)
    seed_leaders(engine, spec.leader_slots)
    engine.start()
    s = engine.s
    row = next(p for p in range(s.n_partitions) if s.topics[s.topic_idx[p]] == "orders" and s.pnum[p] == 0)
    assert int(s.broker_ids[s.rbi[row, s.lslot[row]]]) == 2
    assert all(int(s.broker_ids[s.rbi[p, s.lslot[p]]]) == RR6[int(s.pnum[p])][0] for p in range(s.n_partitions)
               if p != row)


def test_a_partition_already_under_min_isr_is_said(tmp_path):
    """Partition.checkEnoughReplicasReachOffset / appendRecordsToLeader refuse acks=all writes with
    NOT_ENOUGH_REPLICAS while the ISR is below min.insync.replicas: the describe's orders-0 (ISR 2 of 1,2,3,
    min ISR 2) already refuses them. One warning line before Spark, and the min-ISR answer names it instead
    of 'no partition under min ISR'."""
    from replicaflow.jobs.plan import prepare
    from replicaflow.plan.candidate import CandidateResult
    from replicaflow.plan.render import min_isr_line

    prep = prepare(_isr_files(tmp_path))
    assert prep.cluster.under_min_isr() == [("orders", 0)]
    (warning,) = prep.warnings
    assert warning.startswith(f"{tmp_path / 'describe.txt'}:2: partition orders-0: brokers 1,3 out of its ISR "
                              "(ISR 2 of 1,2,3, min.insync.replicas=2), under min ISR; the plan simulates every "
                              "replica in sync")
    quiet = CandidateResult("t", 30e6, False, True, 1000, None, {}, {}, {}, [], None,
                            {"under_min_isr": {"peak": 0, "partition_minutes": 0}, "at_min_isr": {"peak": 0}}, [])
    assert min_isr_line(quiet, prep.cluster) == (
        "acks=all: orders-0 is already under min ISR in the describe (ISR 2 of 1,2,3, min.insync.replicas=2); "
        "acks=all writes to it fail now (NOT_ENOUGH_REPLICAS), and the plan assumes every replica in sync")


@pytest.mark.parametrize(("version", "under"), [("3.6", [("small", 0), ("small", 1)]), ("3.7", [])])
def test_a_whole_isr_below_min_insync_replicas_is_under_min_isr_before_37(tmp_path, version, under):
    """Topic 'small' has 2 replicas per partition, every one in sync, and min.insync.replicas=3. Up to 3.6
    Partition.appendRecordsToLeader compares the ISR (2) with min.insync.replicas (3) and refuses acks=all
    writes now; from 3.7 (KAFKA-15583) the effective min ISR is capped at the replica count, min(3, 2) = 2, and
    they go on (docs/semantics.md §2). The answer said 'under min ISR at the peak' as if the move caused it."""
    from replicaflow.jobs.plan import prepare
    from replicaflow.plan.candidate import CandidateResult
    from replicaflow.plan.render import min_isr_line
    from tests.plan.kafka_files import args

    a = args(tmp_path, {"small": [[1, 2], [2, 3]]}, {("small", 0): [3, 2]}, 1_000_000_000, min_isr={"small": 3},
             throttle=["30MB/s"], version=version)
    prep = prepare(a)
    assert prep.cluster.under_min_isr() == under and prep.warnings == []
    peak = CandidateResult("t", 30e6, False, True, 1000, None, {}, {}, {}, [], None,
                           {"under_min_isr": {"peak": 2, "partition_minutes": 1.6}, "at_min_isr": {"peak": 0}}, [])
    expected = ("acks=all: small-0 and 1 more partition are already under min ISR in the describe (ISR 1,2 of 1,2, "
                "min.insync.replicas=3); acks=all writes to them fail now (NOT_ENOUGH_REPLICAS), and the plan "
                "assumes every replica in sync") if under else (
                "acks=all: 2 partitions under min ISR at the peak, 1m36s of refused writes summed over partitions")
    assert min_isr_line(peak, prep.cluster) == expected


def test_a_partition_without_a_leader_is_said(tmp_path):
    """Kafka 4.0's describe of tests/ingest/data: orders-1 `Leader: none` (ISR 2, min ISR 2). The plan of
    orders-0 alone answered 'acks=all: no partition under min ISR' and not a word of orders-1, whose writes
    fail now; it simulated it online."""
    from pathlib import Path

    from replicaflow.jobs.plan import PlanArgs, prepare

    (tmp_path / "m.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 2, 4]}]}), encoding="utf-8")
    describe_40 = Path(__file__).parents[1] / "ingest" / "data" / "describe-4.0.txt"
    prep = prepare(PlanArgs(reassignment=tmp_path / "m.json", topics=describe_40, brokers=[1, 2, 3, 4],
                            throttle=["10MB/s"], version="4.0"))
    assert prep.warnings == [f"{describe_40}:3: partition orders-1 has no leader (offline): producers' writes to it "
                             "fail now, acks=all or not; the plan simulates it online, led by the first replica"]


def test_out_of_sync_groups_are_one_line_each(tmp_path):
    """Broker 6 out of the ISR of all six orders partitions it holds (down: simulated so) and broker 3 out of
    two of its partitions' ISRs: one line each, not one per partition."""
    from replicaflow.jobs.plan import prepare
    from tests.plan.kafka_files import args

    a = args(tmp_path, {"orders": RR6}, {("orders", 0): [1, 2, 4]}, 1000)
    lines = []
    for line in a.topics.read_text(encoding="utf-8").splitlines():
        if "Isr:" in line and "6" in line.split("Replicas:")[1].split("\t")[0]:
            head, isr = line.rsplit("Isr: ", 1)
            line = head + "Isr: " + ",".join(b for b in isr.split(",") if b != "6")
        lines.append(line.replace("Leader: 6", "Leader: " + line.split("Replicas: ")[1].split(",")[1]
                                  if "Leader: 6" in line else "Leader: 6"))
    a.topics.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (warning,) = prepare(a).warnings
    assert warning.endswith(":5: broker 6 is out of the ISR of every partition it holds (6 partitions) and leads "
                            "none: the plan simulates it down from the start, and a move that adds a replica on it "
                            "never completes")
    (warning,) = prepare(_out_of_isr(_mkdir(tmp_path / "b3"), 3, partitions=(0, 1))).warnings
    assert ": 2 partitions of 'orders' (orders-0, orders-1) have broker 3 out of their ISR;" in warning


def test_the_answer_on_the_probes_case(spark, tmp_path):
    """The whole answer, simulated: the acks=all line names orders-0, not 'no partition under min ISR'."""
    from replicaflow.jobs.plan import plan

    _, choice, text = plan(_isr_files(tmp_path), spark=spark)
    assert choice.recommended is not None
    assert "acks=all: orders-0 is already under min ISR in the describe (ISR 2 of 1,2,3, min.insync.replicas=2)" \
        in text.replace("\n  ", " ")
    assert "no partition under min ISR" not in text


def _out_of_isr(tmp_path, broker: int, partitions=None, size_bytes: int = 1000, **kw):
    """RR6's orders with min.insync.replicas=2 and ``broker`` out of the ISR of ``partitions`` (all it holds by
    default, leaders it was moving to the next replica); the plan moves orders-0 to 1,2,4."""
    from tests.plan.kafka_files import args

    a = args(tmp_path, {"orders": RR6}, {("orders", 0): [1, 2, 4]}, size_bytes, min_isr={"orders": 2},
             throttle=["30MB/s"], **kw)
    lines = []
    for line in a.topics.read_text(encoding="utf-8").splitlines():
        if "Isr:" in line and (partitions is None or int(line.split("Partition: ")[1].split("\t")[0]) in partitions):
            head, isr = line.rsplit("Isr: ", 1)
            replicas = head.split("Replicas: ")[1].split("\t")[0].split(",")
            if head.split("Leader: ")[1].split("\t")[0] == str(broker):
                head = head.replace(f"Leader: {broker}", f"Leader: {replicas[(replicas.index(str(broker)) + 1) % 3]}")
            line = head + "Isr: " + ",".join(b for b in isr.split(",") if b != str(broker))
        lines.append(line)
    a.topics.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return a


def _quiet(at_peak: int = 0):
    from replicaflow.plan.candidate import CandidateResult

    return CandidateResult("t", 30e6, False, True, 1000, None, {}, {}, {}, [], None,
                           {"under_min_isr": {"peak": 0, "partition_minutes": 0}, "at_min_isr": {"peak": at_peak}},
                           [])


def test_partitions_at_min_isr_in_the_describe_are_said(tmp_path):
    """Broker 3 is behind on orders-0 and orders-1 (out of their ISR, in the ISR of the others it holds),
    min.insync.replicas=2: both are at min ISR now (Partition.isAtMinIsr, KIP-427: ISR 2 = min(2, 3)), one
    replica from refusing acks=all writes, and orders-0 stays so while its move adds broker 4. The simulation
    starts broker 3 in sync, so its at-min-ISR peak is 0, and the answer read 'acks=all: no partition under
    min ISR' as if no partition were one replica from it."""
    from replicaflow.jobs.plan import prepare
    from replicaflow.plan.render import min_isr_line

    prep = prepare(_out_of_isr(tmp_path, 3, partitions=(0, 1)))
    assert prep.cluster.down_brokers == frozenset()
    assert prep.cluster.under_min_isr() == []
    assert prep.cluster.at_min_isr_out_of_sync() == [("orders", 0), ("orders", 1)]
    assert min_isr_line(_quiet(), prep.cluster) == (
        "acks=all: no partition under min ISR; orders-0 and 1 more partition are already at min ISR in the "
        "describe (ISR 1,2 of 1,2,3, min.insync.replicas=2), one replica from refusal, which the plan, assuming "
        "every replica in sync, does not count")


def test_a_partition_at_min_isr_with_its_whole_isr_is_the_simulations(tmp_path):
    """A partition at min ISR with every replica in sync (2 replicas, min.insync.replicas=2) is at min ISR in the
    simulation too: its at-min-ISR peak counts it, and the describe clause does not name it again."""
    from replicaflow.jobs.plan import prepare
    from tests.plan.kafka_files import args

    prep = prepare(args(tmp_path, {"pairs": [[1, 2], [2, 3]]}, {("pairs", 0): [3, 2]}, 1000,
                        min_isr={"pairs": 2}, throttle=["30MB/s"]))
    assert prep.cluster.at_min_isr_out_of_sync() == []


def test_a_broker_out_of_every_isr_is_simulated_down(tmp_path):
    """Broker 3 is down: the describe shows it out of the ISR of the six partitions it holds (the controller's
    KafkaController.onBrokerFailure), orders-2 and orders-8 led by 4. By hand, orders (12MB/s, 1MB/s a
    partition) moves orders-0 (500MB) from 1,2,3 to 1,2,4 at 15MB/s (below one partition's 21MB/s fetch cap):
    broker 1's leader quota (ReplicationQuotaManager) counts the fetches of broker 2 alone (1MB/s; KIP-73 lists 3
    too, which fetches nothing), so the copy gets 14MB/s and gains 14 − 1 = 13MB/s on the log: 500e6 / 13e6 =
    38.5 s, plus the tick the leader sees it caught up (docs/plan.md). Simulated with broker 3 in sync it took
    43 s (15 − 2 − 1 = 12MB/s: 41.7 s), and the answer missed the six partitions at min ISR (ISR 1,2 of 1,2,3)
    the simulation now counts."""
    from replicaflow.jobs.plan import prepare
    from replicaflow.plan.build import candidate
    from replicaflow.plan.candidate import simulate_candidate
    from replicaflow.plan.render import min_isr_line

    prep = prepare(_out_of_isr(tmp_path, 3, size_bytes=500_000_000, produce_rate=["orders=12MB/s"]))
    assert prep.cluster.down_brokers == frozenset({3})
    assert prep.warnings == [f"{tmp_path / 'describe.txt'}:2: broker 3 is out of the ISR of every partition it "
                             "holds (6 partitions) and leads none: the plan simulates it down from the start, and a "
                             "move that adds a replica on it never completes"]
    assert prep.cluster.at_min_isr_out_of_sync() == []
    r = simulate_candidate(candidate(prep.cluster, prep.moves, 15e6, False, None, "t"))
    assert r.finished and 38_500 <= r.duration_ms <= 40_000, r.duration_ms
    assert r.flags["at_min_isr"]["peak"] == 6 and r.flags["under_min_isr"]["peak"] == 0
    assert min_isr_line(r, prep.cluster) == "acks=all: no partition under min ISR; 6 at min ISR, one replica from refusal"


def test_a_move_onto_a_broker_that_is_down_never_finishes(tmp_path):
    """Kafka completes a reassignment once every target replica is in the ISR
    (KafkaController.isReassignmentComplete): a new replica on a broker that is down never joins it. Every
    candidate is ruled out before simulation, naming the broker."""
    from replicaflow.jobs.plan import prepare
    from replicaflow.plan.build import Move, headroom_throttle_bps, never_finishes

    prep = prepare(_out_of_isr(tmp_path, 3))
    onto_3 = [Move("orders", 3, (4, 5, 6), (4, 5, 3), 1000, 4)]
    assert never_finishes(prep.cluster, onto_3, 30e6, False) == (
        "broker 3 is down (out of the ISR of every partition it holds in the describe): the new replicas it is to "
        "hold cannot copy, and Kafka completes a move only once every target replica is in the ISR")
    assert never_finishes(prep.cluster, prep.moves, None, False) is None
    assert headroom_throttle_bps(prep.cluster, onto_3)[1] != 3  # a broker that is down sets no headroom


def _mkdir(path):
    path.mkdir()
    return path


def test_a_plan_that_only_names_log_directories_is_not_nothing_to_move(tmp_path):
    """orders-0 keeps replicas 1,2,4 and names /data2 for broker 2's: ReassignPartitionsCommand.executeAssignment
    moves that replica between broker 2's own directories (alterReplicaLogDirs, at
    replica.alter.log.dirs.io.max.bytes.per.second from --replica-alter-log-dirs-throttle), which plan does not
    simulate. The refusal said 'nothing to move'; it says what the plan does move and that it is not simulated.
    A plan that keeps every replica where it is, directories 'any', still has nothing to move."""
    from replicaflow.errors import ReplicaflowError
    from replicaflow.jobs.plan import prepare
    from tests.plan.kafka_files import args

    a = args(tmp_path, {"orders": RR6}, {("orders", 0): [1, 2, 3]}, 1000, throttle=["30MB/s"])
    same = {"topic": "orders", "partition": 0, "replicas": [1, 2, 3]}
    a.reassignment.write_text(json.dumps({"version": 1, "partitions": [
        {**same, "log_dirs": ["any", "/data2", "any"]}]}), encoding="utf-8")
    with pytest.raises(ReplicaflowError) as err:
        prepare(a)
    assert str(err.value) == (
        f"{a.reassignment}: every partition already has the listed replicas; nothing to move between brokers; its "
        "log_dirs (orders-0 on broker 2: /data2) move replicas between a broker's own log directories, which the "
        "replication throttle does not cover (--replica-alter-log-dirs-throttle) and plan does not simulate")
    a.reassignment.write_text(json.dumps({"version": 1, "partitions": [
        {**same, "log_dirs": ["any", "any", "any"]}]}), encoding="utf-8")
    with pytest.raises(ReplicaflowError, match=r"listed replicas; nothing to move$"):
        prepare(a)


def test_the_brokers_min_insync_replicas_applies_where_the_describe_shows_no_override(tmp_path):
    """kafka-topics --zookeeper --describe (up to 2.8) prints a topic's min.insync.replicas only where the topic
    overrides it (TopicCommand's ZookeeperTopicService: fetchEntityConfig of the topic's znode); a cluster whose
    server.properties sets 2 showed nothing, and the plan took Kafka's default 1: broker 3 behind on orders-0 and orders-1 (ISR 1,2 of 1,2,3) were not at min
    ISR. --min-insync-replicas 2 gives the brokers' value: both are (Partition.isAtMinIsr: 2 = min(2, 3)). A
    value the describe shows wins over it (with --bootstrap-server the tool prints the brokers' value too:
    ConfigEntry.isDefault), and a --cluster scenario has its own (cluster.min_insync_replicas)."""
    from dataclasses import replace

    from replicaflow.errors import ReplicaflowError
    from replicaflow.jobs.plan import prepare
    from tests.plan.kafka_files import args

    a = _out_of_isr(tmp_path, 3, partitions=(0, 1))
    text = a.topics.read_text(encoding="utf-8").replace("\tConfigs: min.insync.replicas=2", "")
    assert "min.insync.replicas" not in text
    a.topics.write_text(text, encoding="utf-8")
    assert prepare(a).cluster.at_min_isr_out_of_sync() == []
    prep = prepare(replace(a, min_insync_replicas=2))
    assert prep.cluster.min_isr == {"orders": 2}
    assert prep.cluster.at_min_isr_out_of_sync() == [("orders", 0), ("orders", 1)]
    pinned = _out_of_isr(_mkdir(tmp_path / "pinned"), 3, partitions=(0, 1))  # min.insync.replicas=2 on the topic
    assert prepare(replace(pinned, min_insync_replicas=3)).cluster.min_isr == {"orders": 2}
    with pytest.raises(ReplicaflowError, match=r"^--min-insync-replicas: expected 1 to 32767, found 0$"):
        prepare(replace(a, min_insync_replicas=0))
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\nduration: 1m\nkafka: {version: '3.7'}\ncluster: {brokers: 3}\n"
                        "topics: [{name: t, partitions: 1, replication_factor: 2}]\n", encoding="utf-8")
    with pytest.raises(ReplicaflowError, match=r"^--min-insync-replicas: only with --topics"):
        prepare(replace(args(tmp_path, {"t": [[1, 2]]}, {("t", 0): [2, 3]}, 1000), topics=None, log_dirs=None,
                        cluster=scenario, min_insync_replicas=2))
