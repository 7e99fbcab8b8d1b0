"""A topic's end from a ZooKeeper controller's list of the topics it found at its start (ingest/holders.py,
``TopicEnds``): KafkaController.initializeControllerContext logs `Current list of topics in the cluster: Set(…)`
(0.8-3.x) each time a broker becomes the controller. A topic it leaves out no longer exists: its data was wiped
while the cluster was down, or its deletion left no line in the files given."""

from __future__ import annotations

import pytest

from replicaflow.ingest.holders import TopicEnds
from replicaflow.ingest.rebuild import rebuild
from replicaflow.ingest.sources import ClusterInputs, RebuildOptions
from tests.ingest.log_cases import write_files

C = "(kafka.controller.KafkaController)"
SC = "(state.change.logger)"
MS = 1719223200000  # 2024-06-24 10:00:00 UTC


def leader(ts: str, topic: str, epoch: int) -> str:
    return (f"[2024-06-24 {ts}] INFO [Broker id=0] Leader {topic}-0 with topic id Some(AAAAAAAAAAAAAAAAAAAAAA) starts "
            f"at leader epoch {epoch} from offset 0 with partition epoch {epoch}, high watermark 0, ISR [0], adding "
            f"replicas [] and removing replicas [] . Previous leader None and previous leader epoch was -1. {SC}\n")


# One 3.6 ZooKeeper broker, also the controller. Stopped at 10:05 and its log directory wiped; at its restart its
# controller finds `kept` (re-created by a script before the broker's own start, say) but not `old`; `late` is created
# after the second list, so that list says nothing of it.
WIPED = {
    "broker-0/server.log":
        "[2024-06-24 10:00:00,000] INFO [KafkaServer id=0] started (kafka.server.KafkaServer)\n"
        "[2024-06-24 10:05:00,000] INFO [KafkaServer id=0] shut down completed (kafka.server.KafkaServer)\n"
        "[2024-06-24 10:10:00,000] INFO [KafkaServer id=0] started (kafka.server.KafkaServer)\n",
    "broker-0/controller.log":
        f"[2024-06-24 10:00:00,010] INFO [Controller id=0] Current list of topics in the cluster: Set(old, kept) {C}\n"
        f"[2024-06-24 10:10:00,010] INFO [Controller id=0] Current list of topics in the cluster: Set(kept) {C}\n",
    "broker-0/state-change.log":
        leader("10:00:00,020", "old", 0) + leader("10:00:00,021", "kept", 0) + leader("10:10:00,100", "kept", 1)
        + leader("10:15:00,000", "late", 0),
}


@pytest.mark.spark
def test_a_topic_a_new_controller_does_not_list_ends_there_and_is_not_offline_after(spark, tmp_path):
    """The broker stops at 10:05: every partition is offline (no live replica). At 10:10 the controller's list leaves
    `old` out: its partition ends there (an assignment of no replica) instead of staying offline to the end of the
    logs, as a public 3.6.1 cluster's logs showed (harborkod/kafka-cluster: 51 partitions offline for 18 h after
    the data was wiped, four restarts each counted again). `kept` is listed and lives on; `late` is absent from the
    list but created after it (a later line of its own), so it lives on too."""
    paths = write_files(tmp_path, WIPED)
    tables = rebuild(spark, [ClusterInputs("c", tuple(paths))], RebuildOptions(scrape_interval_ms=1000)).tables
    rows = tables["assignments"].orderBy("topic", "ts_ms", "seq").collect()
    got = {}
    for r in rows:
        got.setdefault(r["topic"], []).append((r["ts_ms"] - MS, list(r["replicas"])))
    assert got["old"][-1] == (600_010, [])
    assert [replicas for _, replicas in got["old"]] == [[0], []]
    assert [replicas for _, replicas in got["kept"]] == [[0]]
    assert [replicas for _, replicas in got["late"]] == [[0]]


AGAIN = {  # 2.8: `again` led by broker 0 alone (epoch 11), the cluster wiped, the topic created again on 1 and 0
    "broker-0/state-change.log": leader("10:00:00,000", "again", 11),
    "broker-0/controller.log":
        f"[2024-06-24 10:10:00,010] INFO [Controller id=0] Current list of topics in the cluster: HashSet() {C}\n",
    "broker-1/state-change.log": leader("10:11:00,000", "again", 0).replace("Broker id=0", "Broker id=1")
    .replace("ISR [0]", "ISR [1,0]"),
}


@pytest.mark.spark
def test_a_topic_created_again_elects_its_first_leader_from_its_own_isr(spark, tmp_path):
    """Leader epochs restart at 0 in a partition created again (KafkaController.onNewPartitionCreation: leaderEpoch 0,
    the ISR its live replicas): its first leader, broker 1 with ISR [1, 0], is elected from that ISR, not from the
    old partition's [0]. On a public 2.8 cluster wiped and its topic created again (AndreasTraut/kafka_2.13-2.8.0),
    the first leader of the new topic read as an unclean election. An ISR row of the line's own ISR now comes just
    before its leader row, as for a leader line after unseen changes."""
    paths = write_files(tmp_path, AGAIN)
    tables = rebuild(spark, [ClusterInputs("c", tuple(paths))], RebuildOptions(scrape_interval_ms=1000)).tables
    rows = [("isr", r["ts_ms"] - MS, r["seq"], sorted(r["isr"])) for r in tables["isr"].collect()]
    rows += [("leader", r["ts_ms"] - MS, r["seq"], r["leader"]) for r in tables["leaders"].collect()]
    again = [(what, ts, value) for what, ts, _, value in sorted(rows, key=lambda r: (r[1], r[2]))]
    assert again[-3:] == [("isr", 660_000, [0, 1]), ("leader", 660_000, 1), ("isr", 660_000, [0, 1])]


def test_a_list_before_a_describe_shows_the_topic_does_not_end_it():
    """A describe snapshot taken after a controller's list shows the topic then: it was created after the list, so
    the list does not end it; a list after the snapshot does. A deletion line counts either way, as before."""
    ends = TopicEnds(deleted={("c", "t"): (500,)}, listings={"c": ((100, frozenset({"u"})), (300, frozenset()))})
    assert ends.of("c", "t") == (500, 100, 300)
    assert ends.of("c", "t", shown_ms=200) == (500, 300)
    assert ends.of("c", "u", shown_ms=None) == (300,)
    assert ends.of("other", "t") == ()
