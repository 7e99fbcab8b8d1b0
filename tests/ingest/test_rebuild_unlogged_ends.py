"""A broker process that ended without a line (killed, its machine lost) and started again: down from the millisecond
after its last line until the new process registers or logs "started" (ingest/unlogged_ends.py, docs/real-cluster.md
``brokers``). Small clusters written here, analyzed as `replicaflow analyze --logs --cluster-from-path` does."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from replicaflow.jobs.analyze import analyze_logs
from tests.ingest.log_cases import write_files

pytestmark = pytest.mark.spark

DAY = "2021-03-04 10:"


def _zk(b: int, t: str, msg: str, logger: str = "kafka.server.KafkaServer") -> str:
    return f"[{DAY}{t}] INFO {msg} ({logger})\n"


def _server(b: int, t: str, msg: str) -> str:
    return _zk(b, t, f"[KafkaServer id={b}] {msg}")


def _leader(b: int, t: str, tp: str, epoch: int, isr: str) -> str:
    """Partition.makeLeader, 2.6-3.2 (state-change.log)."""
    return _zk(b, t, f"[Broker id={b}] Leader {tp} starts at leader epoch {epoch} from offset 10 with high watermark 10 "
                     f"ISR [{isr}] addingReplicas [] removingReplicas []. Previous leader epoch was {epoch - 1}.",
               "state.change.logger")


def _roll(b: int, t: str) -> str:
    """Any line of the broker's process that is no event (Log.roll)."""
    return _zk(b, t, "[Log partition=orders-0, dir=/kafka] Rolled new log segment at offset 100 in 2 ms.", "kafka.log.Log")


# Two brokers; broker 1 shuts down cleanly at 10:01:00, leaving broker 2 leader of both partitions, ISR [2]. Broker 2
# logs a last line at 10:02:00.000 and is killed; its new process opens at 10:05:00 (`starting`), gets its LeaderAndIsr
# at 10:05:03 and logs `started` at 10:05:04; its last line is at 10:10:00.
CRASH28 = {
    "broker-1/server.log": _server(1, "00:00,000", "started") + _server(1, "01:00,000", "shut down completed"),
    "broker-1/state-change.log": _leader(1, "00:01,000", "orders-0", 1, "1,2"),
    "broker-2/state-change.log": (_leader(2, "00:01,000", "orders-1", 1, "2,1") + _leader(2, "00:59,000", "orders-0", 2, "2")
                                  + _leader(2, "05:03,000", "orders-0", 3, "2") + _leader(2, "05:03,000", "orders-1", 3, "2")),
    "broker-2/server.log": (_server(2, "00:00,500", "started")
                            + _zk(2, "00:59,000", "[Partition orders-1 broker=2] ISR updated to 2 and version updated to [5]",
                                  "kafka.cluster.Partition")
                            + _roll(2, "02:00,000") + _zk(2, "05:00,000", "KafkaConfig values: ", "kafka.server.KafkaConfig")
                            + _server(2, "05:00,010", "starting") + _server(2, "05:04,000", "started") + _roll(2, "10:00,000")),
}


def _with_callback(at: str) -> dict[str, str]:
    """CRASH28 with broker 1 running on as the controller, and its failure callback for broker 2 at ``at``."""
    files = {**CRASH28, "broker-1/server.log": _zk(1, "00:00,000", "Kafka version: 2.8.1",
                                                   "org.apache.kafka.common.utils.AppInfoParser")
             + _server(1, "00:00,000", "started")}
    files["broker-1/controller.log"] = _zk(1, at, "[Controller id=1] Broker failure callback for 2",
                                           "kafka.controller.KafkaController")
    return files


@pytest.fixture(scope="module")
def out(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("unlogged")
    write_files(root / "logs" / "crash28", CRASH28)
    # the same cluster with the new process's first lines cut: its start is known only from its "started"
    cut = {k: "".join(line for line in v.splitlines(keepends=True) if "starting" not in line and "KafkaConfig" not in line)
           for k, v in CRASH28.items()}
    write_files(root / "logs" / "cut28", cut)
    for cluster, at in (("quiet28", "02:30,000"), ("busy28", "02:15,000")):
        write_files(root / "logs" / cluster, _with_callback(at))
    analyze_logs([str(root / "logs")], root / "out", cluster_from_path=True, spark=spark)
    return root / "out"


def _clock(ms: int) -> str:
    return f"{ms // 3_600_000 % 24:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def _brokers(out: Path, cluster: str) -> list[tuple[str, int, str]]:
    rows = [r for r in pq.read_table(out / "telemetry" / "brokers").to_pylist() if r["cluster"] == cluster]
    return [(_clock(r["ts_ms"]), r["broker"], r["state"]) for r in sorted(rows, key=lambda r: r["seq"])]


def _summary(out: Path, cluster: str) -> dict:
    return json.loads((out / "analysis" / "_summary.json").read_text(encoding="utf-8"))[cluster]


def test_a_killed_broker_is_down_from_its_last_line_until_its_new_process_serves(out):
    """KafkaServer.startup logs `starting`, registers, gets its LeaderAndIsr (Partition.makeLeader's lines) and logs
    `started`; KafkaServer.shutdown, which a `kill -9` never runs, would have logged `shut down completed`. Broker 2's
    old process wrote its last line at 10:02:00.000 and the new one opened at 10:05:00: down from 10:02:00.001 until
    1 ms before its first leader line (182,998 ms). Before, broker 2 was up throughout."""
    assert _brokers(out, "crash28") == [
        ("10:00:00.000", 1, "up"), ("10:00:00.500", 2, "up"), ("10:01:00.000", 1, "down"), ("10:02:00.001", 2, "down"),
        ("10:05:02.999", 2, "up")]


def test_the_partitions_of_a_cluster_whose_last_broker_was_killed_are_offline_until_it_serves_again(out):
    """With broker 1 stopped, broker 2 was the cluster's last live broker: its kill left both partitions without a
    leader (no controller left to elect, ZooKeeper's ISR [2] kept, ReplicaStateMachine), offline from 10:02:00.001
    until broker 2's new process led them (KafkaController.onBrokerStartup): 2 × 182.998 s = 6.100 partition-minutes,
    and those minutes are no longer under-replicated. Before: offline 0, URP 18.033 (2 × 541 s, 10:00:59 to
    10:10:00)."""
    summary = _summary(out, "crash28")
    assert (summary["peak_offline"], summary["offline_minutes"]) == (2, pytest.approx(6.100, abs=0.001))
    assert summary["urp_minutes"] == pytest.approx(18.033 - 6.100, abs=0.002)


def test_without_the_new_process_first_lines_no_end_is_placed(out):
    """Without the `starting` line and KafkaConfig's dump (KafkaServer.startup, KafkaConfig), the new process's leader
    lines at 10:05:03 (logged before "started") cannot be told from the old process's: no down row is placed, and the
    two "started" stay two lifetimes, as before."""
    assert _brokers(out, "cut28") == [
        ("10:00:00.000", 1, "up"), ("10:00:00.500", 2, "up"), ("10:01:00.000", 1, "down"), ("10:05:04.000", 2, "up")]


@pytest.mark.parametrize(("cluster", "down"), [("quiet28", "10:02:12.000"), ("busy28", "10:02:00.001")])
def test_a_killed_broker_is_down_before_the_controller_notices(out, cluster, down):
    """KafkaController.onBrokerFailure runs when ZooKeeper expires the broker's session, `zookeeper.session.timeout.ms`
    (18 s from 2.5, KIP-537) after the last heartbeat of a process that a `kill -9` ended: the process was gone from
    then, not from the callback. Broker 2's own log shows the kill (its last line at 10:02:00.000, a new process at
    10:05:00, no `shut down completed`); the controller's callback for it at 10:02:30 puts the end 18 s earlier, at
    10:02:12.000 (`quiet28`), and one at 10:02:15 at its last line's next millisecond, 10:02:00.001, as the process
    wrote that line (`busy28`). Down 170,999 ms and 182,998 ms to 1 ms before its new leader line; before, both were
    down from the callback (152,999 ms and 167,999 ms)."""
    rows = _brokers(out, cluster)
    assert rows == [("10:00:00.000", 1, "up"), ("10:00:00.500", 2, "up"), (down, 2, "down"), ("10:05:02.999", 2, "up")]
