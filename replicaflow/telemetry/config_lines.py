"""A dynamic config change as the brokers log it, per release (docs/logs.md, "Config changes"), rendered from the
simulator's ``config_changed`` events: the entity's overrides as they stand after the change, every one listed."""

from __future__ import annotations

from replicaflow.model.configs import DEFAULT_BROKER
from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.log_lines import SERVER, Line, format_line, is_kraft


def _kraft_publisher(v: KafkaVersion, broker: int) -> tuple[str, str]:
    """(logIdent, logger) of the KRaft broker's publisher of config deltas: BrokerMetadataPublisher in 3.3,
    DynamicConfigPublisher from 3.4 (its name `DynamicConfigPublisher broker id=N` from 3.5)."""
    if not v.at_least("3.4"):
        return f"[BrokerMetadataPublisher id={broker}] ", "kafka.server.metadata.BrokerMetadataPublisher"
    name = f"nodeType=broker id={broker}" if not v.at_least("3.5") else f"broker id={broker}"
    return f"[DynamicConfigPublisher {name}] ", "kafka.server.metadata.DynamicConfigPublisher"


def config_changed(e: dict, v: KafkaVersion, fam: str) -> list[Line]:
    """KRaft: `Updating topic T with new configuration : k -> v,k2 -> v2` (a broker's own: `Updating node N …`, the
    cluster default: `Updating cluster configuration : …`). ZooKeeper, every broker on the change notification
    (DynamicConfigManager, ZkConfigManager from 3.4): `Processing override for entityPath: topics/T with config: …`,
    the overrides as `{k=v, …}` (java.util.Properties) up to 0.10.2 and `Map(k -> v, …)` from 0.11; 0.10.0's
    notifications (version 1) name the entity type and the entity apart."""
    ts, b, entity, configs = e["ts_ms"], e["broker"], e["entity"], dict(e["configs"])
    topic = e["entity_type"] == "topic"
    if is_kraft(v, e):
        ident, logger = _kraft_publisher(v, b)
        listed = ",".join(f"{k} -> {val}" for k, val in configs.items())
        what = (f"topic {entity} with new" if topic else "cluster" if entity == DEFAULT_BROKER
                else f"node {entity} with new")
        return [(SERVER, format_line(ts, "INFO", f"{ident}Updating {what} configuration : {listed}", logger))]
    logger = "kafka.server.ZkConfigManager" if v.at_least("3.4") else "kafka.server.DynamicConfigManager"
    if v.at_least("0.11"):
        listed = "Map(" + ", ".join(f"{k} -> {val}" for k, val in configs.items()) + ")"
    else:
        listed = "{" + ", ".join(f"{k}={val}" for k, val in configs.items()) + "}"
    kind = "topics" if topic else "brokers"
    where = f"entityPath: {kind}/{entity}" if v.at_least("0.10.1") else f"entityType: {kind}, entity: {entity}"
    return [(SERVER, format_line(ts, "INFO", f"Processing override for {where} with config: {listed}", logger))]
