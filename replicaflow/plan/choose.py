"""Which throttles to simulate, running them as Spark tasks, and the one to recommend (docs/plan.md).

Candidates are the throttles given with ``--throttle``, else a ladder up to the headroom throttle
(``build.headroom_throttle_bps``). A candidate the rates already rule out (``build.never_finishes``)
is reported without a simulation. The rest run as parallel Spark tasks,
``parallelize(specs).map(run_candidate)``, each returning its small summary. The recommendation
is the smallest throttle meeting ``--deadline`` (on the ladder, narrowed to the MB/s by
:func:`refinement`), else the smallest as fast as the largest keeping headroom on every broker.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import tempfile
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import replicaflow
from replicaflow.errors import ReplicaflowError
from replicaflow.model.units import counted, format_duration, format_rate
from replicaflow.pipeline.session import java_reason, jvm_gone
from replicaflow.plan.build import MB, Move, candidate, headroom_throttle_bps, never_finishes, whole_mb_bps
from replicaflow.plan.candidate import CandidateResult, run_candidate
from replicaflow.plan.inputs import ClusterModel

LADDER = (0.2, 0.4, 0.6, 0.8, 1.0)  # shares of the headroom throttle tried without --throttle
REFINE_ROUNDS = 4                    # with --deadline: rounds that narrow the ladder's bracket
REFINE_POINTS = 2                    # throttles each round tries inside the bracket (one Spark task each)
_JOB_GROUPS = itertools.count(1)     # one Spark job group per candidate job, for its progress
AS_FAST = 1.01                       # a throttle within 1 % of the fastest time keeping headroom is as fast


@dataclass
class Choice:
    results: list[CandidateResult]
    recommended: CandidateResult | None
    why: str
    headroom_bps: float
    headroom_broker: int
    # each of ``results`` in the other quota mode; None for a throttle only the deadline's refinement tried
    other_modes: list[CandidateResult | None] = field(default_factory=list)

    @property
    def other_mode(self) -> CandidateResult | None:
        """The recommended throttle in the other quota mode (KIP-73 against KIP-542 at the choice)."""
        if self.recommended is None:
            return None
        return next((r for r in self.other_modes if r is not None and r.throttle_bps == self.recommended.throttle_bps),
                    None)


def throttles(cluster: ClusterModel, given: list[float], moves: list[Move] | None = None
              ) -> tuple[list[float], float, int]:
    head, who = headroom_throttle_bps(cluster, moves)
    if given:
        return sorted(set(given)), head, who
    return [max(MB, whole_mb_bps(head * share)) for share in LADDER], head, who


def ship_package(sc) -> None:
    """Spark's Python workers import replicaflow from a zip of this very package (``addPyFile``), so a
    worker started elsewhere (``--master spark://…``, or a checkout not installed) runs the same engine."""
    if getattr(sc, "_replicaflow_shipped", False):
        return
    root = Path(replicaflow.__file__).resolve().parent
    folder = Path(tempfile.mkdtemp(prefix="replicaflow-plan-"))
    zipped = folder / "replicaflow.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(root.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                z.write(f, Path("replicaflow") / f.relative_to(root))
    sc.addPyFile(str(zipped))
    sc._replicaflow_shipped = True


def run_specs(spark, specs: list, step: Callable[[str], None] = lambda text: None) -> list[CandidateResult]:
    """Every candidate as its own Spark task (``local[N]`` runs N at a time; a cluster spreads them).

    ``step`` hears how many have finished: a candidate can take minutes (a throttle of a few bytes/s
    simulates up to 30 days), and a command that said nothing meanwhile looked hung."""
    if not specs:
        return []
    sc = spark.sparkContext
    ship_package(sc)
    group = f"replicaflow-plan-{next(_JOB_GROUPS)}"
    sc.setJobGroup(group, f"plan: {len(specs)} candidate simulations")
    stop = threading.Event()
    watch = threading.Thread(target=_tell_progress, args=(sc, group, len(specs), step, stop), daemon=True,
                             name="replicaflow-plan-progress")
    watch.start()
    try:
        results = sc.parallelize(specs, len(specs)).map(run_candidate).collect()
    except Exception as exc:
        if not jvm_gone(exc):  # a failing candidate is a string, not an exception: anything else is a bug
            raise
        raise ReplicaflowError(f"plan: Spark failed running {len(specs)} candidates: {java_reason(exc)}") from None
    finally:
        stop.set()
        watch.join()
        with contextlib.suppress(Exception):  # a JVM that died has no job group left to clear
            sc.setLocalProperty("spark.jobGroup.id", None)
    refused = next((r for r in results if isinstance(r, str)), None)
    if refused is not None:  # '<plan>: events[1].fail_partition: …': the index is the candidate's, not the file's
        event = re.sub(r"^<plan>: events\[[0-9]+\]\.", "", refused)
        raise ReplicaflowError(f"plan: the simulation cannot run a scenario event: {event}")
    return results


def _tell_progress(sc, group: str, total: int, step: Callable[[str], None], stop: threading.Event) -> None:
    """``step`` at the start and each time another candidate of the job ``group`` finished, from Spark's
    status tracker (polled each second until ``stop``)."""
    tracker, told = sc.statusTracker(), -1
    while True:
        try:
            stages = [s for j in tracker.getJobIdsForGroup(group) if (job := tracker.getJobInfo(j)) is not None
                      for s in job.stageIds]
            done = sum(info.numCompletedTasks for s in stages if (info := tracker.getStageInfo(s)) is not None)
        except Exception:  # the JVM stopped answering: run_specs says why
            return
        if done != told:
            told = done
            step(f"plan: simulating {counted(total, 'candidate')} on Spark, {done} done")
        if stop.wait(1.0):
            return


def unable(label: str, throttle: float, kip542: bool, reason: str) -> CandidateResult:
    return CandidateResult(label=label, throttle_bps=throttle, kip542=kip542, finished=False, duration_ms=0,
                           reason=reason, eta_ms={}, start_ms={}, bytes_left={}, batches=[], bottleneck=None, flags={},
                           brokers=[])


def evaluate(spark, cluster: ClusterModel, moves: list[Move], given: list[float], kip542: bool,
             max_per_broker: int | None, deadline_ms: int | None,
             step: Callable[[str], None] = lambda text: None) -> Choice:
    """Simulate every candidate in both quota modes in one Spark job (the chosen mode recommends; the other
    shows KIP-73 against KIP-542 at each throttle), then recommend one."""
    rates, head, who = throttles(cluster, given, moves)
    results: dict[tuple[float, bool], CandidateResult] = {}

    def run(pairs: list[tuple[float, bool]]) -> None:
        specs = []
        for rate, mode in pairs:
            label = f"throttle {format_rate(rate)}" + ("" if mode == kip542 else (" KIP-542" if mode else " KIP-73"))
            reason = never_finishes(cluster, moves, rate, mode)
            if reason is not None:
                results[(rate, mode)] = unable(label, rate, mode, reason)
            else:
                specs.append(candidate(cluster, moves, rate, mode, max_per_broker, label))
        specs.sort(key=lambda s: s.throttle_bps)  # the slowest first: they set the job's length
        for r in run_specs(spark, specs, step):
            results[(r.throttle_bps, r.kip542)] = r

    run([(rate, mode) for rate in rates for mode in (kip542, not kip542)])
    if deadline_ms is not None and not given:
        for _ in range(REFINE_ROUNDS):
            inside = refinement(sorted(r for r, m in results if m == kip542),
                                lambda r: _meets(results[(r, kip542)], deadline_ms))
            if not inside:
                break
            run([(rate, kip542) for rate in inside])
    every = sorted(r for r, m in results if m == kip542)
    ordered = [results[(r, kip542)] for r in every]
    best, why = recommend(ordered, head, deadline_ms)
    if best is not None and deadline_ms is not None and _meets(best, deadline_ms):
        below = [r for r in ordered if r.throttle_bps < best.throttle_bps]
        if below:
            why += f"; {format_rate(below[-1].throttle_bps)} misses it"
    return Choice(ordered, best, why, head, who, [results.get((r, not kip542)) for r in every])


def _meets(r: CandidateResult, deadline_ms: int) -> bool:
    return r.finished and r.duration_ms <= deadline_ms


def refinement(tried: list[float], meets) -> list[float]:
    """The throttles, in whole MB/s, that split the bracket between the largest tried throttle that misses
    the deadline (or 0) and the smallest that meets it into :data:`REFINE_POINTS` + 1 parts; none once
    the bracket is 1MB/s wide, or no tried throttle meets the deadline. So "which throttle finishes in
    2h" is answered to within a few MB/s, not to the ladder's 20 % steps."""
    meeting = [r for r in tried if meets(r)]
    if not meeting:
        return []
    hi = min(meeting)
    lo = max((r for r in tried if r < hi), default=0.0)
    step = (hi - lo) / (REFINE_POINTS + 1)
    inside = {whole_mb_bps(lo + step * k) for k in range(1, REFINE_POINTS + 1)}
    return sorted(r for r in inside if lo < r < hi and r >= MB)


def recommend(ordered: list[CandidateResult], head_bps: float,
              deadline_ms: int | None) -> tuple[CandidateResult | None, str]:
    """The smallest throttle meeting the deadline, else the smallest as fast as the fastest (the largest that
    finishes, unless the fetch size or the network already outpaces it); without a deadline the
    smallest that is as fast as the largest keeping headroom (a higher throttle that the fetch size or the
    network already outpaces only lets a burst through), else (none keeps headroom) the smallest that
    finishes. And why, in words."""
    done = [r for r in ordered if r.finished]
    if not done:
        return None, "no candidate can finish"
    if deadline_ms is not None:
        meeting = [r for r in done if r.duration_ms <= deadline_ms]
        if meeting:
            return min(meeting, key=lambda r: r.throttle_bps), "the smallest throttle that meets the deadline"
        largest = max(done, key=lambda r: r.throttle_bps)
        fastest = min(r.duration_ms for r in done)
        as_fast = min((r for r in done if r.duration_ms <= fastest * AS_FAST), key=lambda r: r.throttle_bps)
        if as_fast is largest:
            return largest, "no candidate meets the deadline; the largest that finishes"
        return as_fast, ("no candidate meets the deadline; the smallest throttle as fast as the fastest: "
                         f"{format_rate(largest.throttle_bps)} takes {format_duration(largest.duration_ms)}")
    fitting = [r for r in done if r.throttle_bps <= head_bps + 1]
    if fitting:
        largest = max(fitting, key=lambda r: r.throttle_bps)
        as_fast = min((r for r in fitting if r.duration_ms <= largest.duration_ms * AS_FAST),
                      key=lambda r: r.throttle_bps)
        if as_fast is largest:
            return largest, "the largest throttle that keeps headroom on every broker"
        return as_fast, (f"the smallest throttle as fast as the largest keeping headroom: "
                         f"{format_rate(largest.throttle_bps)} takes {format_duration(largest.duration_ms)}")
    return (min(done, key=lambda r: r.throttle_bps),
            f"none keeps headroom ({format_rate(head_bps)}); the smallest throttle that finishes")
