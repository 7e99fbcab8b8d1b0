"""Readers of Kafka's own CLI outputs (ingest/topic_command.py, log_dirs_command.py, reassign_command.py).

The sample files in tests/ingest/data are written from the format strings of Kafka's tools at the
release tags: ``TopicCommand.describeTopic`` / ``PartitionDescription.printDescription`` (1.1 Scala,
2.8 Scala with TopicId and the reassignment columns, tools/TopicCommand.java with Elr/LastKnownElr),
``LogDirsCommand.describe`` / ``formatAsJson`` and ``ReassignPartitionsCommand.verifyAssignment``
(≤ 2.4 ZooKeeper tool) / ``partitionReassignmentStatesToString``, ``clearAllThrottles`` and
``curReassignmentsToString`` (2.5+).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.ingest.log_dirs_command import parse_log_dirs, read_log_dirs
from replicaflow.ingest.reassign_command import (
    COMPLETED,
    DIFFERENT,
    FAILED,
    IN_PROGRESS,
    ListedReassignment,
    parse_reassign_output,
    read_reassign_output,
)
from replicaflow.ingest.topic_command import parse_configs, parse_topic_describe, read_topic_describe

DATA = Path(__file__).parent / "data"


def test_describe_1_1_no_spaces_leader_minus_one_and_commas_inside_config_values():
    snap = read_topic_describe(DATA / "describe-1.1.txt")
    t = snap.topics["orders"]
    assert (t.topic_id, t.partition_count, t.replication_factor) == (None, 2, 3)
    assert t.configs == {"min.insync.replicas": "2", "leader.replication.throttled.replicas": "0:1,0:2",
                         "cleanup.policy": "delete"}
    p0, p1 = snap.partitions["orders", 0], snap.partitions["orders", 1]
    assert (p0.leader, p0.replicas, p0.isr) == (1, (1, 2, 3), (1, 2))
    assert (p1.leader, p1.isr) == (None, ())
    assert snap.brokers() == {1, 2, 3}


def test_describe_2_8_topic_id_and_reassignment_columns():
    snap = read_topic_describe(DATA / "describe-2.8.txt")
    assert snap.topics["orders"].topic_id == "3bG2kq1WQ4O7m5o0k1x5Lw"
    p0 = snap.partitions["orders", 0]
    assert (p0.replicas, p0.isr, p0.adding, p0.removing) == ((1, 2, 3, 4), (1, 2, 3), (4,), (3,))
    assert snap.partitions["orders", 1].leader is None
    assert snap.brokers() == {1, 2, 3, 4}


def test_describe_4_0_elr_with_crlf_line_ends():
    snap = read_topic_describe(DATA / "describe-4.0.txt")
    assert (snap.partitions["orders", 0].elr, snap.partitions["orders", 0].last_known_elr) == (None, None)
    assert (snap.partitions["orders", 1].elr, snap.partitions["orders", 1].last_known_elr) == ((3,), (1,))


def test_describe_in_utf16_as_powershell_writes_it(tmp_path):
    path = tmp_path / "d.txt"
    path.write_bytes((DATA / "describe-2.8.txt").read_text().encode("utf-16"))
    assert read_topic_describe(path).partitions["orders", 0].adding == (4,)


def test_partition_lines_without_header_and_jvm_noise_are_read():
    text = ("SLF4J: Class path contains multiple SLF4J bindings.\n"
            "[2024-01-01 10:00:00,000] WARN something (org.apache.kafka.clients.NetworkClient)\n"
            "\tTopic: a\tPartition: 7\tLeader: 2\tReplicas: 2,1\tIsr: 2\n")
    assert parse_topic_describe(text, "d.txt").partitions["a", 7].isr == (2,)


@pytest.mark.parametrize(("text", "sentence"), [
    ("\tTopic: a\tPartition: 0\tLeader: 5\tReplicas: 1,2\tIsr: 1\n",
     "d.txt:1: partition a-0: Leader 5 is not among its Replicas 1,2"),
    ("\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,3\n",
     "d.txt:1: partition a-0: Isr names broker 3, which is not among its Replicas 1,2"),
    ("\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1,1\tIsr: 1\n", "d.txt:1: Replicas: a broker appears twice"),
    ("\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1,²\tIsr: 1\n", "d.txt:1: Replicas: expected broker ids"),
    # an empty item (a list cut or pasted wrong) read as two replicas where there were three
    ("\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1,,2\tIsr: 1\n",
     "d.txt:1: Replicas: expected broker ids joined by commas, found '1,,2'"),
    # KIP-966: the eligible leader replicas are replicas of the partition
    ("\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1\tElr: 9\tLastKnownElr: \n",
     "d.txt:1: partition a-0: Elr names broker 9, which is not among its Replicas 1,2"),
    ("\tTopic: a\tPartition: x\tLeader: 1\tReplicas: 1\tIsr: 1\n", "d.txt:1: Partition: expected an integer ≥ 0"),
    ("\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n",
     "d.txt:2: partition a-0 is described twice (first at line 1)"),
    ("\tTopic: a/b\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n", "d.txt:1: Topic: expected a topic name"),
    ("\tTopic: a\tPartition: 0\tReplicas: 1\tIsr: 1\n", "d.txt:1: the line has no 'Leader:'"),
    ("hello\n", "d.txt:1: expected 'Key: value' cells"),
    ("Topic: a   PartitionCount: 1   ReplicationFactor: 1   Configs: \n", "d.txt:1: expected cells separated by "
     "tabs as kafka-topics prints them, found spaces; save the tool's output to a file"),
    # two lines run together: the second partition's cells silently replaced the first's
    ("\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tTopic: a\tPartition: 1\tLeader: 1\tReplicas: 1\tIsr: 1\n",
     "d.txt:1: 'Topic:' appears twice in the line; were two lines joined?"),
    ("Topic: a\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: min.insync.replicas=2,min.insync.replicas=1\n",
     "d.txt:1: Configs: min.insync.replicas is given twice in 'min.insync.replicas=2,min.insync.replicas=1'"),
    ("Error while executing topic command : Topic 'x' does not exist\n", "d.txt:1: expected a line starting"),
    ("Topic: a\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: \n\tTopic: a\tPartition: 0\tLeader: 1\t"
     "Replicas: 1\tIsr: 1\n", "d.txt: topic 'a' has PartitionCount: 2 but 1 partition line;"),
    ("", "d.txt: no partition lines"),
    ("Topic: a\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: min.insync.replicas=99999999999999999999\n",
     "d.txt:1: Configs: min.insync.replicas: expected an integer from 1 to 32,767, found '99999999999999999999'"),
    ("Topic: a\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: min.insync.replicas=two\n",
     "d.txt:1: Configs: min.insync.replicas: expected an integer from 1 to 32,767, found 'two'"),
    ("\tTopic: a\tPartition: 2147483648\tLeader: 1\tReplicas: 1\tIsr: 1\n",
     "d.txt:1: Partition: expected an integer ≥ 0 and at most 2,147,483,647 (Kafka's int32), found '2147483648'"),
    ("\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1,3000000000\tIsr: 1\n", "d.txt:1: Replicas: expected broker ids"),
    ("\tTopic: a\tPartition: 0\tLeader: none\tReplicas: \tIsr: \n",
     "d.txt:1: Replicas: expected at least one broker id"),
    ("Topic: a\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n\tTopic: a\tPartition: 7\tLeader: 1\t"
     "Replicas: 1\tIsr: 1\n", "d.txt:2: partition a-7 is beyond the topic's PartitionCount: 1 (partitions are 0 to 0)"),
    # TopicCommand prints one partition's replica count (less its adding replicas, 2.5+): 5 comes from none of them
    ("Topic: a\tPartitionCount: 2\tReplicationFactor: 5\tConfigs: \n\tTopic: a\tPartition: 0\tLeader: 1\t"
     "Replicas: 1,2,3\tIsr: 1,2,3\n\tTopic: a\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2\n",
     "d.txt:1: topic 'a' has ReplicationFactor: 5, but its partitions have 3 replicas (kafka-topics prints one "
     "partition's count, less the replicas a reassignment is adding)"),
    # a header cell no release prints was read past and lost
    ("Topic: a\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \tFoo: bar\n\tTopic: a\tPartition: 0\t"
     "Leader: 1\tReplicas: 1\tIsr: 1\n", "d.txt:1: 'Foo:' is no cell of a kafka-topics --describe topic line (Kafka "
     "prints Topic, TopicId, PartitionCount, ReplicationFactor, Configs, MarkedForDeletion)"),
])
def test_bad_describe_output_is_one_sentence_with_file_and_line(text, sentence):
    with pytest.raises(ReplicaflowError) as err:
        parse_topic_describe(text, "d.txt")
    assert str(err.value).startswith(sentence), str(err.value)


@pytest.mark.parametrize("text", [
    # 1.0 – 2.0 (ZooKeeper tool): no space after the colons, MarkedForDeletion:true on the header; up to 2.4 the
    # factor is the first partition in the metadata's order, and a reassignment's replicas are the union
    "Topic:a\tPartitionCount:2\tReplicationFactor:4\tConfigs:\tMarkedForDeletion:true\n"
    "\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
    "\tTopic: a\tPartition: 1\tLeader: 1\tReplicas: 1,2,3,4\tIsr: 1,2,3\n",
    # 2.8+: TopicId; 2.5+ during a reassignment: the replicas less the adding ones (3.8 getReplicationFactor)
    "Topic: a\tTopicId: AAAAAAAAAAAAAAAAAAAAAA\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \t"
    "MarkedForDeletion: true\n\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1,2,3,4,5\tIsr: 1,2,3\t"
    "Adding Replicas: 4,5\tRemoving Replicas: 3\n",
])
def test_every_header_kafka_prints_is_read(text):
    """Every header cell of every release is taken, and a ReplicationFactor any partition line of the topic can
    give (whole, or less its adding replicas) is not refused."""
    assert parse_topic_describe(text, "d.txt").topics["a"].partition_count >= 1


def test_configs_rule():
    assert parse_configs("", "x") == {}
    assert parse_configs("a.b=1,c=x:1,y:2,d=", "x") == {"a.b": "1", "c": "x:1,y:2", "d": ""}
    with pytest.raises(ReplicaflowError, match="Configs: expected name=value pairs"):
        parse_configs("0:1,a=1", "x")


def test_log_dirs_offset_lag_minus_one_is_not_known():
    """Kafka's INVALID_OFFSET_LAG (-1): a log on disk whose partition the broker does not host; it was refused."""
    text = ('{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d","error":null,"partitions":'
            '[{"partition":"o-0","size":7,"offsetLag":-1,"isFuture":false}]}]}]}')
    assert [(r.size_bytes, r.offset_lag) for r in parse_log_dirs(text, "l.txt")] == [(7, None)]


def test_log_dirs_sizes_and_an_offline_directory():
    rows = read_log_dirs(DATA / "log-dirs.txt")
    assert [(r.broker, r.topic, r.partition, r.size_bytes, r.offset_lag, r.dir_error) for r in rows] == [
        (1, "orders", 0, 5_368_709_120, 0, None), (1, "my-topic", 1, 10, 3, None),
        (2, "orders", 0, 0, 0, "org.apache.kafka.common.errors.KafkaStorageException")]


@pytest.mark.parametrize(("body", "sentence"), [
    ('{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d","error":null,"partitions":'
     '[{"partition":"orders","size":1,"offsetLag":0,"isFuture":false}]}]}]}',
     "l.txt:3: brokers[0].logDirs[0].partitions[0].partition: expected a topic-partition such as 'orders-3'"),
    ('{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d","error":null,"partitions":'
     '[{"partition":"o-0","size":-1,"offsetLag":0,"isFuture":false}]}]}]}',
     "l.txt:3: brokers[0].logDirs[0].partitions[0].size: expected a non-negative integer, found -1"),
    ('{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d","error":null,"partitions":'
     '[{"partition":"o-0","size":1,"offsetLag":-2,"isFuture":false}]}]}]}',
     "l.txt:3: brokers[0].logDirs[0].partitions[0].offsetLag: expected a non-negative integer, found -2"),
    ('{"version":1,"brokers":[{"broker":1}]}', "l.txt:3: brokers[0]: missing field 'logDirs'"),
    # LogDirsCommand writes version 1 only; one entry per broker queried (two were two outputs pasted together)
    ('{"version":2,"brokers":[]}', "l.txt:3: version: kafka-log-dirs --describe writes version 1, found 2"),
    ('{"version":1,"brokers":[{"broker":1,"logDirs":[]},{"broker":1,"logDirs":[]}]}',
     "l.txt:3: brokers[1]: broker 1 is described twice (also at brokers[0])"),
    ('{"version":1,"brokers":[\n{"broker":1,', "l.txt:4: invalid JSON"),
    ('{"version":1,"brokers":[\n{"broker":1,"broker":2,"logDirs":[]}]}',
     "l.txt:4: invalid JSON (the object starting on this line has the key 'broker' twice; give each key once)"),
    ("[" * 100_000, "l.txt: the JSON document is nested too deeply"),
    ('{"version":1,"brokers":[\n{"broker":1,"logDirs":[{"logDir":"' + "9" * 5000 + '","error":null,"partitions":[\n'
     '{"partition":"o-0","size":' + "9" * 5000 + ',"offsetLag":0,"isFuture":false}]}]}]}',
     "l.txt:5: invalid JSON (a number of 5,000 digits; at most 4,300)"),
    ("", "l.txt: no JSON document"),
    ("Exception in thread \"main\" org.apache.kafka.common.errors.TimeoutException\n",
     "l.txt:3: expected the JSON document of kafka-log-dirs --describe ({\"version\": 1, \"brokers\": […]}), found "
     "'Exception in thread"),
])
def test_bad_log_dirs_output(body, sentence):
    text = "Querying brokers for log directories information\nReceived log directory information from brokers 1\n"
    with pytest.raises(ReplicaflowError) as err:
        parse_log_dirs(text + body, "l.txt")
    assert str(err.value).startswith(sentence), str(err.value)


def test_verify_2_6_states_differing_replica_set_and_cleared_throttles():
    status = read_reassign_output(DATA / "verify-2.6.txt")
    assert status.states == {("orders", 0): COMPLETED, ("orders", 1): IN_PROGRESS, ("orders", 2): DIFFERENT}
    assert status.differs[("orders", 2)] == ((1, 2, 3), (4, 5, 6))
    assert status.throttles_cleared_on == (1, 2, 3, 4, 5, 6)


def test_verify_up_to_2_4_including_the_pre_1_0_partition_form():
    status = read_reassign_output(DATA / "verify-2.4.txt")
    assert status.states == {("orders", 0): COMPLETED, ("orders", 1): COMPLETED, ("orders", 2): IN_PROGRESS,
                             ("orders", 3): FAILED}
    assert status.throttles_cleared_on is None


def test_list_rows_and_none_found():
    status = parse_reassign_output((DATA / "list-3.x.txt").read_text(), "l.txt")
    assert status.listed == {("orders", 1): ListedReassignment((1, 2, 3, 4), (4,), (1,)),
                             ("my-topic", 0): ListedReassignment((5, 6), (), ())}
    assert parse_reassign_output("No partition reassignments found.\n", "l.txt").none_listed


@pytest.mark.parametrize(("text", "sentence"), [
    ("Status of partition reassignment:\nReassignment of partition orders is completed.\n",
     "v.txt:2: expected a topic-partition such as 'orders-3' (partition 0 to 2,147,483,647, Kafka's int32), "
     "found 'orders'"),
    ("Status of partition reassignment:\nReassignment of partition orders-2147483648 is completed.\n",
     "v.txt:2: expected a topic-partition such as 'orders-3' (partition 0 to 2,147,483,647, Kafka's int32), "
     "found 'orders-2147483648'"),
    ("Status of partition reassignment:\nsomething else\n", "v.txt:2: expected a line of kafka-reassign-partitions"),
    ("Status of partition reassignment:\n", "v.txt: no partition status"),
    ("x" * 2_000_000, "v.txt:1: a line of 2,000,000 characters"),
])
def test_bad_reassign_output(text, sentence):
    with pytest.raises(ReplicaflowError) as err:
        parse_reassign_output(text, "v.txt")
    assert str(err.value).startswith(sentence), str(err.value)


def test_missing_and_binary_files_are_one_sentence(tmp_path):
    with pytest.raises(ReplicaflowError, match="does not exist"):
        read_topic_describe(tmp_path / "nope.txt")
    (tmp_path / "bin").write_bytes(b"\x00\x01\xff\xfe\x80" * 10)
    with pytest.raises(ReplicaflowError, match=r"bin:1: the kafka-log-dirs --describe output is not UTF-8"):
        read_log_dirs(tmp_path / "bin")


def test_the_largest_partition_id_kafka_can_write_is_read():
    """TopicPartition's partition is a Java int: 2^31 − 1 is the last one (one beyond was read as a partition)."""
    status = parse_reassign_output("Status of partition reassignment:\n"
                                   "Reassignment of partition orders-2147483647 is completed.\n", "v.txt")
    assert status.states == {("orders", 2_147_483_647): COMPLETED}
