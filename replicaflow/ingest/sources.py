"""What `analyze --logs` is given, checked before Spark starts: log files per cluster, snapshots, options.

A fleet is one run over several clusters' logs: with ``cluster_from_path`` a file's cluster is the
folder that holds its ``broker-N`` folder (a folder named ``logs`` in between is skipped), so
``logs/<cluster>/broker-1/server.log`` and ``<cluster>/logs/broker-1/server.log`` (what ``simulate
--logs`` writes) both name ``<cluster>``; a snapshot file's cluster is its folder (``snapshots`` skipped).
Every problem is one sentence naming the option or the file (docs/real-cluster.md).
"""

from __future__ import annotations

import os
import re
import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from replicaflow.errors import ReplicaflowError, quote
from replicaflow.ingest.log_dirs_command import ReplicaLogDir, read_log_dirs
from replicaflow.ingest.log_files import resolve_paths
from replicaflow.ingest.topic_command import TopicsSnapshot, read_topic_describe
from replicaflow.model.configs import MAX_MIN_ISR
from replicaflow.model.topic import cluster_name_problem
from replicaflow.model.units import format_duration, parse_duration_ms
from replicaflow.model.version import written_release
from replicaflow.telemetry.checks import MAX_MS
from replicaflow.telemetry.outputs import SNAPSHOTS

_BROKER_DIR = re.compile(r"^(?:broker|kafka)[-_]?\d+$", re.IGNORECASE)
_SKIPPED = {"logs", "log", SNAPSHOTS}  # folders below a cluster's, not its name (simulate --logs writes both)
ANCHORS = ("start", "end")
FIRST_RELEASE_MS = 1_293_840_000_000  # 2011-01-01: no Kafka broker logged before
# the recomputed gauges' grid starts at the first event rounded down to the interval: 400d began it in 1970
MAX_SCRAPE_INTERVAL_MS = 3_600_000


@dataclass(frozen=True)
class ClusterInputs:
    """One cluster's inputs: its log files, the describe snapshot (with where it was read) and log-dirs."""

    cluster: str
    logs: tuple[str, ...]
    topics: TopicsSnapshot | None = None
    topics_path: str | None = None
    log_dirs: tuple[ReplicaLogDir, ...] | None = None


@dataclass(frozen=True)
class RebuildOptions:
    """How the logs are read: ``kafka_version`` None infers it from the log forms; ``topics_at`` says
    when the describe snapshot was taken ('start' or 'end' of the logged period, or epoch ms)."""

    kafka_version: str | None = None
    scrape_interval_ms: int = 10_000
    topics_at: str | int = "end"
    log_timezone: str | None = None
    min_insync_replicas: int | None = None


def cluster_of_path(path: str) -> str | None:
    """The cluster a log file belongs to: the folder above its ``broker-N`` folder (``logs`` skipped)."""
    parts = Path(path).parts
    for i in range(len(parts) - 2, 0, -1):
        if _BROKER_DIR.match(parts[i]):
            above = [p for p in parts[:i] if p not in ("/", "")]
            while above and above[-1].lower() in _SKIPPED:
                above.pop()
            return above[-1] if above else None
    return None


def _snapshot_cluster(path: Path) -> str | None:
    parts = [p for p in Path(os.path.abspath(path)).parent.parts if p != "/"]  # a link keeps the name given
    while parts and parts[-1].lower() in _SKIPPED:
        parts.pop()
    return parts[-1] if parts else None


def options(kafka_version: str | None, scrape_interval: str, topics_at: str, log_timezone: str | None,
            min_insync_replicas: int | None) -> RebuildOptions:
    """The options checked: each problem is one sentence naming the option."""
    if kafka_version is not None:
        try:
            written_release(kafka_version)
        except ReplicaflowError as exc:
            raise ReplicaflowError(f"--kafka-version: {exc}") from None
    try:
        interval = parse_duration_ms(scrape_interval)
    except (ValueError, ReplicaflowError) as exc:
        raise ReplicaflowError(f"--scrape-interval: {exc}") from None
    if interval <= 0:
        raise ReplicaflowError(f"--scrape-interval: expected a positive duration like 30s, found {quote(scrape_interval)}")
    if interval > MAX_SCRAPE_INTERVAL_MS:
        raise ReplicaflowError(f"--scrape-interval: at most {format_duration(MAX_SCRAPE_INTERVAL_MS)} (the grid starts at "
                               f"the first logged event rounded down to it), found {quote(scrape_interval)}")
    at: str | int = topics_at
    if topics_at not in ANCHORS:
        at = int(topics_at) if re.fullmatch(r"\d{1,16}", topics_at) else -1
        if not FIRST_RELEASE_MS <= at <= MAX_MS:
            # epoch seconds (10 digits today) read as ms are January 1970: the snapshot silently became 'start'
            seconds = " (epoch seconds? give milliseconds)" if FIRST_RELEASE_MS <= at * 1000 <= MAX_MS else ""
            raise ReplicaflowError("--topics-at: expected 'start', 'end' or epoch milliseconds from 2011 (Kafka's "
                                   f"first release) to 9999, found {quote(topics_at)}{seconds}")
    if log_timezone is not None:
        try:
            zoneinfo.ZoneInfo(log_timezone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ReplicaflowError(f"--log-timezone: unknown time zone {quote(log_timezone)} "
                                   "(an IANA name like Europe/Berlin, or UTC)") from None
    if min_insync_replicas is not None and not 1 <= min_insync_replicas <= MAX_MIN_ISR:
        raise ReplicaflowError(f"--min-insync-replicas: expected at least 1 and at most {MAX_MIN_ISR:,}, "
                               f"found {min_insync_replicas}")
    version = None if kafka_version is None else kafka_version.strip()  # ' 3.7' was written to _meta.json as given
    return RebuildOptions(version, interval, at, log_timezone, min_insync_replicas)


def plan(logs: Sequence[str], topics: Sequence[str] = (), log_dirs: Sequence[str] = (), cluster: str | None = None,
         cluster_from_path: bool = False) -> list[ClusterInputs]:
    """Every cluster's inputs, read and checked without Spark (describe and log-dirs parsed here)."""
    if cluster is not None and cluster_from_path:
        raise ReplicaflowError("--cluster and --cluster-from-path: give one of them")
    if cluster is not None and cluster_name_problem(cluster):
        raise ReplicaflowError(f"--cluster: {cluster_name_problem(cluster)}, found {quote(cluster)}")
    files = resolve_paths(list(logs))
    if not topics and not log_dirs and all(os.path.isfile(f) and os.path.getsize(f) == 0 for f in files):
        raise ReplicaflowError(f"--logs: {'the file given is' if len(files) == 1 else f'the {len(files):,} files given are all'} empty; nothing to analyze "
                               "(docs/logs.md)")
    by_cluster: dict[str, list[str]] = {}
    for f in files:
        name = cluster_of_path(f) if cluster_from_path else (cluster or "cluster")
        if name is None:
            raise ReplicaflowError(f"--cluster-from-path: {f} is not below a broker-N folder inside a cluster's "
                                   "folder (logs/<cluster>/broker-N/...)")
        if cluster_from_path and cluster_name_problem(name):
            raise ReplicaflowError(f"--cluster-from-path: {quote(f)}: {cluster_name_problem(name)}, "
                                   f"found {quote(name)}")
        by_cluster.setdefault(name, []).append(f)
    snaps = _per_cluster("--topics", topics, by_cluster, cluster_from_path, read_topic_describe)
    dirs = _per_cluster("--log-dirs", log_dirs, by_cluster, cluster_from_path, read_log_dirs)
    return [ClusterInputs(name, tuple(fs), *(snaps.get(name) or (None, None)),
                          tuple(dirs[name][0]) if name in dirs else None)
            for name, fs in sorted(by_cluster.items())]


def _per_cluster(option: str, paths: Sequence[str], by_cluster: dict[str, list[str]], from_path: bool, reader):
    """{cluster: (parsed, path)} of the snapshot files of one option."""
    out: dict = {}
    for text in paths:
        path = Path(text)
        if not text.strip():
            raise ReplicaflowError(f"{option}: expected a file, found an empty path")
        if not path.is_file():
            raise ReplicaflowError(f"{option}: {text} does not exist" if not path.exists()
                                   else f"{option}: {text} is not a file")
        name = _snapshot_cluster(path) if from_path else next(iter(by_cluster))
        if name not in by_cluster:
            raise ReplicaflowError(f"{option}: {text} belongs to cluster {quote(str(name))} (its folder), which has no "
                                   f"logs; clusters with logs: {', '.join(sorted(by_cluster))}")
        if name in out and Path(out[name][1]).resolve() == path.resolve():
            raise ReplicaflowError(f"{option}: {text} is given twice; give it once")
        if name in out:
            raise ReplicaflowError(f"{option}: two files for cluster {quote(name)}: {out[name][1]} and {text}")
        out[name] = (reader(path), str(path))
    return out
