"""Dynamic configs (``kafka-configs --alter``) and what ``kafka-reassign-partitions`` writes to them (§5).

Kafka's DynamicConfigManager hands broker and topic config changes to handlers that update the
replication quota managers (rates and throttled-replica lists) and the partitions (min ISR); here
``DynamicConfigs`` keeps the stored values, derives everything that depends on them, and pushes
the quota side into the ReplicationQuotaManager. The tool's ``--throttle`` (§5.1, or the KIP-542
rates, §5.2) and ``--verify`` are writers of these configs like any operator.
"""

from __future__ import annotations

import numpy as np

from replicaflow.model import quota, reassign_tool
from replicaflow.model.configs import (
    DEFAULT_BROKER,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_REPLICAS,
    MIN_ISR,
    QUOTA_RATES,
    REASSIGNMENT_RATES,
    REPLICA_LAG_TIME_MAX_MS,
    REPLICATION_RATES,
    THROTTLED_REPLICAS_LISTS,
    UNCLEAN_LEADER_ELECTION_ENABLE,
)
from replicaflow.model.version import KafkaVersion
from replicaflow.sim.emitter import Emitter
from replicaflow.sim.quota_manager import ReplicationQuotaManager
from replicaflow.sim.scenario import Scenario
from replicaflow.sim.state import ClusterState


class DynamicConfigs:
    """Broker and topic configs as Kafka stores them (strings), and the values derived from them."""

    def __init__(self, state: ClusterState, scenario: Scenario, quotas: ReplicationQuotaManager, emit: Emitter):
        self.s = state
        self.version: KafkaVersion = scenario.version
        self.default_lag_ms = scenario.kafka.replica_lag_time_max_ms
        self.quotas = quotas
        self.emit = emit
        self.broker: dict[tuple[str, str], str] = {}
        self.topic: dict[tuple[str, str], str] = {}
        self.default_unclean = scenario.kafka.unclean_leader_election
        self.plan: dict[tuple[str, int], list[int]] = {}  # the last --execute's JSON, what --verify is run with
        self._unclean: np.ndarray | None = None
        self._parsed: dict[tuple[str, str, str], object] = {}
        self._touched: dict[tuple[str, str], None] = {}  # entities changed since the last announcement, in order
        self._derive()

    def load_initial(self, scenario: Scenario, now: int) -> None:
        """The min ISR configs the cluster starts with (the broker default, then each topic's)."""
        if scenario.cluster.min_insync_replicas != 1:
            self.set("broker", DEFAULT_BROKER, MIN_ISR, str(scenario.cluster.min_insync_replicas), now)
        for t in scenario.topics:
            if t.min_insync_replicas is not None:
                self.set("topic", t.name, MIN_ISR, str(t.min_insync_replicas), now)
        self._touched.clear()  # the configs a cluster starts with: stored before any broker runs, logged by none
        self._derive()

    # ------------------------------------------------------------------ stored values
    def broker_value(self, b: int, name: str) -> str | None:
        """A broker's own value of ``name``, else the cluster-wide default's."""
        own = self.broker.get((str(int(self.s.broker_ids[b])), name))
        return own if own is not None else self.broker.get((DEFAULT_BROKER, name))

    def set(self, entity_type: str, entity: str, name: str, value: str | None, now: int) -> None:
        """Store one config (``None`` deletes it); derived values follow with :meth:`_derive`."""
        store = self.broker if entity_type == "broker" else self.topic
        if value is None:
            store.pop((entity, name), None)
        else:
            store[(entity, name)] = value
        if name == UNCLEAN_LEADER_ELECTION_ENABLE:
            self._unclean = None
        self._touched[(entity_type, entity)] = None
        if entity_type == "topic" and name == MIN_ISR and entity in self.s.topic_index:
            rows = self.s.topic_idx == self.s.topic_index[entity]
            self.s.topic_min_isr[rows] = -1 if value is None else int(value)
        self.emit.config_changed(entity_type, entity, name, value, now)

    def alter(self, now: int, event, where: str) -> None:
        """The scenario's ``config`` event: ``kafka-configs --alter`` of one entity."""
        for name, value in event.configs:
            self.set(event.entity_type, event.entity, name, value, now)
        self._announce(now)

    def _announce(self, now: int) -> None:
        """Each entity a writer changed is one change notification (ZooKeeper) or metadata delta (KRaft): the brokers
        log the entity's overrides as they now stand, every one of them (docs/logs.md); then the derived values."""
        for entity_type, entity in self._touched:
            store = self.broker if entity_type == "broker" else self.topic
            self.emit.configs_logged(entity_type, entity, {n: v for (e, n), v in sorted(store.items()) if e == entity},
                                     now)
        self._touched.clear()
        self._derive()

    # ------------------------------------------------------------------ derived values
    def _derive(self) -> None:
        """Recompute everything that depends on dynamic configs (§5): quota limits, throttled lists, min ISR, lag."""
        s = self.s
        limits = np.full((len(QUOTA_RATES), s.n_brokers), np.inf)
        for q, name in enumerate(QUOTA_RATES):
            for b in range(s.n_brokers):
                value = self.broker_value(b, name)
                if value is not None and float(value) > 0:
                    limits[q, b] = float(value)
        self.quotas.update_quota(limits)
        default_min = self.broker.get((DEFAULT_BROKER, MIN_ISR))
        self.default_min_isr = int(default_min) if default_min is not None else 1
        lag = self.broker.get((DEFAULT_BROKER, REPLICA_LAG_TIME_MAX_MS))
        self.lag_ms = int(lag) if lag is not None else self.default_lag_ms
        self.assignment_changed()

    def assignment_changed(self) -> None:
        """Re-derive the throttled-replica masks (they name brokers, whose slots move with reassignments)."""
        s = self.s
        listed = {LEADER_THROTTLED_REPLICAS: np.zeros_like(s.in_isr), FOLLOWER_THROTTLED_REPLICAS: np.zeros_like(s.in_isr)}
        for (topic, name), value in self.topic.items():
            if name not in listed or topic not in s.topic_index:
                continue
            pairs = self._throttled_pairs(topic, name, value)
            target = listed[name]
            if pairs is quota.ALL_REPLICAS:
                rows = s.topic_idx == s.topic_index[topic]
                target[rows] = s.rbi[rows] >= 0
                continue
            rows, brokers = pairs
            r, c = np.nonzero(s.rbi[rows] == brokers[:, None])
            target[rows[r], c] = True
        self.quotas.mark_throttled(listed[LEADER_THROTTLED_REPLICAS], listed[FOLLOWER_THROTTLED_REPLICAS])

    def _throttled_pairs(self, topic: str, name: str, value: str):
        """A ``*.throttled.replicas`` value as (partition rows, broker indices) of the pairs that exist, or ALL.

        Parsed once per value: the masks are re-derived whenever a reassignment moves replicas.
        """
        key = (topic, name, value)
        if key not in self._parsed:
            s = self.s
            pairs = quota.parse_throttled_replicas(value, f"config {topic} {name}")
            if pairs == quota.ALL_REPLICAS:
                self._parsed[key] = quota.ALL_REPLICAS
            else:
                topic_rows = np.nonzero(s.topic_idx == s.topic_index[topic])[0]
                row_of = dict(zip(s.pnum[topic_rows].tolist(), topic_rows.tolist(), strict=True))
                known = [(row_of[p], s.index[b]) for p, b in sorted(pairs) if p in row_of and b in s.index]
                rows = np.array([r for r, _ in known], dtype=np.intp)
                self._parsed[key] = (rows, np.array([b for _, b in known], dtype=s.rbi.dtype))
        return self._parsed[key]

    def unclean_leader_election(self) -> np.ndarray:
        """[P] ``unclean.leader.election.enable`` of each partition: the topic's, else the broker default's,
        else the release default (§6; Kafka reads "true" case-insensitively)."""
        if self._unclean is None:
            s = self.s
            default = self.broker.get((DEFAULT_BROKER, UNCLEAN_LEADER_ELECTION_ENABLE))
            base = self.default_unclean if default is None else default.strip().lower() == "true"
            per_topic = [self.topic.get((t, UNCLEAN_LEADER_ELECTION_ENABLE)) for t in s.topics]
            flags = np.array([base if v is None else v.strip().lower() == "true" for v in per_topic], dtype=bool)
            self._unclean = flags[s.topic_idx]
        return self._unclean

    def min_isr(self) -> np.ndarray:
        """[P] min.insync.replicas of each partition: the topic's, else the broker default's (1 if unset)."""
        return np.where(self.s.topic_min_isr >= 1, self.s.topic_min_isr, self.default_min_isr)

    # ------------------------------------------------------------------ kafka-reassign-partitions
    def execute_throttle(self, current, proposed, rate_bps: float, now: int, lists: bool = True,
                         running=None) -> None:
        """What ``kafka-reassign-partitions --execute --throttle`` writes (§5.1), or the KIP-542 rates (§5.2):
        the rates on the brokers ``model.reassign_tool.execute_rate_brokers`` names and, unless ``lists`` is
        False (up to 2.5, a reassignment already running: ``maybeLimit`` alone), the throttled-replica lists.

        ``current`` maps (topic, partition) to the (replicas, adding, removing) the tool saw before the
        move, ``proposed`` to the requested replicas (broker ids), ``running`` the reassignments in progress
        before it (with ``--additional``, 2.6+).
        """
        s = self.s
        value = str(int(rate_bps))
        names = REASSIGNMENT_RATES if self.version.kip542 else REPLICATION_RATES
        topics = {s.topic_index[t] for t, _ in proposed}
        topic_replicas = {b for p in np.nonzero(np.isin(s.topic_idx, list(topics)))[0] for b in s.replica_ids(int(p))}
        for broker in reassign_tool.execute_rate_brokers(self.version, current, proposed, topic_replicas, running):
            for name in names:
                self.set("broker", str(broker), name, value, now)
        if lists and not self.version.kip542:
            for topic, (leader_list, follower_list) in reassign_tool.execute_throttle_lists(
                    self.version, current, proposed, running).items():
                self.set("topic", topic, LEADER_THROTTLED_REPLICAS, leader_list, now)
                self.set("topic", topic, FOLLOWER_THROTTLED_REPLICAS, follower_list, now)
        self._announce(now)

    def plan_executed(self, proposed: dict[tuple[str, int], list[int]]) -> None:
        """``--execute`` was run with ``proposed``; a later ``--verify`` is run with the same file."""
        self.plan = dict(proposed)

    def verify(self, now: int) -> None:
        """``--verify`` with the last plan: clears the throttles when ``model.reassign_tool`` says (§5.1)."""
        s = self.s
        done = all(p_row not in s.reassignments and s.replica_ids(p_row) == list(replicas)
                   for p_row, replicas in ((s.partition_row(t, p, "verify"), r) for (t, p), r in self.plan.items()))
        if reassign_tool.verify_clears_throttles(self.version, done, bool(s.reassignments)):
            self._clear_for(self.plan, now)

    def cancel(self, now: int, partitions) -> None:
        """``--cancel`` (2.6+) clears every throttle once it has cancelled (``cancelAssignment``, §5.1)."""
        if not self.version.cancel_clears_throttles:
            return
        plan = self.plan if partitions is None else {tp: self.plan.get(tp, []) for tp in partitions}
        self._clear_for(plan, now)

    def _clear_for(self, plan: dict[tuple[str, int], list[int]], now: int) -> None:
        s = self.s
        live = s.broker_ids[s.up].tolist()
        self.clear_all_throttles({t for t, _ in plan}, reassign_tool.throttle_cleared_brokers(self.version, live, plan),
                                 now)

    def clear_all_throttles(self, topics: set[str], brokers: set[int], now: int) -> None:
        """What a finished ``--verify`` (and, from 2.6, ``--cancel``) deletes (§5.1): both throttle rates
        of every broker in ``brokers`` — the cluster's live brokers, not only the ones the tool set
        (``ReassignPartitionsCommand.removeThrottle`` ≤ 2.5, ``clearAllThrottles`` 2.6+) — and the
        throttled-replica lists of ``topics``. A KIP-542 broker's reassignment rates go the same way."""
        names = REASSIGNMENT_RATES if self.version.kip542 else REPLICATION_RATES
        for broker in sorted(brokers):
            for name in names:
                if (str(broker), name) in self.broker:
                    self.set("broker", str(broker), name, None, now)
        for topic in sorted(topics):
            for name in THROTTLED_REPLICAS_LISTS:
                if (topic, name) in self.topic:
                    self.set("topic", topic, name, None, now)
        self._announce(now)
