"""Kafka's ReplicaManager, produce side: the leaders' appends (appendRecords) for every partition at once.

Each topic's producers write with its ``acks`` (docs/semantics.md §1.5). ``acks=1`` writes continue
under min ISR (the 3.7 HW freeze still applies); while a partition's ISR is below the effective min
ISR its leader rejects every ``acks=all`` request with NOT_ENOUGH_REPLICAS and appends nothing, so
its log end offset stands still. A request is one ``batch.size`` batch of one partition
(``model.produce``); the rejected ones are counted per leader broker (FailedProduceRequestsPerSec,
ErrorsPerSec) and sampled per partition at each scrape (telemetry ``produce_errors``). Messages to
a partition without a live leader are dropped (docs/simulator.md). The topic's rate is spread
evenly over its partitions; a produce burst adds to it for a while.
"""

from __future__ import annotations

import numpy as np

from replicaflow.model import predicates
from replicaflow.model import produce as rules
from replicaflow.model.rows import row_sum
from replicaflow.sim.configs import DynamicConfigs
from replicaflow.sim.emitter import Emitter
from replicaflow.sim.fetcher_manager import Topology
from replicaflow.sim.scenario import Scenario
from replicaflow.sim.state import ClusterState


class ReplicaManager:
    """Appends produced messages to the leaders' logs; fractional messages carry over to the next tick."""

    def __init__(self, state: ClusterState, scenario: Scenario, configs: DynamicConfigs, emit: Emitter):
        self.s = state
        self.scenario = scenario
        self.configs, self.emit = configs, emit
        self.capped = scenario.version.min_isr_capped
        self.tick_ms = scenario.tick_ms
        self._burst_end = int(state.burst_until.max(initial=0))
        self._base_step = state.base_rate * self.tick_ms
        default = rules.default_acks(scenario.version)
        topics = scenario.topics
        acks = np.array([(t.acks or default) == rules.ACKS_ALL for t in topics])
        per_request = np.array([int(rules.messages_per_request(t.batch_size_bytes, t.message_size_bytes))
                                for t in topics], dtype=np.int64)
        self.acks_all = acks[state.topic_idx] if len(topics) else np.zeros(state.n_partitions, dtype=bool)
        self.per_request = per_request[state.topic_idx]
        self.any_acks_all = bool(self.acks_all.any())
        self.sent = np.zeros(state.n_partitions, dtype=np.int64)          # messages the producers sent
        self.failed_total = np.zeros(state.n_brokers, dtype=np.int64)     # the meters' Count since start
        self._rejected: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._reject_version: tuple[int, int] | None = None  # (layout, ISR) versions _reject was derived at
        self._reject: tuple = ()

    def produce(self, now: int, topo: Topology) -> tuple[np.ndarray, np.ndarray]:
        """Append this tick's messages at the live leaders (§1, §1.5).

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
        if self.any_acks_all:
            self._reject_not_enough_replicas(now, topo, produced)
        leo_flat = s.log_leo.reshape(-1)  # a view: the Topology keeps log_leo C-contiguous
        leader_leo = leo_flat[topo.leader_flat] + produced
        leo_flat[topo.leader_flat] = leader_leo
        leader_leo[topo.offline] = 0
        produce_in = np.bincount(topo.lb, weights=produced * s.msg_size, minlength=s.n_brokers)
        return leader_leo, produce_in

    def _reject_not_enough_replicas(self, now: int, topo: Topology, produced: np.ndarray) -> None:
        """acks=all requests to a leader under min ISR fail; their messages are not appended (``produced`` → 0)."""
        s = self.s
        if self._reject_version != (s.layout_version, s.isr_version):  # they change only with ISRs, assignments, configs
            n_rep, min_isr = row_sum(s.rbi >= 0), self.configs.min_isr()
            reject = rules.rejects_acks_all(self.acks_all, row_sum(s.in_isr), min_isr, n_rep, self.capped) & topo.leader_up
            self._reject = (reject, bool(reject.any()), n_rep, min_isr)
            self._reject_version = (s.layout_version, s.isr_version)
        reject, any_reject, n_rep, min_isr = self._reject
        if not any_reject:
            self.sent += produced
            return
        requests = rules.requests_sent(self.sent, produced, self.per_request)
        self.sent += produced
        rows = np.nonzero(reject & ((produced > 0) | (requests > 0)))[0]
        if len(rows) == 0:
            return
        msgs, reqs, brokers = produced[rows].copy(), requests[rows], topo.leader_bi[rows]
        produced[rows] = 0
        self.failed_total += np.bincount(brokers, weights=reqs, minlength=s.n_brokers).astype(np.int64)
        self._rejected.append((rows, brokers, reqs, msgs))
        logged = reqs > 0
        if logged.any():
            effective = predicates.effective_min_isr(min_isr[rows[logged]], n_rep[rows[logged]], self.capped)
            self.emit.produce_rejected(rows[logged], reqs[logged], effective, now)

    def drain_rejected(self) -> dict:
        """The ``produce_errors`` columns of the requests rejected since the last scrape (one row per
        partition and leader), and the interval restarts."""
        s = self.s
        if self._rejected:
            rows, brokers, reqs, msgs = (np.concatenate(parts) for parts in zip(*self._rejected, strict=True))
        else:
            rows = brokers = reqs = msgs = np.zeros(0, dtype=np.int64)
        self._rejected = []
        key = rows.astype(np.int64) * s.n_brokers + brokers
        uniq, inverse = np.unique(key, return_inverse=True)
        req_sum = np.bincount(inverse, weights=reqs, minlength=len(uniq)).astype(np.int64)
        msg_sum = np.bincount(inverse, weights=msgs, minlength=len(uniq)).astype(np.int64)
        keep = (req_sum > 0) | (msg_sum > 0)
        ps, bs = (uniq // s.n_brokers)[keep], (uniq % s.n_brokers)[keep]
        return {"topic": np.array(s.topics, dtype=object)[s.topic_idx[ps]], "partition": s.pnum[ps],
                "broker": s.broker_ids[bs], "error": rules.NOT_ENOUGH_REPLICAS, "requests": req_sum[keep],
                "messages": msg_sum[keep], "bytes": msg_sum[keep] * s.msg_size[ps]}

    def broker_restarted(self, b: int) -> None:
        """A new process: its meters start at 0 and what the dead one counted after the last scrape is lost."""
        self.failed_total[b] = 0
        self._rejected = [tuple(a[parts[1] != b] for a in parts) for parts in self._rejected]

    def produce_burst(self, now: int, event, where: str) -> None:
        """The scenario's ``produce_burst``: ``rate`` more over the topic (or the listed partitions) for ``for``."""
        s = self.s
        spec = self.scenario.topic(event.topic)
        parts = event.partitions if event.partitions is not None else range(spec.partitions)
        rows = [s.partition_row(event.topic, p, where) for p in parts]
        s.burst_rate[rows] = event.rate_bps / len(rows) / spec.message_size_bytes / 1000.0
        s.burst_until[rows] = now + event.for_ms
        self._burst_end = max(self._burst_end, now + event.for_ms)
