"""analysis == truth on every scenario (all versions), row for row: broker_metrics and unclean_elections.

Every scenario of the repository -- the KIP stories of `scenarios/`, the golden ones of
`tests/golden/scenarios/` and `tests/pipeline/scenarios/` -- is simulated into a temporary directory and
all of them are analyzed in one Spark job (multi-cluster), then each (cluster, ts_ms, broker, name) metric
row and each (cluster, ts_ms, topic, partition) unclean election with its messages lost is compared. Every
analysis table of that run must also carry one Parquet schema in all its files, nullability included.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from replicaflow.pipeline.runner import analyze

ROOT = Path(__file__).resolve().parents[2]
# the KIP stories, the golden scenarios (throttles, KIP-542 configs, 0.8.2, fetcher failures, cancel + delay)
# and scenarios of behaviour they do not reach (tests/pipeline/scenarios: KRaft, unclean election, rebalance)
SCENARIOS = (sorted((ROOT / "scenarios").glob("*.yaml"))
             + sorted((ROOT / "tests" / "golden" / "scenarios").glob("*.yaml"))
             + sorted((Path(__file__).resolve().parent / "scenarios").glob("*.yaml")))


def keyed(path: Path) -> dict[tuple, float]:
    return {(r["cluster"], r["ts_ms"], r["broker"], r["name"]): r["value"] for r in pq.read_table(path).to_pylist()}


def elections(path: Path) -> dict[tuple, tuple]:
    return {(r["cluster"], r["ts_ms"], r["topic"], r["partition"]): (r["leader"], r["leader_epoch"], r["messages_lost"])
            for r in pq.read_table(path).to_pylist()}


def compare(truth: dict, analysis: dict) -> tuple[int, list[tuple]]:
    """(rows compared, mismatches as (key, truth value, analysis value)), missing rows included."""
    keys = truth.keys() | analysis.keys()
    bad = [(k, truth.get(k), analysis.get(k)) for k in sorted(keys) if truth.get(k) != analysis.get(k)]
    return len(keys), bad


def test_broker_metrics_equal_truth_on_every_scenario(spark, tmp_path):
    from replicaflow.sim.runner import simulate

    assert len(SCENARIOS) >= 15, "the five KIP story pairs of scenarios/ or the golden scenarios are missing"
    dirs = []
    for scenario in SCENARIOS:
        simulate(scenario, tmp_path / scenario.stem)
        dirs.append(tmp_path / scenario.stem)
    analyze(dirs, tmp_path / "all", spark=spark)
    truth: dict = {}
    for d in dirs:
        truth.update(keyed(d / "truth" / "broker_metrics"))
    analysis = keyed(tmp_path / "all" / "analysis" / "broker_metrics")
    for table in sorted(p for p in (tmp_path / "all" / "analysis").iterdir() if p.is_dir()):
        # one schema per table, nullability included: broker_metrics is written by two jobs (runner.build)
        schemas = {pq.read_schema(f).remove_metadata() for f in table.glob("*.parquet")}
        assert len(schemas) == 1, f"{table.name}: its Parquet files differ in schema: {schemas}"
    compared, bad = compare(truth, analysis)
    by_metric = Counter((k[0], k[3].split("name=")[1]) for k, _, _ in bad)
    print(f"\nbroker_metrics: {len(dirs)} scenarios, {compared} rows compared, {len(bad)} mismatches")
    for (cluster, name), n in sorted(by_metric.items()):
        first = next(b for b in bad if b[0][0] == cluster and b[0][3].endswith(name))
        print(f"  {cluster} {name}: {n} rows, first {first}")
    assert compared > 0 and len({k[0] for k in truth}) == len(dirs)
    assert not bad
    truth_elections: dict = {}
    for d in dirs:
        truth_elections.update(elections(d / "truth" / "unclean_elections"))
    n, bad = compare(truth_elections, elections(tmp_path / "all" / "analysis" / "unclean_elections"))
    lost = sum(v[2] for v in truth_elections.values())
    print(f"unclean_elections: {n} rows compared ({lost} messages lost), {len(bad)} mismatches: {bad[:5]}")
    assert len(truth_elections) >= 1 and not bad
