"""What happens to the cluster from outside: broker crashes, shutdowns and restarts, slow networks,
stuck followers and fetch errors (the scenario's fault events).

Each handler changes the broker or replica state it names and hands the cluster-wide reaction to
the component Kafka gives it to: the controller (sessions, elections), the fetcher manager (failed
partitions, dead threads) or the partition (truncation on restart).
"""

from __future__ import annotations

import numpy as np

from replicaflow.errors import ReplicaflowError
from replicaflow.model.fetcher import RETRY_BACKOFF_MS, fetch_error_outcome, takes_log_dir_offline
from replicaflow.model.log_dirs import failure_halts_broker
from replicaflow.model.version import KafkaVersion
from replicaflow.sim.clock import Clock
from replicaflow.sim.controller import KafkaController
from replicaflow.sim.emitter import Emitter
from replicaflow.sim.fetcher_manager import ReplicaFetcherManager
from replicaflow.sim.partition import Partition
from replicaflow.sim.quota_manager import ReplicationQuotaManager
from replicaflow.sim.replica_manager import ReplicaManager
from replicaflow.sim.state import NEVER, STATE_DOWN, STATE_SHUTTING_DOWN, STATE_UP, ClusterState

RESTORE_NETWORK, REGISTRATION_RETRIED = "restore_network", "registration_retried"  # the clock's timer kinds


class Faults:
    """Handlers of the fault events (``now, event, where``) and the end-of-slow-network timer."""

    def __init__(self, state: ClusterState, version: KafkaVersion, start_ms: int, clock: Clock,
                 controller: KafkaController, partition: Partition, fetchers: ReplicaFetcherManager,
                 quotas: ReplicationQuotaManager, replica_manager: ReplicaManager, emit: Emitter):
        self.s, self.version, self.start_ms, self.clock = state, version, start_ms, clock
        self.controller, self.partition, self.fetchers, self.quotas, self.emit = (
            controller, partition, fetchers, quotas, emit)
        self.replica_manager = replica_manager
        self.registering: dict[int, tuple[int, ...]] = {}  # a started broker's registration tries, while they last

    def _set_state(self, b: int, state: str, now: int) -> None:
        self.s.state[b] = state
        self.emit.broker_state_changed(b, now)
        self.controller.broker_state_changed(now)

    # ------------------------------------------------------------------ brokers
    def broker_down(self, now: int, event, where: str) -> None:
        """A crash (the session expires later) or a controlled shutdown (leadership moves away first)."""
        s, b = self.s, self.s.broker_index(event.broker, where)
        if self.registering.pop(b, None) is not None:  # killed while its registration waits: it never joined
            return
        if not s.up[b]:
            return
        if event.controlled:
            self._set_state(b, STATE_SHUTTING_DOWN, now)
            self.controller.controlled_shutdown(b, now)
            s.up[b] = False
            self._set_state(b, STATE_DOWN, now)
            return
        self._halt(b, now)

    def broker_up(self, now: int, event, where: str) -> None:
        """The broker restarts, once the controller registers it: a crashed broker's old session must expire first
        (``controller.registration_tries``); KRaft's waits, ZooKeeper 0.9+'s exits (scenario checks warn of it)."""
        s, b = self.s, self.s.broker_index(event.broker, where)
        if s.up[b] or b in self.registering:
            return
        tries = self.controller.registration_tries(b, now)
        if tries is None:
            self.emit.startup_refused(b, now)
            return
        if len(tries) > 1:
            self.registering[b] = tries
            self._refused(b, tries, 0)
            return
        self._start(b, now)

    def _refused(self, b: int, tries: tuple[int, ...], i: int) -> None:
        """Try ``i`` of a started broker's registration finds its old session standing, and the broker logs it (KRaft:
        the controller's error; ZooKeeper 0.8: its own node of the old session, which it waits on); the next try is
        scheduled."""
        self.emit.registration_refused(b, tries[i])
        self.clock.schedule(tries[i + 1], REGISTRATION_RETRIED, b, tries, i + 1)

    def registration_retried(self, at: int, b: int, tries: tuple[int, ...], i: int) -> None:
        """Timer: try ``i`` of a started broker's registration (``tries``, the last one registering it), unless the
        broker was killed, or killed and started again, since."""
        if self.registering.get(b) is not tries:
            return
        if i < len(tries) - 1:
            self._refused(b, tries, i)
            return
        del self.registering[b]
        self._start(b, at)

    def _start(self, b: int, now: int) -> None:
        """The restarted broker joins: fresh process state (meters, quotas, fetchers), its logs truncated to the
        leaders."""
        s = self.s
        self.controller.broker_registering(b, now)
        s.up[b] = True
        s.start_ms[b] = now
        s.shrinks[b] = s.expands[b] = s.unclean_meter[b] = 0
        s.traffic[:, b] = 0
        s.traffic_total[:, b] = 0
        self.quotas.reset_broker(b)
        self.replica_manager.broker_restarted(b)
        s.stall_until[s.rbi == b] = 0
        self.fetchers.broker_restarted(b)
        self._set_state(b, STATE_UP, now)
        self.partition.make_followers(b)
        for d in np.nonzero(s.dir_offline[b])[0]:  # the restarted broker comes back with its (replaced) directories
            s.dir_offline[b, d] = False
            self.emit.log_dir_changed(b, int(d), "online", now)
        s.offline_replica[s.rbi == b] = False
        self.controller.broker_started(b, now)

    def log_dir_failure(self, now: int, event, where: str) -> None:
        """An I/O error in one of the broker's log directories (KIP-112, docs/semantics.md §6.1)."""
        s, b = self.s, self.s.broker_index(event.broker, where)
        self.fail_log_dir(b, 0 if event.log_dir is None else s.log_dirs[b].index(event.log_dir), now)

    def fail_log_dir(self, b: int, d: int, now: int) -> None:
        """Directory ``d`` of broker ``b`` goes offline (LogDirFailureChannel.maybeAddOfflineLogDir).

        1.0+: ReplicaManager.handleLogDirFailure stops serving the directory's replicas (the followers stop
        fetching) and the controller takes them out of the ISRs and elects new leaders where the broker led
        them, as for a shut-down broker (``KafkaController.onReplicasBecomeOffline``); the broker stays up
        and reports them in OfflineReplicaCount -- unless no live directory is left: then LogManager halts
        it, a crash (``model.log_dirs.failure_halts_broker``). Before 1.0 a KafkaStorageException halts the
        broker.
        """
        s = self.s
        if s.dir_offline[b, d] or not s.up[b]:
            return
        name = s.log_dirs[b][d]
        if not self.version.at_least("1.0"):
            self.emit.broker_halted_on_storage_error(b, name, now)
            self._halt(b, now)
            return
        hosted = (s.rbi == b) & (s.log_dir == d)
        s.dir_offline[b, d] = True
        s.failed[hosted] = False  # removeFetcherForPartitions drops them from the failed set too (KIP-461)
        halts = failure_halts_broker(self.version, len(s.log_dirs[b]) - int(s.dir_offline[b].sum()))
        s.offline_replica |= hosted
        s.layout_changed()
        self.emit.log_dir_failed(b, d, hosted.any(axis=1), halts, now)
        self.emit.log_dir_changed(b, d, "offline", now)
        if halts:
            self._halt(b, now)
        else:
            self.controller.remove_broker_from_isrs(b, now, partitions=hosted.any(axis=1))

    def _halt(self, b: int, now: int) -> None:
        """``Exit.halt``: the broker stops at once, a crash the controller notices when the session expires."""
        self.s.up[b] = False
        self._set_state(b, STATE_DOWN, now)
        self.controller.broker_failed(b, now)

    # ------------------------------------------------------------------ network
    def slow_network(self, now: int, event, where: str) -> None:
        """The broker's NIC runs at the given rates for ``for``."""
        b = self.s.broker_index(event.broker, where)
        if event.network_in_bps is not None:
            self.s.net_in_bps[b] = event.network_in_bps
        if event.network_out_bps is not None:
            self.s.net_out_bps[b] = event.network_out_bps
        self.clock.schedule(now + event.for_ms, RESTORE_NETWORK, b)

    def restore_network(self, at: int, b: int) -> None:
        """Timer: the slow-network window ended."""
        self.s.net_in_bps[b] = self.s.base_net_in_bps[b]
        self.s.net_out_bps[b] = self.s.base_net_out_bps[b]

    # ------------------------------------------------------------------ followers
    def stall_follower(self, now: int, event, where: str) -> None:
        """The follower replicas on the broker (of a topic or one partition) stop fetching (§1.2)."""
        s, b = self.s, self.s.broker_index(event.broker, where)
        mask = s.rbi == b
        if event.topic is not None:
            rows = s.topic_idx == s.topic_index[event.topic]
            if event.partition is not None:
                rows &= s.pnum == event.partition
            mask &= rows[:, None]
        s.stall_until[mask] = NEVER if event.for_ms is None else now + event.for_ms

    def fail_partition(self, now: int, event, where: str) -> None:
        """The follower gets ``error`` fetching the partition: failed (2.3+), thread dead (≤ 2.2), out of the thread
        until a new leader epoch (a fenced epoch, 2.1 – 2.2) or retried (§4); from 1.0 a storage error also fails
        the replica's log directory (§6.1), before 1.0 it halts the broker."""
        s = self.s
        b, p = s.broker_index(event.broker, where), s.partition_row(event.topic, event.partition, where)
        slots = np.nonzero(s.rbi[p] == b)[0]
        if len(slots) == 0 or s.lslot[p] == slots[0]:
            raise ReplicaflowError(f"{where}: broker {event.broker} is not a follower of "
                                   f"{event.topic}-{event.partition} at {now - self.start_ms}ms")
        slot, leader = int(slots[0]), int(s.rbi[p, s.lslot[p]]) if s.lslot[p] >= 0 else -1
        outcome = fetch_error_outcome(self.version, event.error)
        if outcome == "halted":
            self.emit.fetch_storage_halted(p, slot, leader, now)
            self._halt(b, now)
            return
        if event.error == "fenced_leader_epoch":
            self.emit.partition_fenced(p, slot, leader, now)
        if outcome in ("failed", "fenced"):
            self.fetchers.mark_failed(p, slot)
        if outcome == "failed":
            self.emit.partition_failed(p, slot, leader, now)
        elif outcome == "thread_died":
            self.fetchers.thread_died(b, leader, int(s.fid[p]))
            self.emit.fetcher_thread_died(p, slot, leader, now)
        else:
            s.stall_until[p, slot] = max(int(s.stall_until[p, slot]), now + RETRY_BACKOFF_MS)
        if takes_log_dir_offline(self.version, event.error):
            self.fail_log_dir(b, int(s.log_dir[p, slot]), now)
