"""`spark-pipelines run` on the repository's spec builds the same broker_metrics as `analyze`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from replicaflow.pipeline.runner import OUTPUTS, analyze
from tests.pipeline.tele import table_rows
from tests.pipeline.test_steps import reassigning, ties

SDP = Path(__file__).resolve().parents[2] / "replicaflow" / "pipeline" / "sdp"
BIN = Path(sys.executable).parent


@pytest.mark.slow
def test_spark_pipelines_run_matches_analyze(spark, tmp_path):
    dirs = [ties().write(tmp_path / "ties"), reassigning("2.5").write(tmp_path / "v25")]
    project = tmp_path / "project"
    shutil.copytree(SDP, project, ignore=shutil.ignore_patterns("__pycache__", "spark-warehouse", "pipeline-storage"))
    env = {**os.environ, "REPLICAFLOW_TELEMETRY": ",".join(str(d) for d in dirs), "PYSPARK_PYTHON": sys.executable,
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(BIN / "spark-pipelines"), "run", "--spec", str(project / "spark-pipeline.yml")],
                          cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    analyze(dirs, tmp_path / "out", spark=spark)
    warehouse = project / "spark-warehouse"
    for name in OUTPUTS:
        assert table_rows(warehouse / name) == table_rows(tmp_path / "out" / "analysis" / name), name
    assert len(table_rows(warehouse / "broker_metrics")) > 100
    assert {r["status"] for r in pq.read_table(warehouse / "reassignments").to_pylist()} >= {"completed"}
