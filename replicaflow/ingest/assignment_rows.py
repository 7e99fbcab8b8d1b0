"""The ``assignments`` rows of a rebuilt cluster, from each partition's assignment history (``rebuild._histories``)."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from replicaflow.ingest import replay
from replicaflow.telemetry.spark import local_frame

History = dict[tuple[str, str, int], list[tuple[int, replay.Assignment]]]
ASSIGNMENT_SEQ = 1 << 40  # assignment rows are numbered below every other change row


def assigned_rows(spark: SparkSession, histories: History) -> DataFrame:
    """Every assignment of ``histories`` at its instant (the elections' replica order)."""
    return local_frame(spark, [(k[0], ts, k[1], k[2], list(a.replicas)) for k, hist in histories.items()
                               for ts, a in hist],
                       "cluster string, ts_ms long, topic string, partition int, replicas array<int>")


def assignment_rows(spark: SparkSession, histories: History, known: dict) -> DataFrame:
    """One row where each partition's state begins (assignment, leader and ISR all known), then its changes."""
    data, rows = [], {}
    for key, hist in histories.items():
        begin = max(hist[0][0], known.get(key, 1 << 62))
        if begin >= 1 << 62:
            continue
        mine = rows.setdefault(key[0], [])
        mine.append((key, begin, [a for ts, a in hist if ts <= begin][-1]))
        mine += [(key, ts, a) for ts, a in hist if ts > begin]
    for name, mine in rows.items():
        # numbered below any leader or ISR row of the same instant (the controller decides, then brokers log)
        data += [(name, ts, n - ASSIGNMENT_SEQ, key[1], key[2], list(a.replicas), list(a.adding), list(a.removing))
                 for n, (key, ts, a) in enumerate(sorted(mine, key=lambda r: (r[1], r[0])))]
    return local_frame(spark, data, "cluster string, ts_ms long, seq long, topic string, partition int, "
                                    "replicas array<int>, adding array<int>, removing array<int>")
