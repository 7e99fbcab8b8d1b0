"""Room for Spark's scratch files (pipeline/scratch.py): the check before the first job, and the sentence for a
folder that fills during one, from real Java exceptions of the session's JVM."""

from __future__ import annotations

from pathlib import Path

from py4j.protocol import Py4JJavaError

from replicaflow.pipeline.scratch import (
    SCRATCH_NEED_MAX_BYTES,
    SCRATCH_NEED_MIN_BYTES,
    input_bytes,
    java_scratch_full,
    scratch_dirs,
    scratch_short,
    short_of_room,
)

TAIL = "set SPARK_LOCAL_DIRS to a folder on a disk with room"


def test_a_folder_needs_the_input_within_one_and_64_mib():
    """Spark's DiskBlockManager makes 64 subfolders per scratch folder before any shuffle, so even a tiny analysis
    needs 1 MiB; above that its shuffles grow with its input, counted up to 64 MiB. Every folder counts: Spark
    spreads its files over all of them (DiskBlockManager.getFile hashes each name to one)."""
    assert SCRATCH_NEED_MIN_BYTES == 1_048_576 and SCRATCH_NEED_MAX_BYTES == 67_108_864
    assert short_of_room({"/a": 12_288}, 5_000) == f"no room for Spark's scratch files in /a (12.3KB free, at least " \
                                                   f"1.05MB needed): {TAIL}"
    assert short_of_room({"/a": 1_048_576}, 5_000) is None
    assert short_of_room({"/a": 9_999_999}, 10_000_000) == f"no room for Spark's scratch files in /a (10MB free, " \
                                                           f"at least 10MB needed): {TAIL}"
    assert short_of_room({"/a": 10_000_000}, 10_000_000) is None
    assert short_of_room({"/a": 67_108_864}, 10**12) is None
    assert short_of_room({"/a": 67_108_863, "/b": 10**12, "/c": 2_000_000}, 10**12) == (
        f"no room for Spark's scratch files in /a, /c (2MB free, at least 67.1MB needed): {TAIL}")
    assert short_of_room({}, 10**12) is None


def test_input_bytes_counts_files_through_links(tmp_path):
    """A simulation's telemetry folder links its tables (telemetry/outputs.py): their files count, folders not."""
    real = tmp_path / "real" / "t"
    real.mkdir(parents=True)
    (real / "part-0.parquet").write_bytes(b"x" * 1000)
    (tmp_path / "real" / "_meta.json").write_bytes(b"y" * 10)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert input_bytes([tmp_path / "link"]) == 1010
    assert input_bytes([real / "part-0.parquet", str(tmp_path / "link" / "t")]) == 2000
    assert input_bytes([tmp_path / "missing"]) == 0


def test_the_sessions_scratch_folders_are_sparks_own_choice(spark):
    """Utils.getConfiguredLocalDirs: SPARK_LOCAL_DIRS, else spark.local.dir, else java.io.tmpdir (the test session
    sets none of them). /tmp has room for a small input, so the check passes."""
    dirs = scratch_dirs(spark)
    assert dirs and all(Path(d).is_dir() for d in dirs)
    assert scratch_short(spark, 5_000) is None


def test_a_scratch_folder_that_filled_during_a_job_is_named(spark):
    """A task's IOException under SparkException (DAGScheduler.abortStage: `Job aborted due to stage failure`), or as
    a suppressed failure of `[STAGE_MATERIALIZATION_MULTIPLE_FAILURES]` (AdaptiveSparkPlanExec.cleanUpAndThrow
    Exception), is the scratch folders' sentence; another failure, or a disk quota under another message, is not
    this one's or is named by its errno."""
    jvm = spark._jvm
    where = ", ".join(scratch_dirs(spark))

    def error(java) -> Py4JJavaError:
        return Py4JJavaError("An error occurred while calling o42.parquet.\n", java)

    full = jvm.java.io.IOException("No space left on device")
    aborted = jvm.org.apache.spark.SparkException("Job aborted due to stage failure: Task 0 in stage 4.0 failed 1 "
                                                  "times, most recent failure: Lost task 0.0", full)
    assert java_scratch_full(error(aborted), spark) == (
        f"no room for Spark's scratch files in {where} (No space left on device): {TAIL}")
    materialized = jvm.org.apache.spark.SparkException("[STAGE_MATERIALIZATION_MULTIPLE_FAILURES] Multiple failures")
    materialized.addSuppressed(jvm.java.lang.RuntimeException("other stage"))
    materialized.addSuppressed(aborted)
    assert java_scratch_full(error(materialized), spark) == (
        f"no room for Spark's scratch files in {where} (No space left on device): {TAIL}")
    quota = jvm.java.io.IOException("Disk quota exceeded")
    assert java_scratch_full(error(jvm.org.apache.spark.SparkException("Job aborted", quota)), spark) == (
        f"no room for Spark's scratch files in {where} (Disk quota exceeded): {TAIL}")
    other = jvm.org.apache.spark.SparkException("Job aborted", jvm.java.io.IOException("Connection reset"))
    assert java_scratch_full(error(other), spark) is None
    assert java_scratch_full(ValueError("no Java here"), spark) is None
