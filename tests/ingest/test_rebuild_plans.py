"""The tables ``ingest.rebuild`` makes from broker logs and a describe snapshot, as Spark plans."""

from __future__ import annotations

from replicaflow.ingest import sources
from replicaflow.ingest.broker_sessions import lifecycle
from replicaflow.ingest.logs import read_logs
from replicaflow.ingest.rebuild import rebuild
from replicaflow.model.election import KRAFT, ZOOKEEPER
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


KILLED = """[2026-01-01 00:00:01,000] INFO [KafkaServer id=1] starting (kafka.server.KafkaServer)
[2026-01-01 00:00:02,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)
[2026-01-01 00:00:05,000] INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: (highWatermark: \
9, endOffset: 14). Out of sync replicas: (brokerId: 2, endOffset: 9, lastCaughtUpTimeMs: 1767225601000). \
(kafka.cluster.Partition)
[2026-01-01 00:00:09,000] INFO [KafkaServer id=1] starting (kafka.server.KafkaServer)
[2026-01-01 00:00:10,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)
"""


def test_a_killed_brokers_lifetimes_plan_as_a_few_leaves(spark, tmp_path):
    """``broker_sessions.lifecycle`` reads its rows two or three times at each step (``unlogged_ends``' pairs and
    bounds, ``serving_while_down``, ``_shutting_down``): without checkpoints a Spark plan copies the whole lifecycle
    into each reader, and a broker with two own starts (a process killed between) made the ``brokers`` table's plan
    25,785 lines, 200 s of planning. With them the lifecycle's analyzed plan is a few leaves. The process ended
    unlogged is still found: down 1 ms after its last line."""
    (tmp_path / "broker-1").mkdir()
    (tmp_path / "broker-1" / "server.log").write_text(KILLED)
    parsed = read_logs(spark, tmp_path / "broker-1" / "server.log", "plans")
    life = lifecycle(parsed["log_events"], parsed["line_times"], {"plans": {ZOOKEEPER: 18_000, KRAFT: 9_000}})
    plan = life._jdf.queryExecution().analyzed().toString()
    assert plan.count("\n") < 100, plan[:3000]
    rows = sorted((r["ts_ms"] % 60_000, r["state"]) for r in life.collect())
    assert rows == [(2_000, "up"), (5_001, "down"), (10_000, "up")]
