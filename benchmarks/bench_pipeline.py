"""Pipeline benchmark (README, Performance): `analyze` against a floor job, at 1 h, N h and a fleet.

A 50-broker, 50,000-partition (RF 3) cluster is simulated for one hour (scrape 30 s, two broker
outages); longer runs and fleets are made from that hour (benchmarks/synth.py: N hours laid end to
end, or N copies under other cluster names, in the simulator's format). For each input and each
master it times, in one session with a driver JVM of its own (started for it, exited after it):
- floor: read the Parquet of every telemetry table and one groupBy over replica_offsets;
- analyze: `replicaflow.pipeline.runner.analyze` writing every analysis table,
and prints rows, both times, the ratio, the driver JVM's peak heap and where the JVMs' CPU went in the
last `analyze` (the JIT compilers, the tasks, the collector; on the standalone master the driver's and the
executor's JVM apart). Each job runs ``--runs``
times (default 2); the figures use the last run (steady state: the first pays the JIT and Spark's
code generation). Goals: analyze ≤ 2.5× the floor at every size; N hours ≤ 1.1·N × one hour; a
fleet of N clusters ≤ 1.1·N × one cluster. ``--master standalone`` starts a Spark master and one
2-core worker on 127.0.0.1 (as tests/pipeline/test_cluster.py does) and runs the same jobs there.
``--demo`` times `replicaflow demo` end to end (a fresh process, as a user runs it) on each master, as
installed (with the class archive that `replicaflow setup` records) and without it. ``--bound`` then
repeats the floor and `analyze` in a second session, the same way, with `broker_metrics` replaced by
the cheapest query of its shape (``zero_broker_metrics``): what a rewrite of that table could win at
most, as a ratio to that session's floor.

Each part stays under ~10 minutes on 2 cores, so it can be run piece by piece:

    .venv/bin/python benchmarks/bench_pipeline.py --hours 1 --master local --keep /tmp/bench
    .venv/bin/python benchmarks/bench_pipeline.py --hours 1,8 --master local --keep /tmp/bench
    .venv/bin/python benchmarks/bench_pipeline.py --hours 1 --fleet 4 --master local,standalone --keep /tmp/bench
    .venv/bin/python benchmarks/bench_pipeline.py --hours none --demo --master local,standalone
    .venv/bin/python benchmarks/bench_pipeline.py --hours 1 --master local --runs 3 --bound --keep /tmp/bench
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import NamedTuple, TypeVar

import pyarrow.parquet as pq
from pyspark.sql import functions as F
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import rename_cluster, repeat_hours  # noqa: E402

from replicaflow.pipeline import class_archive  # noqa: E402
from replicaflow.pipeline.runner import analyze  # noqa: E402
from replicaflow.pipeline.session import get_spark, stop_jvm  # noqa: E402
from replicaflow.pipeline.standalone import BIN, standalone  # noqa: E402
from replicaflow.telemetry.schema import TELEMETRY  # noqa: E402

T = TypeVar("T")
LOCAL = "local[2]"
WORKER_CORES = 2

SCENARIO = """\
name: bench-1h
seed: 42
duration: 1h
tick: {tick}
scrape_interval: {scrape}
kafka:
  version: "3.7"
cluster:
  brokers: {brokers}
  racks: 5
topics:
{topics}
events:
  - {{at: 10m, broker_down: 7}}
  - {{at: 20m, broker_up: 7}}
  - {{at: 30m, broker_down: 19}}
  - {{at: 34m, broker_up: 19}}
"""

TOPIC = """  - name: t{i:03d}
    partitions: {partitions}
    replication_factor: 3
    min_insync_replicas: 2
    produce_rate: 5MB/s
    message_size: 1KiB
    initial_size: 100MB
"""


def write_scenario(path: Path, brokers: int, partitions: int, topics: int, tick: str, scrape: str) -> Path:
    per_topic = partitions // topics
    text = SCENARIO.format(brokers=brokers, tick=tick, scrape=scrape,
                           topics="".join(TOPIC.format(i=i, partitions=per_topic) for i in range(topics)))
    path.write_text(text)
    return path


def floor_job(spark, roots: list[Path]) -> None:
    """Read every table's Parquet fully and run one groupBy on replica_offsets (the floor)."""
    for name in TELEMETRY:
        df = spark.read.parquet(*[str(r / "telemetry" / name) for r in roots])
        if name == "replica_offsets":
            df = df.groupBy("cluster", "topic", "partition").agg(F.max("log_end_offset").alias("leo"),
                                                                  F.sum("size_bytes").alias("size"))
        df.write.format("noop").mode("overwrite").save()


class HeapPeak:
    """The driver JVM's peak heap (sum of its heap pools' peaks) since the last reset."""

    def __init__(self, spark):
        self.pools = [p for p in spark.sparkContext._jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
                      if str(p.getType()) == "Heap memory"]

    def reset(self) -> None:
        for p in self.pools:
            p.resetPeakUsage()

    def peak_mb(self) -> float:
        return sum(p.getPeakUsage().getUsed() for p in self.pools) / 2**20


def jvm_cpu_s(spark) -> float:
    """CPU seconds (user + system) of the driver's JVM so far — in local mode, all of Spark's work.

    Unlike wall time it does not grow when other processes share the cores.
    """
    return cpu_s(Path(f"/proc/{spark.sparkContext._gateway.proc.pid}/stat"))


def cpu_s(stat: Path) -> float:
    """User + system CPU seconds of a process or thread from its ``/proc`` stat file."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# HotSpot's names for its threads (``/proc/<pid>/task/<tid>/comm``, cut to 15 characters) → what they do
THREAD_KINDS = (("C2 CompilerThre", "JIT"), ("C1 CompilerThre", "JIT"), ("Executor task", "tasks"),
                ("GC Thread", "GC"), ("VM Thread", "GC"))


def thread_cpu_s(pid: int) -> dict[tuple[str, int], float]:
    """(kind, thread id) → CPU seconds so far of each live thread of JVM ``pid`` (``THREAD_KINDS``, else 'other')."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            comm, cpu = (task / "comm").read_text().strip(), cpu_s(task / "stat")
        except OSError:  # the thread ended while listed
            continue
        out[(next((k for prefix, k in THREAD_KINDS if comm.startswith(prefix)), "other"), int(task.name))] = cpu
    return out


def by_kind(before: dict[tuple[str, int], float], after: dict[tuple[str, int], float]) -> dict[str, float]:
    """CPU seconds per thread kind between two ``thread_cpu_s``; a thread that ended in between is not counted."""
    total: Counter[str] = Counter()
    for (kind, tid), cpu in after.items():
        total[kind] += cpu - before.get((kind, tid), 0.0)
    return dict(total)


def executor_pids(worker_pid: int | None) -> list[int]:
    """The executor JVMs that the standalone worker ``worker_pid`` started (its child processes)."""
    if worker_pid is None:
        return []
    pids = []
    for task in Path(f"/proc/{worker_pid}/task").iterdir():
        with contextlib.suppress(OSError):  # the thread ended while listed
            pids += [int(c) for c in (task / "children").read_text().split()]
    return pids


def threads_during(spark, job: Callable[[], T], worker_pid: int | None) -> tuple[T, dict[str, dict[str, float]]]:
    """``job()``, and the CPU seconds per thread kind that the driver JVM and the executor JVMs (summed) spent
    meanwhile."""
    pids = {"driver": [spark.sparkContext._gateway.proc.pid], "executor": executor_pids(worker_pid)}

    def snapshot() -> dict[str, dict[tuple[str, int], float]]:  # thread ids are unique across processes
        return {role: {k: v for p in ps for k, v in thread_cpu_s(p).items()} for role, ps in pids.items() if ps}

    before = snapshot()
    result = job()
    return result, {role: by_kind(before[role], threads) for role, threads in snapshot().items()}


def timed(spark, job, *args, **kwargs) -> tuple[float, float]:
    """(wall s, driver JVM CPU s) of ``job(*args, **kwargs)``."""
    cpu, start = jvm_cpu_s(spark), time.perf_counter()
    job(*args, **kwargs)
    return time.perf_counter() - start, jvm_cpu_s(spark) - cpu


def rows(roots: list[Path]) -> int:
    return sum(pq.ParquetFile(f).metadata.num_rows
               for r in roots for f in (r / "telemetry" / "replica_offsets").glob("*.parquet"))


def masters(names: list[str], work: Path, memory: str) -> Iterator[tuple[str, str, int | None]]:
    """(label, master URL, the standalone worker's pid or None) for each requested master, a standalone one
    running while its label is current."""
    for name in names:
        if name == "local":
            yield f"local mode ({LOCAL})", LOCAL, None
        else:
            folder = work / "standalone"
            folder.mkdir(parents=True, exist_ok=True)
            with standalone(folder, WORKER_CORES, memory) as cluster:
                yield f"standalone, one {WORKER_CORES}-core worker ({cluster.url})", cluster.url, cluster.worker_pid


def prepare(args, work: Path, console: Console) -> dict[str, list[Path]]:
    """The inputs by label: '1h', 'Nh' (hours laid end to end) and 'N clusters' (each 1 h)."""
    from replicaflow.sim.runner import simulate

    base = work / "1h"
    if not (base / "telemetry" / "_meta.json").exists():
        scenario = write_scenario(work / "bench-1h.yaml", args.brokers, args.partitions, args.topics, args.tick,
                                  args.scrape)
        t0 = time.perf_counter()
        simulate(scenario, base, progress=True)
        console.print(f"simulated 1h in {time.perf_counter() - t0:.0f}s")
    inputs: dict[str, list[Path]] = {}
    for hours in args.hours:
        root = base if hours == 1 else work / f"{hours}h"
        if not (root / "telemetry" / "_meta.json").exists():
            t0 = time.perf_counter()
            repeat_hours(base, root, hours)
            console.print(f"synthesized {hours}h from the simulated hour in {time.perf_counter() - t0:.0f}s")
        inputs[f"{hours}h"] = [root]
    if args.fleet:
        fleet = []
        for i in range(args.fleet):
            root = work / f"fleet-{i}"
            if not (root / "telemetry" / "_meta.json").exists():
                rename_cluster(base, root, f"bench-1h-c{i}")
            fleet.append(root)
        inputs[f"{args.fleet} clusters × 1h"] = fleet
    return inputs


@contextlib.contextmanager
def zero_broker_metrics() -> Iterator[None]:
    """While open, `analyze` writes the cheapest `broker_metrics` of the table's shape: every live broker's
    metrics at every scrape, all 0, and no lag gauge rows (so no scan of replica_offsets for them; the
    small job that finds their spans still runs, as ``runner.build`` asks for the lagging replicas
    before the lag gauges). A bound, not a product: what a rewrite of the table could win at most
    (docs/pipeline-measurements.md, What a rewrite of broker_metrics could win at most)."""
    from replicaflow.pipeline import metrics as M

    def zeros(tables, meta):
        return (M.metric_grid(M.broker_grid(tables["brokers"], meta), meta)
                .select("cluster", "ts_ms", F.col("broker").cast("int"), "name", F.lit(0.0).alias("value")))

    saved = M.broker_metrics, M.lag_metrics
    M.broker_metrics = lambda state, events, tables, meta: zeros(tables, meta)
    M.lag_metrics = lambda lagging, state, tables, meta: zeros(tables, meta).limit(0)
    try:
        yield
    finally:
        M.broker_metrics, M.lag_metrics = saved


class Figures(NamedTuple):
    """One input's figures in one session; a run is (wall s, driver JVM CPU s)."""

    rows: int
    floor: list[tuple[float, float]]
    took: list[tuple[float, float]]
    heap_mb: float  # the driver's peak heap
    threads: dict[str, dict[str, float]]  # the last analyze run's CPU by JVM and thread kind (threads_during)


def bench_inputs(spark, inputs: dict[str, list[Path]], work: Path, runs: int,
                 worker_pid: int | None = None) -> dict[str, Figures]:
    """label → its figures; ``worker_pid``: the standalone worker whose executors run the tasks."""
    heap = HeapPeak(spark)
    figures = {}
    for label, roots in inputs.items():
        heap.reset()
        out = work / "out" / label.replace(" ", "_")
        floor = [timed(spark, floor_job, spark, roots) for _ in range(runs)]
        run = partial(timed, spark, partial(analyze, roots, out, spark=spark))
        took = [run() for _ in range(runs - 1)]
        last, threads = threads_during(spark, run, worker_pid)
        figures[label] = Figures(rows(roots), floor, [*took, last], heap.peak_mb(), threads)
    return figures


def in_session(master: str, inputs: dict[str, list[Path]], work: Path, runs: int,
               worker_pid: int | None = None) -> dict[str, Figures]:
    """``bench_inputs`` in a session with a driver JVM of its own, which exits at the end: each session's
    runs start from a cold JIT, whichever session ran before."""
    spark = get_spark(master, app_name="bench-pipeline")
    try:
        return bench_inputs(spark, inputs, work, runs, worker_pid)
    finally:
        stop_jvm(spark)


def walls(runs: list[tuple[float, float]]) -> str:
    """Every run's wall time, as 'a / b / c'."""
    return " / ".join(f"{w:.1f}s" for w, _ in runs)


def ratio(took: list[tuple[float, float]], floor: list[tuple[float, float]], cpu: bool = False) -> str:
    """The last run of ``took`` over the last of ``floor``, in wall time or JVM CPU time."""
    i = 1 if cpu else 0
    return f"{took[-1][i] / floor[-1][i]:.2f}×"


def threads_text(threads: dict[str, dict[str, float]]) -> str:
    """'driver: JIT 7.0s, tasks 7.7s, GC 1.4s, other 2.6s; executor: …' (``threads_during``)."""
    order = [kind for _, kind in THREAD_KINDS] + ["other"]
    return "; ".join(f"{role}: " + ", ".join(f"{k} {spent[k]:.1f}s" for k in dict.fromkeys(order) if k in spent)
                     for role, spent in threads.items())


def print_figures(console: Console, title: str, figures: dict[str, Figures], hours: list[int], fleet: int,
                  local: bool, bounds: dict[str, Figures] | None = None) -> None:
    """Wall times of every run (figures: the last), and in local mode the JVM's CPU time of the last run;
    ``bounds``: the figures of the session with ``zero_broker_metrics``."""
    table = Table(title=title)
    cols = (["input", "rows", "floor", "analyze", "ratio", "heap"] + (["CPU ratio"] if local else [])
            + (["bound"] if bounds else []))
    for col in cols:
        table.add_column(col, justify="right")
    for label, f in figures.items():
        row = [label, f"{f.rows / 1e6:.1f}M", f"{f.floor[-1][0]:.1f}s", f"{f.took[-1][0]:.1f}s",
               ratio(f.took, f.floor), f"{f.heap_mb / 1024:.1f}GB"]
        if local:
            row += [ratio(f.took, f.floor, cpu=True)]
        if bounds:
            row += [ratio(bounds[label].took, bounds[label].floor)]
        table.add_row(*row)
    console.print(table)
    for label, f in figures.items():
        console.print(f"{label}: floor runs {walls(f.floor)}, analyze runs {walls(f.took)}" +
                      (f"; JVM CPU {f.floor[-1][1]:.1f}s / {f.took[-1][1]:.1f}s" if local else ""))
        console.print(f"{label}: the last analyze's CPU by thread: {threads_text(f.threads)}")
        if bounds:
            b = bounds[label]
            console.print(f"{label}, bound session: floor runs {walls(b.floor)}, analyze runs {walls(b.took)}")
    console.print("rows: replica_offsets rows; floor, analyze: wall time of the last run; ratio: analyze / floor "
                  "(goal ≤ 2.5×); heap: the driver JVM's peak heap" +
                  ("; CPU ratio: the same ratio in the JVM's CPU time" if local else "") +
                  ("; bound: the ratio with broker_metrics all zeros, in a second session" if bounds else ""))
    one = figures.get("1h")
    if one is None:
        return
    for h in hours:
        if h > 1:
            console.print(f"{h}h / 1h analyze time: {figures[f'{h}h'].took[-1][0] / one.took[-1][0]:.2f}× "
                          f"(goal ≤ {1.1 * h:.1f}×)")
    if fleet:
        console.print(f"{fleet} clusters / 1 cluster analyze time: "
                      f"{figures[f'{fleet} clusters × 1h'].took[-1][0] / one.took[-1][0]:.2f}× "
                      f"(goal ≤ {1.1 * fleet:.1f}×)")


def print_cluster_cost(console: Console, analyzed: dict[bool, dict[str, Figures]], demos: dict[bool, float]) -> None:
    """With both masters in one run (keys: True for local mode): the standalone worker's time over local
    mode's for each input and the demo, measured minutes apart on the same cores (goal ≤ 1.0×)."""
    parts = []
    if len(analyzed) == 2:
        for label, f in analyzed[False].items():
            parts.append(f"{label} {f.took[-1][0] / analyzed[True][label].took[-1][0]:.2f}×")
    if len(demos) == 2:
        parts.append(f"demo {demos[False] / demos[True]:.2f}×")
    if parts:
        console.print(f"standalone / local time: {', '.join(parts)} (goal ≤ 1.0×)")


def time_demo(master: str, work: Path, archive: bool = True) -> float:
    """`replicaflow demo` end to end in a fresh process (its own JVM), as a user runs it; ``archive=False``
    without the class archive that `replicaflow setup` records (pipeline/class_archive.py)."""
    out = work / "demo"
    shutil.rmtree(out, ignore_errors=True)
    if master == LOCAL:
        cmd = [str(BIN / "replicaflow"), "demo", "--out", str(out)]
    else:
        cmd = [sys.executable, "-c", "import sys; from pathlib import Path; from replicaflow.jobs.demo import run_demo; "
               "run_demo(Path(sys.argv[1]), master=sys.argv[2], progress=False)", str(out), master]
    env = {**os.environ, **({} if archive else {class_archive.ARCHIVE_ENV: "off"})}
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"demo failed: {done.stderr[-2000:]}")
    return took


def ensure_class_archive() -> None:
    """The demo is timed as installed: `make install` and `make demo` run `replicaflow setup --if-missing`, so
    this does too (not timed; it returns at once when the archive exists, and prints its path)."""
    subprocess.run([str(BIN / "replicaflow"), "setup", "--if-missing"], check=True)


def core_speed_s() -> float:
    """Seconds one Python thread takes for a fixed loop: the same machine has been about three times slower
    on some days than on others, with no steal time to show it, and this line lets runs of different days be
    compared (a ratio measured within one run is unaffected)."""
    start = time.perf_counter()
    sum(range(10**8))
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", default="1,8", help="telemetry lengths in hours, comma-separated, or 'none'")
    ap.add_argument("--fleet", type=int, default=0, help="also a fleet of this many 1h clusters in one analyze")
    ap.add_argument("--master", default="local", help="comma-separated: local (local[2]) and/or standalone")
    ap.add_argument("--demo", action="store_true", help="also time `replicaflow demo` end to end on each master")
    ap.add_argument("--runs", type=int, default=2, help="runs of each job in one session; figures use the last")
    ap.add_argument("--bound", action="store_true", help="also, in a second session, analyze with broker_metrics "
                                                         "all zeros: what a rewrite of it could win at most")
    ap.add_argument("--brokers", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=50_000)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--tick", default="1s", help="simulation tick (a divisor of the scrape interval)")
    ap.add_argument("--scrape", default="30s", help="scrape interval")
    ap.add_argument("--worker-memory", default="4g", help="the standalone worker's (and executor's) memory")
    ap.add_argument("--keep", type=Path, help="keep the generated telemetry here (reused by later runs)")
    args = ap.parse_args()
    args.hours = [] if args.hours == "none" else sorted({int(h) for h in args.hours.split(",")})
    if (args.fleet or any(h > 1 for h in args.hours)) and 1 not in args.hours:
        args.hours.insert(0, 1)  # the ratios need the 1h figure of the same run
    names = [m.strip() for m in args.master.split(",")]
    if not set(names) <= {"local", "standalone"}:
        ap.error("--master takes local and/or standalone")
    if args.runs < 1:
        ap.error("--runs takes a number ≥ 1")
    if args.brokers < 19:
        ap.error("--brokers takes 19 or more: the scenario takes brokers 7 and 19 down")

    console = Console()
    console.print(f"load average at start: {os.getloadavg()[0]:.2f}, {os.getloadavg()[1]:.2f}, "
                  f"{os.getloadavg()[2]:.2f} ({os.cpu_count()} cores); one core's speed: "
                  f"sum(range(10**8)) took {core_speed_s():.2f}s")
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("REPLICAFLOW_EXECUTOR_MEMORY", args.worker_memory)
    try:
        inputs = prepare(args, work, console) if args.hours or args.fleet else {}
        analyzed: dict[bool, dict[str, Figures]] = {}
        demos: dict[bool, float] = {}
        if args.demo:
            ensure_class_archive()
        for label, master, worker_pid in masters(names, work, args.worker_memory):
            if inputs:
                analyzed[master == LOCAL] = in_session(master, inputs, work, args.runs, worker_pid)
                bounds = None
                if args.bound:
                    with zero_broker_metrics():
                        bounds = in_session(master, inputs, work, args.runs, worker_pid)
                print_figures(console, f"analyze on {label}: {args.brokers} brokers, {args.partitions:,} "
                                       f"partitions, RF 3, scrape {args.scrape}", analyzed[master == LOCAL],
                              args.hours, args.fleet, master == LOCAL, bounds)
            if args.demo:
                demos[master == LOCAL] = time_demo(master, work)
                bare = time_demo(master, work, archive=False)
                console.print(f"replicaflow demo on {label}: {demos[master == LOCAL]:.1f}s end to end (goal ≤ 30s); "
                              f"without the class archive {bare:.1f}s "
                              f"(with / without: {demos[master == LOCAL] / bare:.2f}×)")
        print_cluster_cost(console, analyzed, demos)
        console.print(f"load average at end: {os.getloadavg()[0]:.2f}, {os.getloadavg()[1]:.2f}, "
                      f"{os.getloadavg()[2]:.2f}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
