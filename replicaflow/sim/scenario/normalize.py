"""The scenario file's shorthand turned into the models' shape, before validation.

``brokers: 6`` and ``racks: 2`` become a broker list; ``{at: 5m, broker_down: 3}`` becomes
``{kind: broker_down, at: 5m, broker: 3}``; config values become strings as Kafka stores them.
A problem is added to ``Problems`` and the piece is left out, so the rest is still checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replicaflow.errors import ReplicaflowError, show
from replicaflow.model.configs import (
    DEFAULT_BROKER,
    MAX_MIN_ISR,
    MIN_ISR,
    REASSIGNMENT_RATES,
    REPLICA_LAG_TIME_MAX_MS,
    REPLICATION_RATES,
    THROTTLED_REPLICAS_LISTS,
    UNCLEAN_LEADER_ELECTION_ENABLE,
)
from replicaflow.model.quota import parse_throttled_replicas
from replicaflow.sim.scenario.fields import positive_duration, positive_rate, throttle_rate
from replicaflow.sim.scenario.limits import MAX_BROKERS
from replicaflow.sim.scenario.models import EVENT_KINDS
from replicaflow.sim.scenario.plan import load_plan
from replicaflow.sim.scenario.problems import Problems

DEFAULT_NETWORK = "125MB/s"  # a 1 Gbit/s NIC
KNOWN_CONFIGS = (*REPLICATION_RATES, *REASSIGNMENT_RATES, *THROTTLED_REPLICAS_LISTS, MIN_ISR, REPLICA_LAG_TIME_MAX_MS,
                 UNCLEAN_LEADER_ELECTION_ENABLE)
BROKER_ONLY_CONFIGS = (*REPLICATION_RATES, *REASSIGNMENT_RATES, REPLICA_LAG_TIME_MAX_MS)


def expand_cluster(raw: Any, problems: Problems) -> Any:
    """``brokers: N`` and ``racks: R`` into the broker list; broker network defaults from the cluster's."""
    if not isinstance(raw, dict):
        return raw
    raw = dict(raw)
    racks = raw.pop("racks", None)
    if racks is not None and (isinstance(racks, bool) or not isinstance(racks, int) or racks < 1):
        problems.add(("cluster", "racks"), f"expected a positive number of racks, found {show(racks)}")
        racks = None
    brokers = raw.get("brokers")
    if isinstance(brokers, int) and not isinstance(brokers, bool):
        if not 1 <= brokers <= MAX_BROKERS:
            problems.add(("cluster", "brokers"), f"expected 1 to {MAX_BROKERS:,} brokers, found {brokers}")
            return None
        brokers = [{"id": i} for i in range(1, brokers + 1)]
    elif "brokers" in raw and not isinstance(brokers, list):
        problems.add(("cluster", "brokers"), f"expected a number of brokers or a list of {{id: …}}, found {show(brokers)}")
        return None
    defaults = {}
    for key in ("network_in", "network_out"):  # a bad cluster default is one problem, not one per broker
        try:
            positive_rate(raw.get(key, DEFAULT_NETWORK))
            defaults[key] = raw.get(key, DEFAULT_NETWORK)
        except ValueError:
            defaults[key] = DEFAULT_NETWORK
    log_dirs = raw.pop("log_dirs", None)  # every broker's log.dirs unless it names its own
    if log_dirs is not None and not (isinstance(log_dirs, list) and log_dirs
                                     and all(isinstance(d, str) and d for d in log_dirs)):
        problems.add(("cluster", "log_dirs"), f"expected a list of directory names, found {show(log_dirs)}")
        log_dirs = None
    if isinstance(brokers, list):
        if len(brokers) > MAX_BROKERS:
            problems.add(("cluster", "brokers"), f"expected at most {MAX_BROKERS:,} brokers, found {len(brokers):,}")
            return None
        filled = []
        for i, broker in enumerate(brokers):
            if isinstance(broker, dict):
                broker = dict(broker)
                broker.setdefault("network_in", defaults["network_in"])
                broker.setdefault("network_out", defaults["network_out"])
                if log_dirs is not None:
                    broker.setdefault("log_dirs", log_dirs)
                if racks is not None:
                    broker.setdefault("rack", chr(ord("a") + i % racks) if racks <= 26 else f"rack{i % racks}")
            filled.append(broker)
        raw["brokers"] = filled
    return raw


def config_value(name: str, value: Any) -> str | None:
    """A config value as Kafka stores it: rates as integer bytes/s, min ISR and lag as integers."""
    if value is None:
        return None
    if name in REPLICATION_RATES or name in REASSIGNMENT_RATES:
        return str(int(throttle_rate(value)))
    if name in THROTTLED_REPLICAS_LISTS:
        if not isinstance(value, str):
            raise ValueError(f"expected 'partition:broker,...' or '*', found {show(value)}")
        try:
            parse_throttled_replicas(value, name)
        except ReplicaflowError as exc:
            raise ValueError(str(exc).split(": ", 1)[1]) from None
        return value.replace(" ", "")
    if name == UNCLEAN_LEADER_ELECTION_ENABLE:
        if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in ("true", "false")):
            return str(value).strip().lower()
        raise ValueError(f"expected true or false, found {show(value)}")
    if name == MIN_ISR:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_MIN_ISR:
            raise ValueError(f"expected a whole number of replicas from 1 to {MAX_MIN_ISR:,}, found {show(value)}")
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 2**63 - 1:
        return str(value)
    return str(positive_duration(value))


def _config_payload(payload: dict, loc: tuple, problems: Problems) -> dict | None:
    entity_keys = [k for k in ("broker", "topic") if k in payload]
    if len(entity_keys) != 1:
        problems.add(loc, f"expected exactly one of 'broker' or 'topic', found {len(entity_keys)}")
        return None
    entity_type = entity_keys[0]
    entity = payload[entity_type]
    if entity_type == "broker":
        entity = DEFAULT_BROKER if entity in ("all", DEFAULT_BROKER) else entity
        if entity != DEFAULT_BROKER and (isinstance(entity, bool) or not isinstance(entity, int)):
            problems.add(loc + ("broker",), f"expected a broker id or 'all', found {show(entity)}")
            return None
    elif not isinstance(entity, str):
        problems.add(loc + ("topic",), f"expected a topic name, found {show(entity)}")
        return None
    if len(payload) == 1:
        problems.add(loc, f"expected at least one config next to '{entity_type}', found none")
        return None
    configs, ok = [], True
    for name, value in payload.items():
        if name == entity_type:
            continue
        if name not in KNOWN_CONFIGS:
            problems.add(loc + (name,), f"unknown config; expected one of {', '.join(KNOWN_CONFIGS)}")
            ok = False
            continue
        if (entity_type == "topic" and name in BROKER_ONLY_CONFIGS) or (
                entity_type == "broker" and name in THROTTLED_REPLICAS_LISTS):
            problems.add(loc + (name,), f"expected a {'broker' if name in BROKER_ONLY_CONFIGS else 'topic'} "
                                        f"config, found it set on a {entity_type}")
            ok = False
            continue
        try:
            configs.append((name, config_value(name, value)))
        except ValueError as exc:
            problems.add(loc + (name,), str(exc))
            ok = False
    return {"entity_type": entity_type, "entity": str(entity), "configs": configs} if ok else None


# the options of `kafka-reassign-partitions --execute` a reassign event takes beside its plan
_REASSIGN_OPTIONS = ("throttle", "additional")


def flatten_event(raw: Any, i: int, base_dir: Path, problems: Problems) -> tuple[dict | None, str | None]:
    """``{at: 5m, broker_down: 3}`` → ``{kind: broker_down, at: 5m, broker: 3}`` and the plan file if any;
    ``None`` when the event has a problem."""
    loc = ("events", i)
    if not isinstance(raw, dict):
        problems.add(loc, f"expected an event like {{at: 5m, broker_down: 3}}, found {show(raw)}")
        return None, None
    kinds = [k for k in raw if k in EVENT_KINDS]
    unknown = [k for k in raw if k not in EVENT_KINDS and k not in ("at",) + _REASSIGN_OPTIONS]
    for key in unknown:
        problems.add(loc + (key,), f"unknown field; expected 'at' and one of {', '.join(EVENT_KINDS)}")
    if unknown:
        return None, None
    if len(kinds) != 1:
        problems.add(loc, f"expected exactly one event kind ({', '.join(EVENT_KINDS)}), found "
                          f"{', '.join(kinds) or 'none'}")
        return None, None
    kind = kinds[0]
    for option in _REASSIGN_OPTIONS:
        if option in raw and kind != "reassign":
            problems.add(loc + (option,), f"unknown field; '{option}' belongs to a reassign event")
            return None, None
    if "at" not in raw:
        problems.add(loc + ("at",), "required field is missing")
        return None, None
    payload = raw[kind]
    if payload is None:
        payload = {}
    if kind in ("broker_down", "broker_up", "log_dir_failure") and not isinstance(payload, dict):
        payload = {"broker": payload}
    if not isinstance(payload, dict):
        problems.add(loc + (kind,), f"expected a mapping of event fields, found {show(payload)}")
        return None, None
    for key in ("at", "kind"):
        if key in payload:
            problems.add(loc + (kind, key), "unknown field; 'at' belongs to the event, not its body")
            return None, None
    plan = None
    if kind == "reassign":
        partitions, plan = load_plan(payload, loc + (kind,), base_dir, problems)
        if partitions is None:
            return None, plan
        payload = {"partitions": partitions, **{o: raw[o] for o in _REASSIGN_OPTIONS if o in raw}}
    elif kind == "config":
        payload = _config_payload(payload, loc + (kind,), problems)
        if payload is None:
            return None, None
    elif kind in ("cancel_reassignment", "elect_leaders") and "partitions" in payload:
        moves = payload["partitions"]
        if isinstance(moves, list):
            payload = {**payload, "partitions": [[m.get("topic"), m.get("partition")] if isinstance(m, dict) else m
                                                 for m in moves]}
    return {"kind": kind, "at": raw["at"], **payload}, plan
