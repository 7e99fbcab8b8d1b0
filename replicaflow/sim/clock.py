"""The simulator's one clock: a heap of scenario events and timers, dispatched by kind.

The engine advances in ticks of ``tick_ms``; something due at ``t`` runs at the first tick boundary
``≥ t``. At one boundary the order is (docs/scenarios.md, docs/simulator.md):
1. timers due by then, by (time, order scheduled) — a handler gets the timer's own time, so a
   session that expires between two ticks writes its rows at the instant it expired;
2. scenario events due by then, by (``at``, file order) — a handler gets the boundary's time;
   timers an event schedules that are already due run right after it, before the next event.
Everything is dispatched through the explicit ``handlers`` table ``{kind: handler}``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence

TIMER, EVENT = 0, 1  # at one tick boundary, timers before events


class Clock:
    """Scenario events and timers in one heap; ``run_due(now)`` dispatches what the tick at ``now`` owes."""

    def __init__(self, start_ms: int, tick_ms: int, handlers: dict[str, Callable] | None = None):
        self.start_ms = start_ms
        self.tick_ms = tick_ms
        self.handlers: dict[str, Callable] = dict(handlers or {})
        self._heap: list[tuple] = []
        self._seq = 0

    def boundary(self, at_ms: int) -> int:
        """The first tick boundary at or after ``at_ms`` (the start for anything due before it)."""
        ticks = max(0, -(-(at_ms - self.start_ms) // self.tick_ms))
        return self.start_ms + ticks * self.tick_ms

    def _push(self, at_ms: int, group: int, order: int, kind: str, args: tuple) -> None:
        if kind not in self.handlers:
            raise ValueError(f"no handler for '{kind}' (handlers: {', '.join(sorted(self.handlers))})")
        heapq.heappush(self._heap, (self.boundary(at_ms), group, at_ms, order, kind, args))

    def add_events(self, events: Iterable, source: str, places: Sequence[str] = ()) -> None:
        """Scenario events (``event.at_ms`` after the start); a handler gets ``(now, event, where)``: ``places[i]``
        (the file, line and field path of the loader's ``Scenario.event_places``) when given for every event, else
        ``source`` and the event's index."""
        events = list(events)
        whole = len(places) == len(events)
        for i, event in enumerate(events):
            where = places[i] if whole else f"{source}: events[{i}].{event.kind}"
            self._push(self.start_ms + event.at_ms, EVENT, i, event.kind, (event, where))

    def schedule(self, at_ms: int, kind: str, *args) -> None:
        """A timer; its handler gets ``(at_ms, *args)``."""
        self._push(int(at_ms), TIMER, self._seq, kind, args)
        self._seq += 1

    def run_due(self, now: int) -> int:
        """Dispatch everything due at the tick boundary ``now``; returns how many ran."""
        ran = 0
        heap = self._heap
        while heap and heap[0][0] <= now:
            _due, group, at_ms, _order, kind, args = heapq.heappop(heap)
            self.handlers[kind](now if group == EVENT else at_ms, *args)
            ran += 1
        return ran
