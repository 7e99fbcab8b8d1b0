"""Replication and reassignment bytes per broker, against the throttle in force.

"Is the throttle what holds this move back?" is answered by putting a broker's fetch traffic next
to its quota: a line flat at the throttle says yes, a line far below it says look elsewhere (a dead
fetcher, the network, a broker down). The traffic comes from the byte meters of ``broker_metrics``
(JMX ``Count``, turned into bytes per second between consecutive scrapes of the broker, a restart
counted from 0); the throttle from the rate configs the run set (``telemetry/configs``).

KIP-73 throttles cap only the replicas listed in ``*.replication.throttled.replicas``, while the
meters count all replication traffic, so a broker may move more than its throttle; the chart says
so. KIP-542's reassignment rates are replicaflow's model of a proposal Kafka never shipped, and
are marked so wherever they appear.
"""

from __future__ import annotations

import pandas as pd

from replicaflow.model.configs import (
    FOLLOWER_REASSIGNMENT_RATE,
    FOLLOWER_REPLICATION_RATE,
    LEADER_REASSIGNMENT_RATE,
    LEADER_REPLICATION_RATE,
    REASSIGNMENT_RATES,
)
from replicaflow.model.metrics import BY_SHORT
from replicaflow.report.data import Analysis, broker_wide
from replicaflow.report.figures import HYPOTHETICAL, Chart, Marker, Series, line_chart, top_n
from replicaflow.report.inputs import Throttle, throttle_series

MB = 1e6
# (meter, throttle rate config, chart title, what the throttle covers)
PANELS = (
    ("ReplicationBytesInPerSec", FOLLOWER_REPLICATION_RATE, "Replication bytes in per broker (follower side)",
     "follower.replication.throttled.rate caps only the replicas listed in follower.replication.throttled.replicas"),
    ("ReplicationBytesOutPerSec", LEADER_REPLICATION_RATE, "Replication bytes out per broker (leader side)",
     "leader.replication.throttled.rate caps only the replicas listed in leader.replication.throttled.replicas"),
    ("ReassignmentBytesInPerSec", FOLLOWER_REASSIGNMENT_RATE, "Reassignment bytes in per broker (adding replicas)",
     f"follower.reassignment.throttled.rate (KIP-542) is {HYPOTHETICAL}"),
    ("ReassignmentBytesOutPerSec", LEADER_REASSIGNMENT_RATE, "Reassignment bytes out per broker (to adding replicas)",
     f"leader.reassignment.throttled.rate (KIP-542) is {HYPOTHETICAL}"),
)


def meter_rates(wide: pd.DataFrame, short: str, grid: list[int]) -> pd.DataFrame:
    """(scrape × broker) bytes per second of a meter: the increase since the broker's previous scrape over the
    time between them; a drop is a restart (the count starts from 0). NaN where the broker was not scraped."""
    rows = wide[["ts_ms", "broker", short]].dropna().sort_values(["broker", "ts_ms"])
    prev_v = rows.groupby("broker")[short].shift(1)
    prev_t = rows.groupby("broker")["ts_ms"].shift(1)
    delta = (rows[short] - prev_v).where(rows[short] >= prev_v, rows[short])
    rate = delta / ((rows["ts_ms"] - prev_t) / 1000.0)
    return rows.assign(rate=rate).set_index(["ts_ms", "broker"])["rate"].unstack("broker").reindex(grid)


def _limit_lines(changes: list[Throttle], name: str, brokers: list[int], grid: list[int]) -> list[Series]:
    """One dashed line per distinct throttle series, naming the brokers it applies to."""
    groups: dict[tuple, list[int]] = {}
    for b in brokers:
        ys = tuple(None if v is None else v / MB for v in throttle_series(changes, name, b, grid))
        if any(v is not None for v in ys):
            groups.setdefault(ys, []).append(b)
    hyp = " — hypothetical" if name.startswith(("leader.reassignment", "follower.reassignment")) else ""
    return [Series(f"throttle {name}{hyp} (broker {', '.join(map(str, bs))})", list(ys), width=2.5,
                   dash="dash", color="#24292f", emphasis=True) for ys, bs in groups.items()]


def traffic_charts(analysis: Analysis, cluster: str, prefix: str, changes: list[Throttle],
                   markers: list[Marker]) -> list[Chart]:
    """The byte-meter panels the cluster's release has, each with its throttle line(s)."""
    wide = broker_wide(analysis, cluster)
    grid = analysis.grid(cluster)
    out = []
    for short, rate_name, title, covers in PANELS:
        if short not in wide.columns or wide.empty:
            continue
        per = meter_rates(wide, short, grid)
        brokers = [int(b) for b in per.columns]
        lines = [Series(f"broker {b}", [None if pd.isna(v) else float(v) / MB for v in per[b]]) for b in per.columns]
        limits = _limit_lines(changes, rate_name, brokers, grid)
        chart = line_chart(f"{prefix}-traffic-{short}", title, "bytes/s", grid,
                           top_n(lines, unit=" MB/s") + limits, markers, unit="MB/s",
                           what=f"{title} ({BY_SHORT[short].short})")
        if chart.drawn and limits:
            chart.notes.append(covers)
        elif chart.drawn and rate_name in REASSIGNMENT_RATES:
            chart.notes.append("no reassignment-only throttle: Kafka has none (KIP-542's rates were never shipped); "
                               "KIP-73 throttles show on the replication charts")
        elif chart.drawn:
            chart.notes.append(f"no {rate_name} was set in this run")
        out.append(chart)
    return out
