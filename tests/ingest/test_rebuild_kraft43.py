"""A KRaft 4.3 controller's reassignment rebuilt from its lines (ingest/rebuild.py): ReplicationControlManager 4.3.0
(apache/kafka#21221) appends the registration's change to the lines the rebuild reads a move from."""

from __future__ import annotations

import pytest

from replicaflow.ingest.rebuild import rebuild
from replicaflow.ingest.sources import ClusterInputs, RebuildOptions

pytestmark = pytest.mark.spark

_LOGGER = " (org.apache.kafka.controller.ReplicationControlManager)\n"


def _record(at: str, adding: str, removing: str, replicas: str, isr: str, tail: str) -> str:
    return (f"[2026-06-01 {at}] INFO [QuorumController id=1] Replayed partition assignment change PartitionChangeRecord("
            f"partitionId=0, topicId=AAAAAAAAAAAAAAAAAAAAAA, isr={isr}, leader=-2, replicas=[{replicas}], "
            f"removingReplicas=[{removing}], addingReplicas=[{adding}], leaderRecoveryState=-1, directories=null, "
            f"eligibleLeaderReplicas=null, lastKnownElr=null) for topic orders{tail}{_LOGGER}")


def _controller(v43: bool) -> str:
    """The move of orders-0 from 1,2,3 to 1,2,4: its start, the leader's AlterPartition that completes it, and the
    record that empties both lists; 4.3's forms when ``v43``, 4.2's otherwise."""
    start = ". (isr: [1, 2, 3] -> [1, 2, 3], replicaSet: [1, 2, 3] -> [1, 2, 4, 3], partitionEpoch: 6, leaderEpoch: 3)"
    done = ". (isr: [1, 2, 3] -> [1, 2, 4], replicaSet: [1, 2, 4, 3] -> [1, 2, 4], partitionEpoch: 7, leaderEpoch: 3)"
    change = (". isr: [1, 2, 3] -> [1, 2, 4], replicaSet: [1, 2, 4, 3] -> [1, 2, 4], partitionEpoch: 6 -> 7, "
              "leaderEpoch: 3 -> 3" if v43 else ".")
    return (_record("10:00:00,000", "4", "3", "1, 2, 4, 3", "null", start if v43 else "")
            + "[2026-06-01 10:05:00,000] INFO [QuorumController id=1] AlterPartition request from node 1 for orders-0 "
            f"completed the ongoing partition reassignment{change}{_LOGGER}"
            + _record("10:05:00,001", "", "", "1, 2, 4", "[1, 2, 4]", done if v43 else ""))


@pytest.mark.parametrize("v43", [True, False], ids=["4.3", "4.2"])
def test_a_4_3_controller_moves_a_partition_as_a_4_2_one(spark, tmp_path, v43):
    """ReplicationControlManager.replay(PartitionChangeRecord) (`Replayed partition assignment change … for topic t.
    (isr: … -> …, replicaSet: … -> …, partitionEpoch: E, leaderEpoch: L)`) and its AlterPartition completion (`…
    completed the ongoing partition reassignment. isr: … -> …, …`), Kafka 4.3.0: the same assignments as 4.2's
    lines give (1,2,4,3 adding 4 from 10:00, 1,2,4 from the completion at 10:05 and its record 1 ms later) and the
    same three reassignment rows.
    Before, each 4.3 line was a reject (`truncated or malformed reassignment message`) and the partition never
    moved; the logs' release reads as 4.3 (3.5 before, as 4.2's)."""
    (tmp_path / "controller-1.log").write_text(_controller(v43))
    (tmp_path / "broker-1.log").write_text(
        "[2026-06-01 09:00:00,000] INFO [Partition orders-0 broker=1] ISR updated to 1,2,3  and version updated to 5 "
        "(kafka.cluster.Partition)\n")
    files = tuple(str(tmp_path / f) for f in ("controller-1.log", "broker-1.log"))
    out = rebuild(spark, [ClusterInputs("c", files)], RebuildOptions(scrape_interval_ms=1000))
    rows = out.tables["assignments"].orderBy("seq").collect()
    assert [(r["ts_ms"] % 86_400_000, tuple(r["replicas"]), tuple(r["adding"])) for r in rows] == [
        (36_000_000, (1, 2, 4, 3), (4,)), (36_300_000, (1, 2, 4), ()), (36_300_001, (1, 2, 4), ())]
    assert out.log_events.where("kind like 'reassignment_%'").count() == 3
    assert out.rejects.count() == 0
    # 4.2's lines: 3.5 at least (QuorumController's logIdent, the two-space `ISR updated`)
    assert (out.metas[0]["kafka_version"], out.metas[0]["kafka_version_last"]) == ("4.3" if v43 else "3.5", None)
