"""Kafka's Partition, for every partition at once: follower fetch state, ISR expand/shrink, AlterPartition, HW.

The leader's side of replication (docs/semantics.md §1): it records each follower fetch (§1.1), adds a
caught-up follower to the ISR (§1.4), removes out-of-sync followers when its broker's ISR-expiration
task runs (§1.2, §1.3; the message rule of §1.6 up to 0.8.2), and advances the high watermark
(§1.5). From 2.7 an ISR change is an AlterPartition proposal the controller commits after
``isr_commit_delay``; before, the leader writes it at once. Every rule is ``model.isr``'s or
``model.predicates``'; the methods apply them to the [P, S] grid and touch Python only for the
partitions whose ISR changes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from replicaflow.model import election, predicates
from replicaflow.model import isr as isr_rules
from replicaflow.model.rows import row_any, row_sum
from replicaflow.sim.configs import DynamicConfigs
from replicaflow.sim.emitter import Emitter
from replicaflow.sim.fetcher_manager import Topology
from replicaflow.sim.scenario import Scenario
from replicaflow.sim.state import NEVER, ClusterState


class IsrView(NamedTuple):
    """What changes only with the ISR and the topology (cached until the next ISR change or Topology)."""

    isr_full: bool                # every replica is in the ISR: no expansion, no caught-up outsiders
    members: np.ndarray | None    # [P, S] leader and ISR (§1.5); None when that is every slot
    outside: np.ndarray | None    # [P, S] live replicas outside the ISR; None when there are none
    freeze: np.ndarray            # [P] HW frozen: offline, or 3.7+ under min ISR (§1.5)


class Partition:
    """The leader-side replication state machine of all partitions, vectorized over the [P, S] grid."""

    def __init__(self, state: ClusterState, scenario: Scenario, configs: DynamicConfigs, emit: Emitter):
        self.s, self.configs, self.emit = state, configs, emit
        self.version = scenario.version
        self.kafka = scenario.kafka
        self.tick_ms = scenario.tick_ms
        # release switches, read once (a version property parses a string)
        self._leo_is_max = self.version.fetch_leader_leo_is_max
        self._kafka_4485 = self.version.kafka_4485
        self._check_divisor = self.version.isr_check_period_divisor
        self._equal_leo_in_sync = self.version.equal_leo_in_sync
        self._needs_epoch_start = self.version.expansion_needs_epoch_start
        self._fetch_time_isr_only = self.version.epoch_bump_fetch_time_isr_only
        self._view: IsrView | None = None
        self._view_topo: Topology | None = None
        self.proposals = False  # AlterPartition proposals may be in flight (pending_at >= 0)
        # the ISR-expiration check waits for the next run instant of a live broker's task (§1.3)
        self._checked: tuple[int, int] | None = None
        self._checked_at, self._next_check_ms = 0, 0

    # ------------------------------------------------------------------ §2 health of each partition
    def flags(self) -> dict[str, np.ndarray]:
        """[P] counts and the docs/semantics.md §2 predicates in this release's semantics (offline: no leader)."""
        s = self.s
        n_rep = row_sum(s.rbi >= 0)
        n_add, n_rem, n_isr = row_sum(s.adding), row_sum(s.removing), row_sum(s.in_isr)
        min_isr, capped = self.configs.min_isr(), self.version.min_isr_capped
        return {
            "n_rep": n_rep, "n_add": n_add, "n_isr": n_isr,
            "urp": predicates.under_replicated(self.version, n_rep, n_add, n_isr),
            "urp_legacy": predicates.urp_legacy(n_rep, n_isr),
            "urp_kip352": predicates.urp_kip352(n_rep, n_add, n_isr),
            "under_min_isr": predicates.under_min_isr(n_isr, min_isr, n_rep, capped),
            "at_min_isr": predicates.at_min_isr(n_isr, min_isr, n_rep, capped),
            "reassigning": predicates.reassigning(n_add, n_rem),
            "offline": s.lslot < 0,
        }

    def isr_view(self, topo: Topology) -> IsrView:
        """The cached IsrView (ISR commits and a new Topology drop it)."""
        if self._view is None or self._view_topo is not topo:
            s = self.s
            assigned = s.rbi >= 0
            members = (s.in_isr | topo.leader_mask) & assigned
            outside = assigned & ~s.in_isr
            freeze = s.lslot < 0
            if self.version.hw_frozen_under_min_isr:
                freeze |= predicates.under_min_isr(row_sum(s.in_isr), self.configs.min_isr(), row_sum(assigned), True)
            live_outside = outside & s.up[topo.rbi]
            self._view = IsrView(isr_full=not outside.any(), members=None if members.all() else members,
                                 outside=live_outside if live_outside.any() else None, freeze=freeze)
            self._view_topo = topo
        return self._view

    # ------------------------------------------------------------------ fetches (§1.1)
    def record_fetches(self, fetched: np.ndarray, leader_leo_grid: np.ndarray, now: int) -> None:
        """updateFollowerFetchState for every ``fetched`` replica, at its pre-append offset (the fetch offset), in
        place; ``leader_leo_grid`` is the leader's LEO at the read, this tick's messages appended."""
        s = self.s
        s.v_lcu = isr_rules.last_caught_up_after_fetch(s.log_leo, leader_leo_grid, now, s.v_lfl, s.v_lft, s.v_lcu,
                                                       fetched, self._kafka_4485)
        lfl = isr_rules.fetch_leader_leo_after_fetch(leader_leo_grid, s.v_lfl, self._leo_is_max)
        np.putmask(s.v_lfl, fetched, lfl)
        np.putmask(s.v_lft, fetched, now)
        np.putmask(s.v_leo, fetched, s.log_leo)

    # ------------------------------------------------------------------ ISR changes (§1.3, §1.4)
    def expand(self, fetched: np.ndarray, topo: Topology, now: int) -> None:
        """A fetching non-ISR follower that reached the HW and the epoch start joins (one per partition per tick)."""
        s = self.s
        if self.isr_view(topo).isr_full:
            return
        outside = fetched & ~s.in_isr
        if not outside.any():
            return
        cand = (outside & ~topo.leader_mask
                & isr_rules.expansion_eligible(s.v_leo, s.hw[:, None], s.epoch_start[:, None], True,
                                               self._needs_epoch_start))
        cand &= (s.pending_at < 0)[:, None]
        rows = np.nonzero(row_any(cand))[0]
        if len(rows) == 0:
            return
        first = cand[rows].argmax(axis=1)
        proposal = s.in_isr[rows].copy()
        proposal[np.arange(len(rows)), first] = True
        self._propose(rows, proposal, now)

    def shrink(self, now: int, topo: Topology, leader_leo: np.ndarray) -> None:
        """Leaders whose broker's ISR-expiration task runs in this tick drop their out-of-sync followers."""
        s = self.s
        lag_ms = self.configs.lag_ms
        checked = (s.layout_version, lag_ms)  # broker starts, liveness and the lag change only with these
        if checked == self._checked and self._checked_at <= now < self._next_check_ms:
            return
        due = isr_rules.isr_check_due(now, s.start_ms, lag_ms, self.tick_ms, self._check_divisor) & s.up
        upcoming = isr_rules.next_isr_check_ms(now, s.start_ms, lag_ms, self._check_divisor)[s.up]
        self._checked, self._checked_at = checked, now
        self._next_check_ms = int(upcoming.min()) if len(upcoming) else NEVER
        if not due.any():
            return
        check = topo.leader_up & due[np.maximum(topo.leader_bi, 0)] & (s.pending_at < 0)
        if not check.any():
            return
        rows = np.nonzero(check)[0]
        leader_leo = leader_leo[rows][:, None]
        if self.version.lag_rule == "time":
            out = isr_rules.is_out_of_sync(s.v_leo[rows], leader_leo, s.v_lcu[rows], now, lag_ms,
                                           self._equal_leo_in_sync)
        else:
            out = isr_rules.is_out_of_sync_legacy(s.v_leo[rows], leader_leo, s.v_lft[rows], now, lag_ms,
                                                  self.kafka.replica_lag_max_messages)
        out &= s.in_isr[rows] & ~topo.leader_mask[rows]
        hit = row_any(out)
        if hit.any():
            self._propose(rows[hit], s.in_isr[rows[hit]] & ~out[hit], now)

    def _propose(self, rows: np.ndarray, proposal: np.ndarray, now: int) -> None:
        """Leader-driven ISR change: committed at once (≤ 2.6, or delay 0) or via AlterPartition after the delay."""
        s = self.s
        delay = self.kafka.isr_commit_delay_ms if self.version.alter_partition else 0
        if delay <= 0:
            self._commit(rows, proposal, now)
            return
        s.pending_isr[rows] = proposal
        s.pending_at[rows] = now + delay
        self.proposals = True

    def commit_pending(self, now: int) -> None:
        """The controller answers the AlterPartition proposals whose delay has passed."""
        s = self.s
        due = np.nonzero((s.pending_at >= 0) & (s.pending_at <= now))[0]
        if len(due):
            s.pending_at[due] = -1
            self._commit(due, s.pending_isr[due].copy(), now)
        self.proposals = bool((s.pending_at >= 0).any())

    def _commit(self, rows: np.ndarray, proposal: np.ndarray, now: int) -> None:
        """Write each proposed ISR (unless unchanged or the partition went offline), count the meter, announce it.

        A KRaft controller before metadata version 3.6 answers a shrink with a new leader epoch
        (``model.election.bumps_leader_epoch``): the leader then ignores the answer, whose epoch it does not
        have yet (``Partition.handleAlterPartitionUpdate``), and takes the shrink with the new epoch from the
        metadata record as a controller change (``makeLeader``), so IsrShrinksPerSec does not count it. If the
        answer arrived before the record it would count in FailedIsrUpdatesPerSec; replicaflow takes the
        record first (docs/semantics.md §6)."""
        s = self.s
        min_isr = self.configs.min_isr()
        bump_on_shrink = election.bumps_leader_epoch(self.version, self.kafka.controller, election.LEADER_ISR_SHRINK)
        for i, p in enumerate(rows):
            p = int(p)
            old, new = s.in_isr[p].copy(), proposal[i]
            if (old == new).all() or s.lslot[p] < 0:
                continue
            leader = int(s.rbi[p, s.lslot[p]])
            s.in_isr[p] = new
            s.isr_changed()
            self.update_elr(p, old)
            self._view = None
            shrink = bool((old & ~new).any())
            prev_epoch = int(s.leader_epoch[p])
            self.bump_epochs(p, leader_epoch=shrink and bump_on_shrink)
            if s.leader_epoch[p] != prev_epoch:  # the record's new leader epoch: makeLeader (§1.1)
                self.make_leader(p, int(s.lslot[p]), int(s.lslot[p]), now)
            elif shrink:
                s.shrinks[leader] += 1
            else:
                s.expands[leader] += 1
            n_isr, n_rep = int(new.sum()), int((s.rbi[p] >= 0).sum())
            under = bool(predicates.under_min_isr(n_isr, int(min_isr[p]), n_rep, self.version.min_isr_capped))
            self.emit.isr_committed(p, old, new, now, under, prev_epoch)

    def bump_epochs(self, p: int, times: int = 1, leader_epoch: bool = True) -> None:
        """A new partition epoch, and a new leader epoch where the controller writes one. Any new leader epoch
        re-adds the followers' fetchers, which clears their KIP-461 failed state (``Partition.makeFollower``,
        ``AbstractFetcherThread.addPartitions``, docs/semantics.md §4)."""
        s = self.s
        s.partition_epoch[p] += times
        if leader_epoch:
            s.leader_epoch[p] += times
            if s.failed[p].any():
                s.failed[p] = False
                s.layout_changed()

    def update_elr(self, p: int, old_isr: np.ndarray, unclean_shutdown=False) -> None:
        """With ``kafka.eligible_leader_replicas`` on, the ELR and LastKnownElr follow an ISR change of
        ``p`` (KIP-966, ``model.election.next_elr``; min ISR capped at the replica count, §6)."""
        if not self.kafka.eligible_leader_replicas:
            return
        s = self.s
        min_isr = min(int(self.configs.min_isr()[p]), int((s.rbi[p] >= 0).sum()))
        elr, lke = election.next_elr(old_isr, s.in_isr[p], s.elr[p], s.last_known_elr[p], [min_isr],
                                     unclean_shutdown)
        s.elr[p], s.last_known_elr[p] = elr[0], lke[0]

    # ------------------------------------------------------------------ high watermark (§1.5)
    def advance_hw(self, now: int, topo: Topology) -> None:
        """Min LEO over leader, ISR (with a proposed expansion) and caught-up eligible followers; never back."""
        s = self.s
        view = self.isr_view(topo)
        leo = np.where(topo.leader_mask, s.log_leo, s.v_leo)
        members = view.members
        if members is not None and self.proposals:
            members = members | (s.pending_isr & (s.pending_at >= 0)[:, None] & (s.rbi >= 0))
        if members is not None and view.outside is not None and self._kafka_4485:  # before 0.10.2: the ISR alone
            members = members | (view.outside & (s.v_leo >= 0) & ((now - s.v_lcu) <= self.configs.lag_ms))
        s.hw = isr_rules.high_watermark(s.hw, leo, members, view.freeze)

    # ------------------------------------------------------------------ leadership changes
    def make_leader(self, p: int, new_slot: int, old_slot: int, now: int) -> None:
        """The elected replica leads a new epoch: followers truncate to its LEO and their fetch state resets (§1.1)."""
        s = self.s
        row = s.rbi[p]
        leader_leo = s.log_leo[p, new_slot]
        followers = (row >= 0) & (np.arange(s.slots) != new_slot)
        s.log_leo[p] = np.where(followers, np.minimum(s.log_leo[p], leader_leo), s.log_leo[p])
        kept = None if self._kafka_4485 else (s.v_lfl[p], s.v_lft[p], s.v_lcu[p])
        leo, lfl, lft, lcu = isr_rules.reset_on_new_leader_epoch(
            now, s.in_isr[p], new_slot == old_slot, leader_leo, s.v_leo[p], legacy=self.version.lag_rule == "messages",
            kept=kept, fetch_time_isr_only=self._fetch_time_isr_only)
        s.v_leo[p], s.v_lfl[p], s.v_lft[p], s.v_lcu[p] = leo, lfl, lft, lcu
        s.v_leo[p, new_slot] = leader_leo
        s.epoch_start[p] = leader_leo
        s.hw[p] = min(int(s.hw[p]), int(leader_leo))
        s.failed[p] = False

    def make_followers(self, b: int) -> None:
        """Broker ``b`` restarted: its logs survive on disk; its follower replicas truncate to the leader's LEO."""
        s = self.s
        leader_leo = s.leader_leo()
        follower = (s.rbi == b) & ~s.leader_mask() & (s.lslot >= 0)[:, None]
        s.log_leo = np.where(follower, np.minimum(s.log_leo, leader_leo[:, None]), s.log_leo)
