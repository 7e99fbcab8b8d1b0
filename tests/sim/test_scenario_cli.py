"""Bad scenario input through `replicaflow simulate`: one sentence naming the field path, exit 2, no traceback."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from replicaflow.cli import app
from tests.sim.test_engine import base

runner = CliRunner()


def with_topic(**over) -> dict:
    sc = base()
    topic = {k: v for k, v in dict(sc["topics"][0], **over).items() if v is not None}
    sc["topics"] = [topic]
    return sc


CASES = [
    (dict(base(), colour="blue"), "colour: unknown field"),
    (dict(base(), kafka={"version": "3.7", "replica_lag_max": "10s"}), "kafka.replica_lag_max: unknown field"),
    (dict(base(), tick="100 msec"), "tick: expected a duration"),
    (with_topic(produce_rate="5MBs"), "topics[0].produce_rate: expected a rate like '5MB/s', found '5MBs'"),
    (with_topic(produce_rate="-5MB/s"), "topics[0].produce_rate"),
    (with_topic(replication_factor=4, assignment=None), "topics[0].replication_factor: expected at most the 3 brokers of the cluster, found 4"),
    (with_topic(assignment=[[1, 2, 9]]), "topics[0].assignment[0]: expected brokers of the cluster ([1, 2, 3]), found unknown broker 9"),
    (dict(base(), events=[{"at": "10s", "broker_down": 7}]), "events[0].broker_down.broker: expected a broker of the cluster ([1, 2, 3]), found 7"),
    (dict(base(), events=[{"at": "10s", "slow_network": {"broker": 1, "network_in": "5MBs", "for": "1m"}}]),
     "events[0].slow_network.network_in: expected a rate like '5MB/s', found '5MBs'"),
    (dict(base(), events=[{"at": "10s", "produce_burst": {"topic": "nope", "rate": "1MB/s", "for": "1s"}}]),
     "events[0].produce_burst.topic: expected a topic of the scenario (t), found 'nope'"),
    (dict(base(), events=[{"at": "10s", "reassign": {"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 2, 3]}, {"topic": "t", "partition": 0, "replicas": [2, 3, 1]}]}}]),
     "events[0].reassign.partitions[1]: expected each partition once, found t-0 twice"),
    (dict(base(), events=[{"at": "10s", "reassign": {"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 1, 3]}]}}]), "events[0].reassign.partitions[0].replicas"),
    (dict(base(), events=[{"at": "10s", "explode": {}}]), "events[0].explode: unknown field"),
    (dict(base(), events=[{"at": "3h", "verify": {}}]), "events[0].at"),
]


@pytest.mark.parametrize(("scenario", "expected"), CASES, ids=[c[1][:40] for c in CASES])
def test_bad_scenario_is_one_sentence(tmp_path, scenario, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(scenario))
    result = runner.invoke(app, ["simulate", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert "Traceback" not in message and len(message.splitlines()) == 1, message
    assert expected in message and str(path) in message, message
    assert not (tmp_path / "out" / "telemetry").exists()


def test_reassignment_json_from_a_file(tmp_path):
    (tmp_path / "plan.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [3, 2, 1]}]}))
    (tmp_path / "broken.json").write_text('{"version": 1,\n "partitions": [}')
    ok = dict(base(), events=[{"at": "1s", "reassign": {"file": "plan.json"}, "throttle": "5MB/s"}])
    (tmp_path / "ok.yaml").write_text(yaml.safe_dump(ok))
    result = runner.invoke(app, ["simulate", str(tmp_path / "ok.yaml"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "telemetry" / "_meta.json").exists()
    bad = dict(base(), events=[{"at": "1s", "reassign": {"file": "broken.json"}}])
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    result = runner.invoke(app, ["simulate", str(tmp_path / "bad.yaml"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "broken.json:2: invalid JSON" in result.output
    # the failed run left the previous output intact
    assert (tmp_path / "out" / "telemetry" / "_meta.json").exists()
