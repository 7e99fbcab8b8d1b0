"""The tables ``ingest.rebuild`` makes from broker logs and a describe snapshot, as Spark plans."""

from __future__ import annotations

from replicaflow.ingest import sources
from replicaflow.ingest.rebuild import rebuild
from replicaflow.sim.runner import DESCRIBE_START, SNAPSHOTS, simulate

STORY = """name: plans
duration: 40s
tick: 1s
kafka: {version: "3.7"}
cluster: {brokers: 3}
topics: [{name: orders, partitions: 4, replication_factor: 3, min_insync_replicas: 2, produce_rate: 100KB/s}]
events: [{at: 5s, stall_follower: {broker: 2, for: 20s}}]
"""


def test_rebuilt_tables_scan_no_python_rows(spark, tmp_path):
    """The rows rebuild makes on the driver (the snapshot's ISR and leaders, the replayed assignments, the
    brokers it lists, the describe's configs, the empty sample tables) are local relations of the plan, not
    ``createDataFrame`` RDDs of pickled rows: those start a Python worker on an executor at every scan, which
    a cluster's workers may not have this interpreter for. The rebuild then needs no Python outside the driver.
    The parsed lines are local checkpoints (``LogicalRDD`` of JVM rows): their lineage has no ``PythonRDD``.
    """
    (tmp_path / "s.yaml").write_text(STORY)
    simulate(tmp_path / "s.yaml", tmp_path / "sim", logs=True)
    inputs = sources.plan([str(tmp_path / "sim" / "logs")], [str(tmp_path / "sim" / SNAPSHOTS / DESCRIBE_START)],
                          cluster="plans")
    built = rebuild(spark, inputs, sources.options(None, "10s", "start", None, 2))
    assert set(built.tables) >= {"assignments", "isr", "leaders", "brokers", "configs", "replica_offsets"}
    for name, df in built.tables.items():
        lineage = df._jdf.queryExecution().toRdd().toDebugString()
        assert "PythonRDD" not in lineage and "applySchemaToPythonRDD" not in lineage, f"{name}: {lineage[:2000]}"
    assert built.tables["assignments"].count() >= 4 and built.tables["configs"].count() >= 1
