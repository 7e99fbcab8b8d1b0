"""How much work a scenario asks for, refused before it starts when it is beyond what this machine
class finishes in minutes (``--max-work`` raises the bound; the memory bounds are fixed).

The engine's cost is close to one unit per replica per tick (its tick is vectorized over the
replica arrays), so the estimate is ``replicas × ticks`` and the time at the rate
``benchmarks/bench_sim.py`` measures on a 2-core machine.
"""

from __future__ import annotations

from replicaflow.model.units import format_duration

MAX_BROKERS = 10_000  # Kafka clusters run to a few thousand brokers
MAX_REPLICAS = 20_000_000  # about 3 GB of engine state arrays
MAX_FETCHER_THREADS = 1_000_000  # brokers × source brokers × num.replica.fetchers
DEFAULT_MAX_WORK = 20_000_000_000  # replica-ticks: about 15 minutes at the rate below
REPLICA_TICKS_PER_S = 20_000_000  # bench_sim's full-scale tick rate, rounded down


def estimate(replicas: int, ticks: int) -> str:
    """``1.2e12 replica-ticks (about 16h40m)`` — the sentence fragment that names the cost."""
    work = replicas * ticks
    return f"{work:.3g} replica-ticks (about {format_duration(work / REPLICA_TICKS_PER_S * 1000)})"
