"""What the describe says beyond the assignment: a topic marked for deletion (docs/plan.md, "Inputs")."""

from __future__ import annotations

import json

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
