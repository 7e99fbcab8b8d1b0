"""The scenario file (DESIGN.md §3): YAML in human units, validated into frozen, normalized models.

Normalized means milliseconds (``*_ms`` ints), bytes per second (``*_bps`` floats) and bytes
(``*_bytes`` ints). Every problem becomes one ``ReplicaflowError`` sentence naming the file and the
field path (``scenario.yaml: events[2].slow_network.network_in: expected …, found …``).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from replicaflow.errors import ReplicaflowError
from replicaflow.model.fetcher import FETCH_ERRORS
from replicaflow.model.quota import parse_throttled_replicas
from replicaflow.model.units import parse_bytes, parse_duration_ms, parse_rate_bps
from replicaflow.model.version import KafkaVersion

DEFAULT_START_MS = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1000)
DEFAULT_NETWORK = "125MB/s"  # a 1 Gbit/s NIC
DEFAULT_BROKER_ENTITY = "<default>"
# Short names accepted for fetch errors, mapped to the kinds of replicaflow.model.fetcher.
ERROR_ALIASES = {"fenced_epoch": "fenced_leader_epoch", "corrupt": "corrupt_records"}

RATE_CONFIGS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
KIP542_RATE_CONFIGS = ("leader.reassignment.throttled.rate", "follower.reassignment.throttled.rate")
LIST_CONFIGS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
MIN_ISR_CONFIG = "min.insync.replicas"
LAG_CONFIG = "replica.lag.time.max.ms"
KNOWN_CONFIGS = (*RATE_CONFIGS, *KIP542_RATE_CONFIGS, *LIST_CONFIGS, MIN_ISR_CONFIG, LAG_CONFIG)


# ---------------------------------------------------------------------------------------- units
def _convert(parse, expected: str):
    """A BeforeValidator from a units parser: strings and numbers only, one message naming the format."""
    def convert(value):
        if isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
            try:
                return parse(value)
            except ValueError:
                pass
        raise ValueError(f"expected {expected}, found {value!r}")
    return convert


def _opt(convert):
    return lambda value: None if value is None else convert(value)


def _whole_bytes(value):
    if isinstance(value, float):
        raise ValueError("fractional bytes")
    return parse_bytes(value)


_rate = _convert(parse_rate_bps, "a rate like '5MB/s'")
_duration = _convert(parse_duration_ms, "a duration like '30s' or '100ms'")
_size = _convert(_whole_bytes, "a size like '1MiB' or '500MB'")


def _positive_duration(value):
    ms = _duration(value)
    if ms <= 0:
        raise ValueError(f"expected a positive duration like '30s', found {value!r}")
    return ms


def _text(value):
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"expected a name, found {value!r}")


DurationMs = Annotated[int, BeforeValidator(_duration)]
PositiveMs = Annotated[int, BeforeValidator(_positive_duration)]
RateBps = Annotated[float, BeforeValidator(_rate)]
OptRateBps = Annotated[float | None, BeforeValidator(_opt(_rate))]
SizeBytes = Annotated[int, BeforeValidator(_size)]
Name = Annotated[str, BeforeValidator(_text)]
BrokerId = Annotated[int, Field(strict=True, ge=0)]
PartitionId = Annotated[int, Field(strict=True, ge=0)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# ---------------------------------------------------------------------------------------- kafka
class KafkaSpec(_Model):
    """Broker behaviour: the release (SEMANTICS per section) and the configs the simulator honours."""

    version: str
    kip542: bool = False
    replica_lag_time_max_ms: PositiveMs = Field(alias="replica_lag_time_max")
    replica_lag_max_messages: int = Field(4000, ge=1, strict=True)
    num_replica_fetchers: int = Field(1, ge=1, strict=True)
    session_timeout_ms: PositiveMs = Field(18_000, alias="session_timeout")
    fetch_rtt_ms: PositiveMs = Field(50, alias="fetch_rtt")
    isr_commit_delay_ms: DurationMs = Field(0, alias="isr_commit_delay")
    quota_window_samples: int = Field(11, ge=1, strict=True)
    quota_window_ms: PositiveMs = Field(1000, alias="quota_window")

    @model_validator(mode="before")
    @classmethod
    def _lag_default(cls, data):
        """``replica.lag.time.max.ms`` defaults per release: 10 s up to 2.4, 30 s from 2.5 (KIP-537)."""
        if isinstance(data, dict) and "replica_lag_time_max" not in data:
            try:
                version = KafkaVersion.parse(str(data.get("version")))
            except ReplicaflowError:
                return data  # reported by the version field itself
            data = {**data, "replica_lag_time_max": f"{version.default_replica_lag_time_max_ms}ms"}
        return data

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ValueError(f"expected a Kafka release like '3.7', found {value!r}")
        try:
            return str(KafkaVersion.parse(str(value)))
        except ReplicaflowError as exc:
            raise ValueError(str(exc).split(": ", 1)[1]) from None

    @property
    def kafka_version(self) -> KafkaVersion:
        return KafkaVersion.parse(self.version, self.kip542)


# ---------------------------------------------------------------------------------------- cluster
class BrokerSpec(_Model):
    id: BrokerId
    rack: Name | None = None
    network_in_bps: RateBps = Field(alias="network_in")
    network_out_bps: RateBps = Field(alias="network_out")


class ClusterSpec(_Model):
    """Brokers (``brokers: 6`` → ids 1..6, or a list) and their defaults."""

    network_in_bps: RateBps = Field(125e6, alias="network_in")
    network_out_bps: RateBps = Field(125e6, alias="network_out")
    brokers: tuple[BrokerSpec, ...] = Field(min_length=1)
    min_insync_replicas: int = Field(1, ge=1, strict=True)

    @property
    def broker_ids(self) -> list[int]:
        return [b.id for b in self.brokers]


def _expand_cluster(raw: Any) -> Any:
    """``brokers: N`` and ``racks: R`` into the broker list; broker network defaults from the cluster's."""
    if not isinstance(raw, dict):
        return raw
    raw = dict(raw)
    racks = raw.pop("racks", None)
    if racks is not None and (isinstance(racks, bool) or not isinstance(racks, int) or racks < 1):
        raise _FieldError(("cluster", "racks"), f"expected a positive number of racks, found {racks!r}")
    brokers = raw.get("brokers")
    if isinstance(brokers, int) and not isinstance(brokers, bool):
        if brokers < 1:
            raise _FieldError(("cluster", "brokers"), f"expected at least 1 broker, found {brokers}")
        brokers = [{"id": i} for i in range(1, brokers + 1)]
    if isinstance(brokers, list):
        filled = []
        for i, broker in enumerate(brokers):
            if isinstance(broker, dict):
                broker = dict(broker)
                broker.setdefault("network_in", raw.get("network_in", DEFAULT_NETWORK))
                broker.setdefault("network_out", raw.get("network_out", DEFAULT_NETWORK))
                if racks is not None:
                    broker.setdefault("rack", chr(ord("a") + i % racks))
            filled.append(broker)
        raw["brokers"] = filled
    return raw


# ---------------------------------------------------------------------------------------- topics
class TopicSpec(_Model):
    """A topic; ``produce_rate_bps`` is the whole topic's, ``initial_size_bytes`` each partition's."""

    name: Name
    partitions: int = Field(ge=1, strict=True)
    replication_factor: int = Field(ge=1, strict=True)
    min_insync_replicas: int | None = Field(None, ge=1, strict=True)
    produce_rate_bps: RateBps = Field(0.0, alias="produce_rate")
    message_size_bytes: SizeBytes = Field(1024, alias="message_size")
    initial_size_bytes: SizeBytes = Field(0, alias="initial_size")
    assignment: tuple[tuple[BrokerId, ...], ...] = ()

    @field_validator("message_size_bytes")
    @classmethod
    def _message_size(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"expected a message size of at least 1 byte, found {value}")
        return value

    @property
    def initial_messages(self) -> int:
        return self.initial_size_bytes // self.message_size_bytes

    @property
    def partition_rate_bps(self) -> float:
        return self.produce_rate_bps / self.partitions


# ---------------------------------------------------------------------------------------- events
class _Event(_Model):
    at_ms: DurationMs = Field(alias="at")


class ReassignPartition(_Model):
    topic: Name
    partition: PartitionId
    replicas: tuple[BrokerId, ...]


class ReassignEvent(_Event):
    """``kafka-reassign-partitions --execute`` with the Kafka reassignment JSON (KIP-455), ``--throttle``."""

    kind: Literal["reassign"]
    partitions: tuple[ReassignPartition, ...] = Field(min_length=1)
    throttle_bps: OptRateBps = Field(None, alias="throttle")


class BrokerDownEvent(_Event):
    """The broker stops: a crash (session expires after ``session_timeout``) or ``controlled`` shutdown."""

    kind: Literal["broker_down"]
    broker: BrokerId
    controlled: bool = False


class BrokerUpEvent(_Event):
    kind: Literal["broker_up"]
    broker: BrokerId


class SlowNetworkEvent(_Event):
    kind: Literal["slow_network"]
    broker: BrokerId
    network_in_bps: OptRateBps = Field(None, alias="network_in")
    network_out_bps: OptRateBps = Field(None, alias="network_out")
    for_ms: PositiveMs = Field(alias="for")


class FailPartitionEvent(_Event):
    """The follower on ``broker`` gets ``error`` fetching the partition (SEMANTICS §4, KIP-461)."""

    kind: Literal["fail_partition"]
    topic: Name
    partition: PartitionId
    broker: BrokerId
    error: str

    @field_validator("error", mode="before")
    @classmethod
    def _error(cls, value):
        value = ERROR_ALIASES.get(value, value) if isinstance(value, str) else value
        if value not in FETCH_ERRORS:
            raise ValueError(f"expected one of {', '.join(sorted(FETCH_ERRORS))}, found {value!r}")
        return value


class ProduceBurstEvent(_Event):
    kind: Literal["produce_burst"]
    topic: Name
    rate_bps: RateBps = Field(alias="rate")
    for_ms: PositiveMs = Field(alias="for")
    partitions: tuple[PartitionId, ...] | None = None


class StallFollowerEvent(_Event):
    """The follower replicas on ``broker`` stop fetching while the broker stays up (SEMANTICS §1.2)."""

    kind: Literal["stall_follower"]
    broker: BrokerId
    topic: Name | None = None
    partition: PartitionId | None = None
    for_ms: Annotated[int | None, BeforeValidator(_opt(_positive_duration))] = Field(None, alias="for")


class VerifyEvent(_Event):
    """``kafka-reassign-partitions --verify``: removes the tool's throttles once nothing is reassigning."""

    kind: Literal["verify"]


class ConfigEvent(_Event):
    """``kafka-configs --alter``: values as Kafka stores them (strings), ``None`` deletes the config."""

    kind: Literal["config"]
    entity_type: Literal["broker", "topic"]
    entity: str
    configs: tuple[tuple[str, str | None], ...] = Field(min_length=1)


class CancelReassignmentEvent(_Event):
    kind: Literal["cancel_reassignment"]
    partitions: tuple[tuple[str, int], ...] | None = None


class ElectLeadersEvent(_Event):
    """Preferred leader election (``kafka-leader-election --election-type preferred``)."""

    kind: Literal["elect_leaders"]


Event = Annotated[
    ReassignEvent | BrokerDownEvent | BrokerUpEvent | SlowNetworkEvent | FailPartitionEvent | ProduceBurstEvent
    | StallFollowerEvent | VerifyEvent | ConfigEvent | CancelReassignmentEvent | ElectLeadersEvent,
    Field(discriminator="kind"),
]
EVENT_KINDS = ("reassign", "broker_down", "broker_up", "slow_network", "fail_partition", "produce_burst",
               "stall_follower", "verify", "config", "cancel_reassignment", "elect_leaders")


# ---------------------------------------------------------------------------------------- scenario
def _start_ms(value):
    if isinstance(value, bool):
        raise ValueError(f"expected a UTC timestamp like 2026-01-01T00:00:00Z, found {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"expected a UTC timestamp like 2026-01-01T00:00:00Z, found {value!r}") from None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return int(round(value.timestamp() * 1000))
    raise ValueError(f"expected a UTC timestamp like 2026-01-01T00:00:00Z, found {value!r}")


class Scenario(_Model):
    """A validated scenario; build it with :func:`load_scenario` / :func:`parse_scenario`, which also fill
    Kafka's default assignments, check references and sort events by ``(at_ms, file order)``."""

    name: Name
    seed: int = Field(0, strict=True)
    duration_ms: PositiveMs = Field(alias="duration")
    tick_ms: PositiveMs = Field(100, alias="tick")
    scrape_interval_ms: PositiveMs = Field(10_000, alias="scrape_interval")
    start_ms: Annotated[int, BeforeValidator(_start_ms)] = Field(DEFAULT_START_MS, alias="start")
    kafka: KafkaSpec
    cluster: ClusterSpec
    topics: tuple[TopicSpec, ...] = Field(min_length=1)
    events: tuple[Event, ...] = ()
    source: str = "<scenario>"

    @property
    def version(self) -> KafkaVersion:
        return self.kafka.kafka_version

    def topic(self, name: str) -> TopicSpec:
        for t in self.topics:
            if t.name == name:
                return t
        raise KeyError(name)


# ---------------------------------------------------------------------------------------- assignment
def assign_replicas(broker_ids: list[int], n_partitions: int, rf: int, start_index: int = 0) -> list[list[int]]:
    """Kafka's rack-unaware ``AdminUtils.assignReplicasToBrokers`` with fixedStartIndex = shift = start_index.

    Brokers are taken in id order; the first replica walks the brokers round-robin and the followers
    are shifted by ``nextReplicaShift``, which grows by one every full round of brokers.
    """
    brokers = sorted(broker_ids)
    n = len(brokers)
    if rf > n:
        raise ValueError(f"replication factor {rf} is larger than the {n} available brokers")
    start = start_index % n
    shift = start_index
    out = []
    for p in range(n_partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        replicas = [brokers[first]]
        for j in range(rf - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        out.append(replicas)
    return out


# ---------------------------------------------------------------------------------------- parsing
class _FieldError(Exception):
    """A problem at a field path, turned into a ReplicaflowError naming the source."""

    def __init__(self, loc: tuple, message: str, source: str | None = None):
        super().__init__(message)
        self.loc, self.message, self.source = loc, message, source


def _path(loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(error: dict) -> str:
    kind, msg, found = error["type"], error["msg"], error.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    expected = msg.removeprefix("Input should be ").removeprefix("Value should have ")
    if kind in ("too_short", "too_long"):
        ctx = error.get("ctx", {})
        bound = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        return f"expected {'at least' if kind == 'too_short' else 'at most'} {bound} item(s), found {ctx.get('actual_length')}"
    return f"expected {expected}, found {found!r}"


def _first_error(exc: ValidationError, prefix: tuple = ()) -> _FieldError:
    error = exc.errors()[0]
    loc = tuple(error["loc"])
    # events[i].<kind>.<field>: the union tag is already in the path; `at` and `throttle` sit on the event
    if len(loc) >= 4 and loc[0] == "events" and loc[3] in ("at", "throttle"):
        loc = loc[:2] + loc[3:]
    return _FieldError(prefix + loc, _describe(error))


def _load_plan(ref: Any, loc: tuple, base_dir: Path) -> tuple[list, str | None]:
    """The partitions of a Kafka reassignment JSON: inline ``{version, partitions}`` or ``{file: plan.json}``."""
    if not isinstance(ref, dict):
        raise _FieldError(loc, f"expected {{file: plan.json}} or a reassignment {{version: 1, partitions: [...]}}, "
                               f"found {ref!r}")
    origin = None
    if "file" in ref:
        if set(ref) != {"file"}:
            extra = sorted(set(ref) - {"file"})[0]
            raise _FieldError(loc + (extra,), "unknown field next to 'file'")
        path = base_dir / str(ref["file"])
        try:
            text = path.read_text()
        except FileNotFoundError:
            raise _FieldError(loc + ("file",), f"reassignment file {path} does not exist") from None
        except OSError as exc:
            raise _FieldError(loc + ("file",), f"cannot read reassignment file {path} ({exc.strerror})") from None
        try:
            ref = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ReplicaflowError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        origin, loc = str(path), ()
        if not isinstance(ref, dict):
            raise _FieldError(loc, f"expected a reassignment object {{version, partitions}}, found {ref!r}", origin)
    for key in ref:
        if key not in ("version", "partitions"):
            raise _FieldError(loc + (key,), "unknown field; expected 'version' and 'partitions'", origin)
    if ref.get("version", 1) != 1:
        raise _FieldError(loc + ("version",), f"expected reassignment version 1, found {ref.get('version')!r}",
                          origin)
    partitions = ref.get("partitions")
    if not isinstance(partitions, list):
        raise _FieldError(loc + ("partitions",), f"expected a list of partitions, found {partitions!r}", origin)
    cleaned = []
    for move in partitions:
        if isinstance(move, dict):
            move = {k: v for k, v in move.items() if k != "log_dirs"}
        cleaned.append(move)
    if origin is not None:
        try:
            TypeAdapter(tuple[ReassignPartition, ...]).validate_python(cleaned)
        except ValidationError as exc:
            err = _first_error(exc, ("partitions",))
            raise _FieldError(err.loc, err.message, origin) from None
    return cleaned, origin


def _config_value(name: str, value: Any, loc: tuple) -> str | None:
    """A config value as Kafka stores it: rates as integer bytes/s, min ISR and lag as integers."""
    if value is None:
        return None
    try:
        if name in RATE_CONFIGS or name in KIP542_RATE_CONFIGS:
            return str(int(_rate(value)))
        if name in LIST_CONFIGS:
            if not isinstance(value, str):
                raise ValueError(f"expected 'partition:broker,...' or '*', found {value!r}")
            parse_throttled_replicas(value, name)
            return value.replace(" ", "")
        if name == MIN_ISR_CONFIG:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"expected a whole number of replicas >= 1, found {value!r}")
            return str(value)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return str(value)
        return str(_positive_duration(value))
    except ReplicaflowError as exc:
        raise _FieldError(loc, str(exc).split(": ", 1)[1]) from None
    except ValueError as exc:
        raise _FieldError(loc, str(exc)) from None


def _config_payload(payload: dict, loc: tuple) -> dict:
    entity_keys = [k for k in ("broker", "topic") if k in payload]
    if len(entity_keys) != 1:
        raise _FieldError(loc, f"expected exactly one of 'broker' or 'topic', found {len(entity_keys)}")
    entity_type = entity_keys[0]
    entity = payload[entity_type]
    if entity_type == "broker":
        entity = DEFAULT_BROKER_ENTITY if entity in ("all", DEFAULT_BROKER_ENTITY) else entity
        if entity != DEFAULT_BROKER_ENTITY and (isinstance(entity, bool) or not isinstance(entity, int)):
            raise _FieldError(loc + ("broker",), f"expected a broker id or 'all', found {entity!r}")
    elif not isinstance(entity, str):
        raise _FieldError(loc + ("topic",), f"expected a topic name, found {entity!r}")
    if len(payload) == 1:
        raise _FieldError(loc, f"expected at least one config next to '{entity_type}', found none")
    configs = []
    for name, value in payload.items():
        if name == entity_type:
            continue
        if name not in KNOWN_CONFIGS:
            raise _FieldError(loc + (name,), f"unknown config; expected one of {', '.join(KNOWN_CONFIGS)}")
        broker_only = (*RATE_CONFIGS, *KIP542_RATE_CONFIGS, LAG_CONFIG)
        if (entity_type == "topic" and name in broker_only) or (entity_type == "broker" and name in LIST_CONFIGS):
            raise _FieldError(loc + (name,), f"expected a {'broker' if name in broker_only else 'topic'} config, "
                                             f"found it set on a {entity_type}")
        configs.append((name, _config_value(name, value, loc + (name,))))
    return {"entity_type": entity_type, "entity": str(entity), "configs": configs}


def _flatten_event(raw: Any, i: int, base_dir: Path) -> tuple[dict, str | None]:
    """``{at: 5m, broker_down: 3}`` → ``{kind: broker_down, at: 5m, broker: 3}`` (and the plan file if any)."""
    loc = ("events", i)
    if not isinstance(raw, dict):
        raise _FieldError(loc, f"expected an event like {{at: 5m, broker_down: 3}}, found {raw!r}")
    kinds = [k for k in raw if k in EVENT_KINDS]
    for key in raw:
        if key not in EVENT_KINDS and key not in ("at", "throttle"):
            raise _FieldError(loc + (key,), f"unknown field; expected 'at' and one of {', '.join(EVENT_KINDS)}")
    if len(kinds) != 1:
        raise _FieldError(loc, f"expected exactly one event kind ({', '.join(EVENT_KINDS)}), found "
                               f"{', '.join(kinds) or 'none'}")
    kind = kinds[0]
    if "throttle" in raw and kind != "reassign":
        raise _FieldError(loc + ("throttle",), "unknown field; 'throttle' belongs to a reassign event")
    if "at" not in raw:
        raise _FieldError(loc + ("at",), "required field is missing")
    payload = raw[kind]
    if payload is None:
        payload = {}
    if kind in ("broker_down", "broker_up") and not isinstance(payload, dict):
        payload = {"broker": payload}
    if not isinstance(payload, dict):
        raise _FieldError(loc + (kind,), f"expected a mapping of event fields, found {payload!r}")
    for key in ("at", "kind"):
        if key in payload:
            raise _FieldError(loc + (kind, key), "unknown field; 'at' belongs to the event, not its body")
    plan = None
    if kind == "reassign":
        partitions, plan = _load_plan(payload, loc + (kind,), base_dir)
        payload = {"partitions": partitions}
        if "throttle" in raw:
            payload["throttle"] = raw["throttle"]
    elif kind == "config":
        payload = _config_payload(payload, loc + (kind,))
    elif kind == "cancel_reassignment" and "partitions" in payload:
        moves = payload["partitions"]
        if isinstance(moves, list):
            payload = {"partitions": [[m.get("topic"), m.get("partition")] if isinstance(m, dict) else m
                                      for m in moves]}
    return {"kind": kind, "at": raw["at"], **payload}, plan


def _check(scenario: Scenario, plans: list[str | None]) -> None:
    """Cross-field rules: references to brokers, topics and partitions, and the time grid."""
    if scenario.scrape_interval_ms % scenario.tick_ms:
        raise _FieldError(("scrape_interval",), f"expected a multiple of tick ({scenario.tick_ms}ms), "
                                                f"found {scenario.scrape_interval_ms}ms")
    if scenario.tick_ms > scenario.duration_ms:
        raise _FieldError(("tick",), f"expected at most duration ({scenario.duration_ms}ms), found {scenario.tick_ms}ms")
    ids = scenario.cluster.broker_ids
    seen: set[int] = set()
    for i, b in enumerate(ids):
        if b in seen:
            raise _FieldError(("cluster", "brokers", i, "id"), f"expected unique broker ids, found {b} twice")
        seen.add(b)

    def replica_list(replicas, loc, origin=None, exact: int | None = None) -> None:
        if not replicas:
            raise _FieldError(loc, "expected at least one replica, found an empty list", origin)
        if exact is not None and len(replicas) != exact:
            raise _FieldError(loc, f"expected {exact} replicas (replication_factor), found {len(replicas)}", origin)
        for b in replicas:
            if b not in seen:
                raise _FieldError(loc, f"expected brokers of the cluster ({ids}), found unknown broker {b}", origin)
        if len(set(replicas)) != len(replicas):
            raise _FieldError(loc, f"expected distinct replicas, found {list(replicas)}", origin)

    names: dict[str, TopicSpec] = {}
    for i, t in enumerate(scenario.topics):
        if t.name in names:
            raise _FieldError(("topics", i, "name"), f"expected unique topic names, found '{t.name}' twice")
        names[t.name] = t
        if t.replication_factor > len(ids):
            raise _FieldError(("topics", i, "replication_factor"),
                              f"expected at most the {len(ids)} brokers of the cluster, found {t.replication_factor}")
        if t.assignment:
            if len(t.assignment) != t.partitions:
                raise _FieldError(("topics", i, "assignment"),
                                  f"expected one replica list per partition ({t.partitions}), found {len(t.assignment)}")
            for p, replicas in enumerate(t.assignment):
                replica_list(replicas, ("topics", i, "assignment", p), exact=t.replication_factor)

    def topic_partition(topic, partition, loc, origin=None) -> None:
        if topic not in names:
            raise _FieldError(loc + ("topic",), f"expected a topic of the scenario ({', '.join(names)}), "
                                                f"found '{topic}'", origin)
        if partition is not None and partition >= names[topic].partitions:
            raise _FieldError(loc + ("partition",), f"expected a partition of '{topic}' (0..{names[topic].partitions - 1}),"
                                                    f" found {partition}", origin)

    def broker(b, loc) -> None:
        if b not in seen:
            raise _FieldError(loc, f"expected a broker of the cluster ({ids}), found {b}")

    for i, (ev, plan) in enumerate(zip(scenario.events, plans, strict=True)):
        loc = ("events", i)
        if ev.at_ms > scenario.duration_ms:
            raise _FieldError(loc + ("at",), f"expected a time within duration ({scenario.duration_ms}ms), "
                                             f"found {ev.at_ms}ms")
        body = loc + (ev.kind,)
        if isinstance(ev, (BrokerDownEvent, BrokerUpEvent, SlowNetworkEvent, StallFollowerEvent, FailPartitionEvent)):
            broker(ev.broker, body + ("broker",))
        if isinstance(ev, SlowNetworkEvent) and ev.network_in_bps is None and ev.network_out_bps is None:
            raise _FieldError(body, "expected network_in or network_out, found neither")
        if isinstance(ev, FailPartitionEvent):
            topic_partition(ev.topic, ev.partition, body)
        if isinstance(ev, StallFollowerEvent):
            if ev.partition is not None and ev.topic is None:
                raise _FieldError(body + ("partition",), "expected a topic with the partition, found no topic")
            if ev.topic is not None:
                topic_partition(ev.topic, ev.partition, body)
        if isinstance(ev, ProduceBurstEvent):
            topic_partition(ev.topic, None, body)
            for p in ev.partitions or ():
                topic_partition(ev.topic, p, body)
            if ev.partitions is not None and len(set(ev.partitions)) != len(ev.partitions):
                raise _FieldError(body + ("partitions",), f"expected distinct partitions, found {list(ev.partitions)}")
        if isinstance(ev, CancelReassignmentEvent):
            for j, (topic, partition) in enumerate(ev.partitions or ()):
                topic_partition(topic, partition, body + ("partitions", j))
        if isinstance(ev, ReassignEvent):
            where = ("partitions",) if plan else body + ("partitions",)
            moved: set[tuple[str, int]] = set()
            for j, move in enumerate(ev.partitions):
                topic_partition(move.topic, move.partition, where + (j,), plan)
                if (move.topic, move.partition) in moved:
                    raise _FieldError(where + (j,), f"expected each partition once, found {move.topic}-{move.partition}"
                                                    " twice", plan)
                moved.add((move.topic, move.partition))
                replica_list(move.replicas, where + (j, "replicas"), plan)
        if isinstance(ev, ConfigEvent):
            if ev.entity_type == "topic" and ev.entity not in names:
                raise _FieldError(body + ("topic",), f"expected a topic of the scenario ({', '.join(names)}), "
                                                     f"found '{ev.entity}'")
            if ev.entity_type == "broker" and ev.entity != DEFAULT_BROKER_ENTITY:
                broker(int(ev.entity), body + ("broker",))
            for name, value in ev.configs:
                if name in KIP542_RATE_CONFIGS and not scenario.kafka.kip542:
                    raise _FieldError(body + (name,), "expected a config of this broker, found a KIP-542 config "
                                                      "while kafka.kip542 is false")
                if name in LIST_CONFIGS and value not in (None, "*"):
                    for partition, b in sorted(parse_throttled_replicas(value, name)):
                        topic_partition(ev.entity, partition, body + (name,))
                        broker(b, body + (name,))


def parse_scenario(data: dict, base_dir: Path, source: str = "<scenario>") -> Scenario:
    """Validate a scenario mapping (YAML already loaded); reassignment files are relative to ``base_dir``."""
    try:
        if not isinstance(data, dict):
            raise _FieldError((), f"expected a mapping of scenario fields, found {type(data).__name__}")
        raw = dict(data)
        if "source" in raw:
            raise _FieldError(("source",), "unknown field")
        if "name" not in raw and not source.startswith("<"):
            raw["name"] = Path(source).stem
        raw["cluster"] = _expand_cluster(raw.get("cluster"))
        events = raw.get("events") or []
        if not isinstance(events, list):
            raise _FieldError(("events",), f"expected a list of events, found {events!r}")
        flat = [_flatten_event(ev, i, Path(base_dir)) for i, ev in enumerate(events)]
        raw["events"] = [ev for ev, _ in flat]
        try:
            scenario = Scenario.model_validate(raw)
        except ValidationError as exc:
            raise _first_error(exc) from None
        _check(scenario, [plan for _, plan in flat])
    except _FieldError as err:
        where = err.source or source
        path = _path(err.loc)
        raise ReplicaflowError(f"{where}: {path + ': ' if path else ''}{err.message}") from None
    ids = scenario.cluster.broker_ids
    topics = tuple(t if t.assignment else t.model_copy(update={"assignment": tuple(
        tuple(r) for r in assign_replicas(ids, t.partitions, t.replication_factor, start_index=i))})
        for i, t in enumerate(scenario.topics))
    order = sorted(range(len(scenario.events)), key=lambda i: (scenario.events[i].at_ms, i))
    return scenario.model_copy(update={"topics": topics, "events": tuple(scenario.events[i] for i in order),
                                       "source": source})


def load_scenario(path: Path) -> Scenario:
    """Read and validate a scenario YAML file; every error names the file."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ReplicaflowError(f"{path}: scenario file does not exist") from None
    except OSError as exc:
        raise ReplicaflowError(f"{path}: cannot read the scenario file ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise ReplicaflowError(f"{path}{line}: invalid YAML ({problem})") from None
    return parse_scenario(data, path.parent, str(path))
