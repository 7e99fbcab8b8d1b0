"""`replicaflow run` through the CLI: its progress says what it waits for."""

from __future__ import annotations

from tests.test_logs_only_garbage import STORY, cli, progress_lines


def test_run_says_it_waits_for_spark_before_it_does(tmp_path):
    """`replicaflow run` starts the JVM while the scenario runs, then waits for it: that wait (up to a few
    seconds) is the "starting Spark" step, logged before the analysis's own steps, not a silence."""
    (tmp_path / "s.yaml").write_text(STORY)
    run = cli("run", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    steps = [s for s in progress_lines(run.stderr) if s.startswith("analyze: ")]
    assert steps[:2] == ["analyze: starting Spark", "analyze: reading telemetry"], run.stderr
    assert (tmp_path / "out" / "report.html").is_file()
