"""Read only the scrapes of ``replica_offsets`` that some interval can use (docs/pipeline.md, "Pruning").

``replica_offsets`` is the one table that grows with partitions × scrapes, and two steps read it
for a few intervals only: the lag gauges for the intervals with a replica outside the ISR, the
reassignment progress for the open moves. Those intervals are small and already computed, so
``analyze`` collects the instants they cover as a handful of spans and filters the scan on
``ts_ms`` with literals, which Spark pushes into the Parquet reader: row groups (the simulator
writes the table in ``ts_ms`` order) and pages outside every span are skipped, not decoded. The
filter keeps a superset of the rows each step selects exactly, so the results do not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from replicaflow.pipeline.state import PKEY

MAX_SPANS = 32  # a longer OR is merged over the smallest gaps: it only reads a little more
BUCKET_MS = 600_000  # the time buckets that pair sample rows with the intervals of their partition
BUCKET_KEY = (*PKEY, "bucket")


def merge_spans(spans: list[tuple[int, int | None]], limit: int = MAX_SPANS) -> list[tuple[int, int | None]]:
    """Closed spans ``[lo, hi]`` (``hi`` None = open to the end) merged where they touch, then over the
    smallest gaps until at most ``limit`` remain."""
    merged: list[list] = []
    for lo, hi in sorted(spans, key=lambda s: s[0]):
        if merged and (merged[-1][1] is None or lo <= merged[-1][1]):
            last = merged[-1]
            last[1] = None if last[1] is None or hi is None else max(last[1], hi)
        else:
            merged.append([lo, hi])
    while len(merged) > limit:
        i = min(range(len(merged) - 1), key=lambda k: merged[k + 1][0] - merged[k][1])
        merged[i:i + 2] = [[merged[i][0], merged[i + 1][1]]]
    return [(lo, hi) for lo, hi in merged]


def collect_spans(intervals: DataFrame, lo: str, hi: str, pad_ms: int = 0) -> list[tuple[int, int | None]]:
    """The merged spans ``[lo, hi + pad_ms]`` of ``intervals`` (a small DataFrame: one Spark job)."""
    rows = (intervals.select(F.col(lo).alias("lo"), (F.col(hi) + F.lit(pad_ms)).alias("hi"))
            .distinct().collect())
    return merge_spans([(int(r["lo"]), None if r["hi"] is None else int(r["hi"])) for r in rows])


def within(spans: list[tuple[int, int | None]], ts: str = "ts_ms") -> Column:
    """``ts`` inside one of ``spans``, as literal comparisons Parquet can use; false for no span."""
    def one(span: tuple[int, int | None]) -> Column:
        lo, hi = span
        inside = F.col(ts) >= F.lit(lo)
        return inside if hi is None else inside & (F.col(ts) <= F.lit(hi))
    return reduce(lambda a, b: a | b, map(one, spans), F.lit(False)) if spans else F.lit(False)


def scrapes_within(replica_offsets: DataFrame, spans: list[tuple[int, int | None]]) -> DataFrame:
    """The rows of ``replica_offsets`` inside ``spans``."""
    return replica_offsets.filter(within(spans))


def bucket(ts: Column) -> Column:
    """The time bucket of an instant (``BUCKET_MS`` wide)."""
    return F.floor(ts / F.lit(BUCKET_MS)).cast("long")


def with_buckets(intervals: DataFrame, meta: DataFrame, first: Column, last: Column) -> DataFrame:
    """``intervals`` once per time bucket they overlap, in a ``bucket`` column: from the instant ``first`` to
    the instant ``last`` (inclusive; null, or past the cluster's ``end_ms``, stops at ``end_ms``).

    Joined on (partition, bucket) instead of the partition alone, a sample row meets only the intervals
    of its own ten minutes: a partition out of sync twice an hour has 16 such intervals in 8 hours, and
    joining on the partition alone tested every row against each of them (O(rows × intervals)).
    """
    end = F.col("bucket_end_ms")
    buckets = F.sequence(bucket(first), F.greatest(bucket(F.least(F.coalesce(last, end), end)), bucket(first)))
    # withColumn, not a select of the input's columns: reading ``columns`` would analyze the plan, which the
    # declarative pipeline forbids inside its query functions (docs/pipeline.md); bucket_end_ms stays along
    return (intervals.join(F.broadcast(meta.select("cluster", F.col("end_ms").alias("bucket_end_ms"))), "cluster")
            .withColumn("bucket", F.explode(buckets)))


def within_bucket(samples: DataFrame, intervals: DataFrame, keep: Sequence[str]) -> DataFrame:
    """The rows of ``samples`` (with ``ts_ms``) that share partition and time bucket with one of the bucketed
    ``intervals`` (``with_buckets``), once per such interval, with its columns ``keep``: an inner join on
    ``(cluster, topic, partition, bucket)`` that broadcasts the intervals.

    The hash join is keyed on one long, the ``xxhash64`` of those four values, and the values themselves are
    compared once a key matches, so a hash collision changes nothing. Keyed on the four columns, the join built
    a row of two strings for every sample row to hash and compare: the lag gauges' join over 37 M sample rows
    at 8 h took 6.7 s against 5.4 s (docs/pipeline.md, "Pruning").
    """
    s, i = samples.alias("sample"), intervals.alias("bucketed")
    ours = [F.col(f"sample.{c}") for c in PKEY] + [bucket(F.col("sample.ts_ms"))]
    theirs = [F.col(f"bucketed.{c}") for c in BUCKET_KEY]
    # the values compared inside coalesce(…, false), not as equalities of the join: those would be hash keys again
    same = F.coalesce(reduce(lambda a, b: a & b, [x == y for x, y in zip(ours, theirs, strict=True)]), F.lit(False))
    return (s.join(F.broadcast(i), (F.xxhash64(*ours) == F.xxhash64(*theirs)) & same)
            .select("sample.*", *[F.col(f"bucketed.{c}") for c in keep]))
