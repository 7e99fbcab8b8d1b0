"""The scenario file (docs/scenarios.md): YAML in human units, validated into frozen, normalized models.

``fields`` (unit-typed fields) → ``models`` (pydantic models; events a discriminated union) ←
``yamldoc`` (bounded YAML with lines) → ``normalize`` (shorthand) / ``plan`` (reassignment JSON) →
``checks`` (rules across fields, ``limits``) → ``loader``; ``problems`` collects every error.
"""

from replicaflow.sim.scenario.fields import DEFAULT_START_MS
from replicaflow.sim.scenario.limits import DEFAULT_MAX_WORK
from replicaflow.sim.scenario.loader import load_scenario, parse_scenario
from replicaflow.sim.scenario.models import (
    EVENT_KINDS,
    BrokerDownEvent,
    BrokerSpec,
    BrokerUpEvent,
    CancelReassignmentEvent,
    ClusterSpec,
    ConfigEvent,
    ElectLeadersEvent,
    Event,
    FailPartitionEvent,
    KafkaSpec,
    ProduceBurstEvent,
    ReassignEvent,
    ReassignPartition,
    Scenario,
    SlowNetworkEvent,
    StallFollowerEvent,
    TopicSpec,
    VerifyEvent,
)

__all__ = [
    "DEFAULT_MAX_WORK", "DEFAULT_START_MS", "EVENT_KINDS", "BrokerDownEvent", "BrokerSpec", "BrokerUpEvent",
    "CancelReassignmentEvent", "ClusterSpec", "ConfigEvent", "ElectLeadersEvent", "Event", "FailPartitionEvent",
    "KafkaSpec", "ProduceBurstEvent", "ReassignEvent", "ReassignPartition", "Scenario", "SlowNetworkEvent",
    "StallFollowerEvent", "TopicSpec", "VerifyEvent", "load_scenario", "parse_scenario",
]
