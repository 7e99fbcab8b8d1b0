"""metrics.om: JMX exporter names, labels, counters, ordering, and values against the partition intervals."""

from __future__ import annotations

import pandas as pd

from replicaflow.model.metrics import BROKER_METRICS, jmx
from replicaflow.report.openmetrics import to_openmetrics
from tests.report.omparse import parse
from tests.report.tiny import T0, expected_broker_gauge


def test_families_types_and_order(built):
    text = (built[0] / "metrics.om").read_text()
    families, series = parse(text)
    names = [f for f, _ in families]
    assert len(names) == len(set(names))                      # one # TYPE per family
    kinds = dict(families)
    assert kinds["kafka_server_replicamanager_isrshrinks"] == "counter"
    assert kinds["kafka_server_replicamanager_underreplicatedpartitions"] == "gauge"
    assert kinds["kafka_cluster_partition_underminisr"] == "gauge"
    for (sample, _labels), points in series.items():
        fam = sample.removesuffix("_total")
        assert (kinds[fam] == "counter") == sample.endswith("_total")
        times = [t for t, _ in points]
        assert times == sorted(set(times))                    # strictly increasing within a series
    # samples of a family are contiguous and series are not interleaved
    order = [line.split("{")[0].removesuffix("_total") for line in text.splitlines() if not line.startswith("#")]
    assert [k for i, k in enumerate(order) if i == 0 or order[i - 1] != k] == names


def test_labels_as_the_jmx_exporter_writes_them(built):
    _, series = parse((built[0] / "metrics.om").read_text())
    failed = [lab for s, lab in series if s == "kafka_server_replicafetchermanager_failedpartitionscount"]
    assert failed and all(dict(lab)["clientId"] == "Replica" for lab in failed)
    urp = [lab for s, lab in series if s == "kafka_server_replicamanager_underreplicatedpartitions"]
    assert sorted((dict(lab)["cluster"], dict(lab)["broker"]) for lab in urp) == [
        ("alpha", "1"), ("alpha", "2"), ("alpha", "3"), ("alpha", "4"), ("beta", "1"), ("beta", "2")]
    assert {m.prometheus.removesuffix("_total") for m in BROKER_METRICS} >= {
        s.removesuffix("_total") for s, _ in series if s not in ("kafka_cluster_partition_underminisr", "up")}


def test_gauge_values_follow_the_partition_intervals(built):
    _, data = built
    _, series = parse((built[0] / "metrics.om").read_text())
    state = data["alpha"]["state"]
    for broker in (1, 2, 3):
        pts = dict(series[("kafka_server_replicamanager_underminisrpartitioncount",
                           (("cluster", "alpha"), ("broker", str(broker))))])
        assert pts == {t: float(expected_broker_gauge(state, t, broker, "under_min_isr")) for t in data["alpha"]["grid"]}
    # broker 4 is down at 250 s and 260 s: no sample, as Prometheus sees a failed scrape
    b4 = dict(series[("kafka_server_replicamanager_leadercount", (("cluster", "alpha"), ("broker", "4")))])
    assert T0 + 240_000 in b4 and T0 + 250_000 not in b4 and T0 + 260_000 not in b4 and T0 + 270_000 in b4


def test_partition_under_min_isr_on_the_scrape_grid(built):
    _, series = parse((built[0] / "metrics.om").read_text())
    part = {lab: pts for (s, lab), pts in series.items() if s == "kafka_cluster_partition_underminisr"}
    key = (("cluster", "alpha"), ("broker", "1"), ("topic", "orders"), ("partition", "0"))
    assert list(part) == [key]                                 # only orders-0 was ever under min ISR
    ones = [t for t, v in part[key] if v == 1.0]
    assert ones == list(range(T0 + 100_000, T0 + 150_000, 10_000))   # [100 s, 150 s): ties go to the new state


def test_counters_and_escaping_from_a_frame():
    bm = pd.DataFrame({"cluster": ['we"ird\\c'] * 2, "ts_ms": [1500, 2500], "broker": [1, 1],
                       "name": [jmx("IsrShrinksPerSec")] * 2, "value": [0.0, 2.0]})
    text = to_openmetrics(bm)
    assert text.splitlines() == [
        "# TYPE kafka_server_replicamanager_isrshrinks counter",
        "# HELP kafka_server_replicamanager_isrshrinks ISR shrinks committed by this broker as leader.",
        'kafka_server_replicamanager_isrshrinks_total{cluster="we\\"ird\\\\c",broker="1"} 0 1.500',
        'kafka_server_replicamanager_isrshrinks_total{cluster="we\\"ird\\\\c",broker="1"} 2 2.500',
        "# TYPE up gauge",
        "# HELP up 1 when the broker answered the scrape, 0 when it was down (replicaflow's scrape outcome per "
        "broker).",
        'up{cluster="we\\"ird\\\\c",broker="1"} 1 1.500',
        'up{cluster="we\\"ird\\\\c",broker="1"} 1 2.500',
        "# EOF"]


def test_up_is_zero_while_a_broker_is_down(built):
    _, series = parse((built[0] / "metrics.om").read_text())
    b4 = dict(series[("up", (("cluster", "alpha"), ("broker", "4")))])
    assert {t - T0: v for t, v in b4.items() if v == 0.0} == {250_000: 0.0, 260_000: 0.0}
    assert b4[T0 + 240_000] == 1.0 and b4[T0 + 270_000] == 1.0


def test_confluent_naming_and_hypothetical_help(built):
    from replicaflow.report.data import load_analysis

    a = load_analysis(built[0])
    text = to_openmetrics(a.tables["broker_metrics"], a.tables["partition_state"], a.meta,
                          {c: a.grid(c) for c in a.clusters}, naming="confluent")
    families, series = parse(text)
    kinds = dict(families)
    assert kinds["kafka_server_replicamanager_isrshrinkspersec"] == "unknown"          # keeps persec, no _total
    assert kinds["kafka_server_replicamanager_underreplicatedpartitions"] == "gauge"
    failed = [lab for s, lab in series if s == "kafka_server_replicafetchermanager_failedpartitionscount"]
    assert failed and all(dict(lab)["clientid"] == "Replica" for lab in failed)        # label names lower-cased
    assert not any(s.endswith("_total") for s, _ in series)
    lag = pd.DataFrame({"cluster": ["c"], "ts_ms": [0], "broker": [1], "name": [jmx("ReassignmentMaxLag")],
                        "value": [5.0]})
    assert ("# HELP kafka_server_replicamanager_reassignmentmaxlag Max over led reassigning partitions of HW minus "
            "an adding replica's LEO (§3.1). Hypothetical: replicaflow's own, never shipped in Apache Kafka."
            in to_openmetrics(lag).splitlines())


def test_keys_of_the_jmx_name_become_labels():
    """The JMX exporter turns the ObjectName's extra keys into labels: RequestMetrics' request and error."""
    from replicaflow.model.metrics import BY_SHORT
    from replicaflow.report.openmetrics import family_name, jmx_labels

    errors = BY_SHORT["ErrorsPerSec"]
    assert jmx_labels(errors) == (("request", "Produce"), ("error", "NOT_ENOUGH_REPLICAS"))
    assert family_name(errors) == "kafka_network_requestmetrics_errors"
    assert family_name(errors, "confluent") == "kafka_network_requestmetrics_errorspersec"
    assert jmx_labels(BY_SHORT["FailedPartitionsCount"], "confluent") == (("clientid", "Replica"),)
