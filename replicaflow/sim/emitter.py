"""The only writer of the simulator's telemetry rows, truth samples and broker log records.

The Kafka components change the ClusterState and announce what they changed, by name
(``isr_committed``, ``leader_started``, ...); the Emitter turns each announcement into the rows of
the telemetry contract (docs/design.md, telemetry) and the log records ``telemetry/logformat.py`` renders in
Kafka's own format. It reads the state at the moment of the announcement, so rows carry exactly the
values the change produced, and every change table shares the writer's one ``seq`` in announcement
order.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from replicaflow.model import election
from replicaflow.model.configs import DEFAULT_BROKER
from replicaflow.sim.state import (
    FETCH_ACTIONS,
    FETCH_ADDED,
    FETCH_REMOVED,
    STATE_SHUTTING_DOWN,
    STATE_UP,
    ClusterState,
)
from replicaflow.telemetry.io import TelemetryWriter

# broker state → the log record a broker writes when it enters that state
_STATE_LOG = {STATE_UP: "broker_started", STATE_SHUTTING_DOWN: "broker_shutdown"}
# records whose wording depends on the controller kind (docs/semantics.md §7)
_CONTROLLER_KINDS = frozenset({"broker_started", "broker_shutdown", "reassignment_started", "reassignment_completed",
                               "unclean_leader_election", "broker_failed", "broker_registered",
                               "controlled_shutdown", "config_changed", "election_started", "registration_refused"})


class Emitter:
    """Announcements in, rows and log records out (``log_events`` None: no logs)."""

    def __init__(self, state: ClusterState, writer: TelemetryWriter, log_events: list | None = None,
                 controller: str = "zookeeper"):
        self.s = state
        self.writer = writer
        self.logs = log_events
        self.controller = controller  # ZooKeeper or KRaft: how controller and lifecycle lines read (§6, §7)
        self.registrations = 0  # brokers taken in again by the controller (a KRaft line's metadata offset)

    def _log(self, kind: str, now: int, broker: int, **fields) -> None:
        if self.logs is not None:
            if kind in _CONTROLLER_KINDS:
                fields["controller"] = self.controller
            self.logs.append({"ts_ms": int(now), "broker": int(broker), "kind": kind, **fields})

    # ------------------------------------------------------------------ the cluster at the start
    def cluster_created(self, now: int) -> None:
        """Every broker registers and starts."""
        s = self.s
        self.writer.changes("brokers", now, {"broker": s.broker_ids.tolist(), "state": [STATE_UP] * s.n_brokers})
        for b in range(s.n_brokers):
            self._log("broker_started", now, s.broker_ids[b])

    def partitions_created(self, now: int) -> None:
        """Every partition's assignment, leader and ISR (epoch 0, first replica leads, every replica in sync)."""
        s, w = self.s, self.writer
        topics = [s.topics[i] for i in s.topic_idx]
        replicas = [s.replica_ids(p) for p in range(s.n_partitions)]
        empty = [[] for _ in range(s.n_partitions)]
        w.changes("assignments", now, {"topic": topics, "partition": s.pnum, "replicas": replicas,
                                       "adding": empty, "removing": empty,
                                       "log_dirs": [s.replica_dirs(p) for p in range(s.n_partitions)]})
        w.changes("leaders", now, {"topic": topics, "partition": s.pnum, "leader": s.broker_ids[s.rbi[:, 0]],
                                   "leader_epoch": s.leader_epoch, "start_offset": s.log_leo[:, 0],
                                   "replicas_end_offset": election.replicas_end_offset(s.log_leo, s.rbi >= 0)})
        w.changes("isr", now, {"topic": topics, "partition": s.pnum, "isr": replicas, "leader_epoch": s.leader_epoch,
                               "elr": empty, "last_known_elr": empty})
        if self.logs is not None:
            for p in range(s.n_partitions):
                topic, partition = s.tp(p)
                self._log("leader_start", now, s.broker_ids[s.rbi[p, 0]], topic=topic, partition=partition,
                          leader_epoch=0, prev_leader_epoch=-1, prev_leader=-1, leo=int(s.log_leo[p, 0]),
                          hw=int(s.hw[p]), isr=replicas[p], adding=[], removing=[], partition_epoch=0,
                          controller=int(s.broker_ids.min()))

    # ------------------------------------------------------------------ brokers and configs
    def broker_state_changed(self, b: int, now: int) -> None:
        state = self.s.state[b]
        self.writer.change("brokers", now, broker=int(self.s.broker_ids[b]), state=state)
        if state in _STATE_LOG:  # (the simulator shuts a broker down only in a controlled way)
            extra = {"controlled": True} if state == STATE_SHUTTING_DOWN else {}
            self._log(_STATE_LOG[state], now, self.s.broker_ids[b], **extra)

    def config_changed(self, entity_type: str, entity: str, name: str, value: str | None, now: int) -> None:
        self.writer.change("configs", now, entity_type=entity_type, entity=entity, name=name, value=value)

    def configs_logged(self, entity_type: str, entity: str, overrides: dict[str, str], now: int) -> None:
        """Every live broker logs a topic's or the cluster default's overrides after a change; a broker's own
        overrides, every broker under ZooKeeper (the notification names the entity), only that broker under KRaft."""
        s = self.s
        own = entity_type == "broker" and entity != DEFAULT_BROKER
        for b in np.nonzero(s.up)[0].tolist():
            broker = int(s.broker_ids[b])
            if own and self.controller == "kraft" and str(broker) != entity:
                continue
            self._log("config_changed", now, broker, entity_type=entity_type, entity=entity, configs=overrides)

    # ------------------------------------------------------------------ controller decisions
    def assignment_changed(self, p: int, now: int) -> None:
        s = self.s
        topic, partition = s.tp(p)
        self.writer.change("assignments", now, topic=topic, partition=partition, replicas=s.replica_ids(p),
                           adding=s.replica_ids(p, s.adding[p]), removing=s.replica_ids(p, s.removing[p]),
                           log_dirs=s.replica_dirs(p))

    def leader_and_isr_changed(self, p: int, now: int, replicas_end: int | None = None) -> None:
        """A controller decision: leaders row, then the ISR under the new epoch (so later same-epoch ISR rows
        are the leader's own shrinks/expands, docs/metrics.md). The leaders row carries the leader's log end
        offset and the highest one among the replicas (``replicas_end``: as it was before the followers
        truncated to the new leader; read from the state when the logs are untouched)."""
        s = self.s
        topic, partition = s.tp(p)
        if replicas_end is None:
            replicas_end = int(election.replicas_end_offset(s.log_leo[p], s.rbi[p] >= 0))
        start = int(s.log_leo[p, s.lslot[p]]) if s.lslot[p] >= 0 else None
        self.writer.change("leaders", now, topic=topic, partition=partition, leader=s.leader_id(p),
                           leader_epoch=int(s.leader_epoch[p]), start_offset=start, replicas_end_offset=replicas_end)
        self.isr_written(p, now)

    def isr_written(self, p: int, now: int) -> None:
        """The ``isr`` row of partition ``p`` as it stands: the ISR, the leader epoch it was written under and
        the eligible leader replicas (KIP-966). Alone, it records a change of the ELR only: the controller's
        record keeps the ISR and the leader epoch, so the row is no shrink or expansion."""
        s = self.s
        topic, partition = s.tp(p)
        self.writer.change("isr", now, topic=topic, partition=partition, isr=s.replica_ids(p, s.in_isr[p]),
                           leader_epoch=int(s.leader_epoch[p]), elr=s.replica_ids(p, s.elr[p]),
                           last_known_elr=s.replica_ids(p, s.last_known_elr[p]))

    def leader_started(self, p: int, now: int, prev_leader: int, prev_epoch: int, controller: int = -1) -> None:
        """The leader starts a new leader epoch, elected or kept (its log record; the rows came with
        ``leader_and_isr_changed``); ``controller``: who sent the LeaderAndIsr request, named by the line of a
        release before 0.11."""
        s = self.s
        slot = s.lslot[p]
        topic, partition = s.tp(p)
        self._log("leader_start", now, s.broker_ids[s.rbi[p, slot]], topic=topic, partition=partition,
                  leader_epoch=int(s.leader_epoch[p]), prev_leader_epoch=prev_epoch, prev_leader=prev_leader,
                  leo=int(s.log_leo[p, slot]), hw=int(s.hw[p]), isr=s.replica_ids(p, s.in_isr[p]),
                  adding=s.replica_ids(p, s.adding[p]), removing=s.replica_ids(p, s.removing[p]),
                  partition_epoch=int(s.partition_epoch[p]), controller=controller)

    def unclean_leader_elected(self, p: int, messages_lost: int, controller: int, now: int,
                               periodic: bool = False) -> None:
        """No live ISR member: the controller elected the first live replica, losing ``messages_lost`` (§6):
        a ``truth/unclean_elections`` row and the controller's log record (``periodic``: at KRaft's check of
        leaderless partitions)."""
        s = self.s
        topic, partition = s.tp(p)
        self.writer.samples("truth", "unclean_elections", now, {
            "topic": [topic], "partition": [partition], "leader": [s.leader_id(p)],
            "leader_epoch": [int(s.leader_epoch[p])], "messages_lost": [int(messages_lost)]})
        row = s.rbi[p]
        live = [int(s.broker_ids[b]) for b in row if b >= 0 and s.up[b]]
        self._log("unclean_leader_election", now, controller, topic=topic, partition=partition,
                  leader=s.leader_id(p), live=live, messages_lost=int(messages_lost), periodic=periodic)

    def election_started(self, partitions: np.ndarray, election_type: str, trigger: str, controller: int, now: int,
                         requested: np.ndarray | None = None) -> None:
        """The controller is about to elect the leaders of ``partitions`` (``election_type`` preferred or unclean; the
        trigger as Kafka names it, AutoTriggered or AdminClientTriggered; ``requested``: what an operator asked for):
        KafkaController's log record (docs/logs.md, ``election_started``), none for no partition."""
        s = self.s
        if len(partitions) == 0:
            return
        extra = {} if requested is None else {"requested": [s.tp(int(p)) for p in requested]}
        self._log("election_started", now, controller, partitions=[s.tp(int(p)) for p in partitions],
                  preferred=[int(s.broker_ids[s.rbi[int(p), 0]]) for p in partitions],
                  election_type=election_type.upper(), trigger=trigger, **extra)

    def reassignment_started(self, p: int, replicas: list[int], controller: int, now: int) -> None:
        s = self.s
        topic, partition = s.tp(p)
        self._log("reassignment_started", now, controller, topic=topic, partition=partition, replicas=replicas,
                  adding=s.replica_ids(p, s.adding[p]), removing=s.replica_ids(p, s.removing[p]))

    def broker_session_ended(self, b: int, controller: int, now: int) -> None:
        """The controller drops broker ``b`` (its session ended: docs/logs.md, ``broker_failed``)."""
        self._log("broker_failed", now, controller, target_broker=int(self.s.broker_ids[b]))

    def controlled_shutdown_granted(self, b: int, controller: int, leaderships: bool, now: int) -> None:
        """The controller takes broker ``b``'s controlled shutdown request (docs/logs.md, ``controlled_shutdown``);
        ``leaderships``: the broker still leads partitions, which a KRaft controller moves before it lets it go."""
        self._log("controlled_shutdown", now, controller, target_broker=int(self.s.broker_ids[b]),
                  leaderships=leaderships)

    def startup_refused(self, b: int, now: int) -> None:
        """A restarted broker ZooKeeper 0.9+ refuses while its crashed process's session lives: the process logs its
        failed start and exits (``model.election.registration_ms``, telemetry/lifecycle_lines.startup_failed)."""
        self._log("startup_failed", now, self.s.broker_ids[b], state=election.ALREADY_REGISTERED)

    def registration_refused(self, b: int, now: int) -> None:
        """A restarted broker's registration refused while its crashed process's session is valid (KRaft's controller
        refuses it, ZooKeeper 0.8's broker finds its own old node); it tries again (``model.election
        .registration_tries``)."""
        self._log("registration_refused", now, self.s.broker_ids[b],
                  error=election.DUPLICATE_BROKER_REGISTRATION if self.controller == election.KRAFT else None)

    def broker_registered(self, b: int, controller: int, now: int) -> None:
        """The controller takes broker ``b`` in again (docs/logs.md, ``broker_registered``): the line's metadata
        offset counts the registrations so far, as a metadata log's offsets only grow."""
        self.registrations += 1
        self._log("broker_registered", now, controller, target_broker=int(self.s.broker_ids[b]),
                  metadata_offset=self.registrations)

    def reassignment_completed(self, p: int, final: list[int], controller: int, now: int, cancelled: bool,
                               old_leader: int) -> None:
        """The controller ends a reassignment (``cancelled``: back to the origin replicas), the partition's ISR and
        leader as they then stand (``old_leader``: the one that led before)."""
        s = self.s
        topic, partition = s.tp(p)
        self._log("reassignment_completed", now, controller, topic=topic, partition=partition,
                  replicas=s.ids(final), cancelled=cancelled, isr=s.replica_ids(p, s.in_isr[p]),
                  leader=old_leader, new_leader=s.leader_id(p))

    # ------------------------------------------------------------------ the leader's ISR changes
    def isr_committed(self, p: int, old: np.ndarray, new: np.ndarray, now: int, under_min_isr: bool,
                      prev_epoch: int) -> None:
        """An ISR shrink or expansion the leader committed (the ``isr`` row and its log records). When the
        controller answered it with a new leader epoch (``prev_epoch`` is not the partition's: KRaft before
        3.6) the change is the controller's record -- leaders and isr rows -- and the leader, which proposed
        it ("Shrinking ISR"), logs its new epoch instead of "ISR updated"."""
        s = self.s
        topic, partition = s.tp(p)
        new_ids = s.replica_ids(p, new)
        bumped = int(s.leader_epoch[p]) != prev_epoch
        if bumped:
            self.leader_and_isr_changed(p, now)
        else:
            self.isr_written(p, now)
        if self.logs is None:
            return
        slot = s.lslot[p]
        broker = s.broker_ids[s.rbi[p, slot]]
        old_ids = s.replica_ids(p, old)
        gone = np.nonzero(old & ~new)[0]
        if len(gone):
            self._log("isr_shrink", now, broker, topic=topic, partition=partition, old_isr=old_ids, new_isr=new_ids,
                      hw=int(s.hw[p]), leo=int(s.log_leo[p, slot]),
                      out_of_sync=[{"broker": int(s.broker_ids[s.rbi[p, g]]), "leo": int(s.v_leo[p, g]),
                                    "last_caught_up_ms": int(s.v_lcu[p, g])} for g in gone])
        else:
            self._log("isr_expand", now, broker, topic=topic, partition=partition, old_isr=old_ids, new_isr=new_ids)
        if bumped:
            self.leader_started(p, now, int(broker), prev_epoch)
            return
        self._log("isr_updated", now, broker, topic=topic, partition=partition, isr=new_ids,
                  partition_epoch=int(s.partition_epoch[p]), under_min_isr=under_min_isr)

    # ------------------------------------------------------------------ replica fetchers (§4)
    def fetchers_changed(self, ps: np.ndarray, sl: np.ndarray, actions: np.ndarray, leaders: np.ndarray,
                         now: int, by_manager: np.ndarray) -> None:
        """``fetchers`` rows for the replicas (ps, sl): the action and the leader id it fetches from. The fetcher
        manager logs the changes it makes (``by_manager``); a thread that drops a fenced partition logs its own."""
        s = self.s
        self.writer.changes("fetchers", now, {
            "broker": s.broker_ids[s.rbi[ps, sl]], "leader": leaders, "fetcher_id": s.fid[ps],
            "topic": [s.topics[i] for i in s.topic_idx[ps]], "partition": s.pnum[ps],
            "action": [FETCH_ACTIONS[int(a)] for a in actions]})
        if self.logs is None:
            return
        for p, slot, action, leader, logged in zip(ps, sl, actions, leaders, by_manager, strict=True):
            topic, partition = s.tp(int(p))
            broker = s.broker_ids[s.rbi[p, slot]]
            if action == FETCH_ADDED:
                self._log("fetcher_added", now, broker, leader=int(leader), fetcher_id=int(s.fid[p]),
                          leader_epoch=int(s.leader_epoch[p]), partitions=[[topic, partition, int(s.log_leo[p, slot])]])
            elif action == FETCH_REMOVED and logged:
                self._log("fetcher_removed", now, broker, partitions=[[topic, partition]])

    def replicas_stopped(self, p: int, slots: Iterable[int], now: int) -> None:
        """StopReplica: the follower replicas in ``slots`` leave their fetchers (before the row is re-laid)."""
        s = self.s
        topic, partition = s.tp(p)
        for slot in slots:
            broker = s.broker_ids[s.rbi[p, slot]]
            self.writer.change("fetchers", now, broker=int(broker), leader=s.leader_id(p), fetcher_id=int(s.fid[p]),
                               topic=topic, partition=partition, action=FETCH_ACTIONS[FETCH_REMOVED])
            self._log("fetcher_removed", now, broker, partitions=[[topic, partition]])

    def _fetch_error_fields(self, p: int, leader_bi: int) -> dict:
        topic, partition = self.s.tp(p)
        return {"leader": int(self.s.broker_ids[leader_bi]) if leader_bi >= 0 else -1,
                "fetcher_id": int(self.s.fid[p]), "topic": topic, "partition": partition}

    def partition_failed(self, p: int, slot: int, leader_bi: int, now: int) -> None:
        """KIP-461: the follower's fetcher marked the partition failed."""
        self._log("partition_failed", now, self.s.broker_ids[self.s.rbi[p, slot]], **self._fetch_error_fields(p, leader_bi))

    def partition_fenced(self, p: int, slot: int, leader_bi: int, now: int) -> None:
        """2.1+ (KIP-320): the leader answered FENCED_LEADER_EPOCH; the follower awaits a new LeaderAndIsr."""
        s = self.s
        self._log("partition_fenced", now, s.broker_ids[s.rbi[p, slot]], leader_epoch=int(s.leader_epoch[p]),
                  **self._fetch_error_fields(p, leader_bi))

    def fetcher_thread_died(self, p: int, slot: int, leader_bi: int, now: int) -> None:
        """≤ 2.2: the error in partition ``p`` killed the follower's fetcher thread."""
        s = self.s
        self._log("thread_died", now, s.broker_ids[s.rbi[p, slot]], offset=int(s.log_leo[p, slot]),
                  **self._fetch_error_fields(p, leader_bi))

    def fetch_storage_halted(self, p: int, slot: int, leader_bi: int, now: int) -> None:
        """Before 1.0: a storage error appending the fetched data of partition ``p`` halts the follower's broker."""
        self._log("fetch_storage_halt", now, self.s.broker_ids[self.s.rbi[p, slot]],
                  **self._fetch_error_fields(p, leader_bi))

    # ------------------------------------------------------------------ producers (§1.5)
    def produce_rejected(self, rows: np.ndarray, requests: np.ndarray, min_isr: np.ndarray, now: int) -> None:
        """The leader's NotEnoughReplicas rejections: one logged per request, as ReplicaManager.appendToLocalLog
        logs every failed append (docs/logs.md)."""
        if self.logs is None:
            return
        s = self.s
        for p, n, m in zip(rows.tolist(), requests.tolist(), min_isr.tolist(), strict=True):
            topic, partition = s.tp(p)
            for _ in range(int(n)):
                self._log("produce_rejected", now, s.leader_id(p), topic=topic, partition=partition,
                          isr=s.replica_ids(p, s.in_isr[p]), min_isr=int(m))

    # ------------------------------------------------------------------ log directories (KIP-112)
    def log_dir_changed(self, b: int, d: int, state: str, now: int) -> None:
        """A ``log_dirs`` row: the broker's directory ``d`` went ``offline`` or came back ``online``."""
        s = self.s
        self.writer.change("log_dirs", now, broker=int(s.broker_ids[b]), log_dir=s.log_dirs[b][d], state=state)

    def _hosted(self, b: int) -> list[tuple[str, int]]:
        s = self.s
        return sorted(s.tp(int(p)) for p in np.nonzero((s.rbi == b).any(axis=1))[0])

    def log_dir_failed(self, b: int, d: int, partitions: np.ndarray, halts: bool, now: int) -> None:
        """1.0+: the broker stops serving the replicas of the failed directory, ``partitions`` [P] (its log
        records); ``halts``: it was the broker's last live directory, so LogManager halts the broker."""
        s = self.s
        self._log("log_dir_failed", now, s.broker_ids[b], log_dir=s.log_dirs[b][d],
                  partitions=[list(s.tp(int(p))) for p in np.nonzero(partitions)[0]],
                  halt_log_dirs=list(s.log_dirs[b]) if halts else None)

    def broker_halted_on_storage_error(self, b: int, log_dir: str, now: int) -> None:
        """Before 1.0: the first append that hits the failed directory halts the broker."""
        hosted = self._hosted(b)
        led = sorted(self.s.tp(int(p)) for p in np.nonzero(self.s.leader_bi() == b)[0])
        topic, partition = (led or hosted or [("", -1)])[0]
        self._log("storage_halt", now, self.s.broker_ids[b], log_dir=log_dir, topic=topic, partition=partition)

    # ------------------------------------------------------------------ the scrape
    def sampled(self, now: int, samples: Iterable[tuple[str, str, dict]]) -> None:
        """Sampled tables of one scrape, ``(group, table, columns)`` in writing order."""
        for group, table, columns in samples:
            self.writer.samples(group, table, now, columns)
