"""The reader on real Kafka log lines from public bug reports (tests/ingest/data/real_lines.yaml): each
line's event kind and fields, and no event for the lines that are not replication messages."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from replicaflow.ingest.logs import read_logs

pytestmark = pytest.mark.spark

CORPUS = yaml.safe_load((Path(__file__).parent / "data" / "real_lines.yaml").read_text(encoding="utf-8"))


def test_corpus_names_its_sources():
    assert all(g["url"].startswith("https://") and g["group"] for g in CORPUS)


def test_real_lines_give_the_events_and_fields_their_text_says(spark, tmp_path):
    expected = {}
    for i, group in enumerate(CORPUS):
        path = tmp_path / f"g{i:03d}" / f"broker-{group.get('path_broker', 1)}" / "server.log"
        path.parent.mkdir(parents=True)
        path.write_text("".join(line["raw"] + "\n" for line in group["group"]), encoding="utf-8")
        for n, line in enumerate(group["group"], start=1):
            expected[(str(path), n)] = (line["expect"], group["url"])
    out = read_logs(spark, str(tmp_path), cluster="real")
    events = {}
    for r in out["log_events"].collect():
        events.setdefault((r["source"], r["line_number"]), []).append(r.asDict())
    rejected = {(r["source"], r["line_number"]): r["reason"] for r in out["rejects"].collect()}
    for key, (expect, url) in expected.items():
        got = events.get(key, [])
        if expect == "none":
            assert not got and key not in rejected, (url, key, got, rejected.get(key))
        elif expect == "reject":
            assert not got and key in rejected, (url, key, got)
        else:  # one event, or a list: one per partition the line names, in any order
            wanted = expect if isinstance(expect, list) else [expect]
            assert len(got) == len(wanted), (url, key, got, rejected.get(key))
            for w in wanted:
                assert any({k: g[k] for k in w} == w for g in got), (url, key, w, got)
