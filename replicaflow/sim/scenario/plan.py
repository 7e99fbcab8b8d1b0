"""Kafka's reassignment JSON (``kafka-reassign-partitions --execute --reassignment-json-file``), inline
in a ``reassign`` event or in a file next to the scenario (KIP-455 format, version 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from replicaflow.errors import ReplicaflowError, show
from replicaflow.model.reassign_tool import log_dirs_problem, pasted_output_problem, plan_version_problem
from replicaflow.sim.scenario.models import ReassignPartition
from replicaflow.sim.scenario.problems import Problems
from replicaflow.sim.scenario.yamldoc import read_text
from replicaflow.telemetry.textfile import loads_json

_MOVES = TypeAdapter(tuple[ReassignPartition, ...])


def load_plan(ref: Any, loc: tuple, base_dir: Path, problems: Problems) -> tuple[list | None, str | None]:
    """The moves of a plan given as ``{version, partitions}`` or ``{file: plan.json}``, and the file's
    path if any; ``None`` moves when the plan has problems (added to ``problems``)."""
    if not isinstance(ref, dict):
        problems.add(loc, "expected {file: plan.json} or a reassignment {version: 1, partitions: [...]}, "
                          f"found {show(ref)}")
        return None, None
    origin = None
    if "file" in ref:
        if set(ref) != {"file"}:
            problems.add(loc + (sorted(map(str, set(ref) - {"file"}))[0],), "unknown field next to 'file'")
            return None, None
        path = base_dir / str(ref["file"])
        try:
            text = read_text(path, "reassignment file")
        except ReplicaflowError as exc:
            problems.add(loc + ("file",), str(exc))
            return None, None
        try:
            ref = loads_json(text)
        except json.JSONDecodeError as exc:  # named as the event names it, as a missing file is
            line, problem = pasted_output_problem(text) or (exc.lineno, f"invalid JSON ({exc.msg})")
            problems.add(loc + ("file",), f"{path}:{line}: {problem}")
            return None, None
        except RecursionError:
            problems.add(loc + ("file",), f"{path}: JSON nested too deeply")
            return None, None
        origin, loc = str(path), ()
        problems.texts[origin] = text
        if not isinstance(ref, dict):
            problems.add(loc, f"expected a reassignment object {{version, partitions}}, found {show(ref)}", origin)
            return None, origin
    ok = True
    for key in ref:
        if key not in ("version", "partitions"):
            problems.add(loc + (key,), "unknown field; expected 'version' and 'partitions'", origin)
            ok = False
    version_problem = plan_version_problem(ref)
    if version_problem:
        problems.add(loc + ("version",), f"expected reassignment version 1, found {show(ref['version'])}", origin)
        ok = False
    partitions = ref.get("partitions")
    if not isinstance(partitions, list):
        problems.add(loc + ("partitions",), f"expected a list of partitions, found {show(partitions)}", origin)
        return None, origin
    # log_dirs (KIP-113) moves replicas between a broker's own disks: no replication traffic; checked as the
    # tool checks it, then dropped.
    for i, m in enumerate(partitions):
        problem = log_dirs_problem(m) if isinstance(m, dict) else None
        if problem:
            problems.add(loc + ("partitions", i, "log_dirs"), problem, origin)
            ok = False
    moves = [{k: v for k, v in m.items() if k != "log_dirs"} if isinstance(m, dict) else m for m in partitions]
    if origin is not None:
        try:
            _MOVES.validate_python(moves)
        except ValidationError as exc:
            problems.add_validation(exc, ("partitions",), origin)
            ok = False
    return (moves if ok else None), origin

