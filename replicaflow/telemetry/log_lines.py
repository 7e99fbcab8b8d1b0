"""What every broker log line the simulator writes is made of: log4j's default layout, the files, the loggers,
and how each release prints a partition, a broker list and a topic id (docs/semantics.md §7, docs/logs.md)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime

from replicaflow.model.version import KafkaVersion

SERVER, STATE_CHANGE, CONTROLLER = "server.log", "state-change.log", "controller.log"

PARTITION_LOGGER = "kafka.cluster.Partition"
STATE_CHANGE_LOGGER = "state.change.logger"
FETCHER_MANAGER_LOGGER = "kafka.server.ReplicaFetcherManager"
FETCHER_THREAD_LOGGER = "kafka.server.ReplicaFetcherThread"
ZK_CONTROLLER_LOGGER = "kafka.controller.KafkaController"
KRAFT_CONTROLLER_LOGGER = "org.apache.kafka.controller.ReplicationControlManager"
HEARTBEAT_MANAGER_LOGGER = "org.apache.kafka.controller.BrokerHeartbeatManager"

OLD_FAMILY = "0.10"  # 0.8 - 0.11: `Partition [t,p] on broker N: ` and `[t,p]` partition names

Line = tuple[str, str]  # (file name inside broker-N/, full log line)


def format_ts(ts_ms: int) -> str:
    """``yyyy-MM-dd HH:mm:ss,SSS`` in UTC, log4j's default ``%d`` layout."""
    dt = datetime.fromtimestamp(ts_ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%d %H:%M:%S") + f",{ts_ms % 1000:03d}"


def format_line(ts_ms: int, level: str, message: str, logger: str) -> str:
    return f"[{format_ts(ts_ms)}] {level} {message} ({logger})"


def broker_list(brokers: Iterable[int]) -> str:
    return ",".join(str(int(b)) for b in brokers)


def broker_seq(brokers: Iterable[int]) -> str:
    """Broker ids as a Scala or Java collection prints them (`Set(1, 2)`, `[1, 2]`), without the brackets."""
    return ", ".join(str(int(b)) for b in brokers)


def partition_name(family: str, topic: str, partition: int) -> str:
    """TopicPartition.toString: ``orders-3``; 0.10/0.11 TopicAndPartition: ``[orders,3]``."""
    return f"[{topic},{partition}]" if family == OLD_FAMILY else f"{topic}-{partition}"


def partition_prefix(family: str, topic: str, partition: int, broker: int) -> str:
    if family == OLD_FAMILY:
        return f"Partition [{topic},{partition}] on broker {broker}: "
    return f"[Partition {topic}-{partition} broker={broker}] "


FETCHER_TP_SINCE = "0.10.1"  # AbstractFetcherManager imports TopicPartition
BECOME_LEADER_TP_SINCE = "0.10.2"  # Partition.topicPartition: makeLeaders' line, appendRecordsToLeader's exception


def topic_partition_since(v: KafkaVersion, since: str, topic: str, partition: int) -> str:
    """A partition as a class that moved from TopicAndPartition (`[t,p]`) to TopicPartition (`t-p`) at ``since``
    prints it: AbstractFetcherManager at 0.10.1, Partition at 0.10.2."""
    return f"{topic}-{partition}" if v.at_least(since) else f"[{topic},{partition}]"




def topic_id(topic: str) -> str:
    """A stable stand-in for the topic's Uuid (base64url, 22 characters, as Kafka prints it)."""
    return base64.urlsafe_b64encode(hashlib.md5(topic.encode()).digest()).decode().rstrip("=")


def is_kraft(version: KafkaVersion, e: dict) -> bool:
    """Controller and server lifecycle lines are KRaft's when the record says its cluster runs KRaft
    (``controller``); a record without it reads as KRaft from 3.3 (KRaft production-ready)."""
    controller = e.get("controller")
    return controller == "kraft" if controller is not None else version.at_least("3.3")


def fatal_level(v: KafkaVersion) -> str:
    """Kafka's ``Logging.fatal``: log4j's FATAL up to 1.0, then SLF4J's ERROR with a FATAL marker log4j does not print."""
    return "ERROR" if v.at_least("1.1") else "FATAL"
