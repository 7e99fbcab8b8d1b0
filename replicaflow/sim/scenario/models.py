"""The scenario as validated, frozen models: the Kafka release, the cluster, the topics and the
timeline of events (a discriminated union on ``kind``), all in normalized units (docs/scenarios.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from replicaflow.errors import ReplicaflowError, show
from replicaflow.model import election
from replicaflow.model.fetcher import FETCH_ERRORS
from replicaflow.model.produce import DEFAULT_BATCH_SIZE_BYTES
from replicaflow.model.units import INT32_MAX
from replicaflow.model.version import KafkaVersion, written_release
from replicaflow.sim.scenario.fields import (
    DEFAULT_START_MS,
    BrokerId,
    ClusterName,
    Count,
    DurationMs,
    FrozenModel,
    MinIsr,
    Name,
    OptRateBps,
    OptThrottleBps,
    PartitionId,
    PositiveMs,
    PositiveRateBps,
    RateBps,
    SizeBytes,
    StartMs,
    TopicName,
    optional,
    positive_duration,
)
from replicaflow.telemetry.toolformat import LOG_DIR

# Short names accepted for fetch errors, mapped to the kinds of replicaflow.model.fetcher.
ERROR_ALIASES = {"fenced_epoch": "fenced_leader_epoch", "corrupt": "corrupt_records"}


# ---------------------------------------------------------------------------------------- kafka
class KafkaSpec(FrozenModel):
    """Broker behaviour: the release (docs/semantics.md, per section) and the configs the simulator honours."""

    version: str
    kip542: bool = False
    replica_lag_time_max_ms: PositiveMs = Field(alias="replica_lag_time_max")
    replica_lag_max_messages: int = Field(4000, ge=1, strict=True)
    num_replica_fetchers: int = Field(1, ge=1, le=1024, strict=True)
    controller: Literal["zookeeper", "kraft"]
    session_timeout_ms: PositiveMs = Field(alias="session_timeout")
    unclean_leader_election: bool
    auto_leader_rebalance: bool = False
    eligible_leader_replicas: bool
    fetch_rtt_ms: PositiveMs = Field(50, alias="fetch_rtt")
    isr_commit_delay_ms: DurationMs = Field(0, alias="isr_commit_delay")
    quota_window_samples: int = Field(11, ge=1, le=10_000, strict=True)
    quota_window_ms: PositiveMs = Field(1000, alias="quota_window")

    @model_validator(mode="before")
    @classmethod
    def _release_defaults(cls, data):
        """Defaults per release (and controller): ``replica.lag.time.max.ms`` 10 s up to 2.4, 30 s from 2.5
        (KIP-537); the controller, its session timeout and ``unclean.leader.election.enable`` (§6)."""
        if not isinstance(data, dict):
            return data
        try:
            version = KafkaVersion.parse(str(data.get("version")))
        except ReplicaflowError:  # reported by the version field itself; no second problem here
            version = KafkaVersion.parse("3.7")
        data = dict(data)
        data.setdefault("replica_lag_time_max", f"{version.default_replica_lag_time_max_ms}ms")
        data.setdefault("controller", election.default_controller(version))
        controller = data["controller"] if data["controller"] in election.CONTROLLERS else election.ZOOKEEPER
        data.setdefault("session_timeout", f"{election.session_timeout_ms(version, controller)}ms")
        data.setdefault("unclean_leader_election", version.default_unclean_leader_election)
        data.setdefault("eligible_leader_replicas", version.default_eligible_leader_replicas)
        return data

    @model_validator(mode="after")
    def _controller_runs_release(self):
        problem = election.controller_problem(KafkaVersion.parse(self.version), self.controller)
        if problem is not None:
            raise ValueError(f"controller: {problem}")
        problem = election.eligible_leader_replicas_problem(KafkaVersion.parse(self.version),
                                                            self.eligible_leader_replicas)
        if problem is not None:
            raise ValueError(f"eligible_leader_replicas: {problem}")
        return self

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ValueError(f"expected a Kafka release like '3.7', found {show(value)}")
        try:
            return str(written_release(str(value)))
        except ReplicaflowError as exc:
            raise ValueError(str(exc)) from None

    @property
    def kafka_version(self) -> KafkaVersion:
        return KafkaVersion.parse(self.version, self.kip542)


# ---------------------------------------------------------------------------------------- cluster
class BrokerSpec(FrozenModel):
    id: BrokerId
    rack: Name | None = None
    network_in_bps: PositiveRateBps = Field(alias="network_in")
    network_out_bps: PositiveRateBps = Field(alias="network_out")
    # ``log.dirs``: one directory, or several (JBOD, KIP-112); new logs go to the least loaded live one
    log_dirs: tuple[Name, ...] = Field((LOG_DIR,), min_length=1, max_length=64)

    @field_validator("log_dirs")
    @classmethod
    def _distinct_dirs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError(f"expected distinct directories, found {show(list(value))}")
        return value


class ClusterSpec(FrozenModel):
    """Brokers (``brokers: 6`` → ids 1..6, or a list) and their defaults."""

    network_in_bps: PositiveRateBps = Field(125e6, alias="network_in")
    network_out_bps: PositiveRateBps = Field(125e6, alias="network_out")
    brokers: tuple[BrokerSpec, ...] = Field(min_length=1)
    min_insync_replicas: MinIsr = 1

    @property
    def broker_ids(self) -> list[int]:
        return [b.id for b in self.brokers]


# ---------------------------------------------------------------------------------------- topics
class TopicSpec(FrozenModel):
    """A topic; ``produce_rate_bps`` is the whole topic's, ``initial_size_bytes`` each partition's."""

    name: TopicName
    partitions: Count
    replication_factor: int = Field(ge=1, le=2**15 - 1, strict=True)  # Kafka's replicationFactor is an int16
    min_insync_replicas: MinIsr | None = None
    produce_rate_bps: RateBps = Field(0.0, alias="produce_rate")
    message_size_bytes: SizeBytes = Field(1024, alias="message_size")
    initial_size_bytes: SizeBytes = Field(0, alias="initial_size")
    assignment: tuple[tuple[BrokerId, ...], ...] = ()
    # the producers' acks (None: the release's producer default, model.produce.default_acks) and batch.size
    acks: Literal["all", "1"] | None = None
    batch_size_bytes: SizeBytes = Field(DEFAULT_BATCH_SIZE_BYTES, alias="batch_size")

    @field_validator("acks", mode="before")
    @classmethod
    def _acks(cls, value):
        """``all`` / ``-1`` (the same setting in Kafka) or ``1``; acks=0 is not modelled."""
        if value is None:
            return None
        text = str(value).strip().lower() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
        if text in ("all", "-1"):
            return "all"
        if text == "1":
            return "1"
        raise ValueError(f"expected 'all' (or -1) or 1, found {show(value)}")

    @field_validator("batch_size_bytes")
    @classmethod
    def _batch_size(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"expected a batch size of at least 1 byte, found {value}")
        return value

    @field_validator("message_size_bytes")
    @classmethod
    def _message_size(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"expected a message size of at least 1 byte, found {value}")
        if value > INT32_MAX:  # Kafka's message.max.bytes and max.request.size are int32
            raise ValueError(f"expected a message size below 2GiB (Kafka's message.max.bytes is an int32), "
                             f"found {value}")
        return value

    @property
    def initial_messages(self) -> int:
        return self.initial_size_bytes // self.message_size_bytes

    @property
    def partition_rate_bps(self) -> float:
        return self.produce_rate_bps / self.partitions


# ---------------------------------------------------------------------------------------- events
class _Event(FrozenModel):
    at_ms: DurationMs = Field(alias="at")


class ReassignPartition(FrozenModel):
    topic: TopicName
    partition: PartitionId
    replicas: tuple[BrokerId, ...]


class ReassignEvent(_Event):
    """``kafka-reassign-partitions --execute`` with the Kafka reassignment JSON (KIP-455), ``--throttle`` and
    ``--additional`` (2.6+: run while other reassignments are in progress)."""

    kind: Literal["reassign"]
    partitions: tuple[ReassignPartition, ...] = Field(min_length=1)
    throttle_bps: OptThrottleBps = Field(None, alias="throttle")
    additional: bool = False


class BrokerDownEvent(_Event):
    """The broker stops: a crash (session expires after ``session_timeout``) or ``controlled`` shutdown."""

    kind: Literal["broker_down"]
    broker: BrokerId
    controlled: bool = False


class BrokerUpEvent(_Event):
    kind: Literal["broker_up"]
    broker: BrokerId


class LogDirFailureEvent(_Event):
    """One of the broker's log directories fails (an I/O error): 1.0+ takes its replicas offline and halts
    the broker only when it was its last live directory; older releases halt (docs/semantics.md §6.1).
    ``log_dir`` names one of the broker's ``log_dirs``; left out, its first."""

    kind: Literal["log_dir_failure"]
    broker: BrokerId
    log_dir: Name | None = None


class SlowNetworkEvent(_Event):
    kind: Literal["slow_network"]
    broker: BrokerId
    network_in_bps: OptRateBps = Field(None, alias="network_in")
    network_out_bps: OptRateBps = Field(None, alias="network_out")
    for_ms: PositiveMs = Field(alias="for")


class FailPartitionEvent(_Event):
    """The follower on ``broker`` gets ``error`` fetching the partition (docs/semantics.md §4, KIP-461)."""

    kind: Literal["fail_partition"]
    topic: TopicName
    partition: PartitionId
    broker: BrokerId
    error: str

    @field_validator("error", mode="before")
    @classmethod
    def _error(cls, value):
        value = ERROR_ALIASES.get(value, value) if isinstance(value, str) else value
        if value not in FETCH_ERRORS:
            raise ValueError(f"expected one of {', '.join(sorted(FETCH_ERRORS))}, found {show(value)}")
        return value


class ProduceBurstEvent(_Event):
    kind: Literal["produce_burst"]
    topic: TopicName
    rate_bps: RateBps = Field(alias="rate")
    for_ms: PositiveMs = Field(alias="for")
    partitions: tuple[PartitionId, ...] | None = None


class StallFollowerEvent(_Event):
    """The follower replicas on ``broker`` stop fetching while the broker stays up (docs/semantics.md §1.2)."""

    kind: Literal["stall_follower"]
    broker: BrokerId
    topic: TopicName | None = None
    partition: PartitionId | None = None
    for_ms: Annotated[int | None, BeforeValidator(optional(positive_duration))] = Field(None, alias="for")


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
    partitions: tuple[tuple[TopicName, PartitionId], ...] | None = None


class ElectLeadersEvent(_Event):
    """``kafka-leader-election --election-type preferred|unclean`` over every partition, or the listed ones."""

    kind: Literal["elect_leaders"]
    election_type: Literal["preferred", "unclean"] = "preferred"
    partitions: tuple[tuple[TopicName, PartitionId], ...] | None = None


Event = Annotated[
    ReassignEvent | BrokerDownEvent | BrokerUpEvent | SlowNetworkEvent | FailPartitionEvent | ProduceBurstEvent
    | StallFollowerEvent | VerifyEvent | ConfigEvent | CancelReassignmentEvent | ElectLeadersEvent | LogDirFailureEvent,
    Field(discriminator="kind"),
]
EVENT_KINDS = ("reassign", "broker_down", "broker_up", "slow_network", "fail_partition", "produce_burst",
               "stall_follower", "verify", "config", "cancel_reassignment", "elect_leaders", "log_dir_failure")


# ---------------------------------------------------------------------------------------- scenario
class Scenario(FrozenModel):
    """A validated scenario; build it with ``load_scenario`` / ``parse_scenario``, which also fill
    Kafka's default assignments, check references and sort events by ``(at_ms, file order)``."""

    name: ClusterName
    seed: int = Field(0, strict=True, ge=0, le=2**63 - 1)
    duration_ms: PositiveMs = Field(alias="duration")
    tick_ms: PositiveMs = Field(100, alias="tick")
    scrape_interval_ms: PositiveMs = Field(10_000, alias="scrape_interval")
    start_ms: StartMs = Field(DEFAULT_START_MS, alias="start")
    kafka: KafkaSpec
    cluster: ClusterSpec
    topics: tuple[TopicSpec, ...] = Field(min_length=1)
    events: tuple[Event, ...] = ()
    source: str = "<scenario>"
    # where each event (in the order of ``events``) is written, ``file:line: events[i].kind`` with ``i`` its place in
    # the file: an event refused when it comes (a fail_partition of the leader) names its line (loader.py)
    event_places: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # sentences about a valid but likely unintended file (loader.py)

    @property
    def version(self) -> KafkaVersion:
        return self.kafka.kafka_version

    @property
    def replicas(self) -> int:
        """Partitions × replication factor over every topic: the length of the engine's replica arrays."""
        return sum(t.partitions * t.replication_factor for t in self.topics)

    @property
    def telemetry_rows(self) -> int:
        """About how many telemetry rows the run writes, before it runs: one ``replica_offsets`` row per
        replica per scrape outweighs every other table (an hour of 150,000 replicas scraped every 30 s:
        18.2 M of its 18.6 M rows)."""
        return self.replicas * (self.duration_ms // self.scrape_interval_ms + 1)

    def topic(self, name: str) -> TopicSpec:
        for t in self.topics:
            if t.name == name:
                return t
        raise KeyError(name)
