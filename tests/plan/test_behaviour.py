"""What `plan` answers beyond timing: moves that never finish, a deadline, KIP-73 against KIP-542 with a
broker restart in the middle, batches, the generated plan (docs/plan.md)."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replicaflow.errors import ReplicaflowError
from replicaflow.jobs.plan import PlanArgs, plan, prepare
from replicaflow.model.assignment import assign_replicas, random_start
from replicaflow.model.units import format_duration
from replicaflow.plan.build import batches_of, never_finishes
from replicaflow.plan.render import Bar, gantt_bars
from tests.plan.kafka_files import args, describe

RR6 = [[(p + k) % 6 + 1 for k in range(3)] for p in range(12)]


def off_broker(assignment, broker):
    """Each replica on ``broker`` moved to the first broker the partition does not use."""
    moves = {}
    for p, r in enumerate(assignment):
        if broker in r:
            free = [b for b in range(1, 7) if b not in r and b != broker]
            moves[("orders", p)] = [free[p % len(free)] if b == broker else b for b in r]
    return moves


def test_in_sync_traffic_alone_exceeds_the_leader_throttle(spark, tmp_path):
    """KIP-73 counts in-sync fetches of listed replicas against the leader quota (§5.1): 12 partitions at
    120 MB/s, two in-sync followers each, so a leader of two moving partitions serves 40 MB/s in sync;
    a 30MB/s throttle can never move a byte. Reported with the broker, without a simulation."""
    _, choice, text = plan(args(tmp_path, {"orders": RR6}, off_broker(RR6, 3), 50_000_000,
                                produce_rate=["orders=120MB/s"], throttle=["30MB/s"]), spark=spark)
    (r,) = choice.results
    assert not r.finished and r.wall_s == 0.0
    assert r.reason.startswith("broker ") and "in-sync replication" in r.reason and "leader quota" in r.reason
    assert choice.recommended is None
    assert "never finishes" in text


def test_produce_outruns_the_move_kip542():
    """Under KIP-542 only adding replicas count, but a new replica still has to copy faster than its
    partition grows: the follower side receiving partitions growing at 12 MB/s in all cannot do it at 8MB/s (each leader sends 6 MB/s: fine)."""
    from replicaflow.plan.build import Move
    from replicaflow.plan.inputs import ClusterModel

    cluster = ClusterModel(brokers=[1, 2, 3, 4], racks={}, replicas={("t", 0): (1, 2), ("t", 1): (2, 3)},
                           min_isr={"t": 1}, rate_bps={"t": 12e6})
    moves = [Move("t", 0, (1, 2), (1, 4), 10**9), Move("t", 1, (2, 3), (2, 4), 10**9)]
    reason = never_finishes(cluster, moves, 8e6, kip542=True)
    assert reason.startswith("broker 4:") and "follower quota" in reason
    assert never_finishes(cluster, moves, 30e6, kip542=True) is None


def test_stalled_move_is_found_by_simulation(spark, tmp_path):
    """A move the rates allow on paper but that makes no net progress (its only source broker is down for
    good) is given up after the stall window with its bytes left, not run forever."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "name: stall\nduration: 1h\nkafka: {version: '3.7'}\ncluster: {brokers: 3}\n"
        "topics: [{name: t, partitions: 1, replication_factor: 1, assignment: [[1]], initial_size: 100MB}]\n"
        "events: [{at: 1s, broker_down: 1}]\n", encoding="utf-8")
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [2]}]}))
    _, choice, _ = plan(PlanArgs(reassignment=plan_file, cluster=cluster, throttle=["1MB/s"]), spark=spark)
    (r,) = choice.results
    assert not r.finished and r.reason.startswith("no net progress in 30m simulated: ")
    assert 0 < r.bytes_left["t-0"] <= 100_000_000


def test_deadline_recommends_the_smallest_throttle_meeting_it(spark, tmp_path):
    """With --deadline the candidates are ranked by throttle and the smallest that finishes in time wins;
    the next smaller one misses it."""
    throttles = ["5MB/s", "10MB/s", "20MB/s", "40MB/s"]
    _, choice, text = plan(args(tmp_path, {"orders": RR6}, off_broker(RR6, 3), 100_000_000,
                                produce_rate=["orders=1MB/s"], throttle=throttles, deadline="40s"), spark=spark)
    by_rate = sorted(choice.results, key=lambda r: r.throttle_bps)
    best = choice.recommended
    assert best.duration_ms <= 40_000
    smaller = [r for r in by_rate if r.throttle_bps < best.throttle_bps]
    assert smaller and all(r.duration_ms > 40_000 for r in smaller)
    assert "deadline 40s: met" in text
    assert f"--throttle {int(best.throttle_bps)}" in text


def test_kip73_against_kip542_with_a_broker_restart(spark, tmp_path):
    """The same plan under KIP-73 and KIP-542 while broker 2 restarts mid-move: under KIP-73 the tool lists
    every existing replica of the moving partitions, so broker 2 catching up after its restart is throttled
    with the move (its partitions stay under-replicated longer); KIP-542 throttles only the adding replicas."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "name: bounce\nduration: 1h\nkafka: {version: '3.7'}\ncluster: {brokers: 5, min_insync_replicas: 2}\n"
        "topics: [{name: orders, partitions: 6, replication_factor: 3, produce_rate: 6MB/s, initial_size: 60MB,\n"
        "          assignment: [[1,2,3],[2,3,1],[3,1,2],[1,2,3],[2,3,1],[3,1,2]]}]\n"
        "events: [{at: 20s, broker_down: 2}, {at: 40s, broker_up: 2}]\n", encoding="utf-8")
    moves = {("orders", p): [4 if b == 3 else b for b in r]
             for p, r in enumerate([[1, 2, 3], [2, 3, 1], [3, 1, 2]] * 2)}
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for (t, p), r in moves.items()]}))
    _, choice, text = plan(PlanArgs(reassignment=plan_file, cluster=cluster, throttle=["8MB/s", "12MB/s"]),
                           spark=spark)
    assert [(r.throttle_bps, r.kip542) for r in choice.results] == [(8e6, False), (12e6, False)]
    assert [(r.throttle_bps, r.kip542) for r in choice.other_modes] == [(8e6, True), (12e6, True)]
    kip73, kip542 = choice.recommended, choice.other_mode
    assert kip73.throttle_bps == 12e6 and kip542 is choice.other_modes[1]
    assert kip73.finished and kip542.finished
    assert kip542.duration_ms < 0.75 * kip73.duration_ms
    assert kip542.flags["urp"]["partition_minutes"] < kip73.flags["urp"]["partition_minutes"]
    assert "same throttle under KIP-542" in text
    # at 8MB/s the restarted broker's throttled catch-up and the in-sync traffic eat broker 1's leader quota:
    # under KIP-73 the move stops making progress, under KIP-542 it finishes -- both shown for that candidate
    slow73, slow542 = choice.results[0], choice.other_modes[0]
    assert slow542.finished and not slow73.finished and slow73.reason.startswith("no net progress")
    assert slow73.bottleneck["side"] == "leader quota"
    row = next(line for line in text.splitlines() if line.split()[:1] == ["8MB/s"])
    assert row.split()[1:3] == ["never", format_duration(slow542.duration_ms)]
    header = next(line for line in text.splitlines() if line.split()[:2] == ["throttle", "takes"])
    assert "KIP-542" in header and all(len(line) <= 80 for line in text.splitlines()
                                                    if not line.startswith("kafka-") and str(tmp_path) not in line)


def test_batches_per_broker():
    """--max-moves-per-broker: no broker takes part in more than N moves of a batch (KIP-236 style)."""
    from replicaflow.plan.build import Move

    moves = [Move("t", p, (1, 2), (1, 3), 1) for p in range(5)]
    groups = batches_of(moves, 2)
    assert [len(g) for g in groups] == [2, 2, 1]
    assert batches_of(moves, None) == [moves]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 6), min_size=1, max_size=3, unique=True),
                          st.lists(st.integers(0, 6), min_size=1, max_size=3, unique=True)), max_size=40),
       st.integers(1, 3))
def test_batches_are_first_fit_in_plan_order(pairs, max_per_broker):
    """``batches_of`` puts each move into the first batch where none of its brokers has N moves yet, in plan
    order: the same batches as trying every batch from the first (the rule as stated), for any plan."""
    from replicaflow.plan.build import Move

    moves = [Move("t", p, tuple(before), tuple(after), 1) for p, (before, after) in enumerate(pairs)]
    expected: list[list[Move]] = []
    for m in moves:
        brokers = set(m.adding) | set(m.removing)
        fit = next((g for g in expected if all(sum(b in set(x.adding) | set(x.removing) for x in g) < max_per_broker
                                              for b in brokers)), None)
        if fit is None:
            expected.append(fit := [])
        fit.append(m)
    assert batches_of(moves, max_per_broker) == expected


def test_batches_run_one_after_the_other(spark, tmp_path):
    """Each batch starts when the previous one's slowest partition completed. kafka-reassign-partitions has no
    batches: given the whole plan it starts every move, and the commands printed ran the whole plan. Each
    batch is now its own file (``-o``: ``plan/batch-K.json``, the operator's ``log_dirs`` kept), and the
    commands run them in turn."""
    a = args(tmp_path, {"orders": RR6}, off_broker(RR6, 3), 20_000_000, throttle=["10MB/s"], max_moves_per_broker=2,
             out=tmp_path / "o")
    doc = json.loads(a.reassignment.read_text())
    doc["partitions"][0]["log_dirs"] = ["/data/a", "any", "any"]
    a.reassignment.write_text(json.dumps(doc))
    prep, choice, text = plan(a, spark=spark)
    folder = tmp_path / "o" / "plan"
    files = sorted(folder.glob("batch-*.json"))
    groups = batches_of(prep.moves, 2)
    assert [f.name for f in files] == [f"batch-{k}.json" for k in range(1, len(groups) + 1)]
    written = [json.loads(f.read_text())["partitions"] for f in files]
    assert [{(e["topic"], e["partition"]) for e in w} for w in written] == [
        {(m.topic, m.partition) for m in g} for g in groups]
    given = {(e["topic"], e["partition"]): e for e in doc["partitions"]}
    for e in (e for w in written for e in w):
        assert e["replicas"] == given[(e["topic"], e["partition"])]["replicas"]
        assert e["log_dirs"] == given[(e["topic"], e["partition"])].get("log_dirs", ["any"] * 3)
    flat = " ".join(text.split()).replace(" \\ ", " ")
    assert f"--reassignment-json-file {folder / 'batch-1.json'} --execute --throttle 10000000" in flat
    then = flat[flat.index("# then"):].replace("# ", "")
    assert str(folder / "batch-2.json") in then and str(a.reassignment) not in flat
    commands = json.loads((folder / "plan.json").read_text())["recommended"]["commands"]
    assert [c.split("--reassignment-json-file ")[1] for c in commands if "--execute" in c] == [
        f"{f} --execute --throttle 10000000" for f in files]
    r = choice.recommended
    assert len(r.batches) >= 3
    for (_, end, _), (start, _, _) in zip(r.batches, r.batches[1:], strict=False):
        assert start == end
    assert r.batches[-1][1] == r.duration_ms and "batch 1:" in text
    starts = Counter(r.start_ms.values())
    assert starts == Counter({a: n for a, _, n in r.batches})
    for name, start in r.start_ms.items():
        (batch_end,) = [b for a, b, _ in r.batches if a == start]
        assert start < r.eta_ms[name] <= batch_end


def test_gantt_bars_of_the_moves(spark, tmp_path):
    """The Gantt chart's bars: one per moved partition from its batch's start to its completion, latest
    first, coloured by the broker it adds; beyond the top N the rest fold into one "others" bar spanning
    them; a move that never completes runs to the end of the simulation (hatched)."""
    a = args(tmp_path, {"orders": RR6}, off_broker(RR6, 3), 20_000_000, throttle=["10MB/s"], max_moves_per_broker=2)
    prep, choice, _ = plan(a, spark=spark)
    r = choice.recommended
    bars = gantt_bars(prep.moves, r)
    assert len(bars) == len(prep.moves) == 6
    assert [b.end_ms for b in bars] == sorted(r.eta_ms.values(), reverse=True)
    assert bars[0].end_ms == r.duration_ms and all(b.finished for b in bars)
    assert {b.name: b.start_ms for b in bars} == r.start_ms
    assert {b.destination for b in bars} <= {f"to {x}" for x in (1, 2, 4, 5, 6)}
    folded = gantt_bars(prep.moves, r, top=2)
    assert [b.name for b in folded[:2]] == [b.name for b in bars[:2]]
    assert folded[2] == Bar("others (4 partitions)", min(b.start_ms for b in bars[2:]),
                            max(b.end_ms for b in bars[2:]), "others", True)
    stuck = replace(r, eta_ms={}, duration_ms=123_000)
    assert {(b.end_ms, b.finished) for b in gantt_bars(prep.moves, stuck)} == {(123_000, False)}


def test_generate_remove_broker(tmp_path):
    """--generate --remove-brokers 3 lays every topic out again over the other brokers, Kafka's placement."""
    prep = prepare(PlanArgs(topics=describe(tmp_path / "d.txt", {"orders": RR6}), generate=True,
                            remove_brokers=[3]))
    assert all(3 not in r for r in prep.plan.values())
    assert {len(r) for r in prep.plan.values()} == {3}
    with pytest.raises(ReplicaflowError, match="--remove-brokers: unknown broker 9"):
        prepare(PlanArgs(topics=describe(tmp_path / "d.txt", {"orders": RR6}), generate=True, remove_brokers=[9]))


RACKS6 = "1:a,2:a,3:b,4:b,5:c,6:c"


def test_generate_rack_aware_like_kafka(tmp_path):
    """--generate --remove-brokers 3 with racks (--racks, as broker.rack) is Kafka's
    AdminUtils.assignReplicasToBrokersRackAware over brokers 1,2,4,5,6 (ReassignPartitionsCommand
    calculateAssignment): every partition on 3 distinct racks, each broker leads 12/5 rounded, the
    start index and shift drawn from --seed (the same seed gives the same plan, another seed another)."""
    d = describe(tmp_path / "d.txt", {"orders": RR6})
    prep = prepare(PlanArgs(topics=d, generate=True, remove_brokers=[3], racks=RACKS6, seed=7))
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    assert all(3 not in r and len({racks[b] for b in r}) == 3 for r in prep.plan.values())
    leaders = sorted(sum(1 for r in prep.plan.values() if r[0] == b) for b in (1, 2, 4, 5, 6))
    assert leaders == [2, 2, 2, 3, 3]
    start, shift = random_start(5, random.Random(7))
    assert [prep.plan[("orders", p)] for p in range(12)] == [
        tuple(r) for r in assign_replicas([1, 2, 4, 5, 6], 12, 3, start, shift, racks={b: racks[b] for b in
                                                                                       (1, 2, 4, 5, 6)})]
    same = prepare(PlanArgs(topics=d, generate=True, brokers=[1, 2, 4, 5, 6], racks=RACKS6, seed=7))
    assert same.plan == prep.plan
    plans = {tuple(prepare(PlanArgs(topics=d, generate=True, remove_brokers=[3], racks=RACKS6, seed=s))
                   .plan.items()) for s in range(6)}
    assert len(plans) > 1
    unaware = prepare(PlanArgs(topics=d, generate=True, remove_brokers=[3], racks=RACKS6, seed=7,
                               disable_rack_aware=True))
    assert unaware.plan == {("orders", p): tuple(r) for p, r in enumerate(
        assign_replicas([1, 2, 4, 5, 6], 12, 3, start, shift))}
    assert any(len({racks[b] for b in r}) < 3 for r in unaware.plan.values())


def test_generate_rack_errors(tmp_path):
    """Kafka refuses rack-aware placement when only some brokers have a rack; --racks is checked."""
    d = describe(tmp_path / "d.txt", {"orders": RR6})
    with pytest.raises(ReplicaflowError, match="broker 5 has no rack while others have one"):
        prepare(PlanArgs(topics=d, generate=True, remove_brokers=[3], racks="1:a,2:a,4:b"))
    with pytest.raises(ReplicaflowError, match="--racks: expected BROKER:RACK pairs"):
        prepare(PlanArgs(topics=d, generate=True, remove_brokers=[3], racks="1=a"))
    with pytest.raises(ReplicaflowError, match="--racks: unknown broker 9"):
        prepare(PlanArgs(topics=d, generate=True, remove_brokers=[3], racks="9:a"))
    with pytest.raises(ReplicaflowError, match="only apply with --generate"):
        prepare(PlanArgs(topics=d, reassignment=tmp_path / "x.json", seed=3))
    with pytest.raises(ReplicaflowError, match="--seed: expected 0 or more, found -5"):  # random.Random(-5) is 5's
        prepare(PlanArgs(topics=d, generate=True, remove_brokers=[3], seed=-5))


def test_json_and_out_files(spark, tmp_path):
    """--json carries Cruise Control / Strimzi field names and per-partition bytes_left_to_move; --out writes
    plan.json and plan.html (plotly) under OUT/plan/."""
    from typer.testing import CliRunner

    from replicaflow.cli import app

    a = args(tmp_path, {"orders": RR6}, off_broker(RR6, 3), 10_000_000, throttle=["20MB/s"])
    argv = ["plan", "--reassignment", str(a.reassignment), "--topics", str(a.topics), "--log-dirs", str(a.log_dirs),
            "--throttle", "20MB/s", "--json", "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output[result.output.index("{"):result.output.rindex("}") + 1])
    assert doc["summary"] == {"numReplicaMovements": 6, "dataToMoveMB": 60, "numIntraBrokerReplicaMovements": 0,
                              "intraBrokerDataToMoveMB": 0, "numLeaderMovements": 2}
    (cand,) = doc["candidates"]
    assert {p["partition"] for p in cand["partitions"]} == {f"orders-{p}" for t, p in off_broker(RR6, 3)}
    assert all(p["bytes_left_to_move"] == 0 and 0 < p["eta_ms"] <= cand["duration_ms"] for p in cand["partitions"])
    assert doc["strimzi_eta_ms"] > 0 and doc["recommended"]["commands"][0].endswith("--throttle 20000000")
    assert json.loads((tmp_path / "out" / "plan" / "plan.json").read_text())["summary"] == doc["summary"]
    html = (tmp_path / "out" / "plan" / "plan.html").read_text()
    assert "bytes left to move" in html
    assert "moves receiving per broker" in html
    assert "each partition's move at 20MB\\u002fs" in html and '"orientation":"h"' in html
    assert all(p["start_ms"] == 0 for p in cand["partitions"])


def test_generate_takes_racks_from_the_cluster_file(tmp_path):
    """--cluster's racks (here `racks: 3`, a, b, c round-robin) make --generate rack-aware
    (assignReplicasToBrokersRackAware), and --racks replaces them."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "name: racked\nduration: 1h\nkafka: {version: '3.7'}\ncluster: {brokers: 6, racks: 3}\n"
        "topics: [{name: orders, partitions: 12, replication_factor: 3, produce_rate: 1MB/s}]\n", encoding="utf-8")
    prep = prepare(PlanArgs(cluster=cluster, generate=True, remove_brokers=[3], seed=1))
    racks = prep.cluster.racks
    assert racks == {1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c"}
    assert all(len({racks[b] for b in r}) == 3 and 3 not in r for r in prep.plan.values())
    moved = prepare(PlanArgs(cluster=cluster, generate=True, remove_brokers=[3], seed=1, racks="1:x,2:x,4:x,5:y,6:y"))
    assert all({moved.cluster.racks[b] for b in r} == {"x", "y"} for r in moved.plan.values())


def test_a_deadline_without_throttles_is_answered_to_the_megabyte(spark):
    """The ladder steps by 20 % of the headroom throttle (22, 44 … 112MB/s here); with --deadline the bracket
    between the largest throttle that misses it and the smallest that meets it is narrowed in whole MB/s.
    One 6 GB copy at throttle T takes 6e9 / T (docs/plan.md): 11 minutes need 9.09MB/s, so 10MB/s is the
    answer and 9MB/s (667 s) misses. The ladder alone offered 22MB/s."""
    from replicaflow.plan.choose import evaluate
    from tests.plan.test_hand_computed import tiny

    cluster, moves = tiny()
    choice = evaluate(spark, cluster, moves, [], False, None, 660_000)
    best = choice.recommended
    assert best.throttle_bps == 10e6 and best.duration_ms <= 660_000
    assert choice.why == "the smallest throttle that meets the deadline; 9MB/s misses it"
    nine = next(r for r in choice.results if r.throttle_bps == 9e6)
    assert nine.duration_ms == pytest.approx(6e9 / 9e6 * 1000, rel=0.01)
    ladder = {22e6, 44e6, 67e6, 89e6, 112e6}
    assert ladder <= {r.throttle_bps for r in choice.results}
    assert [o is None for o in choice.other_modes] == [r.throttle_bps not in ladder for r in choice.results]


def test_plan_says_how_its_candidates_go_on_stderr(tmp_path):
    """`plan` said nothing while its candidates ran: a few seconds usually, but a throttle of a few bytes/s
    simulates up to 30 days per candidate (minutes), and the command looked hung. Now each phase and each
    finished candidate is a step on stderr (from Spark's status tracker, ``choose.run_specs``); stdout holds
    the plan alone, and ``-q`` silences the steps."""
    from tests.test_logs_only_garbage import cli, progress_lines

    ex = Path(__file__).resolve().parents[2] / "docs" / "examples" / "plan"
    argv = ["plan", "--reassignment", str(ex / "reassignment.json"), "--topics", str(ex / "describe.txt"),
            "--log-dirs", str(ex / "logdirs.json"), "--metrics", str(ex / "metrics.prom"), "--throttle", "20MB/s"]
    run = cli(*argv, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    steps = [s for s in progress_lines(run.stderr) if s.startswith("plan: ")]
    assert steps[:2] == ["plan: starting Spark", "plan: simulating 2 candidates on Spark, 0 done"], run.stderr
    # the tracker is polled each second: two candidates finishing within one poll are one step (0, 2 done)
    counts = [int(s.removeprefix("plan: simulating 2 candidates on Spark, ").removesuffix(" done")) for s in steps[1:]]
    assert counts == sorted(set(counts)) and counts[0] == 0 and counts[-1] <= 2, steps
    assert "plan: " not in run.stdout and "20MB/s" in run.stdout
    quiet = cli("-q", *argv, cwd=tmp_path)
    assert quiet.returncode == 0 and "plan: " not in quiet.stderr, quiet.stderr
    assert quiet.stdout == run.stdout
