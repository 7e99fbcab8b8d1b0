"""``runner.analyze`` leaves no JVM object of its own behind: py4j's proxies are each in a reference cycle
(``JavaObject._methods``), and until Python's cycle collector frees them the JVM keeps every query plan of the
analysis, with the broadcasts and shuffles Spark's cleaner would remove (docs/pipeline.md, "Memory")."""

from __future__ import annotations

import gc

from py4j.java_gateway import JavaObject

from replicaflow.pipeline.runner import analyze
from tests.pipeline.tele import Tele


def java_proxies() -> int:
    return sum(isinstance(o, JavaObject) for o in gc.get_objects())


def test_an_analysis_releases_the_jvm_objects_it_made(spark, tmp_path):
    """Python objects only: the plans themselves are the JVM's, freed by its collector once py4j tells the
    gateway that no proxy holds them (``py4j.java_gateway._garbage_collect_object``)."""
    t = Tele("memory", "3.7", end_ms=60_000)
    for broker in (1, 2, 3):
        t.broker(0, broker)
    t.partition(0, "a", 0, [1, 2, 3], 1, [1, 2, 3], epoch=0)
    t.add("isr", 10_000, topic="a", partition=0, isr=[1, 2], leader_epoch=0)
    root = t.write(tmp_path / "memory")
    analyze([root], tmp_path / "warm", spark=spark)  # the session's own proxies (configuration, caches) made once
    gc.collect()
    before = java_proxies()
    gc.disable()  # only analyze's own collection may free what it made
    try:
        summary = analyze([root], tmp_path / "out", spark=spark)
        after = java_proxies()
    finally:
        gc.enable()
    assert summary["memory"]["peak_urp"] == 1  # the analysis ran: one partition under-replicated from 10 s
    assert after - before < 20, f"{after - before} JVM object proxies outlived the analysis"
