"""Kafka's controller: broker sessions, leader elections, ISR removal, reassignments and leader
rebalancing (docs/semantics.md §6, KIP-455), ZooKeeper or KRaft (``kafka.controller``).

The active controller keeps the role until its broker stops; then the live broker with the lowest id
takes it (``model.election.next_controller``). A broker that dies is removed from
every ISR once its session expires (``session_timeout``: per release and controller,
``model.election.session_timeout_ms``), and the partitions it led elect the first live ISR member
in assignment order — or, with ``unclean.leader.election.enable``, the first live replica, losing
what only the others had. The last ISR member stays in the ISR and the partition goes offline until
it returns — unless eligible leader replicas are on (KIP-966): then the ISR may empty and a live ELR
member is elected cleanly. Elections always bump the leader epoch; other decisions bump it as
``model.election.bumps_leader_epoch`` says (ZooKeeper always, KRaft not on ISR shrinks from 3.6),
and any new leader epoch clears the followers' KIP-461 failed partitions (§4). A reassignment
(KIP-455) re-lays the partition's replicas as ``model.predicates.reassignment_state`` says, and
completes — dropping the removed replicas — once every target replica is in the ISR; a
cancellation shrinks back to the origin.
"""

from __future__ import annotations

import numpy as np

from replicaflow.model import election, log_dirs, predicates
from replicaflow.model.rows import row_any
from replicaflow.sim.clock import Clock
from replicaflow.sim.configs import DynamicConfigs
from replicaflow.sim.emitter import Emitter
from replicaflow.sim.fetcher_manager import ReplicaFetcherManager
from replicaflow.sim.partition import Partition
from replicaflow.sim.scenario import KafkaSpec
from replicaflow.sim.state import FRESH_REPLICA, STATE_DOWN, ClusterState, Reassignment

SESSION_EXPIRED = "session_expired"  # the clock's timer kinds
LEADER_REBALANCE = "leader_rebalance"
UNCLEAN_CHECK = "unclean_check"


class KafkaController:
    """Decisions the controller makes for the whole cluster, each announced through the Emitter."""

    def __init__(self, state: ClusterState, kafka: KafkaSpec, clock: Clock, partition: Partition,
                 fetchers: ReplicaFetcherManager, configs: DynamicConfigs, emit: Emitter):
        self.s, self.clock, self.partition, self.fetchers, self.configs, self.emit = (
            state, clock, partition, fetchers, configs, emit)
        self.version = kafka.kafka_version
        self.mode = kafka.controller
        self.session_timeout_ms = kafka.session_timeout_ms
        self.auto_leader_rebalance = kafka.auto_leader_rebalance
        self.elr_enabled = kafka.eligible_leader_replicas
        self.session_deadline = np.full(state.n_brokers, -1, dtype=np.int64)  # crash time of a live session, -1
        self.messages_lost = np.zeros(state.n_partitions, dtype=np.int64)  # by unclean elections, per partition
        self.unclean_elections = 0
        self.crashed = np.zeros(state.n_brokers, dtype=bool)  # down after a crash (not a controlled shutdown)
        self._rebalance_at = -1  # the scheduled leader-rebalance check, -1 none
        self._took_over_ms = clock.start_ms  # when the active controller took the role
        self._active = 0 if state.n_brokers else -1  # the first broker listed: its `up` row is written first
        self.reads_unclean = election.reads_unclean_config(self.version, self.mode)
        self._unclean_check_at = -1  # KRaft's scheduled check of leaderless partitions (3.9+), -1 none
        self._completion_checked: tuple[int, int] | None = None  # (layout, ISR) versions of the last check
        self._resigned = -1  # a ZooKeeper controller's broker in its own controlled shutdown, its session open

    def start(self, now: int) -> None:
        """The first controller takes over as the cluster starts."""
        self._take_over(now)

    def _take_over(self, now: int) -> None:
        """A controller's periodic checks start when it takes the role, and its predecessor's end with it (§6):
        ZooKeeper's rebalance task 5 s after ``KafkaController.onControllerFailover`` (``onControllerResignation``
        shuts the old scheduler down); KRaft's balance and unclean checks one interval after it completes its
        activation where partitions are imbalanced or leaderless (``QuorumController.CompleteActivationEvent``;
        ``renounce`` cancels them)."""
        self._took_over_ms = now
        self._rebalance_at = self._unclean_check_at = -1
        if self.auto_leader_rebalance and (self.mode == election.ZOOKEEPER or (self.s.lslot != 0).any()):
            self._schedule_rebalance(now)
        self._schedule_unclean_check(now)

    def active_controller(self) -> int:
        """Broker index of the active controller, -1 when no broker is up (``broker_state_changed``)."""
        return self._active

    def broker_state_changed(self, now: int) -> None:
        """After a broker's ``brokers`` row: the controller keeps the role while it is live (up or shutting down: it
        takes its own broker's controlled shutdown), else the lowest live id
        takes it (``model.election.next_controller``; the pipeline replays the same rows) and starts its own
        periodic checks (``_take_over``); with no broker up, none runs. A ZooKeeper controller that stopped its own
        broker (``controlled_shutdown``) left its session open: the new controller logs its failure."""
        s = self.s
        live = [b for b in range(s.n_brokers) if s.state[b] != STATE_DOWN]
        lowest = min(live, key=lambda b: s.broker_ids[b]) if live else -1
        active = int(election.next_controller(self._active, self._active in live, lowest))
        if active == self._active:
            return
        self._active = active
        if active >= 0:
            self._take_over(now)
        else:
            self._rebalance_at = self._unclean_check_at = -1
        resigned, self._resigned = self._resigned, -1
        if resigned >= 0:
            self._session_ended(resigned, now)

    def controller_id(self) -> int:
        c = self.active_controller()
        return int(self.s.broker_ids[c]) if c >= 0 else -1

    # ------------------------------------------------------------------ broker sessions
    def broker_failed(self, b: int, now: int) -> None:
        """A crashed broker keeps its session until ``session_timeout`` passes without heartbeats."""
        self.session_deadline[b] = now
        self.crashed[b] = True
        self.clock.schedule(now + self.session_timeout_ms, SESSION_EXPIRED, b, now)

    def registration_tries(self, b: int, now: int) -> tuple[int, ...] | None:
        """When broker ``b``, started at ``now``, tries to register, the last try registering it: at once unless a
        crash's session still stands (``model.election.registration_tries``); None when its start fails."""
        crashed_ms = int(self.session_deadline[b])
        if crashed_ms < 0:
            return (now,)
        return election.registration_tries(self.version, self.mode, crashed_ms, now, self.session_timeout_ms)

    def session_expired(self, at: int, b: int, incarnation: int) -> None:
        """Timer: the session of the crash at ``incarnation`` expired; unless the broker is back, drop it."""
        if not self.s.up[b] and self.session_deadline[b] == incarnation:
            self.session_deadline[b] = -1
            self._session_ended(b, at)
            self.remove_broker_from_isrs(b, at)

    def _session_ended(self, b: int, now: int) -> None:
        """The active controller logs the broker it drops (none is live: no controller to log it)."""
        c = self.controller_id()
        if c >= 0:
            self.emit.broker_session_ended(b, c, now)

    def controlled_shutdown(self, b: int, now: int) -> None:
        """ControlledShutdown: leadership and ISR membership move away at once. A ZooKeeper broker's registration
        goes with its session as it stops, which the controller logs as a broker failure. The controller's own broker
        keeps its session (and the role) until it is down: KafkaServer.shutdown resigns the controller and then
        closes the session, and the next controller logs the failure once it holds the role (``broker_state_changed``;
        in Kafka its failover finds the broker gone, which the reader takes the same way). A KRaft broker's controlled
        shutdown is its own heartbeats' business (no fencing for a timed-out session)."""
        c = self.controller_id()
        if c >= 0:
            self.emit.controlled_shutdown_granted(b, c, bool((self.s.leader_bi() == b).any()), now)
        self.remove_broker_from_isrs(b, now)
        if self.mode == election.ZOOKEEPER:
            if self._active == b:
                self._resigned = b  # logged by the next controller (broker_state_changed)
            else:
                self._session_ended(b, now)

    def broker_registering(self, b: int, now: int) -> None:
        """The controller takes the broker in (its startup callback, or KRaft's unfence grant). A broker whose
        crash's session still stands (registered at the instant it expires, before its timer ran; ``faults`` holds
        back an earlier start, ``registration_ms``): the controller sees the failure first. A broker
        back from a crash registers as an unclean shutdown: with eligible leader replicas on, it leaves
        every ELR for the LastKnownElr (``ReplicationControlManager.handleBrokerUncleanShutdown``, §6)."""
        if self.session_deadline[b] >= 0:
            self.session_deadline[b] = -1
            if self.mode == election.ZOOKEEPER:  # the BrokerChange of a bounced broker (KRaft: a new incarnation)
                self._session_ended(b, now)
            self.remove_broker_from_isrs(b, now)
        c = self.controller_id()
        if c >= 0:
            self.emit.broker_registered(b, c, now)
        s = self.s
        if self.elr_enabled and self.crashed[b]:
            rows = np.nonzero(((s.rbi == b) & s.elr).any(axis=1))[0]
            for p in rows:
                self.partition.update_elr(int(p), s.in_isr[p].copy(), s.rbi[p] == b)
                s.partition_epoch[p] += 1
                self.emit.isr_written(int(p), now)
        self.crashed[b] = False

    def broker_started(self, b: int, now: int) -> None:
        """Offline partitions whose last ISR member — or, with an empty ISR, an ELR member (KIP-966) — is the
        returning broker elect it; with unclean election enabled, any offline partition it holds a
        replica of (§6)."""
        s = self.s
        eligible = s.in_isr | self._unclean_enabled()[:, None] | (s.elr & ~s.in_isr.any(axis=1)[:, None])
        offline = np.nonzero((s.lslot < 0) & ((s.rbi == b) & eligible).any(axis=1))[0]
        for p in offline:
            self.elect(int(p), now)

    def unclean_election_enabled(self, now: int, by_default: bool = False) -> None:
        """A config change may have enabled unclean election: on ZooKeeper, offline partitions that may now elect a
        live replica do at once — a topic's config from 2.1 (``KafkaController.processTopicUncleanLeaderElectionEnable``),
        the cluster-wide default (``by_default``) from 2.0 (``UncleanLeaderElectionEnable``, KAFKA-6526). KRaft's
        controller waits for its periodic check (``unclean_check``, 3.9+) and before 3.9 never reads the config."""
        if self.mode == election.KRAFT or not (self.version.unclean_default_triggers_election if by_default
                                               else self.version.unclean_config_triggers_election):
            return
        self._elect_unclean_where_enabled(now)

    def unclean_check(self, at: int) -> None:
        """Timer: KRaft's check of leaderless partitions (``QuorumController.maybeScheduleNextElectUncleanLeaders``,
        3.9+), ``unclean.leader.election.interval.ms`` after a controller write left a partition without a leader:
        where the topic's config allows, a live replica leads (``ReplicationControlManager.maybeElectUncleanLeaders``);
        while any partition stays leaderless, the next check is one interval later."""
        if at != self._unclean_check_at:
            return  # a controller that has since resigned scheduled it
        self._unclean_check_at = -1
        self._elect_unclean_where_enabled(at, periodic=True)
        self._schedule_unclean_check(at)

    def _elect_unclean_where_enabled(self, now: int, periodic: bool = False) -> None:
        """Leaderless partitions whose config allows an unclean election and that have a replica able to lead: one
        in a failed log directory cannot (``ControllerContext.isReplicaOnline``), and an election with no candidate
        writes nothing (``PartitionStateMachine.doElectLeaderForPartitions``)."""
        s = self.s
        for p in np.nonzero((s.lslot < 0) & self._unclean_enabled() & self._can_lead().any(axis=1))[0]:
            self.elect(int(p), now, periodic=periodic)

    def _unclean_enabled(self) -> np.ndarray:
        """[P] whether each partition may elect outside its ISR: its ``unclean.leader.election.enable`` where the
        controller reads it (``model.election.reads_unclean_config``), else never."""
        flags = self.configs.unclean_leader_election()
        return flags if self.reads_unclean else np.zeros_like(flags)

    def _schedule_unclean_check(self, now: int) -> None:
        if self.mode == election.KRAFT and self.reads_unclean and self._unclean_check_at < 0 and (self.s.lslot < 0).any():
            self._unclean_check_at = now + election.KRAFT_UNCLEAN_CHECK_INTERVAL_MS
            self.clock.schedule(self._unclean_check_at, UNCLEAN_CHECK)

    def remove_broker_from_isrs(self, b: int, now: int, partitions: np.ndarray | None = None) -> None:
        """Take a dead or shutting-down broker out of every ISR — or of the ISRs of ``partitions`` [P] only,
        its replicas in a failed log directory (``KafkaController.onReplicasBecomeOffline``, KRaft
        ``ReplicationControlManager.handleDirectoriesOffline``) — re-electing where it led (§6).

        As Kafka's controller does, the last ISR member stays in the ISR (the partition goes offline),
        unless eligible leader replicas are on: then the ISR may become empty and the ELR keeps
        who left it under min ISR (KIP-966, ``PartitionChangeBuilder.build``).
        """
        s = self.s
        member = (s.rbi == b) & s.in_isr
        led = s.leader_bi() == b
        if partitions is not None:
            member &= partitions[:, None]
            led &= partitions
        for p in np.nonzero(member.any(axis=1) | led)[0]:
            p = int(p)
            slot = np.nonzero(s.rbi[p] == b)[0][0]
            if election.removes_from_isr(s.in_isr[p].sum() - 1, self.elr_enabled):
                old = s.in_isr[p].copy()
                s.in_isr[p, slot] = False
                s.isr_changed()
                self.partition.update_elr(p, old)
            if led[p]:
                self.elect(p, now, exclude=b)
            else:
                s.pending_at[p] = -1
                self._bump_and_tell(p, now, election.ISR_SHRINK)

    # ------------------------------------------------------------------ elections
    def elect(self, p: int, now: int, prefer_slot: int | None = None, exclude: int = -1, bumps: int = 1,
              unclean_ok: bool = False, periodic: bool = False) -> None:
        """New leader epoch: the first live ISR member in assignment order, else (unclean election enabled, or
        ``unclean_ok``: the operator asked for it) the first live replica, else none (offline) (§6,
        ``model.election.elect_leader``). ``periodic``: KRaft's check of leaderless partitions elects it."""
        s = self.s
        row = s.rbi[p]
        live = self._can_lead(p) & (row != exclude)
        old_slot = int(s.lslot[p])
        if prefer_slot is not None and live[prefer_slot] and s.in_isr[p, prefer_slot]:
            new_slot, unclean = prefer_slot, False
        else:
            slots, uncleans = election.elect_leader(live, s.in_isr[p], unclean_ok or self._unclean_enabled()[p],
                                                    s.elr[p] if self.elr_enabled else None)
            new_slot, unclean = int(slots[0]), bool(uncleans[0])
        prev_leader = s.leader_id(p)
        prev_epoch = int(s.leader_epoch[p])
        new_leader = int(row[new_slot]) if new_slot >= 0 else -1
        if not election.election_was_clean(new_leader, np.where(s.in_isr[p], row, -1))[0]:
            controller = self.active_controller()  # the controller's UncleanLeaderElectionsPerSec meter
            if controller >= 0:
                s.unclean_meter[controller] += 1
        if new_slot >= 0 and not s.in_isr[p].any() and s.elr[p, new_slot]:
            s.in_isr[p, new_slot] = True  # an ELR member leads with itself as the ISR (KIP-966)
            s.isr_changed()
            s.elr[p, new_slot] = False
        lost = 0
        replicas_end = int(election.replicas_end_offset(s.log_leo[p], row >= 0))  # before the followers truncate
        if unclean:
            lost = int(election.messages_lost(replicas_end, s.log_leo[p, new_slot]))
            s.in_isr[p] = np.arange(s.slots) == new_slot  # the unclean leader's ISR is itself alone
            s.isr_changed()
            s.elr[p] = s.last_known_elr[p] = False  # an unclean election clears both (KIP-966)
            self.messages_lost[p] += lost
            self.unclean_elections += 1
        s.lslot[p] = new_slot
        s.layout_changed()
        self._bump_epochs(p, times=bumps)
        s.pending_at[p] = -1
        if new_slot >= 0:
            self.partition.make_leader(p, new_slot, old_slot, now)
        self.emit.leader_and_isr_changed(p, now, replicas_end)
        if unclean:
            self.emit.unclean_leader_elected(p, lost, self.controller_id(), now, periodic)
        if new_slot >= 0:
            self.emit.leader_started(p, now, prev_leader, prev_epoch, self.controller_id())
        self.fetchers.refresh_dead_threads()
        self._schedule_unclean_check(now)
        if self.auto_leader_rebalance and self.mode == election.KRAFT and self._rebalance_at < 0 and new_slot > 0:
            self._schedule_rebalance(now)  # KRaft checks balance 300 s after it sees an imbalance

    def _can_lead(self, p=slice(None)) -> np.ndarray:
        """[P, slot] (or [slot] of partition ``p``) replicas that could lead: assigned, their broker up, not in a failed
        log directory (KIP-112)."""
        s = self.s
        row = s.rbi[p]
        return (row >= 0) & s.up[np.maximum(row, 0)] & ~s.offline_replica[p]

    def elect_leaders(self, now: int, event, where: str) -> None:
        """``kafka-leader-election`` over every partition or the listed ones (§6). ``preferred``: the first replica
        leads where it does not and is a live ISR member. ``unclean`` (2.4+, KIP-460): only partitions without a
        leader elect (``KafkaController.processReplicaLeaderElection``, KRaft ``ReplicationControlManager.electLeader``:
        ELECTION_NOT_NEEDED for the others), a live ISR member if any, else the first live replica whatever
        ``unclean.leader.election.enable`` says (``OfflinePartitionLeaderElectionStrategy(allowUnclean = true)``,
        ``PartitionChangeBuilder.Election.UNCLEAN``); with no live replica the partition stays offline."""
        s = self.s
        chosen = np.ones(s.n_partitions, dtype=bool)
        if event.partitions is not None:
            chosen[:] = False
            chosen[[s.partition_row(t, p, where) for t, p in event.partitions]] = True
        self.emit.election_started(np.nonzero(chosen & ((s.lslot < 0) if event.election_type == "unclean" else
                                                        (s.lslot != 0)))[0], event.election_type, "AdminClientTriggered",
                                   self.controller_id(), now, requested=np.nonzero(chosen)[0])
        if event.election_type == "unclean":
            for p in np.nonzero(chosen & (s.lslot < 0) & self._can_lead().any(axis=1))[0]:
                self.elect(int(p), now, unclean_ok=True)
            return
        preferred = s.rbi[:, 0]
        ok = ((s.lslot != 0) & s.in_isr[:, 0] & s.up[np.maximum(preferred, 0)] & (preferred >= 0)
              & ~s.offline_replica[:, 0])
        for p in np.nonzero(chosen & ok)[0]:
            self.elect(int(p), now, prefer_slot=0)

    def leader_rebalance(self, at: int) -> None:
        """Timer: ``auto.leader.rebalance.enable`` — preferred leaders back where the imbalance rule says (§6). A
        reassigning partition's preferred replica is the head of its combined list; on ZooKeeper up to 3.3 any
        reassignment in the cluster holds back every election (``version.rebalance_during_reassignment``)."""
        if at != self._rebalance_at:
            return  # a controller that has since resigned scheduled it
        s = self.s
        self._rebalance_at = -1
        preferred = s.rbi[:, 0]
        ready = (preferred >= 0) & s.in_isr[:, 0] & s.up[np.maximum(preferred, 0)] & ~s.offline_replica[:, 0]
        if self.mode == election.ZOOKEEPER and s.reassignments and not self.version.rebalance_during_reassignment:
            ready[:] = False
        leader = np.where(s.lslot >= 0, s.leader_bi(), -1)
        elected = np.nonzero(election.imbalanced_partitions(self.mode, preferred, leader, ready))[0]
        self.emit.election_started(elected, "preferred", "AutoTriggered", self.controller_id(), at)
        for p in elected:
            self.elect(int(p), at, prefer_slot=0)
        if self.mode == election.ZOOKEEPER or (s.lslot != 0).any():
            self._schedule_rebalance(at)

    def _schedule_rebalance(self, now: int) -> None:
        self._rebalance_at = election.next_rebalance_check_ms(self.mode, self._took_over_ms, now)
        self.clock.schedule(self._rebalance_at, LEADER_REBALANCE)

    def _bump_epochs(self, p: int, change: str | None = None, times: int = 1) -> None:
        """A new partition epoch; a new leader epoch too on elections (``change`` None) and where
        ``model.election.bumps_leader_epoch`` says (``Partition.bump_epochs``)."""
        self.partition.bump_epochs(p, times, change is None or election.bumps_leader_epoch(self.version, self.mode,
                                                                                          change))

    def _bump_and_tell(self, p: int, now: int, change: str, times: int = 1) -> None:
        """A controller change that keeps the leader: new epochs, the rows, and -- where the leader epoch
        moved -- the leader's own handling of it: ``Partition.makeLeader`` runs for every new leader epoch it
        receives, not only when it becomes leader (2.4 unconditionally, 3.x ``isNewLeaderEpoch``), so it logs its
        start line, starts the epoch at its log end and resets its followers' fetch state (§1.1)."""
        s = self.s
        prev_epoch = int(s.leader_epoch[p])
        self._bump_epochs(p, change, times)
        if s.leader_epoch[p] != prev_epoch and s.lslot[p] >= 0:
            self.partition.make_leader(p, int(s.lslot[p]), int(s.lslot[p]), now)
        self.emit.leader_and_isr_changed(p, now)
        if s.leader_epoch[p] != prev_epoch and s.lslot[p] >= 0:
            self.emit.leader_started(p, now, s.leader_id(p), prev_epoch, self.controller_id())

    # ------------------------------------------------------------------ reassignments (KIP-455)
    def start_reassignment(self, now: int, event, where: str) -> dict:
        """AlterPartitionReassignments: each partition gets target + the rest of its origin; the ZooKeeper
        controller bumps the leader epoch, KRaft does not (``model.election.bumps_leader_epoch``).

        Returns what the partitions looked like before, ``{(topic, partition): (replicas, adding,
        removing)}`` in broker ids, the view ``kafka-reassign-partitions`` builds its throttles from.
        """
        s = self.s
        before = {}
        for i, move in enumerate(event.partitions):
            p = s.partition_row(move.topic, move.partition, f"{where}.partitions[{i}]")
            target = [s.broker_index(r, f"{where}.partitions[{i}].replicas") for r in move.replicas]
            ongoing = s.reassignments.get(p)
            origin = ongoing.origin if ongoing else [int(b) for b in s.rbi[p][s.rbi[p] >= 0]]
            before[(move.topic, move.partition)] = s.replica_sets(p)
            replicas, adding, removing = predicates.reassignment_state(origin, target)
            self._relayout(p, replicas, now)
            s.adding[p] = np.isin(s.rbi[p], adding)
            s.removing[p] = np.isin(s.rbi[p], removing)
            s.reassignments[p] = Reassignment(origin=origin, target=target)
            self.emit.assignment_changed(p, now)
            if election.bumps_leader_epoch(self.version, self.mode, election.REASSIGNMENT_START):
                self._bump_and_tell(p, now, election.REASSIGNMENT_START)
            self.emit.reassignment_started(p, list(move.replicas), self.controller_id(), now)
        self.configs.assignment_changed()
        return before

    def complete_reassignments(self, now: int) -> None:
        """Complete every reassignment whose target replicas are all in the ISR (checked on the grid, again
        only once an ISR or the layout changed: nothing else can complete one)."""
        s = self.s
        checked = (s.layout_version, s.isr_version)
        if not s.reassignments or checked == self._completion_checked:
            return
        self._completion_checked = checked
        rows = np.fromiter(s.reassignments, dtype=np.intp, count=len(s.reassignments))
        # the target replicas are the assigned ones that are not being removed
        target_out = (s.rbi[rows] >= 0) & ~s.removing[rows] & ~s.in_isr[rows]
        for p in np.sort(rows[~row_any(target_out)]):
            move = s.reassignments.pop(int(p))
            self._finish(int(p), move.target, now, cancelled=False)

    def cancel_reassignment(self, now: int, event, where: str) -> None:
        """Cancel the listed (or every) ongoing reassignment: shrink back to the origin replicas."""
        s = self.s
        if event.partitions is None:
            targets = sorted(s.reassignments)
        else:
            targets = [s.partition_row(t, p, where) for t, p in event.partitions]
        for p in targets:
            move = s.reassignments.pop(p, None)
            if move is not None:
                self._finish(p, move.origin, now, cancelled=True)

    def _finish(self, p: int, final: list[int], now: int, cancelled: bool) -> None:
        """Completion (final = target) or cancellation (final = origin): shrink to ``final`` (KIP-455)."""
        s = self.s
        old_leader = int(s.rbi[p, s.lslot[p]]) if s.lslot[p] >= 0 else -1
        removed = (s.rbi[p] >= 0) & ~np.isin(s.rbi[p], final)
        bumps = int(election.completion_epoch_bumps(self.mode, int((removed & s.in_isr[p]).sum())))
        self._relayout(p, final, now)
        s.adding[p] = False
        s.removing[p] = False
        self.emit.assignment_changed(p, now)
        if old_leader in final:
            self._bump_and_tell(p, now, election.REPLICAS_REMOVED, bumps)
        else:
            self.elect(p, now, bumps=bumps)
        self.configs.assignment_changed()
        self.emit.reassignment_completed(p, final, self.controller_id(), now, cancelled,
                                         int(s.broker_ids[old_leader]) if old_leader >= 0 else -1)

    def _relayout(self, p: int, brokers: list[int], now: int) -> None:
        """Re-lay a partition's slots in ``brokers`` order; new brokers get empty replicas, dropped ones StopReplica."""
        s = self.s
        old = s.rbi[p].copy()
        saved = {name: getattr(s, name)[p].copy() for name in FRESH_REPLICA}
        old_leader = int(old[s.lslot[p]]) if s.lslot[p] >= 0 else -1
        self.fetchers.stop_replicas(p, [slot for slot, b in enumerate(old) if b >= 0 and b not in brokers], now)
        for name, fresh in FRESH_REPLICA.items():
            getattr(s, name)[p] = fresh
        for slot, b in enumerate(brokers):
            was = np.nonzero(old == b)[0]
            if len(was):
                for name in FRESH_REPLICA:
                    getattr(s, name)[p, slot] = saved[name][was[0]]
            else:
                s.rbi[p, slot] = b
        for slot, b in enumerate(brokers):  # a new replica's log goes to the broker's least loaded directory
            if s.log_dir[p, slot] < 0:
                n_dirs = len(s.log_dirs[b])
                live = ~s.dir_offline[b, :n_dirs] | ~s.up[b]  # a down broker's directories return with it
                s.log_dir[p, slot] = log_dirs.next_log_dir(s.logs_per_dir(b)[:n_dirs], live)
        s.lslot[p] = brokers.index(old_leader) if old_leader in brokers else -1
        s.layout_changed()
