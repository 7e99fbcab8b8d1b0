"""The §2 predicates give the same answers on NumPy arrays and on Spark Columns."""

import itertools

import numpy as np
import pytest
from pyspark.sql import functions as F

from replicaflow.model import predicates as P
from replicaflow.model.version import KafkaVersion

CASES = [  # n_replicas, n_adding, n_removing, n_isr, min_isr
    (r, a, rm, i, m)
    for r, a, rm, i, m in itertools.product([1, 2, 3, 4, 6], [0, 1, 3], [0, 1], [0, 1, 2, 3, 4], [1, 2, 3])
    if a < r and i <= r and rm <= r - a
]


def _numpy_flags(version):
    r, a, rm, i, m = (np.array(col) for col in zip(*CASES, strict=True))
    capped = version.min_isr_capped
    return {
        "urp": P.under_replicated(version, r, a, i), "urp_legacy": P.urp_legacy(r, i),
        "urp_kip352": P.urp_kip352(r, a, i), "under_min_isr": P.under_min_isr(i, m, r, capped),
        "at_min_isr": P.at_min_isr(i, m, r, capped), "reassigning": P.reassigning(a, rm),
    }


@pytest.mark.spark
@pytest.mark.parametrize("version", ["2.4", "3.6", "3.7"])
def test_same_function_on_numpy_and_spark(spark, version):
    v = KafkaVersion.parse(version)
    df = spark.createDataFrame(CASES, "r int, a int, rm int, i int, m int")
    r, a, rm, i, m = (F.col(c) for c in ["r", "a", "rm", "i", "m"])
    capped = v.min_isr_capped
    rows = df.select(
        P.under_replicated(v, r, a, i).alias("urp"), P.urp_legacy(r, i).alias("urp_legacy"),
        P.urp_kip352(r, a, i).alias("urp_kip352"), P.under_min_isr(i, m, r, capped).alias("under_min_isr"),
        P.at_min_isr(i, m, r, capped).alias("at_min_isr"), P.reassigning(a, rm).alias("reassigning"),
    ).collect()
    expected = _numpy_flags(v)
    for name, values in expected.items():
        assert [row[name] for row in rows] == [bool(x) for x in values], name
    assert sum(expected["under_min_isr"]) > 0 and sum(expected["at_min_isr"]) > 0


@pytest.mark.spark
def test_reassignment_state_same_on_lists_and_columns(spark):
    pairs = [([1, 2, 3], [1, 2, 4]), ([1, 2, 3], [4, 5, 6]), ([2, 3, 4], [1, 2, 3]), ([1, 2, 3], [3, 2, 1])]
    df = spark.createDataFrame(pairs, "origin array<int>, target array<int>")
    replicas, adding, removing = P.reassignment_state_columns(F.col("origin"), F.col("target"))
    got = df.select(replicas.alias("r"), adding.alias("a"), removing.alias("rm")).collect()
    for (origin, target), row in zip(pairs, got, strict=True):
        assert (row["r"], row["a"], row["rm"]) == P.reassignment_state(origin, target)
    assert P.reassignment_state([1, 2, 3], [1, 2, 4]) == ([1, 2, 4, 3], [4], [3])
