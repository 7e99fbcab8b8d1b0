"""``metrics.partition_replay``: the one table of the partition replay that ``analyze`` caches — the state rows
and the few change rows that the ISR meters and the unclean elections count (docs/pipeline.md, "One cached
replay")."""

from __future__ import annotations

from replicaflow.pipeline import metrics as M
from replicaflow.pipeline import state as S
from replicaflow.pipeline.elections import controller_changes
from replicaflow.pipeline.load import read_telemetry
from tests.pipeline.tele import Tele


def test_the_replay_keeps_the_state_rows_and_the_counted_change_rows(spark, tmp_path):
    """ISR meters as Kafka's ``Partition.maybeShrinkIsr``/``expandIsr`` mark them (a leader-driven change, in the
    leader's epoch) and unclean elections as ``PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection``
    makes them (a leader outside the ISR): only those change rows, besides each instant's last row, are kept."""
    t = Tele("replay", "3.7", end_ms=60_000)
    for broker in (1, 2, 3):
        t.broker(0, broker)
    t.partition(0, "a", 0, [1, 2, 3], 1, [1, 2, 3], epoch=0)
    t.add("isr", 10_000, topic="a", partition=0, isr=[1, 2], leader_epoch=0)  # the leader shrinks the ISR
    t.add("isr", 20_000, topic="a", partition=0, isr=[1, 2], leader_epoch=0)  # the same ISR again: no meter
    t.add("leaders", 30_000, topic="a", partition=0, leader=2, leader_epoch=1)  # the controller: a clean election
    t.add("isr", 30_000, topic="a", partition=0, isr=[2], leader_epoch=1)
    t.add("leaders", 40_000, topic="a", partition=0, leader=3, leader_epoch=2)  # 3 is outside the ISR {2}
    t.add("isr", 40_000, topic="a", partition=0, isr=[3], leader_epoch=2)
    t.add("isr", 50_000, topic="b", partition=0, isr=[1], leader_epoch=0)  # replicas never known: no state
    tele = read_telemetry(spark, [t.write(tmp_path / "replay")])

    replay = M.partition_replay(S.partition_events(tele.tables), tele.meta)
    rows = sorted((r["topic"], r["ts_ms"], r["seq"], r["state_row"], r["to_ms"], r["isr_meter_prev"], r["unclean"])
                  for r in replay.collect())
    assert rows == [
        ("a", 0, 6, True, 10_000, None, None),
        ("a", 10_000, 7, True, 20_000, [1, 2, 3], None),
        ("a", 20_000, 8, True, 30_000, None, None),
        ("a", 30_000, 10, True, 40_000, None, None),
        ("a", 40_000, 11, False, 40_000, None, True),
        ("a", 40_000, 12, True, None, None, None),
    ]
    assert [(r["from_ms"], r["to_ms"], r["leader"], r["isr"]) for r in S.state_rows(replay).orderBy("from_ms").collect()] \
        == [(0, 10_000, 1, [1, 2, 3]), (10_000, 20_000, 1, [1, 2]), (20_000, 30_000, 1, [1, 2]),
            (30_000, 40_000, 2, [2]), (40_000, None, 3, [3])]
    assert sorted(tuple(r) for r in M.isr_meter_events(replay).collect()) == [
        ("replay", 1, 10_000, 7, "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec")]
    controllers = controller_changes(tele.tables["brokers"])
    assert [(r["ts_ms"], r["broker"]) for r in M.unclean_election_events(replay, controllers).collect()] \
        == [(40_000, 1)]


def test_the_controller_keeps_its_role_until_its_broker_goes(spark, tmp_path):
    """``model.election.next_controller`` over the ``brokers`` rows: ZooKeeper's ``KafkaController.elect`` returns
    where a ``/controller`` znode exists, so broker 1 back at 20 s does not take the role from broker 2, which won it
    at 10 s; 2 keeps it through its controlled shutdown from 30 s (KafkaServer.shutdown runs controlledShutdown
    before kafkaController.shutdown resigns; KafkaRaftServer shuts its broker down before its controller) and hands it
    to the lowest live id, 1, when it is down at 35 s; with no broker up there is none, and the first broker back
    takes it."""
    t = Tele("ctl", "3.7", end_ms=60_000)
    for broker in (1, 2, 3):
        t.broker(0, broker)
    t.broker(10_000, 1, "down")
    t.broker(20_000, 1)
    t.broker(30_000, 2, "shutting_down")
    t.broker(35_000, 2, "down")
    for broker in (1, 3):
        t.broker(40_000, broker, "down")
    t.broker(50_000, 3)
    t.broker(50_000, 1)
    tele = read_telemetry(spark, [t.write(tmp_path / "ctl")])
    rows = [(r["ts_ms"], r["controller"]) for r in controller_changes(tele.tables["brokers"]).orderBy("seq").collect()]
    assert rows == [(0, 1), (0, 1), (0, 1), (10_000, 2), (20_000, 2), (30_000, 2), (35_000, 1),
                    (40_000, 3), (40_000, None), (50_000, 3), (50_000, 3)]
