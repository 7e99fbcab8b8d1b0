"""The SparkSession's settings that cost or save seconds before any row is read (pipeline/session.py)."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from replicaflow.errors import ReplicaflowError
from replicaflow.model.metrics import jmx
from replicaflow.pipeline.load import META_SCHEMA, meta_frame, meta_row
from replicaflow.pipeline.session import (
    C1_CODE_CACHE,
    C1_ONLY,
    CODEGEN_CACHE,
    CODEGEN_CACHE_ENTRIES,
    CODEGEN_ID_IN_CLASS_NAME,
    DATAFRAME_DEBUGGING,
    JAVA_OPTIONS,
    JVM_STOPPED,
    PLAN_JVM_OPTIONS,
    PYSPARK_JVM_CLASSES,
    SHORT_RUN_LOG_BYTES,
    SHORT_RUN_ROWS,
    check_master,
    java_options,
    java_reason,
    jvm_gone,
)
from replicaflow.telemetry.spark import local_frame
from tests.pipeline.tele import Tele


def compiled_classes(spark):
    """Spark's histogram of generated-code compilations: its count is the classes compiled so far."""
    return spark._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()


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
    compiled = compiled_classes(spark)

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


def test_metrics_a_cluster_from_logs_alone_cannot_know_are_not_written():
    """docs/real-cluster.md: from logs alone `replica_offsets` and `traffic` are unknown, so MaxLag,
    ReassignmentMaxLag and the byte meters are not in the meta row's metrics, and ``broker_metrics`` never
    builds their rows. Written as 0 they read "MaxLag: 0 throughout" in the report, were exported as 0 in
    metrics.om, and fired ReassignmentStalled on a move copying at its throttle."""
    from replicaflow.model.metrics import jmx, unknown_metrics

    six = {jmx(m) for m in ("MaxLag", "ReassignmentMaxLag", "ReplicationBytesInPerSec", "ReplicationBytesOutPerSec",
                            "ReassignmentBytesInPerSec", "ReassignmentBytesOutPerSec")}
    unknown = {"replica_offsets": "unknown", "traffic": "unknown", "isr": "logs"}
    assert unknown_metrics(unknown) == six
    assert unknown_metrics({"traffic": "unknown"}) == six - {jmx("MaxLag"), jmx("ReassignmentMaxLag")}
    assert unknown_metrics(None) == frozenset()
    meta = {"cluster": "a", "kafka_version": "3.7", "start_ms": 0, "end_ms": 60_000, "scrape_interval_ms": 30_000}
    every, logs = meta_row(meta)[-1], meta_row({**meta, "provenance": unknown})[-1]
    assert six <= set(every) and set(logs) == set(every) - six
    assert jmx("UnderReplicatedPartitions") in logs


def test_generated_classes_are_named_without_their_codegen_stage_number(spark):
    """``spark.sql.codegen.useIdInClassName`` off (``CollapseCodegenStages`` numbers the stages of a plan in
    the order it meets them; the number named the generated class). Two pipelines swapped under a union
    change numbers: without the number in the name their code is the same and comes from Spark's cache of
    compiled classes, with it each is compiled again. In ``analyze`` the numbers depend on the order in which
    the concurrent writes are planned: a warm run compiled 51 and then 32 classes again with the number."""
    compiled = compiled_classes(spark)

    def swapped(k: int) -> list[int]:
        """classes compiled by ``a ∪ b``, then by ``b ∪ a``: the two pipelines' stages swap numbers."""
        a = spark.range(50).select((F.col("id") * 13 + k).alias("v")).where(F.col("v") % 3 == 0).coalesce(1)
        b = spark.range(7).select((F.col("id") * 17 + 2 * k).alias("v")).where(F.col("v") % 5 == 1).coalesce(1)
        counts = []
        for df in (a.union(b), b.union(a)):
            before = compiled.getCount()
            assert sorted(r.v for r in df.collect()) == sorted(
                [v for v in (i * 13 + k for i in range(50)) if v % 3 == 0]
                + [v for v in (i * 17 + 2 * k for i in range(7)) if v % 5 == 1])
            counts.append(compiled.getCount() - before)
        return counts

    assert spark.conf.get(CODEGEN_ID_IN_CLASS_NAME) == "false"
    without_number = swapped(1_001)
    spark.conf.set(CODEGEN_ID_IN_CLASS_NAME, "true")
    try:
        with_number = swapped(1_002)  # other literals: none of this code is in the cache yet
    finally:
        spark.conf.set(CODEGEN_ID_IN_CLASS_NAME, "false")
    assert without_number[0] > 0 and without_number[1] == 0, without_number
    assert with_number[1] == with_number[0] > 0, with_number


def generated_code(df) -> list[str]:
    """The Java source of each whole-stage-codegen stage of ``df``'s plan, after the adaptive plan has run."""
    stages = df._jdf.queryExecution().debug().codegenToSeq()
    return [stages.apply(i)._2() for i in range(stages.size())]


def test_the_gauge_pairs_of_a_query_built_again_compile_nothing_again(spark, tmp_path):
    """``metrics.partition_gauge_deltas`` builds each replica's (broker, PartitionCount) pair with
    ``transform`` in SQL text. A Python lambda given to ``F.transform`` gets a variable named ``x_<n>`` from a
    counter of the JVM, and the name is written into the generated code (a comment beside the variable's
    reference), so each ``analyze`` in one session compiled that class again, under both of the class loaders
    that compile it in local mode. Spark's cache of compiled classes is keyed by the code's text: the stages
    that hold the lambda must be the same text when the query is built again. (Counting the JVM's compilations
    instead failed one CI run in many, 3 classes more the second time, and not once in 120 runs here: the
    count takes in whatever else the JVM compiles meanwhile and whichever stages adaptive execution runs.)"""
    from replicaflow.pipeline import metrics as M
    from replicaflow.pipeline import state as S
    from replicaflow.pipeline.load import read_telemetry

    t = Tele("pairs", "3.7", end_ms=60_000)
    for broker in (1, 2, 3):
        t.broker(0, broker)
    t.partition(0, "a", 0, [1, 2, 3], 1, [1, 2, 3], epoch=1)
    t.add("isr", 20_000, topic="a", partition=0, isr=[1, 2], leader_epoch=1)
    tele = read_telemetry(spark, [t.write(tmp_path / "pairs")])

    def deltas() -> tuple[list[tuple], list[str]]:
        state = S.partition_state(S.partition_events(tele.tables), tele.meta)
        df = M.partition_gauge_deltas(state, tele.meta)
        rows = sorted(tuple(r) for r in df.collect())
        return rows, [code for code in generated_code(df) if "lambdaValue" in code]

    first, first_code = deltas()
    assert ("pairs", 3, jmx("PartitionCount"), 0, 1) in first
    assert len(first_code) >= 1
    again, again_code = deltas()
    assert again == first
    assert again_code == first_code


def test_a_short_run_is_compiled_by_c1_alone(monkeypatch):
    """A JVM started for one analysis of fewer than ``SHORT_RUN_ROWS`` telemetry rows runs the C1 JIT alone
    (C2's compiling cost more CPU than its code saved below about 45 M rows on 2 cores); one that does not
    know its rows (the tests', the benchmark's, a notebook's session) keeps C2, and
    ``REPLICAFLOW_JAVA_OPTIONS`` comes last, so ``-XX:TieredStopAtLevel=4`` there wins."""
    monkeypatch.delenv("REPLICAFLOW_JAVA_OPTIONS", raising=False)
    assert java_options(rows=SHORT_RUN_ROWS - 1) == f"{JAVA_OPTIONS} {C1_ONLY} {C1_CODE_CACHE}"
    assert java_options(rows=0) == f"{JAVA_OPTIONS} {C1_ONLY} {C1_CODE_CACHE}"
    assert java_options(rows=SHORT_RUN_ROWS) == JAVA_OPTIONS
    assert java_options() == JAVA_OPTIONS
    assert java_options(python_tasks_only=True, rows=10 * SHORT_RUN_ROWS) == PLAN_JVM_OPTIONS
    monkeypatch.setenv("REPLICAFLOW_JAVA_OPTIONS", "-XX:TieredStopAtLevel=4")
    assert java_options(rows=5).split()[-3:] == [C1_ONLY, C1_CODE_CACHE, "-XX:TieredStopAtLevel=4"]


def test_a_short_read_of_broker_logs_is_compiled_by_c1_alone(monkeypatch):
    """The JVM parses broker logs itself (``analyze --logs``): below ``SHORT_RUN_LOG_BYTES`` of log text C1 alone
    (9 small files 59 s against 66 s, 38 MB a draw, 150 MB 103 s against 76 s with C2); logs of unknown size
    (remote, bzip2) keep C2, and so do many telemetry rows whatever the logs."""
    monkeypatch.delenv("REPLICAFLOW_JAVA_OPTIONS", raising=False)
    assert java_options(rows=0, log_bytes=SHORT_RUN_LOG_BYTES - 1) == f"{JAVA_OPTIONS} {C1_ONLY} {C1_CODE_CACHE}"
    assert java_options(rows=0, log_bytes=SHORT_RUN_LOG_BYTES) == JAVA_OPTIONS
    assert java_options(rows=0, log_bytes=None) == JAVA_OPTIONS
    assert java_options(rows=SHORT_RUN_ROWS, log_bytes=10) == JAVA_OPTIONS
    assert java_options(rows=None, log_bytes=10) == JAVA_OPTIONS


def test_pyspark_finds_the_jvm_classes_it_names_without_asking_the_jvm(spark, monkeypatch):
    """``session.remember_jvm_classes``: PySpark names ``functions``, ``PythonUtils``, ... through py4j's view
    of the JVM at each Column and DataFrame call, and a name the view lacks is a JVM round trip in which a
    short name misses a class load on every jar first (about 2,000 per ``analyze`` build). The view holds
    them, so building a query asks the JVM for none, and the columns still work. ``session.StaticMethodsKept``:
    each class asks what a static method's name is once (``functions.col`` at the first ``F.col``), not at
    every call (about 4,500 round trips in `analyze --logs` of a few small files)."""
    import py4j.java_gateway as gateway

    asked: list[str] = []
    members: list[str] = []
    lookup = gateway.JVMView.__getattr__
    member = gateway.JavaClass.__getattr__

    def counted(view, name):
        asked.append(name)
        return lookup(view, name)

    def member_counted(cls, name):
        members.append(f"{cls._fqn}.{name}")
        return member(cls, name)

    monkeypatch.setattr(gateway.JVMView, "__getattr__", counted)
    monkeypatch.setattr(gateway.JavaClass, "__getattr__", member_counted)

    def query():
        return (spark.range(4).select((F.col("id") * 2).alias("x"), F.array(F.lit(1), F.col("id")).alias("a"))
                .where(F.expr("x > 1")).groupBy(F.col("x") % 2).agg(F.max("x").alias("m"), F.count(F.lit(1))))
    assert [tuple(r) for r in query().collect()] == [(0, 6, 3)]
    assert [name for name in asked if name in PYSPARK_JVM_CLASSES] == []
    assert all(name in vars(spark.sparkContext._jvm) for name in PYSPARK_JVM_CLASSES)
    functions = [m for m in members if m.startswith("org.apache.spark.sql.functions.")]
    assert len(functions) == len(set(functions))
    members.clear()
    assert [tuple(r) for r in query().collect()] == [(0, 6, 3)]
    assert [m for m in members if m.startswith("org.apache.spark.sql.functions.")] == []


def test_a_local_master_spark_cannot_parse_is_one_sentence_before_the_jvm():
    """``local[N,F]`` passed the check whatever F was; Spark's ``toInt`` of F = 99999999999 then failed in the
    JVM, a Py4JJavaError traceback after it started."""
    assert [check_master(m) for m in ("local[2,3]", "local[*,4]", "local")] == ["local[2,3]", "local[*,4]", "local"]
    for master in ("local[2,99999999999]", "local[2,٣]"):
        with pytest.raises(ReplicaflowError, match=r"--master: (local\[N,F\] needs 0 to 2147483647 task failures F|"
                                                   r"expected local\[N\])"):
            check_master(master)


def test_every_error_of_a_call_to_a_dead_jvm_says_the_jvm_stopped_answering():
    """py4j's ``GatewayClient.send_command`` retries a call whose send failed (then the refused connection
    is a ConnectionError) but turns a socket that broke while it waited for the answer into the bare error
    answer, which ``protocol.get_return_value`` raises as 'An error occurred while calling o39.sc'. Which one
    a killed JVM gives is a race: CI once printed the bare message instead of the sentence."""
    from py4j import protocol

    with pytest.raises(protocol.Py4JError) as bare:
        protocol.get_return_value(protocol.ERROR, None, "o39", "sc")
    # a static method's call (pyspark.sql.functions.col, kept as a JavaMember by StaticMethodsKept) names `z:` and its
    # class: CI once printed 'An error occurred while calling z:org.apache.spark.sql.functions.col'
    with pytest.raises(protocol.Py4JError) as static:
        protocol.get_return_value(protocol.ERROR, None, "z:org.apache.spark.sql.functions", "col")
    refused, broken = ConnectionRefusedError(111, "Connection refused"), protocol.Py4JNetworkError("Answer from Java side is empty")
    assert [jvm_gone(e) for e in (bare.value, static.value, refused, broken)] == [True, True, True, True]
    assert {java_reason(e) for e in (bare.value, static.value, refused, broken)} == {JVM_STOPPED}
    with pytest.raises(protocol.Py4JError) as sent:  # an error the JVM sent carries its trace: the JVM is alive
        protocol.get_return_value("xspy4j.Py4JException: Method sc([]) does not exist", None, "o39", "sc")
    assert not jvm_gone(sent.value)
    assert java_reason(sent.value).startswith("'An error occurred while calling o39.sc. Trace:")
