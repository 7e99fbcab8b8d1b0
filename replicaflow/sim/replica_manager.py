"""Kafka's ReplicaManager, produce side: the leaders' appends (appendRecords) for every partition at once.

Producers write with acks=1 semantics: writes continue under min ISR (the 3.7 HW freeze still
applies) and messages to a partition without a live leader are dropped (docs/simulator.md). The
topic's rate is spread evenly over its partitions; a produce burst adds to it for a while.
"""

from __future__ import annotations

import numpy as np

from replicaflow.sim.fetcher_manager import Topology
from replicaflow.sim.scenario import Scenario
from replicaflow.sim.state import ClusterState


class ReplicaManager:
    """Appends produced messages to the leaders' logs; fractional messages carry over to the next tick."""

    def __init__(self, state: ClusterState, scenario: Scenario):
        self.s = state
        self.scenario = scenario
        self.tick_ms = scenario.tick_ms
        self._burst_end = int(state.burst_until.max(initial=0))
        self._base_step = state.base_rate * self.tick_ms

    def produce(self, now: int, topo: Topology) -> tuple[np.ndarray, np.ndarray]:
        """Append this tick's messages at the live leaders (§1).

        Returns the leaders' LEO after the append (0 when offline) and the produced bytes per leader broker.
        """
        s = self.s
        dt = self.tick_ms
        if self._burst_end > now - dt:
            rate = s.base_rate + np.where(s.burst_until > now - dt, s.burst_rate, 0.0)
            s.produce_acc += rate * dt
        else:
            s.produce_acc += self._base_step
        whole = np.floor(s.produce_acc)
        s.produce_acc -= whole
        produced = whole.astype(np.int64)
        if len(topo.leader_down):
            produced[topo.leader_down] = 0
            s.produce_acc[topo.leader_down] = 0.0
        leo_flat = s.log_leo.reshape(-1)  # a view: the Topology keeps log_leo C-contiguous
        leader_leo = leo_flat[topo.leader_flat] + produced
        leo_flat[topo.leader_flat] = leader_leo
        leader_leo[topo.offline] = 0
        produce_in = np.bincount(topo.lb, weights=produced * s.msg_size, minlength=s.n_brokers)
        return leader_leo, produce_in

    def produce_burst(self, now: int, event, where: str) -> None:
        """The scenario's ``produce_burst``: ``rate`` more over the topic (or the listed partitions) for ``for``."""
        s = self.s
        spec = self.scenario.topic(event.topic)
        parts = event.partitions if event.partitions is not None else range(spec.partitions)
        rows = [s.partition_row(event.topic, p, where) for p in parts]
        s.burst_rate[rows] = event.rate_bps / len(rows) / spec.message_size_bytes / 1000.0
        s.burst_until[rows] = now + event.for_ms
        self._burst_end = max(self._burst_end, now + event.for_ms)
