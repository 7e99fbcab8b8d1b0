"""The ISR a partition's first ISR line starts from (log_changes._opening_isr): `Shrinking ISR from 1,2,3 to 1,2`
names the ISR in force before the shrink, so the ISR meters count the first change of each partition too
(Partition.maybeShrinkIsr marks IsrShrinksPerSec at that change; Kafka's count starts at the broker's start)."""

from __future__ import annotations

import pytest

from replicaflow.ingest.logs import read_logs
from tests.ingest.log_cases import write_files

P = "(kafka.cluster.Partition)"


def line(clock: str, tp: str, text: str) -> str:
    return f"[2024-01-21 {clock}] INFO [Partition {tp} broker=1] {text} {P}\n"


FILES = {"broker-1/server.log":
         # 2.4 (ZooKeeper): the shrink and the expansion are the writes
         line("10:01:00,000", "zk-0", "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 100, endOffset: 120). "
                                      "Out of sync replicas: (brokerId: 3, endOffset: 90).")
         + line("10:01:00,002", "zk-0", "ISR updated to 1,2 and zkVersion updated to [5]")
         + line("10:01:40,000", "zk-0", "Expanding ISR from 1,2 to 1,2,3")
         # 3.6 (AlterPartition): the shrink is a proposal, `ISR updated` the commit
         + line("10:02:00,000", "alter-0", "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 100, endOffset: "
                                          "120). Out of sync replicas: (brokerId: 3, endOffset: 90, lastCaughtUpTimeMs: "
                                          "1705831170000).")
         + line("10:02:00,020", "alter-0", "ISR updated to 1,2  and version updated to 5")
         # a first shrink ZooKeeper refused names nothing in force: its `from` is no row either
         + line("10:03:00,000", "refused-0", "Shrinking ISR from 1,2,3 to 1")
         + line("10:03:00,001", "refused-0", "Cached zkVersion 4 not equal to that in zookeeper, skip updating ISR")}


@pytest.mark.spark
def test_the_first_change_of_a_partition_has_the_isr_it_starts_from_before_it(spark, tmp_path):
    isr = read_logs(spark, [str(p) for p in write_files(tmp_path, FILES)], cluster="c")["isr"]
    got: dict[str, list] = {}
    for r in isr.orderBy("seq").collect():
        got.setdefault(r["topic"], []).append((r["ts_ms"] % 600_000, sorted(r["isr"])))
    assert got["zk"] == [(60_000, [1, 2, 3]), (60_000, [1, 2]), (100_000, [1, 2, 3])]
    assert got["alter"] == [(120_000, [1, 2, 3]), (120_020, [1, 2])]
    assert "refused" not in got
