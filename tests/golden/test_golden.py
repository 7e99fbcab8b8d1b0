"""Golden outputs: the simulator's files and the analysis rows of fifteen scenarios, pinned by sha256.

Pinned before the simulator was cut into one module per Kafka concept (issue 10), so that a
refactoring that claims to change no output byte can be checked: every file under ``telemetry/``,
``truth/`` and ``logs/`` of the ten KIP stories and of the extra scenarios in ``scenarios/`` here
(throttles, KIP-542 configs, 0.8.2, fetcher failures, reassignment cancel + AlterPartition delay),
simulated with ``--logs``, and the sorted rows of every ``analysis/`` table, logs included.

Parquet files are hashed by content (schema, then every row in file order) rather than by raw
bytes, so a pyarrow patch release that changes the footer's ``created_by`` does not count as a
change; text files (logs, ``_meta.json``) by raw bytes. A change that is meant to alter outputs
regenerates the pins with ``python tests/golden/test_golden.py --regen`` and says why in its commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PINS = HERE / "golden.json"
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml")) + sorted((HERE / "scenarios").glob("*.yaml"))


def _canon(value):
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return [_canon(v) for v in value]
    if isinstance(value, dict):
        return {k: _canon(v) for k, v in value.items()}
    return value


def _sha(rows) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()


def file_digest(path: Path) -> str:
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        return _sha([str(table.schema), [_canon(r) for r in table.to_pylist()]])
    return hashlib.sha256(path.read_bytes()).hexdigest()


def output_digests(run_dir: Path) -> dict[str, str]:
    """sha256 of every file under telemetry/, truth/ and logs/ of one simulated run."""
    out = {}
    for group in ("telemetry", "truth", "logs"):
        for path in sorted((run_dir / group).rglob("*")):
            if path.is_file():
                out[str(path.relative_to(run_dir))] = file_digest(path)
    return out


def table_digest(rows: list[dict], strip: str = "") -> dict:
    """Rows sorted canonically (log sources made relative to the run directory), their count and sha256."""
    canon = []
    for row in rows:
        row = _canon(row)
        if strip and isinstance(row.get("source"), str):
            row["source"] = row["source"].replace(strip, "")
        canon.append(json.dumps(row, sort_keys=True, default=str))
    canon.sort()
    return {"rows": len(canon), "sha256": _sha(canon)}


def compute(work: Path, spark) -> dict:
    from replicaflow.ingest.logs import read_logs
    from replicaflow.pipeline.runner import analyze
    from replicaflow.sim.runner import simulate

    pins: dict = {}
    dirs = []
    for scenario in SCENARIOS:
        run_dir = work / scenario.stem
        simulate(scenario, run_dir, logs=True)
        dirs.append(run_dir)
        pins[scenario.stem] = {"files": output_digests(run_dir)}
    analyze(dirs, work / "all", spark=spark)
    analysis = work / "all" / "analysis"
    for table in sorted(p.name for p in analysis.iterdir() if p.is_dir()):
        rows = pq.read_table(analysis / table).to_pylist()
        for scenario, run_dir in zip(SCENARIOS, dirs, strict=True):
            cluster = json.loads((run_dir / "telemetry" / "_meta.json").read_text())["cluster"]
            mine = [r for r in rows if r.get("cluster") == cluster]
            pins[scenario.stem].setdefault("analysis", {})[table] = table_digest(mine)
    for scenario, run_dir in zip(SCENARIOS, dirs, strict=True):
        cluster = json.loads((run_dir / "telemetry" / "_meta.json").read_text())["cluster"]
        parsed = read_logs(spark, [str(run_dir / "logs")], cluster)
        for table in ("log_events", "rejects"):
            rows = [r.asDict(recursive=True) for r in parsed[table].collect()]
            pins[scenario.stem]["analysis"][table] = table_digest(rows, strip=str(run_dir) + "/")
    return pins


def test_outputs_equal_the_pins(spark, tmp_path):
    expected = json.loads(PINS.read_text())
    actual = compute(tmp_path, spark)
    assert sorted(actual) == sorted(expected), "the set of golden scenarios changed"
    diffs = []
    for name in sorted(expected):
        for kind in ("files", "analysis"):
            want, got = expected[name][kind], actual[name][kind]
            for key in sorted(want.keys() | got.keys()):
                if want.get(key) != got.get(key):
                    diffs.append(f"{name}: {kind} {key}: pinned {want.get(key)}, now {got.get(key)}")
    assert not diffs, "outputs differ from the golden pins:\n" + "\n".join(diffs[:40])
    n_files = sum(len(v["files"]) for v in expected.values())
    assert n_files >= 15 * 10 and all(v["analysis"]["broker_metrics"]["rows"] > 0 for v in expected.values())


if __name__ == "__main__" and "--regen" in sys.argv:
    import tempfile

    sys.path.insert(0, str(ROOT))
    from replicaflow.pipeline.session import get_spark

    session = get_spark("local[2]", app_name="replicaflow-golden")
    with tempfile.TemporaryDirectory() as tmp:
        PINS.write_text(json.dumps(compute(Path(tmp), session), indent=1, sort_keys=True) + "\n")
    session.stop()
    print(f"wrote {PINS}")
