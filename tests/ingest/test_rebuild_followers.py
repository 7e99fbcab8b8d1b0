"""The leader a KRaft follower's line names (holders.followed_leaders): `Follower t-p starts at leader epoch E … Current
leader is L.` gives the partition's leader where the leader's own line is missing, and no leader (-1, offline) where the
controller elected none. Through `replicaflow analyze --logs`'s function (docs/real-cluster.md, ``leaders``)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from replicaflow.jobs.analyze import analyze_logs
from tests.ingest.log_cases import write_files

pytestmark = pytest.mark.spark

TOPIC_ID = "Some(WLjTDIMVTMiyaNabGbe6cQ)"


def leader(t: str, broker: int, epoch: int, isr: str, prev: int) -> str:
    return (f"[2025-03-28 {t}] INFO [Broker id={broker}] Leader orders-0 with topic id {TOPIC_ID} starts at leader epoch "
            f"{epoch} from offset 3297 with partition epoch {epoch * 2}, high watermark 3297, ISR [{isr}], adding replicas "
            f"[] and removing replicas [] . Previous leader Some({prev}) and previous leader epoch was {epoch - 1}. "
            "(state.change.logger)\n")


def follower(t: str, broker: int, epoch: int, current: int) -> str:
    # 3.6-4.1 log the new leader and epoch as the previous ones (KAFKA-19776), as the 3.9 cluster's lines do
    return (f"[2025-03-28 {t}] INFO [Broker id={broker}] Follower orders-0 starts at leader epoch {epoch} from offset "
            f"3297 with partition epoch {epoch * 2 + 1} and high watermark 3297. Current leader is {current}. Previous "
            f"leader Some({current}) and previous leader epoch was {epoch}. (state.change.logger)\n")


FILES = {
    # broker 3's log is not given: it leads epoch 6 only in its followers' lines (elected from an ISR no line shows:
    # it was out of the last one logged); the controller then elects no one (epoch 7), and broker 1 leads epoch 8
    # from an ISR of itself
    "broker-1/state-change.log": (leader("10:00:00,000", 1, 5, "1,2", 3) + follower("10:05:00,050", 1, 6, 3)
                                  + leader("10:20:00,000", 1, 8, "1", -1)),
    "broker-2/state-change.log": (follower("10:00:00,020", 2, 5, 1) + follower("10:05:00,000", 2, 6, 3)
                                  + follower("10:10:00,000", 2, 7, -1)),
}


@pytest.fixture(scope="module")
def analyzed(spark, tmp_path_factory) -> tuple[list, dict]:
    root = tmp_path_factory.mktemp("followers")
    write_files(root / "logs", FILES)
    analyze_logs([str(root / "logs")], root / "out", spark=spark)
    rows = sorted(pq.read_table(root / "out" / "analysis" / "partition_state").to_pylist(), key=lambda r: r["from_ms"])
    states = [(r["from_ms"] // 1000 % 86400, r["leader"], sorted(r["isr"]), r["offline"]) for r in rows]
    return states, json.loads((root / "out" / "analysis" / "_summary.json").read_text(encoding="utf-8"))


def test_a_followers_line_names_the_leader_and_an_offline_partition(analyzed):
    """Partition.makeFollower (3.3+) logs the current leader of each new leader epoch a follower applies: broker 3
    leads epoch 6 from the first of its two followers' lines (the repeat, and broker 2's line of the epoch broker 1's
    own line told first, add nothing), and the controller's leaderless epoch 7 is offline
    (ReplicationControlManager: no live ISR member, NO_LEADER) until broker 1's leader line. Before, the partition
    stayed under broker 1 until 10:20, healthy and never offline."""
    states, summary = analyzed
    assert states == [(36000, 1, [1, 2], False), (36300, 3, [1, 2], False), (36600, -1, [1, 2], True),
                      (37200, 1, [1], False)]
    s = summary["cluster"]
    assert (s["peak_offline"], s["incidents"]["offline"], s["offline_minutes"]) == (1, 1, 10.0)


def test_an_election_that_no_leader_line_shows_is_not_called_unclean(analyzed):
    """Broker 3's election (epoch 6) is known from a follower only, without the ISR it came from (the last one logged,
    [1, 2], is stale: KRaft elects a member of the ISR unless unclean election is on, and then the controller logs
    `UNCLEAN partition change`): no unclean election,
    and broker 1's (epoch 8) names the ISR it was elected from after epochs no line showed the ISR of
    (holders.isr_before_unseen_changes): clean too."""
    _, summary = analyzed
    assert summary["cluster"]["unclean_elections"] == 0


PORTWORX = "[2017-09-14 20:2{}] INFO {} (kafka.{})\n"


def test_a_leader_that_adds_a_fetcher_follows_the_broker_it_names(spark, tmp_path):
    """A 0.11 broker's lines, verbatim from a public 2017 benchmark write-up (Kubernetes, brokers 1001-1003): broker 1003
    leads three partitions (its ISR expansions, Partition.maybeExpandIsr), then adds fetchers to 1001 for partition 2
    and to 1002 for partition 0 (ReplicaManager.makeFollowers; up to 2.0 the line names no leader epoch): those two are
    led by 1001 and 1002 from then on, partition 1 by 1003 still. Before, 1003 kept all three to the end of the logs."""
    from replicaflow.ingest.rebuild import rebuild
    from replicaflow.ingest.sources import ClusterInputs, RebuildOptions

    part, fetch = "cluster.Partition", "server.ReplicaFetcherManager"
    lines = [("3:37,483", "Partition [kbrep3-async-px2,1] on broker 1003: Expanding ISR from 1003 to 1003,1001", part)]
    lines += [(f"3:55,8{ms}", f"Partition [kbrep3-async-px2,{p}] on broker 1003: Expanding ISR from 1003,1001 to "
               "1003,1001,1002", part) for ms, p in (("13", 0), ("15", 2), ("17", 1))]
    for ms, p, leader, offset in (("241", 2, 1001, 166666666), ("252", 0, 1002, 166666667)):
        lines += [(f"6:12,{ms}", f"[ReplicaFetcherManager on broker 1003] Removed fetcher for partitions "
                   f"kbrep3-async-px2-{p}", fetch),
                  (f"6:12,{int(ms) + 5}", f"[ReplicaFetcherManager on broker 1003] Added fetcher for partitions "
                   f"List([kbrep3-async-px2-{p}, initOffset {offset} to broker BrokerEndPoint({leader},"
                   f"kafka-{leader - 1001}.broker.kafka.svc.cluster.local,9092)] )", fetch)]
    paths = write_files(tmp_path, {"kafka-2/server.log": "".join(PORTWORX.format(*line) for line in lines)})
    tables = rebuild(spark, [ClusterInputs("c", tuple(paths))], RebuildOptions(scrape_interval_ms=1000)).tables
    got = sorted((r["partition"], r["ts_ms"] % 1_000_000, r["leader"]) for r in tables["leaders"].collect())
    assert got == [(0, 635_813, 1003), (0, 772_257, 1002), (1, 617_483, 1003), (2, 635_815, 1003),
                   (2, 772_246, 1001)]
