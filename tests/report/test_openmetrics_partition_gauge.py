"""``openmetrics.under_min_isr_samples`` (arrays) against the rule it implements, written sample by sample."""

from __future__ import annotations

from unittest.mock import patch

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replicaflow.model.metrics import jmx
from replicaflow.report import openmetrics
from replicaflow.report.build import write_atomic
from replicaflow.report.openmetrics import to_openmetrics, under_min_isr_samples
from tests.report.omparse import parse

SCRAPE_MS = 10


def by_sample(ps: pd.DataFrame, grid: dict[str, list[int]], live: dict[tuple[str, int], set[int]]) -> set[tuple]:
    """The JMX exporter's view, one sample at a time. Kafka's ``kafka.cluster.Partition`` registers the
    ``UnderMinIsr`` gauge (KIP-164) on every replica, valued 1 only on the leader while ``isUnderMinIsr``. So
    for a partition ever under min ISR, every broker that ever led it reports at each scrape it was up for:
    1 if it leads the partition there (the first interval, in row order, with from_ms <= T < to_ms) and the
    partition is under min ISR, else 0."""
    out = set()
    for (cluster, topic, partition), g in ps.groupby(["cluster", "topic", "partition"]):
        if not g["under_min_isr"].any():
            continue
        rows = list(g.itertuples(index=False))
        for broker in {int(r.leader) for r in rows if r.leader >= 0}:
            for t in grid.get(cluster, []):
                if broker not in live.get((cluster, t), set()):
                    continue
                now = next((r for r in rows if r.from_ms <= t and (pd.isna(r.to_ms) or t < r.to_ms)), None)
                one = now is not None and now.leader == broker and now.under_min_isr
                out.add((cluster, topic, partition, broker, t, 1.0 if one else 0.0))
    return out


@st.composite
def states(draw):
    """Contiguous intervals per partition (the last one open or closed), leaders -1..3, two clusters, a grid
    that need not be sorted, and brokers missing from some scrapes."""
    rows = []
    for cluster in ("a", "b"):
        for topic, partition in draw(st.sets(st.tuples(st.sampled_from(["t", "u"]), st.integers(0, 2)), max_size=4)):
            bounds = sorted(draw(st.sets(st.integers(0, 12 * SCRAPE_MS), min_size=1, max_size=6)))
            open_end = draw(st.booleans())
            ends = bounds[1:] + ([None] if open_end else [])
            for frm, to in zip(bounds, ends, strict=False):  # a closed last interval: its end is no start
                rows.append((cluster, topic, partition, frm, to, draw(st.integers(-1, 3)), draw(st.booleans())))
    ps = pd.DataFrame(rows, columns=["cluster", "topic", "partition", "from_ms", "to_ms", "leader", "under_min_isr"])
    grid = {c: draw(st.permutations(range(0, 12 * SCRAPE_MS + 1, SCRAPE_MS))) for c in ("a", "b")}
    live = {(c, t): set(draw(st.sets(st.integers(0, 3)))) for c in grid for t in grid[c]}
    return ps, grid, live


@settings(max_examples=200, deadline=None)
@given(states())
def test_samples_equal_the_rule_sample_by_sample(case):
    ps, grid, live = case
    got = under_min_isr_samples(ps, grid, live)
    rows = {(r.cluster, r.topic, int(r.partition), int(r.broker), int(r.ts_ms), float(r.value))
            for r in got.itertuples(index=False)}
    assert len(rows) == len(got)
    assert rows == by_sample(ps, grid, live)


@settings(max_examples=60, deadline=None)
@given(states())
def test_metrics_om_is_the_same_text_whatever_the_block_size(case):
    """``metrics.om`` is written block by block of partitions (``openmetrics_chunks``): blocks of one partition
    give the text of blocks of many, and that text holds the rule's samples."""
    ps, grid, live = case
    bm = pd.DataFrame([(c, t, b, jmx("LeaderCount"), 1.0) for (c, t), brokers in live.items() for b in brokers],
                      columns=["cluster", "ts_ms", "broker", "name", "value"])
    whole = to_openmetrics(bm, ps, {}, grid)
    with patch.object(openmetrics, "PARTITION_SCRAPES_PER_BLOCK", 1):
        assert "".join(openmetrics.openmetrics_chunks(bm, ps, {}, grid)) == whole
    _, series = parse(whole)
    got = {(dict(lab)["cluster"], dict(lab)["topic"], int(dict(lab)["partition"]), int(dict(lab)["broker"]), t, v)
           for (name, lab), points in series.items() if name == "kafka_cluster_partition_underminisr"
           for t, v in points}
    live_now = {(c, t): b for (c, t), b in live.items() if b}  # a scrape with no broker up has no bm row
    assert got == by_sample(ps, grid, live_now)


def test_a_write_stopped_midway_leaves_the_old_file_and_no_other(tmp_path):
    """``write_atomic`` of pieces: a failure while they are produced leaves what was there, and no temporary."""
    target = tmp_path / "metrics.om"
    target.write_text("old\n")

    def pieces():
        yield "# TYPE x gauge\n"
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError):
        write_atomic(target, pieces())
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.om"] and target.read_text() == "old\n"
