"""ISR membership rules (docs/semantics.md §1, KIP-16) as pure elementwise functions over NumPy arrays.

Every argument may be a scalar or an array; arrays broadcast. The simulator calls these once per
tick on whole replica arrays and keeps the results only for the replicas that fetched.
"""

from __future__ import annotations

import numpy as np

from replicaflow.model import rows

UNKNOWN_OFFSET = -1
_NO_MEMBER = np.iinfo(np.int64).max  # the min over an empty member set


def update_fetch_state(fetch_offset, leader_leo, now_ms, last_fetch_leader_leo, last_fetch_time_ms,
                       last_caught_up_ms, leo_is_max: bool):
    """Apply one follower fetch (§1.1); returns (leo, last_fetch_leader_leo, last_fetch_time_ms, last_caught_up_ms).

    The leader records the fetch offset as the follower's LEO and the fetch time, and updates
    lastCaughtUp (:func:`last_caught_up_after_fetch`) and the remembered leader LEO
    (:func:`fetch_leader_leo_after_fetch`).
    """
    fetch_offset = np.asarray(fetch_offset)
    leader_leo = np.asarray(leader_leo)
    last_caught_up = last_caught_up_after_fetch(fetch_offset, leader_leo, now_ms, last_fetch_leader_leo,
                                                last_fetch_time_ms, last_caught_up_ms)
    new_fetch_leader_leo = fetch_leader_leo_after_fetch(leader_leo, last_fetch_leader_leo, leo_is_max)
    new_fetch_time = np.broadcast_to(np.asarray(now_ms, dtype=np.int64), np.shape(last_caught_up))
    return (np.broadcast_to(fetch_offset, np.shape(last_caught_up)).copy(),
            np.broadcast_to(new_fetch_leader_leo, np.shape(last_caught_up)).copy(),
            new_fetch_time.copy(), last_caught_up)


def last_caught_up_after_fetch(fetch_offset, leader_leo, now_ms, last_fetch_leader_leo, last_fetch_time_ms,
                               last_caught_up_ms, fetched=True, kafka_4485: bool = True):
    """§1.1 lastCaughtUpTimeMs after a fetch at ``fetch_offset``; it never moves back.

    Caught up to the current leader LEO → now; else caught up to what the leader had at the previous
    fetch → the previous fetch time; else unchanged. Written as "pick the candidate time, then take
    the max with the old value" (the old value is its own candidate when not caught up, and for the
    replicas that did not fetch: ``fetched`` False).

    Before 0.10.2 (``kafka_4485`` False) only a fetch that starts at the leader's LEO counts, and it sets now:
    ``ReplicaManager.readFromLocalLog`` of 0.9 – 0.10.1 sets ``isReadFromLogEnd`` from the LEO before the read
    minus the read's start (``fetchOffsetMetadata``, the fetch offset), so a follower whose every fetch finds new
    messages never catches up however fast it reads (the bug KAFKA-4485 fixed).
    """
    fetch_offset = np.asarray(fetch_offset)
    if kafka_4485:
        candidate = np.where((fetch_offset >= last_fetch_leader_leo) & fetched, last_fetch_time_ms, last_caught_up_ms)
    else:
        candidate = np.array(np.broadcast_to(last_caught_up_ms, np.broadcast_shapes(
            np.shape(last_caught_up_ms), np.shape(fetch_offset))), dtype=np.int64)
    np.putmask(candidate, (fetch_offset >= leader_leo) & fetched, now_ms)
    return np.maximum(last_caught_up_ms, candidate, out=candidate)


def fetch_leader_leo_after_fetch(leader_leo, last_fetch_leader_leo, leo_is_max: bool):
    """§1.1 lastFetchLeaderLogEndOffset after a fetch: overwritten before 3.3, only grows from 3.3 (``leo_is_max``)."""
    return np.maximum(leader_leo, last_fetch_leader_leo) if leo_is_max else np.asarray(leader_leo)


def reset_on_new_leader_epoch(now_ms, in_new_isr, was_leader, leader_leo, leo, legacy: bool = False,
                              kept=None, fetch_time_isr_only: bool = True):
    """Follower state when a broker becomes leader with a new epoch (§1.1, last paragraph).

    lastCaughtUp = now for ISR members, else 0. A new leader forgets follower LEOs and the leader LEO of
    their last fetch (-1) and their fetch times (0): 3.3+ ``Replica.resetReplicaState`` with ``isNewLeader``,
    and before it ``updateLogReadResult(UnknownLogReadResult)`` after ``resetLastCaughtUpTime`` — what
    another broker's leadership recorded never reaches it. A leader that only bumped its epoch keeps LEOs
    and restarts the fetch bookkeeping at its own LEO: the last fetch time becomes now for the ISR members and 0
    for the others from 3.3 (``fetch_time_isr_only``, ``Replica.resetReplicaState``), now for every follower on
    0.10.2 – 3.2 (``Replica.resetLastCaughtUpTime(leaderEpochStartOffset, curTimeMs, ...)``), so there a
    follower outside the ISR whose next fetch reaches that LEO counts as caught up as of the bump.
    ≤ 0.8.2 (``legacy``, ``Partition.makeLeader`` setting each follower's LEO to unknown, which stamps
    its update time, on every new leader epoch, a bump of its own included): every follower's LEO is forgotten
    and its stuck clock restarts at ``now``.
    0.9 – 0.10.1 (``kept`` = the current (lastFetchLeaderLogEndOffset, lastFetchTimeMs, lastCaughtUpTimeMs)):
    ``makeLeader`` has no ``resetLastCaughtUpTime`` (KAFKA-4485 added it in 0.10.2) and touches the follower
    Replicas only when ``isNewLeader``, so a leader that only bumped its epoch keeps all of it. A new leader's
    Replicas keep the clocks of their creation or of its last leadership, which replicaflow does not track: it
    starts them as from 0.10.2 (docs/semantics.md §1.1).
    """
    in_new_isr = np.asarray(in_new_isr, dtype=bool)
    was_leader = np.asarray(was_leader, dtype=bool)
    shape = np.broadcast_shapes(np.shape(in_new_isr), np.shape(was_leader), np.shape(leo))
    caught_up = np.broadcast_to(np.where(in_new_isr, now_ms, 0), shape).astype(np.int64)
    new_leo = np.broadcast_to(np.where(was_leader & (not legacy), leo, UNKNOWN_OFFSET), shape).astype(np.int64)
    new_fetch_leader_leo = np.broadcast_to(np.where(was_leader, leader_leo, UNKNOWN_OFFSET), shape).astype(np.int64)
    restarted = (was_leader & (in_new_isr | (not fetch_time_isr_only))) | legacy
    new_fetch_time = np.broadcast_to(np.where(restarted, now_ms, 0), shape).astype(np.int64)
    if kept is not None and not legacy:
        lfl, lft, lcu = (np.broadcast_to(np.asarray(k, dtype=np.int64), shape) for k in kept)
        new_fetch_leader_leo = np.where(was_leader, lfl, new_fetch_leader_leo)
        new_fetch_time, caught_up = np.where(was_leader, lft, new_fetch_time), np.where(was_leader, lcu, caught_up)
    return new_leo, new_fetch_leader_leo, new_fetch_time, caught_up


def is_out_of_sync(follower_leo, leader_leo, last_caught_up_ms, now_ms, lag_ms, equal_leo_in_sync: bool = True):
    """§1.2: not caught up for strictly more than ``lag_ms`` — and, from 2.1 (``equal_leo_in_sync``,
    ``Partition.getOutOfSyncReplicas``), a LEO that differs from the leader's."""
    stale = (np.asarray(now_ms) - last_caught_up_ms) > lag_ms
    return (np.asarray(follower_leo) != leader_leo) & stale if equal_leo_in_sync else stale


def is_out_of_sync_legacy(follower_leo, leader_leo, last_fetch_time_ms, now_ms, lag_ms, lag_max_messages):
    """§1.6 (≤ 0.8.2, ``Partition.getOutOfSyncReplicas``): stuck (no LEO update for more than ``lag_ms``) or, with
    a known LEO, more than ``lag_max_messages`` behind — a follower whose LEO a new leader forgot is not slow."""
    stuck = (np.asarray(now_ms) - last_fetch_time_ms) > lag_ms
    follower_leo = np.asarray(follower_leo)
    slow = (follower_leo >= 0) & ((np.asarray(leader_leo) - follower_leo) > lag_max_messages)
    return stuck | slow


def expansion_eligible(follower_leo, leader_hw, leader_epoch_start_offset, follower_alive,
                       needs_epoch_start: bool = True):
    """§1.4: a fetching non-ISR follower joins when LEO ≥ HW and, from 2.0.1 (``needs_epoch_start``, KAFKA-7128),
    ≥ the leader epoch's start offset."""
    follower_leo = np.asarray(follower_leo)
    ok = (follower_leo >= leader_hw) & np.asarray(follower_alive, dtype=bool)
    return ok & (follower_leo >= leader_epoch_start_offset) if needs_epoch_start else ok


def high_watermark(prev_hw, leo_matrix, member_mask, freeze):
    """§1.5: HW = min LEO over the members (leader, ISR, caught-up eligible followers); never moves back.

    ``leo_matrix``/``member_mask`` are [partitions, replicas] (``member_mask`` None: every replica is
    a member); ``freeze`` [partitions] keeps the HW where it is (3.7+: no advance while under min ISR).
    """
    leo = np.asarray(leo_matrix, dtype=np.int64)
    masked = leo if member_mask is None else np.where(member_mask, leo, _NO_MEMBER)
    candidate = rows.row_min(masked)
    hw = np.maximum(prev_hw, candidate)
    keep = freeze | (candidate == _NO_MEMBER)
    return np.where(keep, prev_hw, hw) if keep.any() else hw


def isr_check_due(now_ms, broker_start_ms, lag_ms, tick_ms, divisor: int = 2):
    """§1.3: the ISR-expiration task runs every ``lag/divisor`` ms from broker start (first run at start):
    ``lag/2`` from 0.10.2 (KAFKA-4485), ``lag`` before (``ReplicaManager.startup`` schedules
    ``maybeShrinkIsr``).

    True on the tick ``(now - tick, now]`` that contains a run instant ``start + k·period`` (k ≥ 0).
    """
    period = np.maximum(np.asarray(lag_ms) // divisor, 1)
    elapsed = np.asarray(now_ms) - broker_start_ms
    return (elapsed >= 0) & (np.floor_divide(elapsed, period) > np.floor_divide(elapsed - tick_ms, period))


def next_isr_check_ms(after_ms, broker_start_ms, lag_ms, divisor: int = 2):
    """The first run instant of the ISR-expiration task (:func:`isr_check_due`) strictly after ``after_ms``:
    no tick ending before it is due, so the check can wait for it."""
    period = np.maximum(np.asarray(lag_ms) // divisor, 1)
    elapsed = np.asarray(after_ms) - broker_start_ms
    return broker_start_ms + np.where(elapsed < 0, 0, (np.floor_divide(elapsed, period) + 1) * period)
