"""Simulator throughput: the vectorized tick and whole `simulate` runs (README, Performance).

Measures, with this tree's replicaflow:
- the tick alone (no events, throttles, faults or scrapes) on a 50-broker, 50,000-partition, RF-3
  cluster under steady produce traffic, in replica-ticks per second; and, on a small cluster, the
  ratio against a straightforward per-partition Python loop doing the same work per tick (produce,
  one fetch per follower with the fetch cap, the §1.1 fetch-state update, expansion, the
  ISR-expiration check and the high watermark);
- whole `simulate` runs, Parquet output included, in simulated seconds per CPU second and per
  wall second, and replica-ticks per CPU second: a throttled drain (every replica off broker 3 of a 6-broker cluster,
  400 partitions of 5 GiB, RF 3, min ISR 2, 20 MB/s produced, `--throttle 50MB/s`; its first
  minutes), the same drain with 100 MiB partitions run until every move completed, and a broker
  bounce (2,400 partitions, one broker crashes and returns);
- with ``--plan``, `replicaflow plan` on the drain above written as Kafka's tool outputs (400 partitions
  of 5 GiB, 20 MB/s, five throttles from 50 to 100 MB/s, each under KIP-73 and KIP-542, on ``local[2]``): the wall
  time of the whole answer, split into the Spark session's start and the rest, the load average around it, the
  tasks' CPU seconds, and per candidate the simulated seconds per wall and per CPU second and replica-ticks per CPU
  second of its Spark task (the issue's goal: ≤ 30 s on 2 cores).

With ``--baseline REV`` the same measurements also run against the replicaflow of git revision REV
(checked out in a temporary ``git worktree``), alternating the two in fresh processes ``--repeat``
times; each figure is the best of its runs, and the table prints both and their ratio.

Times are the process's CPU time (``time.process_time``; NumPy runs single-threaded here), so that
other work on a shared machine distorts the figures less than it would wall time.

    .venv/bin/python benchmarks/bench_sim.py [--baseline 6a04b3f] [--repeat 2] [--partitions 50000]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
FETCH_MAX_BYTES = 1 << 20  # replica.fetch.max.bytes, for the Python loop


# ---------------------------------------------------------------------------------------- scenarios
def tick_scenario(brokers: int, partitions: int, topics: int = 50):
    from replicaflow.sim.scenario import parse_scenario

    per_topic = partitions // topics
    return parse_scenario({
        "name": f"bench-{brokers}x{partitions}", "duration": "1h", "tick": "100ms", "scrape_interval": "10s",
        "kafka": {"version": "3.7"},
        "cluster": {"brokers": brokers, "network_in": "1GB/s", "network_out": "1GB/s"},
        "topics": [{"name": f"topic-{i:02d}", "partitions": per_topic, "replication_factor": 3,
                    "produce_rate": f"{per_topic * 20}KB/s", "message_size": "1KiB", "initial_size": "1MB"}
                   for i in range(topics)],
    }, base_dir=os.getcwd(), source="<bench>")


def round_robin(n_partitions: int, brokers: int, rf: int) -> list[list[int]]:
    return [[(p + k) % brokers + 1 for k in range(rf)] for p in range(n_partitions)]


def drain_scenario(size: str, minutes: int):
    """Every replica of broker 3 moves to a broker the partition does not use, throttled at 50 MB/s."""
    from replicaflow.sim.scenario import parse_scenario

    assignment = round_robin(400, 6, 3)
    moves = []
    for p, replicas in enumerate(assignment):
        if 3 in replicas:
            free = [b for b in range(1, 7) if b not in replicas]
            moves.append({"topic": "orders", "partition": p,
                          "replicas": [free[p % len(free)] if b == 3 else b for b in replicas]})
    return parse_scenario({
        "name": f"drain-{size}", "duration": f"{minutes}m", "tick": "100ms", "scrape_interval": "10s",
        "kafka": {"version": "3.7"}, "cluster": {"brokers": 6, "min_insync_replicas": 2},
        "topics": [{"name": "orders", "partitions": 400, "replication_factor": 3, "assignment": assignment,
                    "produce_rate": "20MB/s", "message_size": "1KiB", "initial_size": size}],
        "events": [{"at": "10s", "reassign": {"version": 1, "partitions": moves}, "throttle": "50MB/s"}],
    }, base_dir=os.getcwd(), source="<bench>")


def bounce_scenario():
    """Broker 3 crashes at 2 min (its session expires) and returns at 5 min; 2,400 partitions, RF 3."""
    from replicaflow.sim.scenario import parse_scenario

    return parse_scenario({
        "name": "bounce", "duration": "10m", "tick": "100ms", "scrape_interval": "10s",
        "kafka": {"version": "3.7"}, "cluster": {"brokers": 6, "min_insync_replicas": 2},
        "topics": [{"name": "orders", "partitions": 2400, "replication_factor": 3,
                    "assignment": round_robin(2400, 6, 3), "produce_rate": "30MB/s", "message_size": "1KiB",
                    "initial_size": "10MB"}],
        "events": [{"at": "2m", "broker_down": 3}, {"at": "5m", "broker_up": 3}],
    }, base_dir=os.getcwd(), source="<bench>")


# ---------------------------------------------------------------------------------------- measurements
def _start(engine, start_ms: int) -> None:
    """The engine's initial state (``start()``; revisions before the module split called it ``emit_initial``)."""
    if hasattr(engine, "start"):
        engine.start()
    else:
        engine.emit_initial(start_ms)


def time_ticks(sc, ticks: int) -> tuple[float, int]:
    from replicaflow.sim.engine import Engine
    from replicaflow.telemetry.io import TelemetryWriter

    engine = Engine(sc, TelemetryWriter(sc.name))
    _start(engine, sc.start_ms)
    now = sc.start_ms
    for _ in range(20):  # warm-up
        now += sc.tick_ms
        engine.tick(now)
    t0 = time.process_time()
    for _ in range(ticks):
        now += sc.tick_ms
        engine.tick(now)
    elapsed = time.process_time() - t0
    return elapsed, int((engine.s.rbi >= 0).sum())


def time_python_loop(sc, ticks: int) -> float:
    """The same tick written the straightforward way: a Python loop over partitions and their followers."""
    from replicaflow.model import isr as isr_rules
    from replicaflow.sim.state import initial_state

    s = initial_state(sc)
    lag, tick = sc.kafka.replica_lag_time_max_ms, sc.tick_ms
    rounds = max(1, tick // sc.kafka.fetch_rtt_ms)
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
    t0 = time.process_time()
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
    return time.process_time() - t0


def time_simulate(sc) -> dict:
    """A whole `simulate` run (Parquet written to a temporary directory)."""
    from replicaflow.sim.runner import simulate

    replicas = sum(t.partitions * t.replication_factor for t in sc.topics)
    ticks = sc.duration_ms // sc.tick_ms
    with tempfile.TemporaryDirectory() as tmp:
        t0, w0 = time.process_time(), time.perf_counter()
        simulate(sc, Path(tmp) / "out")
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    return {"cpu_s": cpu, "sim_per_s": sc.duration_ms / 1000 / cpu, "sim_per_wall_s": sc.duration_ms / 1000 / wall,
            "replica_ticks_s": replicas * ticks / cpu}


def measure(args) -> dict:
    """Every figure of one process, keyed by row label."""
    big = tick_scenario(args.brokers, args.partitions)
    elapsed, replicas = time_ticks(big, args.ticks)
    small = tick_scenario(6, args.small_partitions, topics=6)
    small_elapsed, small_replicas = time_ticks(small, args.small_ticks)
    loop_elapsed = time_python_loop(small, args.small_ticks)
    big_rate = replicas * args.ticks / elapsed / 1e6
    small_rate = small_replicas * args.small_ticks / small_elapsed / 1e6
    loop_rate = small_replicas * args.small_ticks / loop_elapsed / 1e6
    out = {
        f"tick, {args.brokers}x{args.partitions} RF3: M replica-ticks/s (goal >= 50)": big_rate,
        f"tick, 6x{args.small_partitions} RF3: M replica-ticks/s": small_rate,
        f"per-partition Python loop, 6x{args.small_partitions}: M replica-ticks/s": loop_rate,
        "tick vs the Python loop: x, small cluster": small_rate / loop_rate,
        "tick vs the Python loop: x, full scale": big_rate / loop_rate,
    }
    runs = {f"drain 5GiB x400, first {args.drain_minutes}m": drain_scenario("5GiB", args.drain_minutes),
            "drain 100MiB x400, to completion (8m)": drain_scenario("100MiB", 8),
            "bounce 2400 partitions (10m)": bounce_scenario()}
    for label, sc in runs.items():
        r = time_simulate(sc)
        out[f"{label}: simulated s per CPU s"] = r["sim_per_s"]
        out[f"{label}: simulated s per wall s"] = r["sim_per_wall_s"]
        out[f"{label}: M replica-ticks/s"] = r["replica_ticks_s"] / 1e6
    return out


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a live process and its descendants, with the children they reaped (Linux /proc)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            todo += [int(c) for t in Path(f"/proc/{p}/task").iterdir()
                     for c in (t / "children").read_text().split()]
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
    return total


def measure_plan(throttles: list[str], size_bytes: int) -> None:
    """`plan` end to end on the drain (Spark start included), then where the time went and each candidate's speed."""
    from replicaflow.jobs.plan import PlanArgs, plan
    from replicaflow.pipeline.session import get_spark

    assignment = round_robin(400, 6, 3)
    moves = []
    for p, replicas in enumerate(assignment):
        if 3 in replicas:
            free = [b for b in range(1, 7) if b not in replicas]
            moves.append({"topic": "orders", "partition": p,
                          "replicas": [free[p % len(free)] if b == 3 else b for b in replicas]})
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        lines = ["Topic: orders\tTopicId: bench\tPartitionCount: 400\tReplicationFactor: 3\t"
                 "Configs: min.insync.replicas=2"]
        lines += [f"\tTopic: orders\tPartition: {p}\tLeader: {r[0]}\tReplicas: {','.join(map(str, r))}\t"
                  f"Isr: {','.join(map(str, r))}" for p, r in enumerate(assignment)]
        (tmp / "describe.txt").write_text("\n".join(lines) + "\n")
        doc = {"version": 1, "brokers": [{"broker": b, "logDirs": [{"logDir": "/d", "error": None, "partitions": [
            {"partition": f"orders-{p}", "size": size_bytes, "offsetLag": 0, "isFuture": False}
            for p, r in enumerate(assignment) if b in r]}]} for b in range(1, 7)]}
        (tmp / "logdirs.json").write_text(json.dumps(doc))
        (tmp / "plan.json").write_text(json.dumps({"version": 1, "partitions": moves}))
        t0, c0 = time.perf_counter(), time.process_time()
        # as `plan` starts it (revisions before python_tasks_only started the default JVM)
        light = "python_tasks_only" in inspect.signature(get_spark).parameters
        spark = get_spark("local[2]", **({"python_tasks_only": True} if light else {}))
        started = time.perf_counter() - t0
        _, choice, text = plan(PlanArgs(reassignment=tmp / "plan.json", topics=tmp / "describe.txt",
                                        log_dirs=tmp / "logdirs.json", produce_rate=["orders=20MB/s"],
                                        throttle=throttles), spark=spark)
        wall, driver_cpu = time.perf_counter() - t0, time.process_time() - c0
        jvm = getattr(spark.sparkContext._gateway, "proc", None)
        spark_cpu = tree_cpu_s(jvm.pid) if jvm is not None else float("nan")
    print(text)
    runs = [r for r in (*choice.results, *choice.other_modes) if r.wall_s]
    cpu = sum(r.cpu_s for r in runs)
    print(f"\nplan, drain 400 x {size_bytes / 2**30:.3g}GiB, {len(throttles)} throttles in both quota modes "
          f"({len(runs)} Spark tasks on local[2]): {wall:.1f} s wall, Spark start included "
          f"(load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after; 2 cores)")
    print(f"  Spark session start {started:.1f} s; the answer after it {wall - started:.1f} s; the tasks' own CPU "
          f"{cpu:.1f} s in all ({cpu / 2:.1f} s on 2 free cores), their wall {sum(r.wall_s for r in runs):.1f} s")
    print(f"  CPU of the whole answer {driver_cpu + spark_cpu:.1f} s: the driver {driver_cpu:.1f} s, the JVM and its "
          f"Python workers {spark_cpu:.1f} s (tasks included)")
    for r in runs:
        print(f"  {r.label:<38} {r.simulated_ms / 1000:6.0f} sim s: {r.simulated_ms / 1000 / r.wall_s:5.0f} per wall s, "
              f"{r.simulated_ms / 1000 / r.cpu_s:5.0f} per CPU s, {r.replica_ticks / r.cpu_s / 1e6:5.2f} M replica-ticks/CPU s")


# ---------------------------------------------------------------------------------------- driver
def run_worker(tree: Path, argv: list[str]) -> dict:
    """The measurements in a fresh process importing replicaflow from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", *argv], env=env,
                          check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(args, argv: list[str]) -> None:
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline], check=True,
                         capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="replicaflow-bench-") as tmp:
        tree = Path(tmp) / rev
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
        try:
            results: dict[str, list[dict]] = {"base": [], "this": []}
            for i in range(args.repeat):
                for side, where in (("base", tree), ("this", ROOT)):
                    print(f"run {i + 1}/{args.repeat}: {'baseline ' + rev if side == 'base' else 'this tree'} ...",
                          file=sys.stderr, flush=True)
                    results[side].append(run_worker(where, argv))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    best = {side: {k: max(r[k] for r in runs) for k in runs[0]} for side, runs in results.items()}
    print(f"best of {args.repeat} alternating runs; baseline = {rev}, this = the working tree")
    for label in best["this"]:
        base, this = best["base"][label], best["this"][label]
        name, unit = label.split(": ", 1)
        print(f"{name}\n  {unit:<26} base {base:9.2f}   this {this:9.2f}   x{this / base:5.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brokers", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=50_000)
    ap.add_argument("--ticks", type=int, default=300)
    ap.add_argument("--small-partitions", type=int, default=600)
    ap.add_argument("--small-ticks", type=int, default=50)
    ap.add_argument("--drain-minutes", type=int, default=10)
    ap.add_argument("--baseline", metavar="REV", help="also measure git revision REV, alternating")
    ap.add_argument("--repeat", type=int, default=2, help="alternations with --baseline (best of)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--plan", action="store_true", help="time `replicaflow plan` on the 5 GiB drain instead")
    ap.add_argument("--plan-size", default=5 * 2**30, type=int, help="partition size of --plan, bytes")
    args = ap.parse_args()
    if args.plan:
        measure_plan(["50MB/s", "60MB/s", "70MB/s", "85MB/s", "100MB/s"], args.plan_size)
    elif args.worker:
        print(json.dumps(measure(args)))
    elif args.baseline:
        sizes = ("brokers", "partitions", "ticks", "small_partitions", "small_ticks", "drain_minutes")
        compare(args, [x for k in sizes for x in (f"--{k.replace('_', '-')}", str(getattr(args, k)))])
    else:
        for label, value in measure(args).items():
            print(f"{label:<66} {value:9.2f}")


if __name__ == "__main__":
    main()
