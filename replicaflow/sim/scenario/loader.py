"""Scenario files in, validated ``Scenario`` out — or every problem at once, each naming its file,
YAML line and field path (``scenario.yaml:14: events[2].slow_network.network_in: expected …``).

The order: read (UTF-8, bounded YAML), normalize the shorthand, validate each part with pydantic,
check the rules across fields and the bounds on work, then fill Kafka's default assignments and
sort events by ``(at_ms, file order)``. Nothing expensive runs before the bounds are checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from replicaflow.model.assignment import assign_replicas
from replicaflow.model.topic import topic_name_problem
from replicaflow.sim.scenario import yamldoc
from replicaflow.sim.scenario.checks import (
    check_failed_followers,
    check_grid_and_bounds,
    check_references,
    warnings,
)
from replicaflow.sim.scenario.limits import DEFAULT_MAX_WORK
from replicaflow.sim.scenario.models import Event, Scenario
from replicaflow.sim.scenario.normalize import expand_cluster, flatten_event
from replicaflow.sim.scenario.problems import Problem, Problems

_EVENT = TypeAdapter(Event)


def parse_scenario(data: Any, base_dir: Path, source: str = "<scenario>", *, max_work: int = DEFAULT_MAX_WORK,
                   lines: dict[tuple, int] | None = None) -> Scenario:
    """Validate a scenario mapping (YAML already loaded); reassignment files are relative to ``base_dir``."""
    problems = Problems(source, lines={None: lines or {}})
    if not isinstance(data, dict):
        found = "nothing (the file is empty or only comments)" if data is None else type(data).__name__
        problems.add((), f"expected a mapping of scenario fields, found {found}")
        problems.raise_if_any()
    raw = dict(data)
    for internal in ("source", "event_places", "warnings"):
        if internal in raw:
            problems.add((internal,), "unknown field")
            del raw[internal]
    if "name" not in raw and not source.startswith("<"):
        raw["name"] = Path(source).stem
    raw["cluster"] = expand_cluster(raw.get("cluster"), problems)
    if raw["cluster"] is None and problems:
        problems.raise_if_any()  # too many brokers to even list
    events_raw = raw.pop("events", None) or []
    if not isinstance(events_raw, list):
        problems.add(("events",), f"expected a list of events, found {type(events_raw).__name__}")
        events_raw = []
    events: list[tuple[int, Any, str | None]] = []
    for i, ev in enumerate(events_raw):
        flat, plan = flatten_event(ev, i, Path(base_dir), problems)
        if flat is None:
            continue
        try:
            events.append((i, _EVENT.validate_python(flat), plan))
        except ValidationError as exc:
            problems.add_validation(exc, ("events", i))
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        problems.add_validation(exc)
        problems.raise_if_any()
    scenario = scenario.model_copy(update={"events": tuple(ev for _, ev, _ in events)})
    if check_grid_and_bounds(scenario, problems, max_work):
        check_references(scenario, events, problems)
    problems.raise_if_any()
    ids = scenario.cluster.broker_ids
    topics = tuple(t if t.assignment else t.model_copy(update={"assignment": tuple(
        tuple(r) for r in assign_replicas(ids, t.partitions, t.replication_factor, start_index=i))})
        for i, t in enumerate(scenario.topics))
    check_failed_followers(topics, events, problems)
    problems.raise_if_any()
    order = sorted(range(len(events)), key=lambda k: (events[k][1].at_ms, events[k][0]))
    places = tuple(problems.where(Problem(("events", events[k][0], events[k][1].kind), "")) for k in order)
    return scenario.model_copy(update={"topics": topics, "events": tuple(events[k][1] for k in order),
                                       "source": source, "event_places": places,
                                       "warnings": tuple(warnings(scenario, problems))})


def load_scenario(path: Path, *, max_work: int = DEFAULT_MAX_WORK, version: str | None = None) -> Scenario:
    """Read and validate a scenario YAML file; every error names the file and, where it can, the line.
    ``version``: a release that replaces the file's ``kafka.version`` (``plan --cluster … --version``), so that
    its events and controller are checked against the release they will run on."""
    path = Path(path)
    doc = yamldoc.load(yamldoc.read_text(path, "scenario file"), str(path))
    data = doc.data
    version = version or doc.raw_numbers.get(("kafka", "version"))
    if version is not None and isinstance(data, dict) and isinstance(data.get("kafka"), dict):
        data = {**data, "kafka": {**data["kafka"], "version": version}}  # `version: 3.10` is 3.10, not 3.1
    problems = Problems(str(path), lines={None: doc.lines})
    for loc, text in sorted(doc.raw_numbers.items(), key=lambda item: doc.lines.get(item[0], 0)):
        _number_yaml_changed(loc, text, problems)
    problems.raise_if_any()
    return parse_scenario(data, path.parent, str(path), max_work=max_work, lines=doc.lines)


_NAMES = ("name", "topic")  # the scenario's name, topic names: a number there is refused
_LABELS = ("rack", "log_dir", "log_dirs")  # a number there is refused where YAML changed what was written
_BASES = (("0x", "hexadecimal"), ("0o", "octal"), ("0b", "binary"))


def _number_yaml_changed(loc: tuple, text: str, problems: Problems) -> None:
    """A number YAML read other than as written. An unquoted name (``0123`` is octal 83, ``1:30`` is 90,
    ``1_000`` is 1000) would be renamed without a word: name the line and how to quote it. Any other value in
    base 60 is refused as written, not as the number it became."""
    key = next((k for k in reversed(loc) if isinstance(k, str)), None)
    value = yaml.safe_load(text)  # at most MAX_NUMBER_CHARS characters (yamldoc)
    if key in _NAMES or key in _LABELS and str(value) != text:
        shown = text.lstrip("+-")
        how = next((f" as {base}" for prefix, base in _BASES if shown.lower().startswith(prefix)), None)
        how = how or (" as octal" if len(shown) > 1 and shown[0] == "0" and shown.isdigit() else
                      " in base 60" if ":" in text else " as a number")
        read = f" (YAML reads {text}{how})" if str(value) != text else ""
        quoted = f"{key}: '{text}'" if loc and loc[-1] == key else f"'{text}'"
        illegal = (key == "topic" or loc[:1] == ("topics",)) and topic_name_problem(text)
        how_to = f"quoted, '{text}' is no topic name either: {illegal}" if illegal else f"quote it: {quoted}"
        problems.add(loc, f"expected a name, found the number {value}{read}; {how_to}")
    elif ":" in text:  # `duration: 2:00` would be refused as "found 120", a number no one wrote
        problems.add(loc, f"found {text}, which YAML reads in base 60 as the number {value}; write a duration "
                          "with its unit ('2m', '30s')")
    elif _leading_zero_octal(text, value):  # `id: 010` made broker 8, `partitions: 010` eight partitions
        written = int(text.replace("_", ""))
        problems.add(loc, f"found {text}, which YAML reads as octal, the number {value}; write {written} "
                          f"without the leading zero (or {value}, if octal was meant)")


def _leading_zero_octal(text: str, value: object) -> bool:
    """An integer written with a leading zero, which YAML 1.1 reads in base 8 (``010`` is 8), unlike every other
    format an operator copies numbers from (JSON has no leading zeros; Kafka's tools print decimal)."""
    digits = text.lstrip("+-").replace("_", "")
    return len(digits) > 1 and digits[0] == "0" and digits.isdigit() and int(text.replace("_", "")) != value
