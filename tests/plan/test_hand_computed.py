"""`plan` against answers computed by hand from Kafka's rules, on a cluster small enough to do so
(docs/plan.md, "What a candidate reports").

Three brokers; ``t-0`` (6 GB, replicas 1,2) moves to 1,3, ``t-1`` (2 GB, replicas 2,3) stays. One new
replica, 6 GB to copy from leader 1 to broker 3. No simulation through Spark: the candidate runs as one
Spark task would run it.
"""

from __future__ import annotations

import pytest

from replicaflow.model.configs import FETCH_MAX_BYTES
from replicaflow.plan.build import Move, candidate
from replicaflow.plan.candidate import simulate_candidate
from replicaflow.plan.inputs import ClusterModel

SIZE = 6_000_000_000
FETCH_CAP_BPS = FETCH_MAX_BYTES * 1000 / 50  # 1 MiB per 50 ms fetch round trip (docs/simulator.md): 20.97 MB/s


def tiny(produce_bps: float = 0.0) -> tuple[ClusterModel, list[Move]]:
    cluster = ClusterModel(brokers=[1, 2, 3], racks={}, replicas={("t", 0): (1, 2), ("t", 1): (2, 3)},
                           min_isr={"t": 2}, size_bytes={("t", 0): SIZE, ("t", 1): 2_000_000_000},
                           rate_bps={"t": produce_bps})
    return cluster, [Move("t", 0, (1, 2), (1, 3), SIZE)]


def run(throttle_bps: float, produce_bps: float = 0.0):
    cluster, moves = tiny(produce_bps)
    return simulate_candidate(candidate(cluster, moves, throttle_bps, False, None, "hand"))


def test_a_throttle_above_one_partitions_fetch_rate_names_the_fetch_as_bottleneck():
    """At 50MB/s the leader and follower quotas never bind: one partition copies 1 MiB per fetch round
    trip, 6e9 / 20.97e6 = 286 s, not the naive 6e9 / 50e6 = 120 s. The answer names that limit (it
    printed no bottleneck at all) and the rate, on the receiving broker."""
    r = run(50e6)
    assert r.finished
    assert SIZE / FETCH_CAP_BPS * 1000 <= r.duration_ms <= 1.01 * SIZE / FETCH_CAP_BPS * 1000
    assert r.bottleneck is not None
    assert (r.bottleneck["broker"], r.bottleneck["side"]) == (3, "partition fetch")
    assert r.bottleneck["limit_bps"] == pytest.approx(FETCH_CAP_BPS)
    assert r.bottleneck["busy_ms"] >= 0.95 * r.duration_ms


def test_a_binding_throttle_stays_the_bottleneck():
    """At 15MB/s the leader quota of broker 1 binds (the fetch could go at 21MB/s): it stays the answer."""
    r = run(15e6)
    assert (r.bottleneck["broker"], r.bottleneck["side"]) == (1, "leader quota")
    assert "limit_bps" not in r.bottleneck


def test_the_binding_quotas_peak_use_is_the_throttle_plus_at_most_one_fetch():
    """At 15MB/s the leader quota of broker 1 moves 15MB/s (docs/semantics.md §5.1: one 1 MiB fetch of
    overshoot at most, over the 10-11 s the sampled rate spans). Its peak use read 200 % of the limit: the
    quota's rate was read one tick before the instant its windows had recorded the bytes for."""
    r = run(15e6)
    assert 1.0 <= r.bottleneck["peak_utilization"] <= 1.0 + FETCH_MAX_BYTES / 15e6 / 10
    leader = next(b for b in r.brokers if b["broker"] == 1)
    assert leader["replication_out_peak_bps"] == pytest.approx(15e6, rel=0.01)


def test_the_answer_says_why_a_higher_throttle_does_not_help():
    from replicaflow.plan.choose import Choice
    from replicaflow.plan.render import console_text

    cluster, moves = tiny()
    r = run(50e6)
    text = console_text(cluster, moves, Choice([r], r, "given", 112e6, 1, [r]), "plan.json", False, None)
    assert "broker 3 partition fetch" in text and text.startswith("moves: 1 partition, 1 new replica, 6GB")
    assert "replica.fetch.max.bytes = 1MiB per fetch round trip, 21MB/s" in " ".join(text.split())
    assert max(map(len, text.splitlines())) <= 80


def test_batches_of_one_partition_say_partition():
    """With --max-moves-per-broker 1 each batch holds one move; the lines read '1 partitions'."""
    from dataclasses import replace

    from replicaflow.plan.choose import Choice
    from replicaflow.plan.render import console_text

    cluster, moves = tiny()
    r = replace(run(50e6), batches=[(0, 150_000, 1), (150_000, 286_000, 2)])
    text = console_text(cluster, moves, Choice([r], r, "given", 112e6, 1, [r]), "plan.json", False, None)
    assert "batch 1: 1 partition, 0ms to 2m30s" in text and "batch 2: 2 partitions, 2m30s to 4m46s" in text


def test_the_json_carries_the_naive_estimate_the_terminal_prints():
    """`--json` is the terminal's answer as JSON: the terminal printed 'naive data/throttle: 5m' (6e9 / 20e6)
    beside Strimzi's ETA, the JSON had Strimzi's alone."""
    import json

    from replicaflow.plan.choose import Choice
    from replicaflow.plan.render import console_text, plan_json

    cluster, moves = tiny()
    r = run(20e6)
    choice = Choice([r], r, "given", 112e6, 1, [r])
    doc = json.loads(plan_json(cluster, moves, choice, "p.json", False, None))
    assert doc["naive_eta_ms"] == 300_000
    assert doc["strimzi_eta_ms"] == pytest.approx(SIZE / 125e6 * 1000)  # min(NIC / 15 moves, 20MB/s) x 15 moves
    text = console_text(cluster, moves, choice, "p.json", False, None)
    assert "naive data/throttle: 5m; Strimzi's ETA: 48s" in text


def test_headroom_by_hand_and_the_ladder_keeps_it():
    """10MB/s into t (5MB/s per partition): broker 2 leads t-1 and follows t-0, 10MB/s in, so the
    headroom is (125 − 10) × 0.9 = 103.5MB/s, offered as 103MB/s. The ladder's top rate used to be
    round(103.5) = 104MB/s, above the headroom: printed as the headroom and then passed over."""
    from replicaflow.plan.build import headroom_throttle_bps
    from replicaflow.plan.choose import throttles

    cluster, _ = tiny(10e6)
    assert headroom_throttle_bps(cluster) == (103e6, 2)
    ladder, head, _ = throttles(cluster, [])
    assert ladder == [20e6, 41e6, 61e6, 82e6, 103e6]
    assert max(ladder) <= head


def _result(throttle_bps: float, duration_ms: int, finished: bool = True):
    from replicaflow.plan.candidate import CandidateResult

    return CandidateResult(label="x", throttle_bps=throttle_bps, kip542=False, finished=finished,
                           duration_ms=duration_ms, reason=None if finished else "stuck", eta_ms={}, start_ms={},
                           bytes_left={}, batches=[], bottleneck=None, flags={}, brokers=[])


def test_the_recommendation_says_what_it_did():
    """A missed deadline picks the largest that finishes (it claimed to keep headroom: 500MB/s on a
    125MB/s NIC does not); no candidate within the headroom picks the smallest that finishes (it
    picked the largest, the furthest over)."""
    from replicaflow.plan.choose import recommend

    over = [_result(200e6, 600_000), _result(500e6, 500_000)]
    best, why = recommend(over, 103e6, 60_000)
    assert best.throttle_bps == 500e6 and why == "no candidate meets the deadline; the largest that finishes"
    best, why = recommend(over, 103e6, None)
    assert best.throttle_bps == 200e6 and "none keeps headroom (103MB/s)" in why
    best, why = recommend([_result(50e6, 900_000), *over], 103e6, None)
    assert best.throttle_bps == 50e6 and why == "the largest throttle that keeps headroom on every broker"
    assert recommend([_result(50e6, 0, finished=False)], 103e6, None) == (None, "no candidate can finish")


def test_a_missed_deadline_does_not_recommend_a_throttle_that_gains_nothing():
    """Four 3 GB copies into one broker, 1-minute deadline: 87MB/s and 109MB/s both take 2m32s (one partition's
    fetches, 21MB/s, are the limit); the answer named 109MB/s beside 'a higher throttle does not speed it up'."""
    from replicaflow.plan.choose import recommend

    ladder = [_result(21e6, 707_000), _result(43e6, 309_000), _result(65e6, 198_000), _result(87e6, 152_000),
              _result(109e6, 152_000)]
    best, why = recommend(ladder, 109e6, 60_000)
    assert best.throttle_bps == 87e6
    assert why == "no candidate meets the deadline; the smallest throttle as fast as the fastest: 109MB/s takes 2m32s"
    assert recommend(ladder[:-1], 109e6, 60_000) == (ladder[3], "no candidate meets the deadline; the largest that "
                                                                "finishes")
    assert recommend(ladder, 109e6, 152_000)[0].throttle_bps == 87e6  # met: the smallest meeting it, as before


def test_without_a_deadline_a_higher_throttle_that_gains_nothing_is_not_recommended():
    """At 50MB/s and above one partition's fetches (21MB/s) are the limit: every throttle from 21MB/s up
    takes 286 s (6e9 / 20.97e6), so the smallest of them is the answer, not the largest keeping headroom;
    one that is slower by more than 1 % is not."""
    from replicaflow.plan.choose import recommend

    ladder = [_result(22e6, 287_000), _result(44e6, 286_000), _result(67e6, 286_000), _result(112e6, 286_000)]
    best, why = recommend(ladder, 112e6, None)
    assert best.throttle_bps == 22e6
    assert why == "the smallest throttle as fast as the largest keeping headroom: 112MB/s takes 4m46s"
    slower = [_result(20e6, 300_000), *ladder[1:]]
    assert recommend(slower, 112e6, None)[0].throttle_bps == 44e6
    r = run(112e6)
    assert r.duration_ms == pytest.approx(6e9 / FETCH_CAP_BPS * 1000, rel=0.01)
    assert run(22e6).duration_ms <= r.duration_ms * 1.01


@pytest.mark.parametrize(("throttle", "produce", "hand_s"), [
    (20e6, 0.0, 6e9 / 20e6),                 # the leader quota alone: 300 s
    (15e6, 10e6, 6e9 / (15e6 - 5e6 - 5e6)),  # in-sync follower 2 takes 5MB/s of it, the log grows 5MB/s: 1200 s
])
def test_a_quota_bound_move_takes_what_kafkas_rule_gives(throttle, produce, hand_s):
    """At the plan's 1 s ticks a quota-bound move takes bytes / what the quota leaves it: Kafka's
    ``ReplicationQuotaManager.isQuotaExceeded`` holds a fetch back only until the rate falls back, and
    in-sync throttled fetches count against the same quota (docs/semantics.md §5.1). It took 330 s and
    1321 s while the engine held a quota over its limit for a whole tick."""
    r = run(throttle, produce)
    assert r.bottleneck["side"] == "leader quota"
    assert r.duration_ms / 1000 == pytest.approx(hand_s, rel=0.02)


def test_a_plan_without_sizes_says_its_times_copy_nothing():
    """`--topics` without `--log-dirs` starts every partition empty: "takes 1s" alone read as an answer."""
    from replicaflow.plan.choose import Choice
    from replicaflow.plan.render import console_text

    cluster, moves = tiny()
    cluster.size_bytes.clear()
    moves = [Move("t", 0, (1, 2), (1, 3), 0)]
    r = simulate_candidate(candidate(cluster, moves, 50e6, False, None, "hand"))
    assert r.duration_ms <= 1000
    text = " ".join(console_text(cluster, moves, Choice([r], r, "given", 112e6, 1, [r]), "p.json", False,
                                 None).split())
    assert "0B to copy every moved partition is empty: the times below copy nothing (give --log-dirs" in text
    r = run(50e6)
    sized = console_text(*tiny(), Choice([r], r, "x", 112e6, 1, [r]), "p.json", False, None)
    assert "--log-dirs" not in sized


def test_a_plan_that_copies_nothing_says_why():
    """A plan that only reorders (or drops) replicas adds none: Kafka copies nothing whatever the sizes, and the
    answer said to give --log-dirs when they were given. A move of partitions that --log-dirs shows empty copies
    nothing either, and says so without asking for what was given."""
    from replicaflow.plan.choose import Choice
    from replicaflow.plan.render import console_text

    def said(cluster, moves) -> str:
        r = simulate_candidate(candidate(cluster, moves, 50e6, False, None, "hand"))
        return " ".join(console_text(cluster, moves, Choice([r], r, "given", 112e6, 1, [r]), "p.json", False,
                                     None).split())

    cluster, _ = tiny()
    reorder = [Move("t", 0, (1, 2), (2, 1), cluster.size_bytes.get(("t", 0), 0))]
    assert "no new replica: nothing to copy (the moves only reorder or drop replicas)" in said(cluster, reorder)
    assert "--log-dirs" not in said(cluster, reorder)
    cluster.size_bytes[("t", 0)] = 0
    empty = said(cluster, [Move("t", 0, (1, 2), (1, 3), 0)])
    assert "every moved partition is empty in the --log-dirs output: the times below copy nothing" in empty


def test_the_answer_says_which_produce_rates_it_assumed():
    from replicaflow.plan.render import produce_line

    cluster, _ = tiny()
    assert produce_line(cluster) == "produce: none given, no log grows during the move (--produce-rate, --metrics)"
    cluster, _ = tiny(10e6)
    assert produce_line(cluster) == "produce: 10MB/s in all (t 10MB/s)"
    cluster.rate_bps.update({f"x{i}": 1e6 for i in range(4)})
    assert produce_line(cluster) == "produce: 14MB/s in all (t 10MB/s, x0 1MB/s, x1 1MB/s and 2 more topics)"


def test_a_move_the_cluster_files_events_cancel_is_not_reported_as_done():
    """`--cluster` keeps the scenario's events; docs/examples/reassignment-during-bounce.yaml cancels the
    reassignment at 22m. At 10MB/s the 6 GB move needs 10m; cancelled at 1m it was reported finished
    in 1m with 0 bytes left. It is the cancellation, with what the move still lacked (about 5.4 GB)."""
    from dataclasses import replace

    from replicaflow.plan.choose import Choice
    from replicaflow.plan.render import console_text, result_json
    from replicaflow.sim.scenario.models import CancelReassignmentEvent

    cluster, moves = tiny()
    cluster = replace(cluster, extra_events=(CancelReassignmentEvent.model_validate(
        {"kind": "cancel_reassignment", "at": "1m"}),))
    r = simulate_candidate(candidate(cluster, moves, 10e6, False, None, "hand"))
    assert not r.finished and r.eta_ms == {} and r.cancelled_ms == {"t-0": 60_000}
    assert 5.4e9 <= r.bytes_left["t-0"] <= 5.6e9  # 6e9 − 60 s × 10MB/s, at a sample before the cancel
    assert r.reason.startswith("1 move cancelled by the scenario's own events at 1m")
    assert result_json(r)["partitions"][0]["cancelled_ms"] == 60_000
    text = console_text(cluster, moves, Choice([r], None, "no candidate can finish", 112e6, 1, [r]), "p.json",
                        False, None)
    assert "10MB/s  cancelled  cancelled" in text and "does not finish" in text


def test_kip542_is_marked_as_never_shipped():
    """KIP-542 was proposed and never shipped: the column, the comparison line and the kafka-configs
    command of `--kip542` (reassignment.throttled.rate, which no broker accepts) say so."""
    from replicaflow.plan.choose import Choice
    from replicaflow.plan.render import commands, console_text, wrapped

    cluster, moves = tiny()
    r = run(50e6)
    other = replace_kip542(r)
    text = console_text(cluster, moves, Choice([r], r, "given", 112e6, 1, [other]), "p.json", False, None)
    flat = " ".join(text.split())
    assert "KIP-542's reassignment throttles are hypothetical (never shipped in Kafka): replicaflow's model" in flat
    assert "same throttle under KIP-542: 4m48s — hypothetical (never shipped in Kafka)" in flat
    lines = commands("p.json", 50e6, True, "3.7")
    assert lines[1].startswith("# KIP-542 is hypothetical") and "reassignment.throttled.rate=" in lines[2]
    assert all(x.startswith("#") and not x.endswith("\\") for x in wrapped(lines[1], 40).splitlines())
    assert not any(x.startswith("#") for x in commands("p.json", 50e6, False, "3.7"))


def test_the_commands_connect_as_the_releases_tools_take_it():
    """``ReassignPartitionsCommandOptions`` up to 2.5: ``--zookeeper`` is REQUIRED (``--bootstrap-server`` only
    moves log directories); 2.6's tool takes ``--bootstrap-server`` and 3.0 removed ``--zookeeper``.
    ``ConfigCommand`` up to 2.4 refuses ``--bootstrap-server --describe --entity-type brokers`` without an entity
    name. The printed commands failed on every release up to 2.5 (``KafkaVersion.tools_connect_to_zookeeper``)."""
    from replicaflow.plan.render import commands

    for version, via in (("0.10", "--zookeeper localhost:2181"), ("2.5", "--zookeeper localhost:2181"),
                         ("2.6", "--bootstrap-server localhost:9092"), ("4.1", "--bootstrap-server localhost:9092")):
        lines = commands("p.json", 50e6, False, version)
        assert lines == [f"kafka-reassign-partitions {via} --reassignment-json-file p.json --execute --throttle 50000000",
                         f"kafka-configs {via} --describe --entity-type brokers",
                         f"kafka-reassign-partitions {via} --reassignment-json-file p.json --verify"], version
    # a plan that names a log directory (KIP-113): the ZooKeeper tool reaches the brokers for it too
    zk, both = commands("p.json", None, False, "2.5", log_dirs=True), commands("p.json", None, False, "2.6", True)
    assert zk[0] == ("kafka-reassign-partitions --zookeeper localhost:2181 --bootstrap-server localhost:9092 "
                     "--reassignment-json-file p.json --execute") and zk[-1].endswith("p.json --verify")
    assert "--zookeeper localhost:2181 --bootstrap-server localhost:9092" in zk[-1]
    assert zk[1] == "kafka-configs --zookeeper localhost:2181 --describe --entity-type brokers"
    assert both == commands("p.json", None, False, "2.6")


def test_a_wrapped_command_keeps_each_option_with_its_value():
    """The answer printed `kafka-configs --bootstrap-server localhost:9092 --describe --entity-type \\`, then
    `    brokers` on the next line."""
    from replicaflow.plan.render import commands, wrapped

    text = wrapped(commands("p.json", 50e6, False, "3.7")[1])
    assert text.splitlines() == ["kafka-configs --bootstrap-server localhost:9092 --describe \\",
                                 "    --entity-type brokers"]
    long = wrapped(commands("/a/long/path/to/the/reassignment-plan.json", 40e6, False, "3.7")[0])
    assert long.splitlines() == ["kafka-reassign-partitions --bootstrap-server localhost:9092 \\",
                                 "    --reassignment-json-file /a/long/path/to/the/reassignment-plan.json \\",
                                 "    --execute --throttle 40000000"]
    assert all(not x.rstrip(" \\").endswith(("--entity-type", "--throttle", "--reassignment-json-file"))
               for x in (text + "\n" + long).splitlines())
    path = "/" + "x" * 60 + "/plan.json"  # with its option, past 78 columns: the path keeps a line of its own
    lines = wrapped(commands(path, 40e6, False, "3.7")[0]).splitlines()
    assert f"    {path} \\" in lines and max(map(len, lines)) <= 78


def replace_kip542(r):
    from dataclasses import replace

    return replace(r, kip542=True)


def test_the_answer_says_whether_acks_all_producers_are_refused():
    """Min ISR 2 on RF 2: nothing goes under min ISR during a throttled move (in-sync fetches are never
    held back), and both partitions sit at min ISR, one replica from refusing acks=all writes."""
    from dataclasses import replace

    from replicaflow.plan.render import min_isr_line

    r = run(50e6)
    assert r.flags["under_min_isr"]["peak"] == 0 and r.flags["at_min_isr"]["peak"] == 2
    assert min_isr_line(r) == "acks=all: no partition under min ISR; 2 at min ISR, one replica from refusal"
    under = replace(r, flags={"under_min_isr": {"peak": 3, "partition_minutes": 12.5}, "at_min_isr": {"peak": 0}})
    assert min_isr_line(under) == ("acks=all: 3 partitions under min ISR at the peak, 12m30s of refused writes "
                                    "summed over partitions")
    one = replace(r, flags={"under_min_isr": {"peak": 1, "partition_minutes": 0.5}, "at_min_isr": {"peak": 0}})
    assert min_isr_line(one) == ("acks=all: 1 partition under min ISR at the peak, 30s of refused writes "
                                  "summed over partitions")



def test_a_batch_whose_leader_sat_idle_since_its_last_batch_runs_at_the_throttle():
    """docs/examples/plan, one move per broker per batch at 15MB/s: orders-6 (batch 4) is led by broker 1, whose
    leader quota recorded nothing since orders-0 (batch 1) completed at 41 s. Kafka's SimpleRate starts again
    after a whole retention without a record (SampledStat.purgeObsoleteSamples), so by hand: 500MB + 132 s of
    growth at 0.833MB/s = 610MB, copied at 15 − 1.67 (the in-sync followers 2 and 3) = 13.33MB/s while the log
    grows 0.833MB/s: 610 / 12.5 = 48.8 s, plus the tick. The quota counted the empty windows before it and let
    the move copy at the fetch speed: 47 s."""
    from pathlib import Path

    from replicaflow.jobs.plan import PlanArgs, prepare

    examples = Path(__file__).parents[2] / "docs" / "examples" / "plan"
    prep = prepare(PlanArgs(reassignment=examples / "reassignment.json", topics=examples / "describe.txt",
                            log_dirs=examples / "logdirs.json", metrics=examples / "metrics.prom",
                            throttle=["15MB/s"], max_moves_per_broker=1))
    r = simulate_candidate(candidate(prep.cluster, prep.moves, 15e6, False, 1, "hand"))
    start, end, n = r.batches[3]
    assert (start, n) == (132_000, 1) and r.eta_ms["orders-6"] == end
    assert 48_800 <= end - start <= 50_000, end - start
