"""What the tool wrote, per generation (``.manifest.json``): a file a user puts into one of the tool's
outputs is named instead of lost, and a file system that refuses is one sentence (telemetry/outputs.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.telemetry.outputs import ANALYSIS, HOME, MANIFEST, REPORT, SIMULATION, Commit
from tests.telemetry.test_outputs import BIN, SCENARIO


def simulate_like(out: Path, version: str) -> None:
    with Commit(out, writes=SIMULATION, drops=ANALYSIS + REPORT).staged() as stage:
        for name in SIMULATION:
            (stage / name / "t").mkdir(parents=True)
            (stage / name / "t" / "part-0.parquet").write_text(f"{name} {version}")


def analyze_like(out: Path, version: str) -> None:
    with Commit(out, writes=ANALYSIS, drops=REPORT).staged() as stage:
        (stage / "analysis").mkdir()
        (stage / "analysis" / "_summary.json").write_text(version)


def report_like(out: Path, version: str) -> None:
    with Commit(out, writes=REPORT).staged() as stage:
        for name in REPORT:
            (stage / name).write_text(version)


def test_the_manifest_lists_what_the_tool_wrote_and_is_not_an_output(tmp_path):
    simulate_like(tmp_path, "v1")
    analyze_like(tmp_path, "a1")
    written = json.loads((tmp_path / HOME / "current" / MANIFEST).read_text())
    assert written == {"analysis": ["_summary.json"], "logs": ["t/part-0.parquet"], "snapshots": ["t/part-0.parquet"],
                       "telemetry": ["t/part-0.parquet"], "truth": ["t/part-0.parquet"]}
    assert not (tmp_path / MANIFEST).exists() and not (tmp_path / MANIFEST).is_symlink()


@pytest.mark.parametrize(("put", "command"), [
    ("telemetry/scenario.yaml", simulate_like),   # simulate replaces telemetry/
    ("logs/kafka-0/server.log", simulate_like),
    ("analysis/notes.md", simulate_like),         # simulate drops the analysis of the previous telemetry
    ("analysis/t/notes.md", analyze_like),
])
def test_a_file_put_into_an_output_is_named_before_any_work_and_kept(tmp_path, put, command):
    simulate_like(tmp_path, "v1")
    analyze_like(tmp_path, "a1")
    user = tmp_path / put
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("mine")
    before = sorted(p.name for p in (tmp_path / HOME).iterdir())
    with pytest.raises(ReplicaflowError, match=rf"^{user}: not written by replicaflow; move it out of "):
        command(tmp_path, "v2")
    assert user.read_text() == "mine" and sorted(p.name for p in (tmp_path / HOME).iterdir()) == before


def test_outputs_a_command_keeps_are_carried_with_the_users_file_in_them(tmp_path):
    simulate_like(tmp_path, "v1")
    (tmp_path / "telemetry" / "scenario.yaml").write_text("mine")
    analyze_like(tmp_path, "a1")
    report_like(tmp_path, "r1")
    analyze_like(tmp_path, "a2")
    assert (tmp_path / "telemetry" / "scenario.yaml").read_text() == "mine"
    assert (tmp_path / "analysis" / "_summary.json").read_text() == "a2"
    written = json.loads((tmp_path / HOME / "current" / MANIFEST).read_text())
    assert "scenario.yaml" not in written["telemetry"]  # still the user's: the next simulate names it
    with pytest.raises(ReplicaflowError, match=r"telemetry/scenario.yaml: not written by replicaflow"):
        simulate_like(tmp_path, "v2")


def test_a_generation_without_a_manifest_is_taken_as_the_tools(tmp_path):
    simulate_like(tmp_path, "v1")
    (tmp_path / HOME / "current" / MANIFEST).unlink()
    simulate_like(tmp_path, "v2")
    assert (tmp_path / "truth" / "t" / "part-0.parquet").read_text() == "truth v2"


def test_a_refusing_file_system_is_one_sentence(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ReplicaflowError, match=rf"^{tmp_path / 'afile'}: is a file, so --out .*afile/x cannot be"):
        simulate_like(tmp_path / "afile" / "x", "v1")
    if os.geteuid() == 0:  # root writes through permission bits; /sys refuses even root
        target = Path("/sys/replicaflow-test-out")
    else:
        (tmp_path / "ro").mkdir()
        (tmp_path / "ro").chmod(0o555)
        target = tmp_path / "ro" / "out"
    with pytest.raises(ReplicaflowError, match=r"(cannot write the output \(Operation not permitted\)|"
                                               r"cannot write here \(permission denied\))$"):
        simulate_like(target, "v1")


def _full_at(kib: int):
    """A file system with room for ``kib`` KiB per file (RLIMIT_FSIZE: a write past it is EFBIG, as a full disk's
    is ENOSPC; Python ignores SIGXFSZ), for the command's process alone."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (kib * 1024, resource.RLIM_INFINITY))


def _cli_limited(kib: int, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN), "-q", *map(str, args)], capture_output=True, text=True, timeout=300,
                          preexec_fn=_full_at(kib))


def test_a_disk_full_while_simulate_writes_is_one_sentence_and_no_output(tmp_path):
    """pyarrow's OSError (errno 27, no file named) escaped as a traceback with exit 1; the staging folder was
    already removed (Commit.staged). Now one sentence naming --out, exit 2, and no folder left."""
    (tmp_path / "s.yaml").write_text(SCENARIO.format(duration="30m").replace("partitions: 3,", "partitions: 30,"))
    done = _cli_limited(16, "simulate", tmp_path / "s.yaml", "--out", tmp_path / "new" / "out")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == f"error: {tmp_path / 'new' / 'out'}: cannot write the output (File too large)"
    assert not (tmp_path / "new").exists()


def test_a_report_file_that_cannot_be_written_rolls_back_the_others_and_is_named_where_it_would_be(tmp_path):
    """metrics.om and summary.json fit, report.html (megabytes: plotly inside) does not: the previous report
    stays whole, no new file of it appears, and the sentence names DIR/report.html -- it named the staging
    folder's file (``DIR/.replicaflow/gen-….tmp/report.html``), removed by then."""
    from tests.report.tiny import write_analysis

    write_analysis(tmp_path)
    assert _cli_limited(64 * 1024, "report", tmp_path).returncode == 0
    before = {name: (tmp_path / name).read_bytes() for name in REPORT}
    done = _cli_limited(1024, "report", tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == f"error: {tmp_path / 'report.html'}: cannot write (File too large)"
    assert {name: (tmp_path / name).read_bytes() for name in REPORT} == before
    assert [p.name for p in (tmp_path / HOME).iterdir() if p.name != "current"] == \
        [os.readlink(tmp_path / HOME / "current")]


def _full_disk_available() -> bool:
    """A real full disk without root: a small tmpfs mounted in a user namespace of our own (``unshare -rm``),
    where the kernel allows unprivileged user namespaces."""
    probe = "mount -t tmpfs -o size=16k tmpfs /mnt 2>/dev/null || mount -t tmpfs -o size=16k tmpfs /tmp"
    try:
        return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", probe],
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


FULL_DISK = pytest.mark.skipif(not _full_disk_available(),
                               reason="needs unprivileged user namespaces (unshare -rm) for a tmpfs")


def _on_a_full_disk(disk: Path, kib: int, *args, scratch: bool = False) -> subprocess.CompletedProcess:
    """``replicaflow -q ARGS`` with ``disk`` a ``kib`` KiB tmpfs holding the user's ``notes.txt`` (``scratch``: as
    Spark's scratch folder, ``SPARK_LOCAL_DIRS``); prints the exit status, then what is left on that disk and the
    notes (the mount is gone once the namespace ends)."""
    disk.mkdir()
    command = (f'SPARK_LOCAL_DIRS="{disk}" ' if scratch else "") + " ".join(f'"{a}"' for a in (BIN, "-q", *args))
    script = (f'mount -t tmpfs -o size={kib}k tmpfs "{disk}" && echo mine > "{disk}/notes.txt" || exit 99; '
              f'{command}; echo "rc=$?"; ls -A "{disk}"; cat "{disk}/notes.txt"')
    return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                          capture_output=True, text=True, timeout=600)


@FULL_DISK
def test_a_disk_full_while_spark_writes_the_analysis_says_so_and_names_the_folder(tmp_path):
    """A 100 KiB tmpfs as the output's disk, the analysis of 2 minutes of 3 brokers being about 200 KiB: Spark's
    write fails with ``ExecutionException: Boxed Exception`` caused by Hadoop's ``FSError: java.io.IOException: No
    space left on device``, which read "analyze: Spark failed reading …: 'java.util.concurrent.ExecutionException:
    Boxed Exception'". Now the sentence says the disk was full and names OUT/analysis (not the staging folder),
    exit 2; the output folder the command created is gone and the user's file on that disk is untouched."""
    (tmp_path / "s.yaml").write_text(SCENARIO.format(duration="2m"))
    assert subprocess.run([str(BIN), "-q", "simulate", tmp_path / "s.yaml", "--out", tmp_path / "sim"],
                          capture_output=True, timeout=300).returncode == 0
    disk = tmp_path / "disk"
    done = _on_a_full_disk(disk, 100, "analyze", tmp_path / "sim", "--out", disk / "out")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == f"error: {disk}/out/analysis: cannot write the output (No space left on device)"
    assert done.stdout.split() == ["rc=2", "notes.txt", "mine"]


@FULL_DISK
def test_a_disk_full_while_spark_writes_telemetry_rebuilt_from_logs_names_that_folder(tmp_path):
    """`analyze --logs` alone writes the telemetry it rebuilt first: on a 24 KiB disk that write fails (Hadoop's
    ``FSError: java.io.IOException: No space left on device``, at the top or under ``[TASK_WRITE_FAILED]``), which
    read "--logs: Spark failed analyzing 7 log files of cluster cluster: 'org.apache.hadoop.fs.FSError: …'", not
    naming the folder."""
    (tmp_path / "s.yaml").write_text(SCENARIO.format(duration="2m"))
    assert subprocess.run([str(BIN), "-q", "simulate", tmp_path / "s.yaml", "--out", tmp_path / "sim", "--logs"],
                          capture_output=True, timeout=300).returncode == 0
    disk = tmp_path / "disk"
    done = _on_a_full_disk(disk, 24, "analyze", "--logs", tmp_path / "sim" / "logs", "--out", disk / "out")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == f"error: {disk}/out/telemetry: cannot write the output (No space left on device)"
    assert done.stdout.split() == ["rc=2", "notes.txt", "mine"]


@FULL_DISK
@pytest.mark.parametrize("logs", [False, True])
def test_no_room_for_sparks_scratch_files_says_so_and_names_the_folder(tmp_path, logs):
    """A 16 KiB tmpfs as Spark's scratch folder (``SPARK_LOCAL_DIRS``: shuffle files, spills), 12 KiB of it free:
    a stage failed with ``java.io.IOException: No space left on device`` under `Job aborted due to stage failure:
    Task 0 in stage 4.0 failed 1 times, …`, which read "analyze: Spark failed reading …: 'org.apache.spark
    .SparkException: Job aborted …' … (72 more characters)". Now the folder, with less room than any analysis needs
    (1 MiB), is refused before the first job (``pipeline.scratch.scratch_short``): the sentence names it and its room,
    exit 2, no output folder, the user's file on that disk untouched; the same for ``analyze --logs``."""
    (tmp_path / "s.yaml").write_text(SCENARIO.format(duration="2m"))
    assert subprocess.run([str(BIN), "-q", "simulate", tmp_path / "s.yaml", "--out", tmp_path / "sim",
                           *(["--logs"] if logs else [])], capture_output=True, timeout=300).returncode == 0
    disk = tmp_path / "scratch"
    done = _on_a_full_disk(disk, 16, "analyze", *(["--logs", tmp_path / "sim" / "logs"] if logs else [tmp_path / "sim"]),
                           "--out", tmp_path / "out", scratch=True)
    assert "Traceback" not in done.stderr, done.stderr
    step = "--logs" if logs else "analyze"
    assert done.stderr.strip() == (f"error: {step}: no room for Spark's scratch files in {disk} (12.3KB free, at least "
                                   "1.05MB needed): set SPARK_LOCAL_DIRS to a folder on a disk with room")
    # Spark's own blockmgr-*/spark-* folders there go with its JVM's shutdown hooks, which may still run
    listed = done.stdout.split()
    assert (listed[0], listed[-1]) == ("rc=2", "mine") and "notes.txt" in listed and not (tmp_path / "out").exists()
