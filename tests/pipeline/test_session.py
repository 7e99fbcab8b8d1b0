"""The SparkSession's settings that cost or save seconds before any row is read (pipeline/session.py)."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import functions as F

from replicaflow.pipeline.load import META_SCHEMA, meta_frame, meta_row
from replicaflow.pipeline.session import (
    C1_ONLY,
    CODEGEN_CACHE,
    CODEGEN_CACHE_ENTRIES,
    CODEGEN_ID_IN_CLASS_NAME,
    DATAFRAME_DEBUGGING,
    JAVA_OPTIONS,
    PLAN_JVM_OPTIONS,
    PYSPARK_JVM_CLASSES,
    SHORT_RUN_ROWS,
    java_options,
)
from replicaflow.telemetry.spark import local_frame

ROOT = Path(__file__).resolve().parents[2]


def test_local_mode_lists_many_files_on_the_driver(spark, tmp_path):
    """Spark lists more than ``parallelPartitionDiscovery.threshold`` (32) paths with a job of one task
    per path; a local session lists them on the driver, so reading 600 log files starts no job
    before the first action (it took 1.5 s on 2 cores), and every line is still read."""
    files = []
    for k in range(40):
        path = tmp_path / f"server-{k}.log"
        path.write_text(f"line a {k}\nline b {k}\n")
        files.append(str(path))
    sc = spark.sparkContext
    sc.setJobGroup("listing-probe", "listing probe")
    try:
        df = spark.read.text(files)
        assert list(sc.statusTracker().getJobIdsForGroup("listing-probe")) == []
        assert df.count() == 80
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)


def test_python_call_sites_are_not_recorded(spark):
    """PySpark's DataFrame debugging sends the Python call site of every API call to the JVM (five round
    trips a call): off, as replicaflow words its own error messages."""
    assert spark.conf.get(DATAFRAME_DEBUGGING) == "false"


def test_generated_code_of_a_query_run_again_is_not_compiled_again(spark):
    """Spark's cache of compiled generated classes (``CodeGenerator.cache``, 100 entries by default) is
    sized past the ~400 classes one ``analyze`` compiles: after 150 other queries' classes, the first
    query's classes are still there, where with 100 entries it was compiled again."""
    compiled = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()

    def query(k: int) -> list:
        return spark.range(3).select((F.col("id") * 7 + k).alias(f"v{k}")).where(F.col(f"v{k}") > k).collect()

    before = compiled.getCount()
    assert [r[0] for r in query(0)] == [7, 14]
    assert compiled.getCount() > before  # the probe's own code is compiled the first time
    for k in range(1, 151):
        query(k)
    assert compiled.getCount() - before >= 150
    again = compiled.getCount()
    assert [r[0] for r in query(0)] == [7, 14]
    assert compiled.getCount() == again
    assert int(spark.conf.get(CODEGEN_CACHE)) == CODEGEN_CACHE_ENTRIES


def test_the_meta_table_is_a_local_relation_no_python_worker_reads(spark):
    """``load.meta_frame`` (via ``telemetry.spark.local_frame``): the per-cluster meta rows become a
    ``LocalRelation`` of the plan. ``createDataFrame`` of a Python list made an RDD that a Python worker
    unpickled each time a query scanned it — in every stage that joins the meta table — and the
    optimizer could not see its one row. The rows, types and nulls come through unchanged."""
    metas = [{"cluster": "a", "kafka_version": "3.7", "start_ms": 0, "end_ms": 60_000, "scrape_interval_ms": 30_000},
             {"cluster": "b", "kafka_version": "2.4", "start_ms": 5, "end_ms": 65_005, "scrape_interval_ms": 15_000}]
    meta = meta_frame(spark, metas)
    assert meta.schema == META_SCHEMA
    plan = meta._jdf.queryExecution().optimizedPlan()
    assert plan.getClass().getSimpleName() == "LocalRelation"
    assert sorted(tuple(r) for r in meta.collect()) == sorted(meta_row(m) for m in metas)
    none = local_frame(spark, [], META_SCHEMA)
    assert none.schema == META_SCHEMA and none.count() == 0


def test_a_warm_analyze_compiles_next_to_no_generated_class_again(spark, tmp_path):
    """The generated classes are named without their whole-stage codegen number
    (``spark.sql.codegen.useIdInClassName``): that number depends on the order in which concurrent
    queries are planned, so the same code under another number missed Spark's cache of compiled classes.
    With the number in the name the second and third analysis of one scenario compiled 51 and 32 classes;
    without, 6 and 2."""
    from replicaflow.pipeline.runner import analyze
    from replicaflow.sim.runner import simulate

    assert spark.conf.get(CODEGEN_ID_IN_CLASS_NAME) == "false"
    compiled = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
    simulate(ROOT / "scenarios" / "kip352-after.yaml", tmp_path / "tele")
    counts = []
    for k in range(2):
        before = compiled.getCount()
        analyze(tmp_path / "tele", tmp_path / f"out{k}", spark=spark)
        counts.append(compiled.getCount() - before)
    assert counts[1] <= 10, counts


def test_a_short_run_is_compiled_by_c1_alone(monkeypatch):
    """A JVM started for one analysis of fewer than ``SHORT_RUN_ROWS`` telemetry rows runs the C1 JIT alone
    (C2's compiling cost more CPU than its code saved below about 45 M rows on 2 cores); one that does not
    know its rows (the tests', the benchmark's, a notebook's session) keeps C2, and
    ``REPLICAFLOW_JAVA_OPTIONS`` comes last, so ``-XX:TieredStopAtLevel=4`` there wins."""
    monkeypatch.delenv("REPLICAFLOW_JAVA_OPTIONS", raising=False)
    assert java_options(rows=SHORT_RUN_ROWS - 1) == f"{JAVA_OPTIONS} {C1_ONLY}"
    assert java_options(rows=0) == f"{JAVA_OPTIONS} {C1_ONLY}"
    assert java_options(rows=SHORT_RUN_ROWS) == JAVA_OPTIONS
    assert java_options() == JAVA_OPTIONS
    assert java_options(python_tasks_only=True, rows=10 * SHORT_RUN_ROWS) == PLAN_JVM_OPTIONS
    monkeypatch.setenv("REPLICAFLOW_JAVA_OPTIONS", "-XX:TieredStopAtLevel=4")
    assert java_options(rows=5).split()[-2:] == [C1_ONLY, "-XX:TieredStopAtLevel=4"]


def test_pyspark_finds_the_jvm_classes_it_names_without_asking_the_jvm(spark, monkeypatch):
    """``session.remember_jvm_classes``: PySpark names ``functions``, ``PythonUtils``, ... through py4j's view
    of the JVM at each Column and DataFrame call, and a name the view lacks is a JVM round trip in which a
    short name misses a class load on every jar first (about 2,000 per ``analyze`` build). The view holds
    them, so building a query asks the JVM for none, and the columns still work."""
    import py4j.java_gateway as gateway

    asked: list[str] = []
    lookup = gateway.JVMView.__getattr__

    def counted(view, name):
        asked.append(name)
        return lookup(view, name)

    monkeypatch.setattr(gateway.JVMView, "__getattr__", counted)
    df = (spark.range(4).select((F.col("id") * 2).alias("x"), F.array(F.lit(1), F.col("id")).alias("a"))
          .where(F.expr("x > 1")).groupBy(F.col("x") % 2).agg(F.max("x").alias("m"), F.count(F.lit(1))))
    assert [tuple(r) for r in df.collect()] == [(0, 6, 3)]
    assert [name for name in asked if name in PYSPARK_JVM_CLASSES] == []
    assert all(name in vars(spark.sparkContext._jvm) for name in PYSPARK_JVM_CLASSES)
