"""The JMX scrape: what every live broker reports at a scrape instant (docs/metrics.md).

One scrape samples the replicas' offsets and the interval's traffic (telemetry), every live broker's
metrics of docs/semantics.md §3 that the release has (``truth/broker_metrics``), and the per-partition gauges
of each leader as change points (``truth/partition_metrics``). It returns the columns; the Emitter
writes them.
"""

from __future__ import annotations

import numpy as np

from replicaflow.model.metrics import (
    LEADER_FLAG_GAUGES,
    PARTITION_GAUGES,
    PRODUCE_ERROR_METERS,
    TRAFFIC_METRICS,
    broker_metrics_for,
)
from replicaflow.sim.controller import KafkaController
from replicaflow.sim.partition import Partition
from replicaflow.sim.replica_manager import ReplicaManager
from replicaflow.sim.state import FETCH_ADDED, FETCH_FAILED, STATE_DOWN, ClusterState


class JmxScrape:
    """Samples the state; keeps the previous partition gauges so it reports only their changes."""

    def __init__(self, state: ClusterState, partition: Partition, controller: KafkaController,
                 replica_manager: ReplicaManager):
        self.s, self.partition, self.controller, self.replica_manager = state, partition, controller, replica_manager
        self.version = partition.version
        self.metrics = broker_metrics_for(self.version, controller.mode)
        shorts = {m.short for m in self.metrics}
        self.traffic_rows = [i for i, name in enumerate(TRAFFIC_METRICS) if name in shorts]
        self._prev_gauges: np.ndarray | None = None
        self._prev_leader: np.ndarray | None = None

    def sample(self, now: int) -> list[tuple[str, str, dict]]:
        """One scrape's ``(group, table, columns)``; the traffic interval restarts."""
        s = self.s
        leader_mask = s.leader_mask()
        ps, sl = np.nonzero(s.rbi >= 0)
        hw = np.where(leader_mask[ps, sl], s.hw[ps], -1)
        out = [("telemetry", "replica_offsets", {
            "topic": np.array(s.topics, dtype=object)[s.topic_idx[ps]], "partition": s.pnum[ps],
            "broker": s.broker_ids[s.rbi[ps, sl]], "log_end_offset": s.log_leo[ps, sl],
            "high_watermark": np.ma.masked_array(hw, mask=~leader_mask[ps, sl]),
            "size_bytes": s.log_leo[ps, sl] * s.msg_size[ps]})]
        s.traffic_total += s.traffic
        names = np.array([TRAFFIC_METRICS[i] for i in self.traffic_rows], dtype=object)
        out.append(("telemetry", "traffic", {
            "broker": np.tile(s.broker_ids, len(names)), "name": np.repeat(names, s.n_brokers),
            "bytes": s.traffic[self.traffic_rows].ravel()}))
        s.traffic[:] = 0
        out.append(("telemetry", "produce_errors", self.replica_manager.drain_rejected()))
        flags = self.partition.flags()
        values = self.broker_values(flags)
        live = np.array([st != STATE_DOWN for st in s.state])
        jmx, rows = [], []
        for m in self.metrics:
            jmx.extend([m.jmx] * int(live.sum()))
            rows.append(values[m.short][live])
        out.append(("truth", "broker_metrics", {
            "broker": np.tile(s.broker_ids[live], len(self.metrics)), "name": np.array(jmx, dtype=object),
            "value": np.concatenate(rows).astype(np.float64)}))
        gauges = self._partition_gauges(flags)
        if gauges is not None:
            out.append(("truth", "partition_metrics", gauges))
        return out

    def broker_values(self, flags: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Every broker metric's value per broker index, by short name (docs/semantics.md §3)."""
        s = self.s
        n_b = s.n_brokers
        leader_bi = s.leader_bi()
        led = leader_bi >= 0
        lb = leader_bi[led]

        def count(flag):
            return np.bincount(lb, weights=flag[led].astype(np.float64), minlength=n_b)

        reassign_lag = np.zeros(n_b)
        add_rows = np.nonzero(led & (flags["n_add"] > 0))[0]
        if len(add_rows):
            lag = np.where(s.adding[add_rows], np.maximum(s.hw[add_rows, None] - s.log_leo[add_rows], 0), 0).max(axis=1)
            np.maximum.at(reassign_lag, leader_bi[add_rows], lag.astype(np.float64))
        max_lag = np.zeros(n_b)
        active = s.fetch_state == FETCH_ADDED
        if active.any():
            ps, sl = np.nonzero(active)
            np.maximum.at(max_lag, s.rbi[ps, sl], np.maximum(s.hw[ps] - s.log_leo[ps, sl], 0).astype(np.float64))
        offline = np.zeros(n_b)
        controller = self.controller.active_controller()
        if controller >= 0:
            offline[controller] = float((s.lslot < 0).sum())
        hosted = np.bincount(s.rbi[s.rbi >= 0], minlength=n_b).astype(np.float64)
        values = {gauge: count(flags[flag]) for gauge, flag in LEADER_FLAG_GAUGES}
        values.update({
            "ReassignmentMaxLag": reassign_lag,
            "LeaderCount": np.bincount(lb, minlength=n_b).astype(np.float64),
            "PartitionCount": hosted,
            "OfflineReplicaCount": np.bincount(s.rbi[s.offline_replica & (s.rbi >= 0)], minlength=n_b).astype(np.float64),
            "IsrShrinksPerSec": s.shrinks.astype(np.float64),
            "IsrExpandsPerSec": s.expands.astype(np.float64),
            "FailedIsrUpdatesPerSec": np.zeros(n_b),
            "FailedPartitionsCount": np.bincount(s.rbi[s.fetch_state == FETCH_FAILED], minlength=n_b).astype(np.float64),
            "MaxLag": max_lag,
            "OfflinePartitionsCount": offline,
            "UncleanLeaderElectionsPerSec": s.unclean_meter.astype(np.float64),
        })
        failed = self.replica_manager.failed_total.astype(np.float64)
        values.update({short: failed for short in PRODUCE_ERROR_METERS})
        for i, name in enumerate(TRAFFIC_METRICS):
            values[name] = s.traffic_total[i].astype(np.float64)
        return values

    def _partition_gauges(self, flags: dict[str, np.ndarray]) -> dict | None:
        """The leaders' per-partition gauges (PARTITION_GAUGES order) where they changed since the last scrape."""
        s = self.s
        replicas_count = flags["n_rep"] - (flags["n_add"] if self.version.urp_semantics == "kip352" else 0)
        current = np.stack([flags["urp"], flags["under_min_isr"], flags["at_min_isr"], flags["n_isr"],
                            replicas_count]).astype(np.float64)
        leader = s.leader_bi()
        if self._prev_gauges is None:
            changed = np.ones_like(current, dtype=bool)
        else:
            changed = (current != self._prev_gauges) | (leader != self._prev_leader)[None, :]
        changed &= (leader >= 0)[None, :]
        self._prev_gauges, self._prev_leader = current, leader
        gi, ps = np.nonzero(changed)
        if len(ps) == 0:
            return None
        return {"topic": np.array(s.topics, dtype=object)[s.topic_idx[ps]], "partition": s.pnum[ps],
                "broker": s.broker_ids[leader[ps]], "name": np.array(PARTITION_GAUGES, dtype=object)[gi],
                "value": current[gi, ps]}
