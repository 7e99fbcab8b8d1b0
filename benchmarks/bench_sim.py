"""Simulator throughput: replica-ticks per second of the vectorized tick (DESIGN.md §8).

Prints the figure for a 50-broker, 50,000-partition, RF-3 cluster under steady produce traffic,
and, on a small cluster, the ratio against a straightforward per-partition Python loop that does
the same work per tick (produce, one fetch per follower with the fetch cap, the §1.1 fetch-state
update, expansion, the ISR-expiration check and the high watermark).

    .venv/bin/python benchmarks/bench_sim.py [--partitions 50000] [--brokers 50] [--ticks 300]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from replicaflow.model import isr as isr_rules  # noqa: E402
from replicaflow.sim.engine import FETCH_MAX_BYTES, Engine  # noqa: E402
from replicaflow.sim.scenario import parse_scenario  # noqa: E402
from replicaflow.telemetry.io import TelemetryWriter  # noqa: E402


def scenario(brokers: int, partitions: int, topics: int = 50):
    per_topic = partitions // topics
    return parse_scenario({
        "name": f"bench-{brokers}x{partitions}", "duration": "1h", "tick": "100ms", "scrape_interval": "10s",
        "kafka": {"version": "3.7"},
        "cluster": {"brokers": brokers, "network_in": "1GB/s", "network_out": "1GB/s"},
        "topics": [{"name": f"topic-{i:02d}", "partitions": per_topic, "replication_factor": 3,
                    "produce_rate": f"{per_topic * 20}KB/s", "message_size": "1KiB", "initial_size": "1MB"}
                   for i in range(topics)],
    }, base_dir=os.getcwd(), source="<bench>")


def time_engine(sc, ticks: int) -> tuple[float, int]:
    engine = Engine(sc, TelemetryWriter(sc.name))
    engine.emit_initial(sc.start_ms)
    now = sc.start_ms
    for _ in range(20):  # warm-up
        now += sc.tick_ms
        engine.tick(now)
    t0 = time.perf_counter()
    for _ in range(ticks):
        now += sc.tick_ms
        engine.tick(now)
    elapsed = time.perf_counter() - t0
    return elapsed, int((engine.s.rbi >= 0).sum())


def time_python_loop(sc, ticks: int) -> float:
    """The same tick written the straightforward way: a Python loop over partitions and their followers."""
    engine = Engine(sc, TelemetryWriter(sc.name))
    s = engine.s
    lag, tick, rounds = engine.lag_ms, sc.tick_ms, engine.rounds
    parts = []
    for p in range(s.n_partitions):
        replicas = [int(b) for b in s.rbi[p] if b >= 0]
        parts.append({
            "leo": {b: int(s.log_leo[p, i]) for i, b in enumerate(replicas)}, "leader": replicas[0],
            "followers": replicas[1:], "isr": set(replicas), "hw": int(s.hw[p]), "acc": 0.0,
            "rate": float(s.base_rate[p]), "size": int(s.msg_size[p]),
            "view": {b: [int(s.v_leo[p, i]), int(s.v_lfl[p, i]), int(s.v_lft[p, i]), int(s.v_lcu[p, i])]
                     for i, b in enumerate(replicas)}})
    now = sc.start_ms
    t0 = time.perf_counter()
    for _ in range(ticks):
        now += tick
        due = (now - sc.start_ms) % (lag // 2) < tick
        for part in parts:
            part["acc"] += part["rate"] * tick
            n = int(part["acc"])
            part["acc"] -= n
            leader = part["leader"]
            part["leo"][leader] += n
            leader_leo = part["leo"][leader]
            for f in part["followers"]:
                offset = part["leo"][f]
                view = part["view"][f]
                leo, lfl, lft, lcu = isr_rules.update_fetch_state(offset, leader_leo, now, view[1], view[2], view[3],
                                                                  True)
                part["view"][f] = [int(leo), int(lfl), int(lft), int(lcu)]
                got = min(leader_leo - offset, FETCH_MAX_BYTES * rounds // part["size"])
                part["leo"][f] = offset + got
                if f not in part["isr"] and offset >= part["hw"]:
                    part["isr"].add(f)
            if due:
                for f in list(part["isr"] - {leader}):
                    view = part["view"][f]
                    if view[0] != leader_leo and now - view[3] > lag:
                        part["isr"].discard(f)
            members = [part["leo"][leader]] + [part["view"][f][0] for f in part["isr"] if f != leader]
            part["hw"] = max(part["hw"], min(members))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=50_000)
    ap.add_argument("--ticks", type=int, default=300)
    ap.add_argument("--small-partitions", type=int, default=600)
    ap.add_argument("--small-ticks", type=int, default=50)
    args = ap.parse_args()

    big = scenario(args.brokers, args.partitions)
    elapsed, replicas = time_engine(big, args.ticks)
    big_rate = replicas * args.ticks / elapsed
    small = scenario(6, args.small_partitions, topics=6)
    small_elapsed, small_replicas = time_engine(small, args.small_ticks)
    loop_elapsed = time_python_loop(small, args.small_ticks)
    small_rate = small_replicas * args.small_ticks / small_elapsed
    loop_rate = small_replicas * args.small_ticks / loop_elapsed
    print(f"vectorized tick, {args.brokers} brokers x {args.partitions} partitions x RF 3 ({replicas} replicas):")
    print(f"  {elapsed / args.ticks * 1000:.2f} ms per tick, {big_rate / 1e6:.1f} million replica-ticks/s (goal >= 50)")
    print(f"small cluster (6 brokers x {args.small_partitions} partitions, {small_replicas} replicas):")
    print(f"  vectorized {small_rate / 1e6:.2f} M replica-ticks/s, per-partition Python loop "
          f"{loop_rate / 1e6:.3f} M replica-ticks/s, ratio {small_rate / loop_rate:.0f}x")
    print(f"  vectorized at full scale vs the Python loop: {big_rate / loop_rate:.0f}x")


if __name__ == "__main__":
    main()
