"""Room for Spark's own scratch files: shuffle files, spills and cached blocks, which the driver of a local run writes
to ``SPARK_LOCAL_DIRS``, else ``spark.local.dir``, else the JVM's temporary folder (``/tmp``), never to the outputs.

A full scratch folder is refused before the first job (``scratch_short``) and, where it fills during a job, named
from the job's failure (``java_scratch_full``): one sentence with the folder and what to do, exit 2, no output
(docs/pipeline.md, "Outputs").
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from pyspark.sql import SparkSession

from replicaflow.model.units import format_bytes
from replicaflow.pipeline.session import HADOOP_FS_ERROR, java_texts, refused_errno

# An analysis's shuffles are of the order of its input, and Spark's block manager alone makes 64 subfolders in each
# scratch folder (spark.diskStore.subDirectories), a 4 KiB block each on most file systems: a folder with less room
# than the input, within these bounds, would fail mid-way, after the JVM and the first stages have cost their seconds.
SCRATCH_NEED_MIN_BYTES = 2**20
SCRATCH_NEED_MAX_BYTES = 64 * 2**20


def input_bytes(paths: Iterable[Path | str]) -> int:
    """The bytes of every file under ``paths`` (files or folders, through links: a telemetry folder may link its
    tables)."""
    total = 0
    for path in map(Path, paths):
        found = [(str(path.parent), [], [path.name])] if path.is_file() else os.walk(path, followlinks=True)
        for root, _, files in found:
            for name in files:
                try:
                    total += os.stat(os.path.join(root, name)).st_size
                except OSError:
                    continue
    return total


def scratch_dirs(spark: SparkSession) -> list[str]:
    """The folders as Spark's block manager chooses them (Utils.getConfiguredLocalDirs); empty when the JVM cannot
    say."""
    try:
        return list(spark._jvm.org.apache.spark.util.Utils.getConfiguredLocalDirs(spark._jsc.sc().conf()))
    except Exception:  # noqa: BLE001 -- a dead JVM gateway raises anything
        return []


def _sentence(where: list[str], why: str) -> str:
    shown = "in " + ", ".join(where) if where else "in SPARK_LOCAL_DIRS"
    return f"no room for Spark's scratch files {shown} ({why}): set SPARK_LOCAL_DIRS to a folder on a disk with room"


def scratch_short(spark: SparkSession, input_bytes: int) -> str | None:
    """``short_of_room`` for the scratch folders of a local run, checked before its first job; None on a cluster,
    whose executors write to their own disks."""
    if not spark.sparkContext.master.startswith("local"):
        return None
    free = {}
    for folder in scratch_dirs(spark):
        try:
            free[folder] = shutil.disk_usage(folder).free
        except OSError:  # not made yet: Spark makes it
            continue
    return short_of_room(free, input_bytes)


def short_of_room(free_bytes: Mapping[str, int], input_bytes: int) -> str | None:
    """The sentence for the folders (of ``free_bytes``: folder → bytes free) with less room than an analysis of
    ``input_bytes`` needs at least: the input, within ``SCRATCH_NEED_MIN_BYTES``–``SCRATCH_NEED_MAX_BYTES``; None
    where every folder has that. Spark spreads its files over all of them, so one full folder fails a job."""
    need = min(max(input_bytes, SCRATCH_NEED_MIN_BYTES), SCRATCH_NEED_MAX_BYTES)
    short = {folder: free for folder, free in free_bytes.items() if free < need}
    if not short:
        return None
    return _sentence(list(short), f"{format_bytes(min(short.values()))} free, at least {format_bytes(need)} needed")


def java_scratch_full(exc: BaseException, spark: SparkSession) -> str | None:
    """The sentence for a Spark job that failed because a scratch folder filled: an ``IOException: No space left on
    device`` (or a quota) in the exception's causes or suppressed failures, not under Hadoop's FSError
    (``session.java_no_room``, the outputs'). Spark said `Job aborted due to stage failure: Task 0 in stage 4.0
    failed 1 times, …` or `[STAGE_MATERIALIZATION_MULTIPLE_FAILURES] …`, the folder nowhere. None for any other
    failure."""
    texts = java_texts(exc)
    if any(HADOOP_FS_ERROR in t for t in texts):
        return None
    room = refused_errno(texts)
    return None if room is None else _sentence(scratch_dirs(spark), os.strerror(room))
