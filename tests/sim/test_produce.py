"""What producers feel (docs/semantics.md §1.5): acks=all requests rejected with NOT_ENOUGH_REPLICAS.

Partition.appendRecordsToLeader throws NotEnoughReplicasException while |ISR| < min ISR and
requiredAcks == -1; ReplicaManager.appendToLocalLog marks FailedProduceRequestsPerSec for it and
RequestChannel.updateRequestMetrics counts the partition's error in ErrorsPerSec (1.0+, KIP-188).
"""

from __future__ import annotations

import pytest

from replicaflow.model import produce
from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.logformat import render_logs
from tests.sim.conftest import simulate, small

V = KafkaVersion.parse


def _minisr_window(version: str, acks: str | None = "all", **topic) -> dict:
    """100 messages/s of 1 KiB, batches of 16 messages; min.insync.replicas 4 > RF 3 from 10 s to 70 s."""
    t = {"name": "t", "partitions": 1, "replication_factor": 3, "assignment": [[1, 2, 3]],
         "produce_rate": "102400B/s", "message_size": "1KiB", "initial_size": "1MiB", "batch_size": "16KiB", **topic}
    if acks is not None:
        t["acks"] = acks
    return small(kafka={"version": version, "replica_lag_time_max": "10s"}, duration="90s", topics=[t], events=[
        {"at": "10s", "config": {"topic": "t", "min.insync.replicas": 4}},
        {"at": "70s", "config": {"topic": "t", "min.insync.replicas": 2}}])


def test_default_acks_per_release():
    """ProducerConfig: acks defaults to all from 3.0 (KIP-679), 1 before."""
    assert produce.default_acks(V("2.8")) == "1" and produce.default_acks(V("3.0")) == "all"


def test_request_counting_rule():
    """One request per batch.size batch: 16 KiB / 1 KiB = 16 messages; requests leave every 16 messages."""
    assert produce.messages_per_request(16384, 1024) == 16 and produce.messages_per_request(100, 1024) == 1
    assert produce.requests_sent(990, 6000, 16) == 375


def test_rejects_only_acks_all_under_effective_min_isr():
    """3.7 caps min ISR at |replicas| (Partition.effectiveMinIsr); before, min.insync.replicas 4 > RF 3 rejects."""
    assert bool(produce.rejects_acks_all(True, 3, 4, 3, capped=False))
    assert not bool(produce.rejects_acks_all(True, 3, 4, 3, capped=True))
    assert not bool(produce.rejects_acks_all(False, 1, 2, 3, capped=False))


def test_rejected_requests_match_the_time_under_min_isr_exactly():
    """60 s under min ISR at 100 msg/s = 6000 messages = 375 requests of 16 (990 sent before: 61 requests)."""
    run = simulate(_minisr_window("3.6"))
    failed = run.metric("FailedProduceRequestsPerSec")[1]
    errors = run.metric("ErrorsPerSec")[1]
    assert failed.loc[9.0] == 0 and failed.loc[10.0] == pytest.approx(produce.requests_sent(990, 10, 16))
    assert failed.iloc[-1] == 375 and errors.iloc[-1] == 375
    pe = run.table("telemetry", "produce_errors")
    assert pe["requests"].sum() == 375 and pe["messages"].sum() == 6000 and pe["bytes"].sum() == 6000 * 1024
    assert set(pe["error"]) == {"NOT_ENOUGH_REPLICAS"} and set(pe["broker"]) == {1}
    # nothing was appended while rejecting: 1024 initial + 89.x s of writes minus the 60 s rejected
    leo = run.table("telemetry", "replica_offsets")
    last = leo[(leo["ts_ms"] == leo["ts_ms"].max()) & (leo["broker"] == 1)]["log_end_offset"].iloc[0]
    assert last == 1024 + 9000 - 6000


def test_acks_1_and_capped_releases_are_not_rejected():
    assert simulate(_minisr_window("3.6", acks="1")).metric("FailedProduceRequestsPerSec")[1].iloc[-1] == 0
    assert simulate(_minisr_window("3.7")).metric("FailedProduceRequestsPerSec")[1].iloc[-1] == 0
    # 2.8's producers default to acks=1; 3.0's to acks=all
    assert simulate(_minisr_window("2.8", acks=None)).metric("FailedProduceRequestsPerSec")[1].iloc[-1] == 0
    assert simulate(_minisr_window("3.0", acks=None)).metric("FailedProduceRequestsPerSec")[1].iloc[-1] == 375


def test_0_11_counts_failed_produce_requests_without_errors_per_sec():
    """ErrorsPerSec came with KIP-188 (1.0); FailedProduceRequestsPerSec is older."""
    run = simulate(_minisr_window("0.11"))
    assert run.metric("FailedProduceRequestsPerSec")[1].iloc[-1] == 375 and not run.has_metric("ErrorsPerSec")


@pytest.mark.parametrize(("version", "first", "cause"), [
    ("0.10.1", "[Replica Manager on Broker 1]: Error processing append operation on partition t-0",
     "Number of insync replicas for partition [t,0] is [3], below required minimum [4]"),
    ("0.10.2", "[Replica Manager on Broker 1]: Error processing append operation on partition t-0",
     "Number of insync replicas for partition t-0 is [3], below required minimum [4]"),
    ("1.0", "[ReplicaManager broker=1] Error processing append operation on partition t-0",
     "Number of insync replicas for partition t-0 is [3], below required minimum [4]"),
    ("2.1", "[ReplicaManager broker=1] Error processing append operation on partition t-0",
     "The size of the current ISR Set(1, 2, 3) is insufficient to satisfy the min.isr requirement of 4 "
     "for partition t-0"),
])
def test_one_error_line_per_rejected_request_in_the_release_form(version, first, cause):
    """ReplicaManager.appendToLocalLog logs every failed append at ERROR with the exception, and marks
    FailedProduceRequestsPerSec for it: one line per rejected request, 375 as the meter counts, at the instants
    the telemetry has them. Partition.appendRecordsToLeader formats ``[topic,partition]`` before 0.10.2, its
    TopicPartition from 0.10.2."""
    logs: list = []
    run = simulate(_minisr_window(version), log_events=logs)
    rejected = [e for e in logs if e["kind"] == "produce_rejected"]
    assert len(rejected) == 375 and rejected[0]["ts_ms"] == run.scenario.start_ms + 10_000
    assert rejected[-1]["ts_ms"] < run.scenario.start_ms + 70_000
    lines = render_logs(rejected, V(version))["broker-1/server.log"]
    assert lines[0].endswith(f"ERROR {first} (kafka.server.ReplicaManager)")
    assert lines[1] == f"org.apache.kafka.common.errors.NotEnoughReplicasException: {cause}"
