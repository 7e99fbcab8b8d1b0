"""Bad input in any of Kafka's formats is one sentence and a non-zero exit, before any simulation or Spark."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from replicaflow.cli import app
from replicaflow.errors import ReplicaflowError
from tests.plan.kafka_files import describe, log_dirs

RR = [[(p + k) % 4 + 1 for k in range(3)] for p in range(8)]
runner = CliRunner()


def _plan(tmp_path, text: str) -> list[str]:
    (tmp_path / "plan.json").write_text(text, encoding="utf-8")
    describe(tmp_path / "describe.txt", {"orders": RR})
    log_dirs(tmp_path / "logdirs.json", {"orders": RR}, 1000)
    return ["plan", "--reassignment", str(tmp_path / "plan.json"), "--topics", str(tmp_path / "describe.txt"),
            "--log-dirs", str(tmp_path / "logdirs.json"), "--master", "nonsense://x"]


def _moves(*moves) -> str:
    return json.dumps({"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in moves]})


@pytest.mark.parametrize(("plan_text", "sentence"), [
    (_moves(("orders", 0, [1, 2, 9])), "partitions[0].replicas: unknown broker 9 (brokers: 1,2,3,4); a broker that "
     "holds no replica yet is not in the describe output: list the cluster's brokers with --brokers"),
    (_moves(("orders", 8, [1, 2, 3])), "partitions[0]: partition orders-8 is not in the cluster's describe output"),
    (_moves(("payments", 0, [1, 2, 3])), "partition payments-0 is not in the cluster's describe output"),
    ('{"version": 1, "partitions": [', "plan.json:1: invalid JSON (Expecting value)"),
    # Kafka's tool would keep the last replicas silently (Jackson's default); one of the two lists is a mistake
    ('{"version": 1, "partitions": [\n {"topic": "orders", "partition": 0, "replicas": [1, 2, 3],\n'
     '  "replicas": [2, 3, 4]}]}',
     "plan.json:2: invalid JSON (the object starting on this line has the key 'replicas' twice; give each key once)"),
    (_moves(("orders", 1, [2, 3, 4]), ("orders", 1, [2, 3, 1])), "partitions[1]: partition orders-1 is listed twice"),
    (_moves(("orders", 1, [2, 2, 4])), "partitions[0].replicas: broker listed twice"),
    (json.dumps({"version": 2, "partitions": []}), "version: expected 1, found 2"),
    (json.dumps({"version": 1.0, "partitions": []}), "version: expected 1, found 1.0"),
    # a found value is bounded in the sentence: these were the whole 300,000-character value
    (json.dumps({"version": "v" * 300_000, "partitions": []}), "version: expected 1, found 'vvv"),
    (json.dumps({"partitions": [{"topic": "orders", "partition": 0, "replicas": [2, 3, 4], "log_dirs": [0] * 100_000}]}),
     "partitions[0].log_dirs: expected a list of directories or \"any\", one per replica, found [0, 0"),
    (json.dumps({"partitions": [{"topic": "orders", "partition": 0, "replicas": [2, 3, 4], "log_dirs": ["any"]}]}),
     "partitions[0].log_dirs: expected one directory per replica (3), found 1"),
    (json.dumps({"partitions": [{"topic": "orders", "partition": 0, "replicas": [2, 3, 4], "log_dirs": "any"}]}),
     "partitions[0].log_dirs: expected a list of directories or \"any\", one per replica, found 'any'"),
    # the tool's printed output pasted whole (ReassignPartitionsCommand.generateAssignment, executeAssignment)
    ("Current partition replica assignment\n" + _moves(("orders", 0, [1, 2, 3])) + "\n\n"
     "Proposed partition reassignment configuration\n" + _moves(("orders", 0, [2, 3, 4])) + "\n",
     "plan.json:4: expected the reassignment JSON, found the printed output of kafka-reassign-partitions --generate; "
     "save only the JSON line under 'Proposed partition reassignment configuration'"),
    ("Current partition replica assignment\n\n" + _moves(("orders", 0, [1, 2, 3])) + "\n\nSave this to use as the "
     "--reassignment-json-file option during rollback\nSuccessfully started partition reassignment for orders-0\n",
     "plan.json:1: expected the reassignment JSON, found the printed output of kafka-reassign-partitions ('Current "
     "partition replica assignment': the JSON to roll back with); give the JSON to apply"),
    # Python converts at most 4,300 digits to an int; json let that ValueError out as a traceback
    ('{"version": 1, "partitions": [\n {"topic": "orders", "partition": 0, "replicas": [2, 3, 4' + "0" * 5000 + "]}]}",
     "plan.json:2: invalid JSON (a number of 5,001 digits; at most 4,300)"),
])
def test_bad_plan_is_one_sentence_before_any_work(tmp_path, plan_text, sentence):
    """The --master given is not even a Spark URL: the input sentence comes first, so nothing started."""
    result = runner.invoke(app, _plan(tmp_path, plan_text))
    assert result.exit_code == 2
    assert sentence in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert len(result.output) < 1000, len(result.output)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_read(tmp_path, codec):
    """UTF-8 reads ASCII in UTF-16 without a BOM as text with a NUL between characters ("Expecting property name"
    at line 1 before): it is read as UTF-16, as the log reader reads it (textfile.read_text). The first sentence
    is then the --master one: every input passed."""
    argv = _plan(tmp_path, "")
    (tmp_path / "plan.json").write_bytes(_moves(("orders", 0, [2, 3, 4])).encode(codec))
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and result.output.startswith("error: --master: "), result.output


def test_log_dirs_naming_an_unknown_partition(tmp_path):
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    log_dirs(tmp_path / "logdirs.json", {"orders": RR + [[1, 2, 3]]}, 1000)
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and "partition orders-8 on broker 1 is not in" in result.output


def test_log_dirs_of_topics_the_describe_leaves_out_are_skipped(tmp_path):
    """kafka-log-dirs --describe lists every topic of the brokers unless given --topic-list, while the describe is
    often of the topics to move (kafka-topics --describe --topic orders): 'payments', on brokers 1-5, was refused
    ("partition payments-0 on broker 1 is not in describe.txt"). Its sizes are not needed; the plan goes on
    (here to the --master sentence, the first check after the inputs). A partition of a described topic that the
    describe lacks is still refused (above)."""
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    log_dirs(tmp_path / "logdirs.json", {"orders": RR, "payments": [[1, 5], [5, 2]]}, 1000)
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and result.output.startswith("error: --master: "), result.output


def test_bad_flags(tmp_path):
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    for extra, sentence in ((["--throttle", "fast"], "--throttle: expected a rate like '5MB/s'"),
                            (["--produce-rate", "nope=1MB/s"], "--produce-rate: topic 'nope' is not in the cluster"),
                            (["--deadline", "soon"], "--deadline:"),
                            (["--max-moves-per-broker", "0"], "--max-moves-per-broker: expected at least 1")):
        result = runner.invoke(app, argv + extra)
        assert result.exit_code == 2 and sentence in result.output, result.output


def test_every_rate_flag_takes_bytes_per_second_as_kafka_gives_them(tmp_path):
    """--throttle and --network took a bare number of bytes/s (kafka-reassign-partitions --throttle 50000000);
    --produce-rate, whose figure comes from the BytesInPerSec meter in bytes/s, refused 'orders=3000000'."""
    from replicaflow.jobs.plan import prepare
    from tests.plan.kafka_files import args

    a = args(tmp_path, {"orders": [[1, 2, 3], [2, 3, 4]]}, {("orders", 0): [2, 3, 4]}, 1000,
             produce_rate=["orders=3000000"], throttle=["50000000", "20MB/s"], network="125000000")
    prep = prepare(a)
    assert prep.cluster.rate_bps == {"orders": 3e6} and prep.cluster.network_bps == 125e6
    assert sorted(prep.throttles) == [20e6, 50e6]
    result = runner.invoke(app, _plan(tmp_path, _moves(("orders", 0, [2, 3, 4]))) + ["--produce-rate", "orders=3e6"])
    assert result.exit_code == 2 and "--produce-rate orders: expected a rate like '5MB/s', found '3e6'" in result.output


def test_a_release_without_replication_throttles_is_refused_before_any_candidate(tmp_path):
    """``--throttle`` and the throttled-replica configs came with KIP-73 in 0.10.1
    (``ReassignPartitionsCommand.throttleOpt``; ``KafkaVersion.replication_throttles``): on 0.10.0 every
    candidate ran with a throttle the brokers do not have and the answer recommended one."""
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    for version in ("0.10.0", "0.9", "0.8.2"):
        result = runner.invoke(app, [*argv, "--version", version])
        assert result.exit_code == 2, result.output
        assert "--version: plan compares replication throttles, which Kafka has from 0.10.1" in result.output
    result = runner.invoke(app, [*argv, "--version", "0.10.1", "--master", "nonsense://x"])
    assert "--master: expected" in result.output  # the inputs passed


def test_metrics_file_rates(tmp_path):
    """Produce rates from Prometheus text: two samples of the counter per broker give the topic's rate."""
    from replicaflow.plan.inputs import metrics_rates

    om = tmp_path / "m.prom"
    om.write_text("# TYPE kafka_server_brokertopicmetrics_bytesin_total counter\n"
                  'kafka_server_brokertopicmetrics_bytesin_total{broker="1",topic="orders"} 1000000 1000\n'
                  'kafka_server_brokertopicmetrics_bytesin_total{broker="1",topic="orders"} 21000000 11000\n'
                  'kafka_server_brokertopicmetrics_bytesin_total{broker="2",topic="orders"} 0 1000\n'
                  'kafka_server_brokertopicmetrics_bytesin_total{broker="2",topic="orders"} 10000000 11000\n',
                  encoding="utf-8")
    assert metrics_rates(om, {"orders"}) == pytest.approx({"orders": 3e6})


def test_one_brokers_rate_under_two_names_counts_once(tmp_path):
    """An exporter that writes BytesInPerSec as the counter and as rate gauges beside it gives one broker's
    rate three times: summed, the topic's produce rate came out three times too high. One series (its labels)
    is one rate: the counter's where there is one, else its latest gauge's; other brokers still add up."""
    from replicaflow.plan.inputs import metrics_rates

    om = tmp_path / "m.prom"

    def samples(*rows: tuple[str, int, float, int]) -> str:  # (name suffix, broker, value, timestamp in ms)
        return "".join(f'kafka_server_brokertopicmetrics_bytesin{suffix}{{broker="{b}",topic="orders"}} {v:g} {ts}\n'
                       for suffix, b, v, ts in rows)

    om.write_text(samples(("_total", 1, 1e6, 1000), ("_total", 1, 21e6, 11000), ("_rate", 1, 1.9e6, 11000),
                          ("persec", 1, 1.8e6, 11000), ("persec", 1, 20.8e6, 21000), ("_rate", 2, 5e5, 11000),
                          ("", 2, 7e5, 12000)), encoding="utf-8")
    assert metrics_rates(om, {"orders"}) == pytest.approx({"orders": 2e6 + 7e5})
    # a counter scraped once, or reset by a restart, gives no rate: that series' other counter or gauge does
    om.write_text(samples(("_total", 1, 1e6, 1000), ("_rate", 1, 1.9e6, 1000), ("_total", 2, 900, 1000),
                          ("_total", 2, 100, 2000), ("persec", 2, 9e5, 2000), ("persec", 2, 14e5, 3000),
                          ("_total", 3, 5, 1000), ("persec", 3, 5e5, 2000), ("_rate", 3, 3e5, 2000)), encoding="utf-8")
    assert metrics_rates(om, {"orders"}) == pytest.approx({"orders": 1.9e6 + 5e5 + 3e5})


def test_confluents_bytesinpersec_is_the_meters_count(tmp_path):
    """confluentinc/jmx-monitoring-stacks (kafka_broker.yml) exports BytesInPerSec{topic}'s Count as
    ``kafka_server_brokertopicmetrics_bytesinpersec``, untyped: bytes since the broker started. Read as a rate,
    812GB of them made `plan` say that broker 1's produce alone filled its 125MB/s NIC; 240MB in 60 s is 4MB/s."""
    from replicaflow.plan.inputs import metrics_rates

    om = tmp_path / "m.prom"
    om.write_text("# TYPE kafka_server_brokertopicmetrics_bytesinpersec untyped\n"
                  'kafka_server_brokertopicmetrics_bytesinpersec{topic="orders"} 812000000000 1700000000000\n'
                  'kafka_server_brokertopicmetrics_bytesinpersec{topic="orders"} 812240000000 1700000060000\n',
                  encoding="utf-8")
    assert metrics_rates(om, {"orders"}) == pytest.approx({"orders": 4e6})
    om.write_text('kafka_server_brokertopicmetrics_bytesinpersec{topic="orders"} 812000000000 1700000000000\n',
                  encoding="utf-8")
    with pytest.raises(ReplicaflowError, match="bytesinpersec.* needs two samples with timestamps to give a rate "
                                               r"\(…persec is the BytesInPerSec meter's Count"):
        metrics_rates(om, {"orders"})


def test_plan_help_explains_every_option():
    """`plan --help` gives every option a sentence, and names the rack, seed and quota-mode choices."""
    import typer.main

    command = typer.main.get_command(app).commands["plan"]
    options = [p for p in command.params if p.name != "help"]
    assert len(options) >= 20 and all(len(p.help or "") > 15 for p in options)
    out = runner.invoke(app, ["plan", "--help"], env={"COLUMNS": "200"}).output
    for flag in ("--racks", "--seed", "--disable-rack-aware", "--kip542", "--generate", "--max-moves-per-broker"):
        assert flag in out
    assert "Kafka draws at random" in out and "both" in out and "Gantt" in out


M = "kafka_server_brokertopicmetrics_bytesin"


@pytest.mark.parametrize(("text", "sentence"), [
    (f'{M}_total{{topic="orders"}} NaN 1000\n{M}_total{{topic="orders"}} 200 1010\n',
     "m.om: kafka_server_brokertopicmetrics_bytesin_total{topic='orders'}: expected a finite non-negative number"),
    (f'{M}_rate{{topic="orders"}} +Inf\n', "bytesin_rate{topic='orders'}: expected a finite non-negative number"),
    (f'{M}_rate{{topic="orders"}} -5\n', "found -5"),
    (f'{M}_total{{broker="1",topic="orders"}} 500 1000\n{M}_total{{broker="1",topic="orders"}} 200 1010\n',
     "bytesin_total{broker='1',topic='orders'} went down from 500 to 200 (a broker restart resets the counter)"),
    ('# HELP x a metric\nx 1\nthis is not a sample\n', "m.om:3: not a sample line of Prometheus text, found "
                                                       "'this is not a sample'"),
    # prometheus-client's Prometheus parser read the exemplar's value 1.0 as the timestamp (1 ms): 11.8 B/s
    (f'{M}_total{{topic="orders"}} 500 1000 # {{trace_id="a"}} 1.0\n{M}_total{{topic="orders"}} 900 2000\n',
     "m.om:1: expected NAME{LABELS} VALUE [TIMESTAMP] (an exemplar needs OpenMetrics text, ending with # EOF)"),
    (f'{M}_total{{topic="orders"}} 500 1\n\n{M}_total{{topic="orders"}} 900 2\n# EOF\n',
     "m.om:2: not a sample line of OpenMetrics text, found ''"),
    # prometheus-client compared the two timestamps (an integer and an exponent) and raised AttributeError
    (f'{M}persec{{topic="orders"}} 1 -1\n{M}persec{{topic="orders"}} 1 1e30\n# EOF\n',
     "m.om: not OpenMetrics text that prometheus-client's parser reads"),
    # two finite gauges summed to an infinite rate, which the planner took (--produce-rate refuses it)
    (f'{M}_rate{{broker="1",topic="orders"}} 1e308\n{M}_rate{{broker="2",topic="orders"}} 1e308\n',
     "m.om: topic 'orders': expected a rate that fits in 64 bits, found 'inf'"),
    (f'{M}_total{{topic="orders"}} 0 1000\n{M}_total{{topic="orders"}} 1e300 2000\n',
     "m.om: topic 'orders': expected a rate that fits in 64 bits, found '1e+300'"),
])
def test_bad_metrics_file_is_one_sentence_naming_the_series_or_line(tmp_path, text, sentence):
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    (tmp_path / "m.om").write_text(text, encoding="utf-8")
    result = runner.invoke(app, [*argv, "--metrics", str(tmp_path / "m.om")])
    assert result.exit_code == 2 and sentence in result.output, result.output
    assert "Traceback" not in result.output


def test_openmetrics_timestamps_are_seconds(tmp_path):
    """A text ending in # EOF is OpenMetrics: read as Prometheus text (milliseconds) its rate was 1000 times too
    high. Its exemplars are kept apart from the timestamp."""
    from replicaflow.plan.inputs import metrics_rates

    om = tmp_path / "m.om"
    om.write_text(f'# TYPE {M} counter\n{M}_total{{broker="1",topic="orders"}} 1000000 1700000000.5 '
                  f'# {{trace_id="a"}} 1.0\n{M}_total{{broker="1",topic="orders"}} 21000000 1700000010.5\n# EOF\n\n',
                  encoding="utf-8")
    assert metrics_rates(om, {"orders"}) == pytest.approx({"orders": 2e6})


def test_metrics_samples_that_are_not_rates_are_skipped_and_a_gauge_counts_once(tmp_path):
    """A histogram's _count/_sum, a counter's _created and a gauge scraped twice do not add to the rate."""
    from replicaflow.plan.inputs import metrics_rates

    om = tmp_path / "m.om"
    om.write_text(f'{M}_rate{{broker="1",topic="orders"}} 5 1000\n{M}_rate{{broker="1",topic="orders"}} 7 2000\n'
                  f'{M}_rate{{broker="2",topic="orders"}} 1\n{M}_created{{topic="orders"}} 1700000000\n'
                  f'{M}_count{{topic="orders"}} 99\n{M}_sum{{topic="orders"}} 99\n', encoding="utf-8")
    assert metrics_rates(om, {"orders"}) == {"orders": 8.0}


@pytest.mark.parametrize(("extra", "sentence"), [
    (["--deadline", "0s"], "--deadline: expected a positive duration like '2h', found '0s'"),
    (["--version", "9.9"], "--version: supported releases are 0.8 to 4.x, found '9.9'"),
    # a bug fix its line never had (3.7 ended with 3.7.2): planned on as 3.7.99 with exit 0
    (["--version", "3.7.99"], "--version: Kafka 3.7's releases were 3.7.0, 3.7.1 and 3.7.2, found '3.7.99', which "
                              "was never released"),
    # releases without KIP-73: each candidate simulated a throttle that --execute cannot set there, and the plan
    # recommended one with its `--throttle` command
    (["--version", "0.10.0"], "--version: plan compares replication throttles, which Kafka has from 0.10.1 "
                              "(kafka-reassign-partitions --throttle, KIP-73); this cluster runs 0.10"),
    (["--produce-rate", "orders=1MB/s", "--produce-rate", "orders=2MB/s"], "--produce-rate: topic 'orders' is given "
                                                                          "twice"),
    (["--remove-brokers", "1"], "--remove-brokers: only with --generate"),
    (["--racks", "1:a,2:b,3:c,4:d"], "--racks: only with --generate (racks change where it places replicas"),
    (["--racks", "1:a\nb,2:b,3:c,4:d"], "--racks: expected BROKER:RACK pairs like 1:a,2:b, found '1:a\\nb'"),
    (["--racks", "1: ,2:b"], "--racks: expected BROKER:RACK pairs like 1:a,2:b, found '1: '"),
    # str.isdigit takes '²' and int() refuses it, or more than 4,300 digits: both were tracebacks
    (["--racks", "²:a,2:b"], "--racks: expected BROKER:RACK pairs like 1:a,2:b, found '²:a'"),
    (["--racks", "9" * 5000 + ":a"], "--racks: expected BROKER:RACK pairs like 1:a,2:b, found '999"),
    # both were found inside the first Spark job, after the JVM started (here: after --master was refused)
    (["--produce-rate", "orders=200MB/s"], "has no network headroom: its produce and replication traffic already "
                                           "fill its 125MB/s NIC"),
    (["--produce-rate", "orders=1000000TB/s", "--network", "9000000TB/s"],
     "the cluster to plan on: topic 'orders': expected a log that fits Kafka's 64-bit offsets"),
])
def test_flags_that_were_taken_silently(tmp_path, extra, sentence):
    result = runner.invoke(app, _plan(tmp_path, _moves(("orders", 0, [2, 3, 4]))) + extra)
    assert result.exit_code == 2 and sentence in result.output, result.output


@pytest.mark.parametrize(("extra", "sentence"), [
    (["--remove-brokers", "1,2,3,4"], "--remove-brokers: topic orders has replication factor 3 but only 0 brokers"),
    (["--brokers", "-1,2,3"], "--brokers: expected broker ids like 1,2,4 (each 0 to 2147483647"),
    (["--brokers", ""], "--brokers: expected broker ids like 1,2,4, found none"),
    (["--remove-brokers", " "], "--remove-brokers: expected broker ids like 1,2,4, found none"),
    (["--brokers", "9999999999,2,3"], "--brokers: expected broker ids like 1,2,4 (each 0 to 2147483647"),
    (["--brokers", "1,2," + "9" * 5000], "--brokers: expected broker ids like 1,2,4 (each 0 to 2147483647"),
    (["--remove-brokers", "1,,2"], "--remove-brokers: expected broker ids like 1,2,4 (each 0 to 2147483647"),
])
def test_generate_names_the_flag_given(tmp_path, extra, sentence):
    argv = [a for a in _plan(tmp_path, "{}") if a not in ("--reassignment", str(tmp_path / "plan.json"))]
    result = runner.invoke(app, [*argv, "--generate", *extra])
    assert result.exit_code == 2 and sentence in result.output, result.output


def test_a_moved_partition_missing_from_log_dirs_is_not_taken_as_empty(tmp_path):
    """kafka-log-dirs run over some brokers or topics only: the plan must not move that partition as 0 bytes."""
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    text = (tmp_path / "logdirs.json").read_text()
    doc = json.loads(text.splitlines()[2])
    for b in doc["brokers"]:
        for d in b["logDirs"]:
            d["partitions"] = [p for p in d["partitions"] if p["partition"] != "orders-0"]
    (tmp_path / "logdirs.json").write_text("\n".join([*text.splitlines()[:2], json.dumps(doc)]) + "\n")
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert "logdirs.json: no online replica of orders-0, which the plan moves; its size is unknown" in result.output


def test_log_dirs_of_a_broker_the_describe_does_not_know(tmp_path):
    """kafka-log-dirs answers for the brokers it asks: a document naming broker 99 of a cluster whose describe
    has brokers 1 to 4 comes from another cluster (or a broker left out of --brokers). Its logs were dropped as
    strays, and the refusal that followed blamed the partition: 'no online replica of orders-0'."""
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    lines = (tmp_path / "logdirs.json").read_text().splitlines()
    doc = json.loads(lines[2])
    doc["brokers"] = [{"broker": 99, "logDirs": [{"logDir": "/d", "error": None, "partitions": [
        {"partition": "orders-0", "size": 1000, "offsetLag": 0, "isFuture": False}]}]}]
    (tmp_path / "logdirs.json").write_text("\n".join([*lines[:2], json.dumps(doc)]) + "\n")
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert (f"{tmp_path / 'logdirs.json'}: broker 99 of the log-dirs output holds orders-0 but is no broker of "
            f"{tmp_path / 'describe.txt'}, whose replicas are on brokers 1,2,3,4; was it taken on another cluster?"
            ) in result.output.replace("\n", ""), result.output


def test_a_log_left_on_a_broker_that_is_no_replica_is_not_the_partition_size(tmp_path):
    """kafka-log-dirs lists every log on disk: one left behind (offsetLag -1) is not what a new replica copies."""
    from replicaflow.plan.inputs import cluster_from_describe

    _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))  # orders-0 lives on brokers 1, 2, 3
    lines = (tmp_path / "logdirs.json").read_text().splitlines()
    doc = json.loads(lines[2])
    doc["brokers"][3]["logDirs"][0]["partitions"].append(
        {"partition": "orders-0", "size": 10**12, "offsetLag": -1, "isFuture": False})
    (tmp_path / "logdirs.json").write_text("\n".join([*lines[:2], json.dumps(doc)]) + "\n")
    model = cluster_from_describe(tmp_path / "describe.txt", tmp_path / "logdirs.json", None)
    assert model.size_bytes["orders", 0] == 1000


def test_inputs_ignored_with_a_scenario_cluster_are_refused(tmp_path):
    (tmp_path / "c.yaml").write_text("name: c\nduration: 1m\nkafka: {version: '3.7'}\ncluster: {brokers: 4}\n"
                                     "topics: [{name: orders, partitions: 2, replication_factor: 3}]\n")
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    argv[argv.index("--topics"):argv.index("--topics") + 2] = ["--cluster", str(tmp_path / "c.yaml")]
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and "--log-dirs: only with --topics" in result.output, result.output
    argv[argv.index("--log-dirs"):argv.index("--log-dirs") + 2] = ["--brokers", "1,2"]
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and "--brokers: with --cluster, only with --generate" in result.output, result.output
    del argv[argv.index("--brokers"):argv.index("--brokers") + 2]
    (tmp_path / "c.yaml").write_text((tmp_path / "c.yaml").read_text().replace("'3.7'", "'0.9'"))
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and "c.yaml: kafka.version: plan compares replication throttles, which Kafka has " \
                                     "from 0.10.1" in result.output, result.output


def test_a_describe_taken_during_a_reassignment_is_refused(tmp_path):
    """Replicas then hold the old and the new set together: the planner would take the targets as present."""
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    text = (tmp_path / "describe.txt").read_text().splitlines()
    text[3] = text[3].replace("Replicas: 3,4,1\tIsr: 3,4,1", "Replicas: 3,4,1,2\tIsr: 3,4,1\tAdding Replicas: 2\t"
                                                                "Removing Replicas: 1")
    (tmp_path / "describe.txt").write_text("\n".join(text) + "\n")
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert "describe.txt:4: partition orders-2 is being reassigned (Adding/Removing Replicas)" in result.output


@pytest.mark.parametrize("leader", ["none", "-1"])
def test_a_moved_partition_without_a_leader_is_refused(tmp_path, leader):
    """It was simulated as led by its first replica and 'finished'; in Kafka its new replicas wait for a leader.
    An offline partition the plan does not move is no reason to refuse."""
    argv = _plan(tmp_path, _moves(("orders", 2, [2, 3, 4])))
    text = (tmp_path / "describe.txt").read_text()
    (tmp_path / "describe.txt").write_text(text.replace("Partition: 2\tLeader: 3", f"Partition: 2\tLeader: {leader}"))
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert ("describe.txt:4: partition orders-2, which the plan moves, has no leader (offline): its new replicas "
            "have nothing to copy from until one is elected") in result.output
    (tmp_path / "plan.json").write_text(_moves(("orders", 0, [2, 3, 4])))
    result = runner.invoke(app, argv)
    assert "--master: expected local[N]" in result.output, result.output


def test_a_topic_whose_partitions_differ_in_replica_count_is_one_sentence(tmp_path):
    """Kafka allows it (a reassignment may change one partition's replicas); the candidates' scenario has one
    replication factor per topic, and the refusal was 8 lines of '<plan>: topic 'orders'.assignment[N]: expected 2
    replicas', blaming every partition but the odd one."""
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    describe(tmp_path / "describe.txt", {"orders": [[1, 2], *RR[1:]]})
    log_dirs(tmp_path / "logdirs.json", {"orders": [[1, 2], *RR[1:]]}, 1000)
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert ("describe.txt:3: partition orders-1 has 3 replicas where orders-0 has 2; plan needs one replication "
            "factor for all partitions of a topic") in result.output


@pytest.mark.parametrize(("size", "sentence"), [
    (60 * 10**12, "orders-0: 60TB to copy takes at least 33d2h44m at the 21MB/s one partition fetches "
                  "(replica.fetch.max.bytes per round trip); the planner simulates at most 30 days"),
    (2**62, "orders-0: 4611686TB to copy takes at least"),
])
def test_a_move_beyond_the_planners_horizon_is_refused_before_spark(tmp_path, size, sentence):
    """Each candidate ran its whole 30 simulated days to report such a move unfinished: over 10 minutes for one
    candidate of a 2^62-byte partition, ten candidates a plan."""
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    log_dirs(tmp_path / "logdirs.json", {"orders": RR}, size)
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and sentence in result.output, result.output


def test_a_broker_receiving_more_than_its_nic_carries_in_30_days_is_refused(tmp_path):
    """Each partition within one partition's fetch cap over 30 days (54TB), the eight together beyond what
    broker 5's 125MB/s NIC takes in (324TB)."""
    describe(tmp_path / "describe.txt", {"orders": RR})
    log_dirs(tmp_path / "logdirs.json", {"orders": RR}, 50 * 10**12)
    moves = [("orders", p, [5, *replicas[1:]]) for p, replicas in enumerate(RR)]
    (tmp_path / "plan.json").write_text(_moves(*moves))
    result = runner.invoke(app, ["plan", "--reassignment", str(tmp_path / "plan.json"), "--topics",
                                 str(tmp_path / "describe.txt"), "--log-dirs", str(tmp_path / "logdirs.json"),
                                 "--brokers", "1,2,3,4,5", "--master", "nonsense://x"])
    assert result.exit_code == 2, result.output
    assert ("broker 5: 400TB to receive takes at least 37d53m at its 125MB/s NIC; the planner simulates at most 30 "
            "days") in result.output


def test_a_scenario_event_the_engine_refuses_mid_run_is_one_sentence(spark, tmp_path):
    """A --cluster scenario's fail_partition whose broker holds no follower of the partition at its instant (here
    the partition's only replica, its leader) is refused by the engine then, inside a Spark task: that came back
    as a PythonException traceback, exit 1. The task runs on the test session's Spark, as a plan's candidates do.
    (A broker that never holds a replica is refused when the scenario is read.)"""
    from replicaflow.jobs.plan import PlanArgs, prepare
    from replicaflow.plan.build import candidate
    from replicaflow.plan.choose import run_specs

    (tmp_path / "c.yaml").write_text(
        "name: c\nduration: 10m\nkafka: {version: '3.7'}\ncluster: {brokers: 4}\n"
        "topics: [{name: a, partitions: 3, replication_factor: 1, initial_size: 10MB, assignment: [[1], [2], [3]]}]\n"
        "events:\n  - {at: 0s, fail_partition: {topic: a, partition: 0, broker: 1, error: unexpected}}\n")
    (tmp_path / "p.json").write_text(_moves(("a", 0, [2])))
    prep = prepare(PlanArgs(cluster=tmp_path / "c.yaml", reassignment=tmp_path / "p.json"))
    with pytest.raises(ReplicaflowError) as info:
        run_specs(spark, [candidate(prep.cluster, prep.moves, 50e6, False, None, "x")])
    assert str(info.value) == ("plan: the simulation cannot run a scenario event: fail_partition: broker 1 is not a "
                               "follower of a-0 at 0ms")


def test_an_unknown_broker_of_a_large_cluster_names_a_few_brokers(tmp_path):
    """The sentence listed every broker of the describe: 2,000 of them made it 10,000 characters long."""
    spread = [[(p + k) % 2000 + 1 for k in range(3)] for p in range(2000)]
    describe(tmp_path / "describe.txt", {"orders": spread})
    (tmp_path / "plan.json").write_text(_moves(("orders", 0, [1, 2, 5000])))
    result = runner.invoke(app, ["plan", "--reassignment", str(tmp_path / "plan.json"), "--topics",
                                 str(tmp_path / "describe.txt"), "--master", "nonsense://x"])
    assert result.exit_code == 2 and len(result.output) < 400, result.output
    assert ("partitions[0].replicas: unknown broker 5000 (brokers: 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,"
            "20,… (1980 more))") in result.output


_OM_LINE = st.one_of(
    st.sampled_from(["# EOF", f"# TYPE {M} counter", f"# TYPE {M} gauge", f"# HELP {M} h", f"# UNIT {M} bytes"]),
    st.builds("{}{} {}{}{}".format,
              st.sampled_from([M, f"{M}_total", f"{M}_rate", f"{M}persec", f"{M}_created", f"{M}_bucket", "x"]),
              st.sampled_from(["", '{topic="orders"}', '{topic="orders",broker="1"}', '{topic=""}', '{topic="orders"',
                               '{le="+Inf",topic="orders"}']),
              st.sampled_from(["1", "0", "-1", "NaN", "+Inf", "1e308", "5", "0x10", "", "abc"]),
              st.sampled_from(["", " 1000", " 2000", " 1.5", " -1", " NaN", " 1e30", " 99999999999999999999"]),
              st.sampled_from(["", ' # {trace_id="a"} 1.0', " # x"])))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_OM_LINE, max_size=6), eof=st.booleans())
def test_fuzz_metrics_text_gives_finite_rates_or_one_sentence(tmp_path, lines, eof):
    """Prometheus and OpenMetrics lines from the forms a scrape holds, good and bad: a rate per topic that is a
    finite non-negative number, or a ReplicaflowError; found an AttributeError traceback and an infinite rate."""
    from replicaflow.plan.inputs import metrics_rates

    path = tmp_path / "m.om"
    path.write_text("\n".join(lines) + ("\n# EOF\n" if eof else "\n"), encoding="utf-8")
    try:
        rates = metrics_rates(path, {"orders"})
    except ReplicaflowError as exc:
        assert "\n" not in str(exc)
        return
    assert all(math.isfinite(r) and r >= 0 for r in rates.values()), rates


class _CountingDict(dict):
    """A dict that counts how often it is iterated whole."""

    walks = 0

    def __iter__(self):
        type(self).walks += 1
        return super().__iter__()


def test_a_large_describe_is_walked_once_not_once_per_partition():
    """ClusterModel.partitions walked every partition on each call, and steady_traffic calls it per partition: a
    describe of 5,000 partitions took 13 s to check before Spark, 10,000 one-partition topics 98 s (quadratic);
    TopicsSnapshot's PartitionCount check did the same per topic. Counted walks, not seconds."""
    from replicaflow.ingest.topic_command import (
        PartitionDescription,
        TopicDescription,
        TopicsSnapshot,
        _check_counts,
    )
    from replicaflow.plan.build import steady_traffic
    from replicaflow.plan.inputs import ClusterModel

    replicas = _CountingDict({(f"t{p % 50}", p // 50): (1, 2, 3) for p in range(1000)})
    cluster = ClusterModel(brokers=[1, 2, 3], racks={}, replicas=replicas, min_isr={}, rate_bps={"t0": 1e6})
    steady_traffic(cluster)
    assert _CountingDict.walks <= 3, _CountingDict.walks
    _CountingDict.walks = 0
    snap = TopicsSnapshot(topics={f"t{i}": TopicDescription(f"t{i}", None, 20, 3, {}) for i in range(50)},
                          partitions=_CountingDict({k: PartitionDescription(*k, 1, r, r) for k, r in replicas.items()}))
    _check_counts(snap, "describe.txt")
    assert _CountingDict.walks <= 3, _CountingDict.walks


@pytest.mark.parametrize("flag", ["--reassignment", "--topics", "--log-dirs"])
def test_an_input_inside_the_plan_folder_it_replaces_is_refused(tmp_path, flag):
    """``plan --reassignment OUT/plan/reassignment.json -o OUT`` (evaluating the plan a ``--generate`` wrote, into
    the same OUT) replaced ``OUT/plan/`` with one without the file, and printed a kafka-reassign-partitions
    command naming it: the command read its input and deleted it. Refused before any work, the file kept."""
    from replicaflow.telemetry.outputs import Commit

    args = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    out = tmp_path / "out"
    i = args.index(flag) + 1
    given = Path(args[i]).read_bytes()
    with Commit(out, writes=("plan",)).staged() as stage:  # a previous plan -o out that holds the input
        (stage / "plan").mkdir()
        (stage / "plan" / "input").write_bytes(given)
    args[i] = str(out / "plan" / "input")
    done = runner.invoke(app, [*args, "-o", str(out)])
    assert done.exit_code == 2, done.output
    assert f"error: {flag} {out / 'plan' / 'input'}: inside {out / 'plan'}, which this command replaces; copy it " \
           "elsewhere first, or choose another --out" in " ".join(done.output.split()), done.output
    assert (out / "plan" / "input").read_bytes() == given
