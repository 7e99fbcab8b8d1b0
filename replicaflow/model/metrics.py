"""Kafka metric names (docs/semantics.md §3) and which of them a release has -- the one home of both.

Every broker-level metric replicaflow reports, with its exact JMX name, its Prometheus name in
the JMX-exporter convention Strimzi's alert rules use, and whether it is a gauge (value at the
scrape) or a meter (JMX ``Count``: cumulative since the broker process started, reset when the
broker restarts).
"""

from __future__ import annotations

from dataclasses import dataclass

from replicaflow.model import election
from replicaflow.model.version import KafkaVersion

RM = "kafka.server:type=ReplicaManager,name="
BTM = "kafka.server:type=BrokerTopicMetrics,name="
RFM = "kafka.server:type=ReplicaFetcherManager,name="
CTRL = "kafka.controller:type=KafkaController,name="
REQ = "kafka.network:type=RequestMetrics,name="
CTRL_STATS = "kafka.controller:type=ControllerStats,name="


@dataclass(frozen=True)
class BrokerMetric:
    jmx: str
    prometheus: str
    kind: str  # 'gauge' | 'meter'
    since: str  # first Kafka release that has it (read through `available`)
    help: str
    # how brokers' values make a cluster figure: counts add up, maxima do not ("max" of the brokers')
    aggregate: str = "sum"
    # False for replicaflow's own gauges that Apache Kafka never shipped (shown marked as hypothetical)
    shipped: bool = True
    # first release whose KRaft controller has it, where that differs from ``since`` (None: same)
    kraft_since: str | None = None

    @property
    def short(self) -> str:
        return self.jmx.split("name=", 1)[1].split(",", 1)[0]


BROKER_METRICS: tuple[BrokerMetric, ...] = (
    BrokerMetric(RM + "UnderReplicatedPartitions", "kafka_server_replicamanager_underreplicatedpartitions",
                 "gauge", "0.8", "Partitions this broker leads that are under-replicated (version semantics)."),
    BrokerMetric(RM + "UnderMinIsrPartitionCount", "kafka_server_replicamanager_underminisrpartitioncount",
                 "gauge", "1.0", "Partitions this broker leads whose ISR is below the effective min ISR (KIP-164)."),
    BrokerMetric(RM + "AtMinIsrPartitionCount", "kafka_server_replicamanager_atminisrpartitioncount",
                 "gauge", "2.3", "Partitions this broker leads whose ISR equals the effective min ISR (KIP-427)."),
    BrokerMetric(RM + "ReassigningPartitions", "kafka_server_replicamanager_reassigningpartitions",
                 "gauge", "2.5", "Partitions this broker leads with adding or removing replicas (KIP-352)."),
    BrokerMetric(RM + "ReassignmentMaxLag", "kafka_server_replicamanager_reassignmentmaxlag",
                 "gauge", "2.5", "Max over led reassigning partitions of HW minus an adding replica's LEO (§3.1).",
                 aggregate="max", shipped=False),
    BrokerMetric(RM + "LeaderCount", "kafka_server_replicamanager_leadercount",
                 "gauge", "0.8", "Partitions this broker leads."),
    BrokerMetric(RM + "PartitionCount", "kafka_server_replicamanager_partitioncount",
                 "gauge", "0.8", "Replicas hosted on this broker (assigned, adding and removing)."),
    BrokerMetric(RM + "OfflineReplicaCount", "kafka_server_replicamanager_offlinereplicacount",
                 "gauge", "1.0", "Replicas this broker hosts on offline log directories (KIP-112)."),
    BrokerMetric(RM + "IsrShrinksPerSec", "kafka_server_replicamanager_isrshrinks_total",
                 "meter", "0.8", "ISR shrinks committed by this broker as leader."),
    BrokerMetric(RM + "IsrExpandsPerSec", "kafka_server_replicamanager_isrexpands_total",
                 "meter", "0.8", "ISR expansions committed by this broker as leader."),
    BrokerMetric(RM + "FailedIsrUpdatesPerSec", "kafka_server_replicamanager_failedisrupdates_total",
                 "meter", "0.11", "ISR updates this broker proposed that were rejected."),
    BrokerMetric(BTM + "ReplicationBytesInPerSec", "kafka_server_brokertopicmetrics_replicationbytesin_total",
                 "meter", "0.11", "Bytes appended by this broker's followers (KIP-153)."),
    BrokerMetric(BTM + "ReplicationBytesOutPerSec", "kafka_server_brokertopicmetrics_replicationbytesout_total",
                 "meter", "0.11", "Bytes this broker returned to followers (KIP-153)."),
    BrokerMetric(BTM + "ReassignmentBytesInPerSec", "kafka_server_brokertopicmetrics_reassignmentbytesin_total",
                 "meter", "2.5", "Bytes appended by adding replicas on this broker (KIP-352)."),
    BrokerMetric(BTM + "ReassignmentBytesOutPerSec", "kafka_server_brokertopicmetrics_reassignmentbytesout_total",
                 "meter", "2.5", "Bytes this broker returned to adding replicas (KIP-352)."),
    BrokerMetric(BTM + "FailedProduceRequestsPerSec",
                 "kafka_server_brokertopicmetrics_failedproducerequests_total", "meter", "0.8",
                 "Partition appends of produce requests this broker failed (NotEnoughReplicas included)."),
    BrokerMetric(REQ + "ErrorsPerSec,request=Produce,error=NOT_ENOUGH_REPLICAS",
                 "kafka_network_requestmetrics_errors_total", "meter", "1.0",
                 "Produce partition responses with NOT_ENOUGH_REPLICAS from this broker (KIP-188)."),
    BrokerMetric(RFM + "FailedPartitionsCount,clientId=Replica", "kafka_server_replicafetchermanager_failedpartitionscount",
                 "gauge", "2.3", "Partitions this broker's replica fetchers marked failed (KIP-461)."),
    BrokerMetric(RFM + "MaxLag,clientId=Replica", "kafka_server_replicafetchermanager_maxlag",
                 "gauge", "0.8", "Max over partitions this broker actively fetches of leader HW minus its LEO.",
                 aggregate="max"),
    BrokerMetric(CTRL + "OfflinePartitionsCount", "kafka_controller_kafkacontroller_offlinepartitionscount",
                 "gauge", "0.8", "Partitions without a live leader; reported by the active controller, 0 elsewhere."),
    BrokerMetric(CTRL_STATS + "UncleanLeaderElectionsPerSec",
                 "kafka_controller_controllerstats_uncleanleaderelections_total", "meter", "0.8",
                 "Elections of a leader outside the previous ISR, counted by the active controller (§6).",
                 kraft_since="3.9"),
)

BY_SHORT = {m.short: m for m in BROKER_METRICS}
BY_JMX = {m.jmx: m for m in BROKER_METRICS}

# Traffic meters come from the telemetry `traffic` table, whose `name` column holds the short name.
TRAFFIC_METRICS = ("ReplicationBytesInPerSec", "ReplicationBytesOutPerSec",
                   "ReassignmentBytesInPerSec", "ReassignmentBytesOutPerSec")

# Broker metrics read from a telemetry table that only replica offsets or byte counts fill (docs/metrics.md):
# short name → that table. A cluster rebuilt from its logs alone has neither (its ``_meta.json`` provenance
# says "unknown", docs/real-cluster.md), so these metrics are unknown there, not 0.
SOURCE_TABLES = {"MaxLag": "replica_offsets", "ReassignmentMaxLag": "replica_offsets",
                 **dict.fromkeys(TRAFFIC_METRICS, "traffic")}


def unknown_metrics(provenance: dict | None) -> frozenset[str]:
    """JMX names of the broker metrics whose table ``provenance`` (table → origin) marks "unknown"."""
    gone = {table for table, origin in (provenance or {}).items() if origin == "unknown"}
    return frozenset(BY_SHORT[short].jmx for short, table in SOURCE_TABLES.items() if table in gone)


# Meters of the produce requests a leader rejects (telemetry `produce_errors`, docs/semantics.md §1.5).
PRODUCE_ERROR_METERS = ("FailedProduceRequestsPerSec", "ErrorsPerSec")

# Broker gauges that count the partitions a broker leads with a docs/semantics.md §2 predicate true:
# (short gauge name, predicate flag). The simulator's scrape and the pipeline both count from this map.
LEADER_FLAG_GAUGES = (("UnderReplicatedPartitions", "urp"), ("UnderMinIsrPartitionCount", "under_min_isr"),
                      ("AtMinIsrPartitionCount", "at_min_isr"), ("ReassigningPartitions", "reassigning"))

# Per-partition gauges (kafka.cluster.Partition's newGauge calls) and the first release that has each:
# InSyncReplicasCount and ReplicasCount came in 0.10.2, UnderMinIsr with KIP-164 (1.0), AtMinIsr with KIP-427 (2.3).
PARTITION_GAUGE_SINCE = {"UnderReplicated": "0.8", "UnderMinIsr": "1.0", "AtMinIsr": "2.3",
                         "InSyncReplicasCount": "0.10.2", "ReplicasCount": "0.10.2"}
PARTITION_GAUGES = tuple(PARTITION_GAUGE_SINCE)


def jmx(short: str) -> str:
    """Full JMX name of a broker metric from its short name, e.g. ``jmx('UnderReplicatedPartitions')``."""
    return BY_SHORT[short].jmx


def available(short: str, version: KafkaVersion, controller: str | None = None) -> bool:
    """Whether ``version`` exports the broker metric or per-partition gauge named ``short`` with the
    ``controller`` kind (None: the release's default).

    The only place that says which release has which metric; an unknown name is a programming
    error (KeyError), not a metric that is silently absent. UncleanLeaderElectionsPerSec is the ZooKeeper
    controller's ``ControllerStats`` meter in every release and KRaft's ``ControllerMetadataMetrics`` one
    from 3.9 (KAFKA-12670).
    """
    if short not in BY_SHORT:
        return version.at_least(PARTITION_GAUGE_SINCE[short])
    metric = BY_SHORT[short]
    kind = controller or election.default_controller(version)
    since = metric.kraft_since if kind == election.KRAFT and metric.kraft_since else metric.since
    return version.at_least(since)


def broker_metrics_for(version: KafkaVersion, controller: str | None = None) -> tuple[BrokerMetric, ...]:
    """The broker metrics a release and controller kind export (ReassignmentMaxLag is replicaflow's, from 2.5:
    §3.1)."""
    return tuple(m for m in BROKER_METRICS if available(m.short, version, controller))
