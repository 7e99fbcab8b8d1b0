"""`replicaflow plan`: Kafka's tool outputs and a reassignment → how long, who suffers, which throttle.

Every input is read and checked before Spark starts (plan/inputs.py); the candidates then run as
Spark tasks (plan/choose.py) and the answer is printed and, with ``--out``, written as ``OUT/plan/``
(``reassignment.json`` when generated, ``plan.json``, ``plan.html``) in one commit (docs/plan.md).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from replicaflow.errors import ReplicaflowError, quote
from replicaflow.model.configs import MAX_MIN_ISR
from replicaflow.model.units import parse_duration_ms, parse_id
from replicaflow.model.version import KafkaVersion, written_release
from replicaflow.plan.build import (
    batches_of,
    beyond_horizon,
    candidate,
    generate,
    headroom_throttle_bps,
    moves_of,
)
from replicaflow.plan.choose import Choice, evaluate
from replicaflow.plan.inputs import (
    ClusterModel,
    brokers_text,
    cluster_from_describe,
    cluster_from_scenario,
    flag_rate_bps,
    isr_warnings,
    metrics_rates,
    produce_rates,
    read_reassignment,
)
from replicaflow.plan.render import console_text, html_section, plan_json

PLAN_DIR = "plan"  # what `plan --out OUT` writes into OUT


@dataclass
class PlanArgs:
    reassignment: Path | None = None
    topics: Path | None = None
    cluster: Path | None = None
    log_dirs: Path | None = None
    version: str | None = None
    produce_rate: list[str] = field(default_factory=list)
    metrics: Path | None = None
    throttle: list[str] = field(default_factory=list)
    deadline: str | None = None
    max_moves_per_broker: int | None = None
    kip542: bool = False
    generate: bool = False
    remove_brokers: list[int] = field(default_factory=list)
    brokers: list[int] = field(default_factory=list)
    racks: str | None = None
    disable_rack_aware: bool = False
    seed: int = 0
    network: str | None = None
    min_insync_replicas: int | None = None  # the brokers' default, for topics the describe shows no override of
    master: str = "local[2]"
    out: Path | None = None
    json_out: bool = False
    progress: bool = False   # say on stderr how the candidate simulations go


@dataclass
class Prepared:
    cluster: ClusterModel
    plan: dict
    moves: list
    throttles: list[float]
    deadline_ms: int | None
    plan_path: str
    generated: bool
    log_dirs: dict = field(default_factory=dict)   # (topic, partition) → the file's log_dirs, where given
    warnings: list[str] = field(default_factory=list)  # said on stderr before Spark starts


def _ids(flag: str, values: list[int]) -> list[int]:
    if len(set(values)) != len(values):
        raise ReplicaflowError(f"{flag}: a broker is listed twice")
    return values


def prepare(a: PlanArgs) -> Prepared:
    """Everything read and checked; raises one sentence on the first problem, before any simulation."""
    if (a.topics is None) == (a.cluster is None):
        raise ReplicaflowError("give the cluster with exactly one of --topics DESCRIBE.txt or --cluster CLUSTER.yaml")
    if a.generate == (a.reassignment is not None):
        raise ReplicaflowError("give exactly one of --reassignment PLAN.json or --generate")
    if a.cluster is not None and a.log_dirs is not None:
        raise ReplicaflowError("--log-dirs: only with --topics; a --cluster scenario gives each partition's size "
                               "as its topic's initial_size")
    if not a.generate and a.remove_brokers:
        raise ReplicaflowError("--remove-brokers: only with --generate")
    if a.cluster is not None and a.brokers and not a.generate:
        raise ReplicaflowError("--brokers: with --cluster, only with --generate (the scenario lists its brokers)")
    if a.max_moves_per_broker is not None and a.max_moves_per_broker < 1:
        raise ReplicaflowError(f"--max-moves-per-broker: expected at least 1, found {a.max_moves_per_broker}")
    if a.min_insync_replicas is not None and a.cluster is not None:
        raise ReplicaflowError("--min-insync-replicas: only with --topics; a --cluster scenario sets "
                               "cluster.min_insync_replicas")
    if a.min_insync_replicas is not None and not 1 <= a.min_insync_replicas <= MAX_MIN_ISR:
        raise ReplicaflowError(f"--min-insync-replicas: expected 1 to {MAX_MIN_ISR}, found {a.min_insync_replicas}")
    version = None
    if a.version is not None:
        try:
            version = str(written_release(a.version))
        except ReplicaflowError as exc:
            raise ReplicaflowError(f"--version: {exc}") from None
    if a.cluster is not None:
        from replicaflow.sim.scenario import DEFAULT_MAX_WORK

        cluster = cluster_from_scenario(a.cluster, DEFAULT_MAX_WORK, version)
    else:
        cluster = cluster_from_describe(a.topics, a.log_dirs, _ids("--brokers", a.brokers) or None,
                                        a.min_insync_replicas or 1)
    if a.racks is not None:
        cluster.racks = _racks(a.racks, cluster.brokers)
    if version is not None:
        cluster.version = version
    if not KafkaVersion.parse(cluster.version).replication_throttles:  # every candidate would run one regardless
        given = "--version" if a.version is not None else f"{a.cluster}: kafka.version"
        raise ReplicaflowError(f"{given}: plan compares replication throttles, which Kafka has from 0.10.1 "
                               f"(kafka-reassign-partitions --throttle, KIP-73); this cluster runs {cluster.version}")
    if a.network is not None:
        cluster.network_bps = flag_rate_bps("--network", a.network)
        if cluster.network_bps <= 0:
            raise ReplicaflowError("--network: expected a positive rate")
        cluster.nics = {}  # one NIC for all, over a scenario's own
    topics = set(cluster.topics())
    if a.produce_rate and a.metrics is not None:
        raise ReplicaflowError("give produce rates with --produce-rate or --metrics, not both")
    if a.metrics is not None:
        cluster.rate_bps.update(metrics_rates(a.metrics, topics))
    cluster.rate_bps.update(produce_rates(a.produce_rate, topics))
    throttles = [flag_rate_bps("--throttle", t) for t in a.throttle]
    if any(t <= 0 for t in throttles):
        raise ReplicaflowError("--throttle: expected a positive rate")
    # the tool's --throttle is a long of bytes/s: '0.5B/s' was simulated as given and printed as --throttle 0
    part = next((text for text, t in zip(a.throttle, throttles, strict=True) if t != int(t)), None)
    if part is not None:
        raise ReplicaflowError(f"--throttle: expected a whole number of bytes/s (kafka-reassign-partitions --throttle "
                               f"takes a long), found {quote(part)}")
    deadline_ms = None
    if a.deadline is not None:
        try:
            deadline_ms = parse_duration_ms(a.deadline)
        except ValueError as exc:
            raise ReplicaflowError(f"--deadline: {exc}") from None
        if deadline_ms <= 0:
            raise ReplicaflowError(f"--deadline: expected a positive duration like '2h', found {quote(a.deadline)}")
    if a.seed < 0:  # random.Random takes |seed|: -5 drew the plan of 5
        raise ReplicaflowError(f"--seed: expected 0 or more, found {a.seed}")
    if not a.generate and (a.seed or a.disable_rack_aware):
        raise ReplicaflowError("--seed and --disable-rack-aware only apply with --generate")
    if not a.generate and a.racks is not None:  # racks place --generate's replicas; a simulation does not read them
        raise ReplicaflowError("--racks: only with --generate (racks change where it places replicas, not how long "
                               "a given plan takes)")
    log_dirs: dict[tuple[str, int], list[str]] = {}
    if a.generate:
        if bool(a.remove_brokers) == bool(a.brokers):
            raise ReplicaflowError("--generate: give exactly one of --remove-brokers or --brokers")
        keep = _ids("--brokers", a.brokers) or [b for b in cluster.brokers
                                                if b not in _ids("--remove-brokers", a.remove_brokers)]
        unknown = [b for b in a.remove_brokers if b not in cluster.brokers]
        if unknown:
            raise ReplicaflowError(f"--remove-brokers: unknown broker {unknown[0]}")
        plan = generate(cluster, keep, rack_aware=not a.disable_rack_aware, seed=a.seed,
                        flag="--brokers" if a.brokers else "--remove-brokers")
        plan_path = str(a.out / PLAN_DIR / "reassignment.json") if a.out is not None else "reassignment.json"
    else:
        # The usual move onto a new broker: it holds no replica yet, so the describe output does not name it
        hint = ("; a broker that holds no replica yet is not in the describe output: list the cluster's brokers "
                "with --brokers" if a.topics is not None and not a.brokers else "")
        plan = read_reassignment(a.reassignment, cluster, log_dirs, hint)
        plan_path = str(a.reassignment)
    moves = moves_of(cluster, plan)
    if not moves:
        raise ReplicaflowError(f"{plan_path}: every partition already has the listed replicas; nothing to move"
                               + _log_dir_moves(plan, log_dirs))
    doomed = next((m for m in moves if m.topic in cluster.deleting), None)
    if doomed is not None:  # KafkaController.maybeTriggerPartitionReassignment skips it: UNKNOWN_TOPIC_OR_PARTITION
        made = ("--generate would move it (kafka-reassign-partitions --generate fails on it too: 'Topic not found')"
                if a.generate else f"{plan_path} moves it")
        raise ReplicaflowError(f"{cluster.deleting[doomed.topic]}: topic {quote(doomed.topic)} is marked for deletion; "
                               "Kafka refuses to reassign its partitions (KafkaController: UNKNOWN_TOPIC_OR_PARTITION), "
                               f"and {made}: {doomed.topic}-{doomed.partition}; plan once its deletion has completed")
    dark = next((m for m in moves if m.adding and (m.topic, m.partition) in cluster.offline), None)
    if dark is not None:  # simulated as if led by its first replica, it 'finished'; in Kafka it waits for a leader
        raise ReplicaflowError(f"{cluster.offline[dark.topic, dark.partition]}: partition {dark.topic}-{dark.partition}, "
                               "which the plan moves, has no leader (offline): its new replicas have nothing to copy "
                               "from until one is elected; plan from a describe taken once it is online")
    if a.log_dirs is not None:
        unsized = [m for m in moves if m.adding and (m.topic, m.partition) not in cluster.size_bytes]
        if unsized:
            m = unsized[0]
            raise ReplicaflowError(f"{a.log_dirs}: no online replica of {m.topic}-{m.partition}, which the plan "
                                   "moves; its size is unknown (run kafka-log-dirs --describe over every broker of the plan)")
    headroom_throttle_bps(cluster, moves)  # a NIC the produce traffic fills is one sentence now, not once Spark started
    _simulable(cluster, moves, a)
    return Prepared(cluster, plan, moves, throttles, deadline_ms, plan_path, a.generate, log_dirs,
                    isr_warnings(cluster))


def _log_dir_moves(plan: dict, log_dirs: dict[tuple[str, int], list[str]]) -> str:
    """What a plan that keeps every replica on its broker may still do: a ``log_dirs`` entry other than ``any``
    moves the replica between its broker's own directories (``ReassignPartitionsCommand`` calls
    ``alterReplicaLogDirs``; the copy runs at ``--replica-alter-log-dirs-throttle``, not the replication
    throttle), which ``plan`` does not simulate: said, not 'nothing to move'."""
    for (t, p), dirs in sorted(log_dirs.items()):
        named = [(b, d) for b, d in zip(plan[(t, p)], dirs, strict=True) if d != "any"]
        if named:
            b, d = named[0]
            return (f" between brokers; its log_dirs ({t}-{p} on broker {b}: {d}) move replicas between a broker's "
                    "own log directories, which the replication throttle does not cover "
                    "(--replica-alter-log-dirs-throttle) and plan does not simulate")
    return ""


def _simulable(cluster: ClusterModel, moves: list, a: PlanArgs) -> None:
    """The candidates' scenario is checked as a scenario file is (a produce rate whose log outgrows Kafka's
    64-bit offsets, say) before Spark starts; it was refused inside the first Spark job, as '<plan>: topics[0]'.
    Moves too large to finish within a candidate's horizon are refused too: each candidate ran its 30 days."""
    try:
        spec = candidate(cluster, moves, None, a.kip542, a.max_moves_per_broker, "check")
    except ReplicaflowError as exc:
        topics = cluster.topics()
        text = re.sub(r"topics\[(\d+)\]", lambda m: f"topic {quote(topics[int(m[1])])}", str(exc))
        raise ReplicaflowError(f"the cluster to plan on: {text.removeprefix('<plan>: ')}") from None
    problem = beyond_horizon(cluster, moves, spec)
    if problem:
        raise ReplicaflowError(problem)


def _racks(text: str, known: list[int]) -> dict[int, str]:
    """``--racks 1:a,2:b``: each broker's ``broker.rack`` (``kafka-topics --describe`` carries none)."""
    racks: dict[int, str] = {}
    for item in text.split(","):
        broker, sep, rack = item.partition(":")
        b = parse_id(broker)
        if not sep or not rack.strip() or not rack.isprintable() or b is None:
            raise ReplicaflowError(f"--racks: expected BROKER:RACK pairs like 1:a,2:b, found {quote(item)}")
        if b not in known:
            raise ReplicaflowError(f"--racks: unknown broker {b} (brokers: {brokers_text(known)})")
        if b in racks:
            raise ReplicaflowError(f"--racks: broker {b} is listed twice")
        racks[b] = rack.strip()
    return racks


def reassignment_json(plan: dict, log_dirs: dict | None = None) -> str:
    """The plan as ``kafka-reassign-partitions --generate`` prints its proposal (``log_dirs``: those the
    operator's file gave, else ``any``)."""
    return json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": list(r), "log_dirs": (log_dirs or {}).get((t, p), ["any"] * len(r))}
        for (t, p), r in sorted(plan.items())]})


def batch_files(prep: Prepared, max_per_broker: int | None, folder: Path) -> dict[str, str]:
    """``batch-K.json`` → its text, one per batch of ``--max-moves-per-broker`` (none for one batch): the files
    the printed commands run one after the other."""
    groups = batches_of(prep.moves, max_per_broker)
    if len(groups) == 1:
        return {}
    return {str(folder / f"batch-{k}.json"): reassignment_json(
        {(m.topic, m.partition): prep.plan[(m.topic, m.partition)] for m in group}, prep.log_dirs)
        for k, group in enumerate(groups, 1)}


def plan(a: PlanArgs, spark=None) -> tuple[Prepared, Choice, str]:
    """Check, simulate, recommend; returns the inputs, the choice and the text printed (JSON with ``--json``)."""
    from replicaflow.pipeline.progress import progress_steps, session_for
    from replicaflow.pipeline.session import check_master, get_spark

    prep = prepare(a)
    for warning in prep.warnings:
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    commit = None
    if a.out is not None:
        from replicaflow.telemetry.outputs import Commit

        commit = Commit(a.out, writes=(PLAN_DIR,))
        commit.refuse_inputs_replaced({"--reassignment": a.reassignment, "--topics": a.topics, "--cluster": a.cluster,
                                       "--log-dirs": a.log_dirs, "--metrics": a.metrics})
    if spark is None:
        check_master(a.master)
    with progress_steps(a.progress) as step:
        spark = session_for(spark, step, lambda: get_spark(a.master, python_tasks_only=True), "plan")
        choice = evaluate(spark, prep.cluster, prep.moves, prep.throttles, a.kip542, a.max_moves_per_broker,
                          prep.deadline_ms, step)
    batches = batch_files(prep, a.max_moves_per_broker, Path() if a.out is None else a.out / PLAN_DIR)
    named_dirs = any(d != "any" for dirs in prep.log_dirs.values() for d in dirs)
    args = (prep.cluster, prep.moves, choice, list(batches) or prep.plan_path, a.kip542, prep.deadline_ms, named_dirs)
    text = plan_json(*args) if a.json_out else console_text(*args)
    if batches and a.out is None and not a.json_out:
        names = list(batches)
        text += f"\n# -o DIR writes {names[0]} … {names[-1]} into DIR/{PLAN_DIR}/"
    if commit is not None:
        with commit.staged() as stage:
            folder = stage / PLAN_DIR
            folder.mkdir()
            if prep.generated:
                (folder / "reassignment.json").write_text(reassignment_json(prep.plan) + "\n", encoding="utf-8")
            for name, doc in batches.items():
                (folder / Path(name).name).write_text(doc + "\n", encoding="utf-8")
            (folder / "plan.json").write_text(plan_json(*args) + "\n", encoding="utf-8")
            (folder / "plan.html").write_text(html_section(prep.cluster, choice, prep.moves), encoding="utf-8")
    return prep, choice, text
