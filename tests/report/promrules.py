"""`promtool test rules` input from metrics.om, with the alerts expected from the partition intervals.

The input series are the file's samples on the scrape grid (``stale`` where a broker was not
scraped after it had been, as Prometheus marks a failed scrape). The expected alerts are derived
independently, from ``analysis/partition_state``: a broker's condition holds at T when it leads a
partition with the flag at T; the alert fires at T when the condition has held at every
evaluation since ``T - for`` (evaluation interval = scrape interval, as Strimzi's 10 s).
"""

from __future__ import annotations

import pandas as pd

from replicaflow.model.metrics import BY_JMX
from replicaflow.report.alerts import BY_NAME
from replicaflow.report.openmetrics import family_name
from tests.report.omparse import parse

FOR_MS = 10_000
RULES = {  # alert → (metric family, partition_state flag, per broker?): the rules derivable from intervals alone
    "UnderReplicatedPartitions": ("kafka_server_replicamanager_underreplicatedpartitions", "urp", True),
    "UnderMinIsrPartitionCount": ("kafka_server_replicamanager_underminisrpartitioncount", "under_min_isr", True),
    "AtMinIsrPartitionCount": ("kafka_server_replicamanager_atminisrpartitioncount", "at_min_isr", True),
    "OfflinePartitions": ("kafka_controller_kafkacontroller_offlinepartitionscount", "offline", False),
}
DESCRIPTION = {  # written out again here, so a change of the product's text is seen by the tests
    "UnderReplicatedPartitions": "There are {v} under replicated partitions on broker {b} of {c}",
    "UnderMinIsrPartitionCount": "There are {v} partitions under the min ISR on broker {b} of {c}",
    "AtMinIsrPartitionCount": "There are {v} partitions at the min ISR on broker {b} of {c}: one more replica "
                              "lost stops acks=all producers",
    "OfflinePartitions": "There are {v} partitions without a leader in {c}",
}


def _q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def input_series(om_text: str, grid: list[int], cluster: str | None = None) -> list[str]:
    _, series = parse(om_text)
    out = []
    for (name, labels), points in series.items():
        if cluster is not None and dict(labels).get("cluster") != cluster:
            continue
        values = dict(points)
        seen, vals = False, []
        for t in grid:
            if t in values:
                seen = True
                vals.append(f"{values[t]:g}")
            else:
                vals.append("stale" if seen else "_")
        sel = name + "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}"
        out.append(f"      - series: {_q(sel)}\n        values: {_q(' '.join(vals))}")
    return out


def condition(state: pd.DataFrame, flag: str, t: int) -> pd.DataFrame:
    """Partitions with the flag at T (intervals are [from_ms, to_ms))."""
    at = state[(state["from_ms"] <= t) & (state["to_ms"].isna() | (state["to_ms"] > t))]
    return at[at[flag].astype(bool)]


def expected_alerts(state: pd.DataFrame, grid: list[int], live: dict[int, set[int]], cluster: str,
                    alerts: tuple[str, ...]) -> dict[int, list[dict]]:
    """{ts_ms: firing alerts} from the partition intervals alone."""
    active: dict[tuple, int] = {}
    out: dict[int, list[dict]] = {}
    for t in grid:
        firing = []
        now: dict[tuple, int] = {}
        for alert in alerts:
            _, flag, per_broker = RULES[alert]
            rows = condition(state, flag, t)
            if per_broker:
                for b, n in rows.groupby("leader").size().items():
                    if int(b) in live.get(t, set()):
                        now[(alert, int(b))] = int(n)
            elif len(rows) and live.get(t):
                now[(alert, None)] = len(rows)
        active = {k: active.get(k, t) for k in now}
        for (alert, b), n in sorted(now.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
            if t - active[(alert, b)] >= FOR_MS:
                labels = {"severity": "warning", "cluster": cluster}
                if b is not None:
                    labels |= {"broker": str(b)}
                firing.append({"alert": alert, "labels": labels,
                               "description": DESCRIPTION[alert].format(v=n, b=b, c=cluster)})
        out[t] = firing
    return out


def expected_for(analysis, cluster: str, alerts: tuple[str, ...] = tuple(RULES)) -> tuple[list[int], dict]:
    """(scrape grid, expected alerts) of one cluster of a report Analysis: live brokers from broker_metrics."""
    grid = analysis.grid(cluster)
    bm = analysis.of("broker_metrics", cluster)
    live = {int(t): set(int(b) for b in g["broker"]) for t, g in bm.groupby("ts_ms")}
    exported = {family_name(BY_JMX[n]) for n in bm["name"].unique() if n in BY_JMX}
    alerts = tuple(a for a in alerts if RULES[a][0] in exported)  # a release without the gauge cannot alert on it
    return grid, expected_alerts(analysis.of("partition_state", cluster), grid, live, cluster, alerts)


def rules_test(rule_file: str, om_text: str, grid: list[int], expected: dict[int, list[dict]],
               alerts: tuple[str, ...], cluster: str | None = None) -> str:
    step = grid[1] - grid[0]
    lines = ["rule_files:", f"  - {rule_file}", f"evaluation_interval: {step // 1000}s", "tests:",
             f"  - interval: {step // 1000}s", "    input_series:"]
    lines += input_series(om_text, grid, cluster)
    lines.append("    alert_rule_test:")
    for t, firing in expected.items():
        for alert in alerts:
            lines.append(f"      - eval_time: {(t - grid[0]) // 1000}s\n        alertname: {alert}")
            mine = [f for f in firing if f["alert"] == alert]
            if not mine:
                lines.append("        exp_alerts: []")
                continue
            lines.append("        exp_alerts:")
            for f in mine:
                lines.append("          - exp_labels:")
                lines += [f"              {k}: {_q(v)}" for k, v in f["labels"].items()]
                lines.append("            exp_annotations:")
                lines.append(f"              summary: {_q(BY_NAME[alert].summary)}")
                lines.append(f"              description: {_q(f['description'])}")
    return "\n".join(lines) + "\n"
