"""How far a reassignment has come, and whether it can finish: the status and ETA of each adding
replica, from what a scrape shows (docs/pipeline.md, "Reassignment progress").

A move copies the leader's log while producers keep appending to it, so what closes the gap is
the **net** rate: the replica's copy rate minus the leader log's growth over the same window. An
ETA from the copy rate alone promises 38 minutes for a move whose gap grows every minute.

Statuses of an open move (a closed one is ``completed`` or ``cancelled``):

- ``progressing``: the gap closes (net rate > 0; ETA = bytes left / net rate), or it is closed and
  the replica waits to join the ISR (ETA 0).
- ``starved``: a replication throttle covers the move (KIP-73 lists and rates, or the KIP-542
  reassignment rates) and the gap does not close: the quota holds it back.
- ``never at this rate``: it copies, but producers append at least as fast and no throttle is to
  blame (the network or the fetch size is the limit).
- ``stalled``: nothing copied over a full window, and no throttle covers it (a dead fetcher, a
  failed partition, a leader that is down).

Written once for NumPy arrays and Spark Columns, like ``model.predicates``: only operators and the
``model.columns.where``.
"""

from __future__ import annotations

from replicaflow.model.columns import where as _where
from replicaflow.model.units import format_rate

PROGRESSING, STARVED, NEVER, STALLED = "progressing", "starved", "never at this rate", "stalled"
COMPLETED, CANCELLED = "completed", "cancelled"
STATUSES = (PROGRESSING, STARVED, NEVER, STALLED, COMPLETED, CANCELLED)
STALL_WINDOW_MS = 60_000  # the window of the copy and growth rates (and of "copied nothing")


def net_rate_bps(copy_bps, leader_growth_bps):
    """The rate at which the gap to the leader closes."""
    return copy_bps - leader_growth_bps


def open_move_status(caught_up, copy_bps, leader_growth_bps, window_full, throttled):
    """The status of an open move from its rates over the last window (see the module docstring).

    ``caught_up``: no bytes left to copy (the replica waits for the leader to add it to the ISR);
    ``window_full``: the window spans ``STALL_WINDOW_MS`` (a move younger than that is given time);
    ``throttled``: a replication throttle with a rate covers the move's fetches.
    """
    net = net_rate_bps(copy_bps, leader_growth_bps)
    return _where(caught_up | (net > 0), PROGRESSING,
                  _where(~window_full, PROGRESSING,  # too young to judge
                         _where(throttled, STARVED,
                                _where(copy_bps <= 0, STALLED, NEVER))))


def eta_ms(bytes_remaining, copy_bps, leader_growth_bps):
    """Milliseconds to close the gap at the current net rate; only meaningful while it closes."""
    net = net_rate_bps(copy_bps, leader_growth_bps)
    return bytes_remaining * 1000.0 / net


def describe(status: str, copy_bps: float | None, leader_growth_bps: float | None, throttled: bool,
             stalled_since: str | None = None) -> str:
    """The reason behind a status, in operator units: ``copies 559KB/s, the log grows 2MB/s (throttled)``.
    ``stalled_since``: when a stalled move last copied (``2026-01-01 00:00:30, 4m30s before the end``), where its
    progress samples tell; without it, only the window is known."""
    if status in (COMPLETED, CANCELLED) or copy_bps is None or leader_growth_bps is None:
        return ""
    rates = f"copies {format_rate(max(copy_bps, 0.0))}, the log grows {format_rate(max(leader_growth_bps, 0.0))}"
    stalled = f"copied nothing since {stalled_since}" if stalled_since else "copied nothing over the last minute"
    why = {STARVED: "held back by a replication throttle", STALLED: stalled,
           NEVER: "producers append at least as fast as it copies"}.get(status)
    return f"{why}: {rates}" if why else rates + (" (throttled)" if throttled else "")
