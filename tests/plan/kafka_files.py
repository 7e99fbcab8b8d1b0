"""Kafka tool outputs written the way the tools print them, for the planner's tests."""

from __future__ import annotations

import json
from pathlib import Path

from replicaflow.jobs.plan import PlanArgs


def describe(path: Path, topics: dict[str, list[list[int]]], min_isr: dict[str, int] | None = None) -> Path:
    """``kafka-topics --describe`` (3.x form): a header line per topic, a tab-indented line per partition."""
    lines = []
    for topic, assignment in topics.items():
        configs = f"min.insync.replicas={min_isr[topic]}" if min_isr and topic in min_isr else ""
        lines.append(f"Topic: {topic}\tTopicId: AAAAAAAAAAAAAAAAAAAAAA\tPartitionCount: {len(assignment)}\t"
                     f"ReplicationFactor: {len(assignment[0])}\tConfigs: {configs}")
        for p, replicas in enumerate(assignment):
            ids = ",".join(map(str, replicas))
            lines.append(f"\tTopic: {topic}\tPartition: {p}\tLeader: {replicas[0]}\tReplicas: {ids}\tIsr: {ids}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def log_dirs(path: Path, topics: dict[str, list[list[int]]], size_bytes: int) -> Path:
    """``kafka-log-dirs --describe``: the two text lines, then the JSON document."""
    brokers = sorted({b for a in topics.values() for r in a for b in r})
    doc = {"version": 1, "brokers": [
        {"broker": b, "logDirs": [{"logDir": "/var/lib/kafka", "error": None, "partitions": [
            {"partition": f"{t}-{p}", "size": size_bytes, "offsetLag": 0, "isFuture": False}
            for t, a in topics.items() for p, r in enumerate(a) if b in r]}]} for b in brokers]}
    path.write_text("Querying brokers for log directories information\n"
                    f"Received log directory information from brokers {','.join(map(str, brokers))}\n"
                    + json.dumps(doc) + "\n", encoding="utf-8")
    return path


def reassignment(path: Path, moves: dict[tuple[str, int], list[int]]) -> Path:
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for (t, p), r in moves.items()]}), encoding="utf-8")
    return path


def args(tmp: Path, topics: dict, moves: dict, size_bytes: int, **kw) -> PlanArgs:
    """PlanArgs over files written into ``tmp``."""
    return PlanArgs(reassignment=reassignment(tmp / "plan.json", moves), topics=describe(
        tmp / "describe.txt", topics, kw.pop("min_isr", None)), log_dirs=log_dirs(tmp / "logdirs.json", topics, size_bytes),
        **kw)
