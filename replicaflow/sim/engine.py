"""The replication engine: wires the Kafka components over one ClusterState and orders the tick.

A tick at ``now`` covers ``(now - tick, now]`` (docs/semantics.md §1, §4, §5, docs/simulator.md):
1. the clock dispatches due timers and scenario events (``clock.py``);
2. AlterPartition proposals whose delay has passed are committed (``partition.py``);
3. produce: the live leaders append (``replica_manager.py``);
4. one fetch round: who fetches, throttles and shares (``fetcher_manager.py``, ``quota_manager.py``);
   the leaders record the fetches at the followers' pre-append offsets (``partition.py``); the
   followers append and the bytes are accounted;
5. ISR expansion, the ISR-expiration check, the high watermark (``partition.py``);
6. reassignment completion (``controller.py``);
then the `fetchers` table is synced and, on the scrape grid, the brokers are scraped (``scrape.py``).
Every row and log record goes out through the one ``Emitter``.
"""

from __future__ import annotations

from collections.abc import Callable

from replicaflow.model import reassign_tool
from replicaflow.model.configs import UNCLEAN_LEADER_ELECTION_ENABLE
from replicaflow.sim.clock import Clock
from replicaflow.sim.configs import DynamicConfigs
from replicaflow.sim.controller import LEADER_REBALANCE, SESSION_EXPIRED, UNCLEAN_CHECK, KafkaController
from replicaflow.sim.emitter import Emitter
from replicaflow.sim.faults import REGISTRATION_RETRIED, RESTORE_NETWORK, Faults
from replicaflow.sim.fetcher_manager import ReplicaFetcherManager
from replicaflow.sim.partition import Partition
from replicaflow.sim.quota_manager import ReplicationQuotaManager
from replicaflow.sim.replica_manager import ReplicaManager
from replicaflow.sim.scenario import Scenario
from replicaflow.sim.scrape import JmxScrape
from replicaflow.sim.state import ClusterState, initial_state
from replicaflow.telemetry.io import TelemetryWriter


class Engine:
    """One simulated cluster: ``run()`` (or ``start()`` and ``step(now)`` per tick) from a scenario."""

    def __init__(self, scenario: Scenario, writer: TelemetryWriter, log_events: list | None = None):
        self.scenario = scenario
        kafka = scenario.kafka
        self.s: ClusterState = initial_state(scenario)
        s = self.s
        self.emit = Emitter(s, writer, log_events, kafka.controller)
        self.clock = Clock(scenario.start_ms, scenario.tick_ms)
        self.quotas = ReplicationQuotaManager(s.n_brokers, kafka.quota_window_ms, kafka.quota_window_samples,
                                              scenario.version.kip542, scenario.version.quota_keeps_overlapping_window)
        self.configs = DynamicConfigs(s, scenario, self.quotas, self.emit)
        self.fetchers = ReplicaFetcherManager(s, kafka, scenario.tick_ms, self.quotas, self.emit,
                                              scenario.version)
        self.replica_manager = ReplicaManager(s, scenario, self.configs, self.emit)
        self.partition = Partition(s, scenario, self.configs, self.emit)
        self.controller = KafkaController(s, kafka, self.clock, self.partition, self.fetchers,
                                          self.configs, self.emit)
        self.faults = Faults(s, scenario.version, scenario.start_ms, self.clock, self.controller, self.partition,
                             self.fetchers, self.quotas, self.replica_manager, self.emit)
        self.scraper = JmxScrape(s, self.partition, self.controller, self.replica_manager)
        self.clock.handlers.update({
            # scenario events: (now, event, where)
            "reassign": self._reassign,
            "cancel_reassignment": self._cancel,
            "elect_leaders": self.controller.elect_leaders,
            "config": self._config,
            "verify": self._verify,
            "broker_down": self.faults.broker_down,
            "broker_up": self.faults.broker_up,
            "log_dir_failure": self.faults.log_dir_failure,
            "slow_network": self.faults.slow_network,
            "stall_follower": self.faults.stall_follower,
            "fail_partition": self.faults.fail_partition,
            "produce_burst": self.replica_manager.produce_burst,
            # timers: (at, *args)
            SESSION_EXPIRED: self.controller.session_expired,
            LEADER_REBALANCE: self.controller.leader_rebalance,
            UNCLEAN_CHECK: self.controller.unclean_check,
            RESTORE_NETWORK: self.faults.restore_network,
            REGISTRATION_RETRIED: self.faults.registration_retried,
        })
        self.clock.add_events(scenario.events, scenario.source, scenario.event_places)

    # ------------------------------------------------------------------ kafka-reassign-partitions
    def _reassign(self, now: int, event, where: str) -> None:
        """``--execute``: the controller starts the moves, then ``--throttle`` writes its configs (§5.1). Up to
        2.5 a reassignment already running keeps the tool from starting any (``model.reassign_tool``); from
        0.10.1 its ``--throttle`` then only sets the rates. From 2.6 the tool refuses to run beside one without
        ``--additional``, and with it throttles the running moves again with its own."""
        s = self.s
        version, any_running = self.scenario.version, bool(s.reassignments)
        if reassign_tool.execute_refused(version, any_running, event.additional):
            return
        proposed = {(m.topic, m.partition): list(m.replicas) for m in event.partitions}
        self.configs.plan_executed(proposed)
        running = {s.tp(p): s.replica_sets(p) for p in s.reassignments}
        if reassign_tool.execute_starts_moves(version, any_running, event.additional):
            before = self.controller.start_reassignment(now, event, where)
            lists = True
        else:
            before = {tp: s.replica_sets(s.partition_row(*tp, where)) for tp in proposed}
            lists = False
        if event.throttle_bps is not None:
            self.configs.execute_throttle(before, proposed, event.throttle_bps, now, lists=lists, running=running)

    def _verify(self, now: int, event, where: str) -> None:
        """``--verify`` with the last plan: removes the throttles once the release's condition holds (§5.1)."""
        self.configs.verify(now)

    def _cancel(self, now: int, event, where: str) -> None:
        """``--cancel``: the controller reverts the moves; from 2.6 the tool then clears the throttles (§5.1)."""
        self.controller.cancel_reassignment(now, event, where)
        self.configs.cancel(now, event.partitions)

    def _config(self, now: int, event, where: str) -> None:
        """``kafka-configs --alter``; enabling unclean election elects offline partitions at once on ZooKeeper: on a
        topic from 2.1, as the cluster-wide default from 2.0 (``KafkaController`` TopicUncleanLeaderElectionEnable,
        UncleanLeaderElectionEnable, §6); KRaft at its next check (``KafkaController.unclean_check``)."""
        self.configs.alter(now, event, where)
        if any(name == UNCLEAN_LEADER_ELECTION_ENABLE for name, _ in event.configs):
            self.controller.unclean_election_enabled(now, by_default=event.entity_type == "broker")

    # ------------------------------------------------------------------ running
    def _dispatch(self, now: int) -> None:
        """Due timers and events; after any of them every view derived from the state is rebuilt."""
        if self.clock.run_due(now):
            self.s.layout_changed()

    def start(self) -> None:
        """The cluster at the scenario's start: initial rows, events at 0, the fetchers, the first scrape."""
        now = self.scenario.start_ms
        self.emit.cluster_created(now)
        self.configs.load_initial(self.scenario, now)
        self.emit.partitions_created(now)
        self.controller.start(now)
        self.fetchers.sync(now)
        self._dispatch(now)
        self.fetchers.sync(now)
        self.scrape(now)

    def step(self, now: int) -> None:
        """One tick boundary: due events, the tick, the fetchers table, the scrape when on the grid."""
        self._dispatch(now)
        self.tick(now)
        self.fetchers.sync(now)
        if (now - self.scenario.start_ms) % self.scenario.scrape_interval_ms == 0:
            self.scrape(now)

    def run(self, on_tick: Callable[[int], None] | None = None, on_start: Callable[[], None] | None = None) -> None:
        """From the start to the end of the scenario; ``on_tick`` gets the simulated ms since the start,
        ``on_start`` runs once the cluster of the first instant is built (the start snapshot)."""
        sc = self.scenario
        start = sc.start_ms
        self.start()
        if on_start is not None:
            on_start()
        for now in range(start + sc.tick_ms, start + sc.duration_ms + 1, sc.tick_ms):
            self.step(now)
            if on_tick is not None:
                on_tick(now - start)

    def tick(self, now: int) -> None:
        """Advance every partition over ``(now - tick, now]`` (module docstring)."""
        partition = self.partition
        if partition.proposals:
            partition.commit_pending(now)
        topo = self.fetchers.topology()
        leader_leo, produce_in = self.replica_manager.produce(now, topo)
        fetch = self.fetchers.fetch(now, topo, leader_leo, produce_in)
        partition.record_fetches(fetch.fetched, fetch.leader_leo_grid, now)
        self.fetchers.append(fetch, topo, now)
        partition.expand(fetch.fetched, topo, now)
        partition.shrink(now, topo, leader_leo)
        partition.advance_hw(now, topo)
        self.controller.complete_reassignments(now)

    def scrape(self, now: int) -> None:
        self.emit.sampled(now, self.scraper.sample(now))
