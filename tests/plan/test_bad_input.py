"""Bad input in any of Kafka's formats is one sentence and a non-zero exit, before any simulation or Spark."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicaflow.cli import app
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
    (_moves(("orders", 0, [1, 2, 9])), "partitions[0].replicas: unknown broker 9 (brokers: 1,2,3,4)"),
    (_moves(("orders", 8, [1, 2, 3])), "partitions[0]: partition orders-8 is not in the cluster's describe output"),
    (_moves(("payments", 0, [1, 2, 3])), "partition payments-0 is not in the cluster's describe output"),
    ('{"version": 1, "partitions": [', "plan.json:1: invalid JSON (Expecting value)"),
    (_moves(("orders", 1, [2, 3, 4]), ("orders", 1, [2, 3, 1])), "partitions[1]: partition orders-1 is listed twice"),
    (_moves(("orders", 1, [2, 2, 4])), "partitions[0].replicas: broker listed twice"),
    (json.dumps({"version": 2, "partitions": []}), "version: expected 1, found 2"),
])
def test_bad_plan_is_one_sentence_before_any_work(tmp_path, plan_text, sentence):
    """The --master given is not even a Spark URL: the input sentence comes first, so nothing started."""
    result = runner.invoke(app, _plan(tmp_path, plan_text))
    assert result.exit_code == 2
    assert sentence in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_log_dirs_naming_an_unknown_partition(tmp_path):
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    log_dirs(tmp_path / "logdirs.json", {"orders": RR + [[1, 2, 3]]}, 1000)
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and "partition orders-8 on broker 1 is not in" in result.output


def test_bad_flags(tmp_path):
    argv = _plan(tmp_path, _moves(("orders", 0, [2, 3, 4])))
    for extra, sentence in ((["--throttle", "fast"], "--throttle: expected a rate like '5MB/s'"),
                            (["--produce-rate", "nope=1MB/s"], "--produce-rate: topic 'nope' is not in the cluster"),
                            (["--deadline", "soon"], "--deadline:"),
                            (["--max-moves-per-broker", "0"], "--max-moves-per-broker: expected at least 1")):
        result = runner.invoke(app, argv + extra)
        assert result.exit_code == 2 and sentence in result.output, result.output


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
