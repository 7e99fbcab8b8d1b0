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


def _read_one(spark, tmp_path, broker: int, lines: list[str]) -> tuple[dict, dict]:
    path = tmp_path / f"broker-{broker}" / "server.log"
    path.parent.mkdir(parents=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = read_logs(spark, str(tmp_path), cluster="real")
    events = {r["line_number"]: r.asDict() for r in out["log_events"].collect()}
    return events, {r["line_number"]: r["reason"] for r in out["rejects"].collect()}


def test_cloudera_layout_puts_the_logger_and_a_colon_before_the_message(spark, tmp_path):
    """Cloudera Manager writes the broker's log4j layout as ``%d{ISO8601} %p %c: %m%n``; these lines were read as
    records whose message started with ``kafka.server.ReplicaFetcherThread: `` and matched no rule, so the fetch error
    was silently no event. Lines verbatim from two public write-ups of CDH Kafka incidents kept as Markdown in GitHub
    repositories (2019-01 "Kafka运营-NotLeaderForPartitionException异常"; 2018-11 "集群突发流量部分kafka broker不可用排查",
    which points to https://www.cloudera.com/documentation/kafka/latest/topics/kafka_performance.html). Writers:
    AbstractFetcherThread.processFetchRequest (0.10-0.11: ``Error for partition [t,p] to broker L:E``), KafkaController
    and its listeners (0.11)."""
    events, rejects = _read_one(spark, tmp_path, 121, [
        "2019-01-18 22:01:00,802 ERROR kafka.server.ReplicaFetcherThread: [ReplicaFetcherThread-0-118]: Error for "
        "partition [kafka_custflow_topic_test,5] to broker 118:org.apache.kafka.common.errors."
        "NotLeaderForPartitionException: This server is not the leader for that topic-partition.",
        "2018-11-06 23:07:06,865 INFO kafka.controller.KafkaController$SessionExpirationListener: "
        "[SessionExpirationListener on 146], ZK expired; shut down all controller components and try to re-elect",
        "2018-11-06 23:07:07,823 INFO kafka.controller.KafkaController: [Controller 146]: Broker 146 resigned as the "
        "controller",
    ])
    assert not rejects
    assert set(events) == {1}
    e = events[1]
    assert (e["kind"], e["topic"], e["partition"], e["leader"], e["broker"], e["ts_ms"]) == \
        ("fetch_error", "kafka_custflow_topic_test", 5, 118, 121, 1547848860802)
    assert e["error"] == "org.apache.kafka.common.errors.NotLeaderForPartitionException"
    assert e["message"].startswith("[ReplicaFetcherThread-0-118]: Error for partition")


def test_spring_boot_layout_of_an_embedded_broker(spark, tmp_path):
    """Spring Boot's logback default ``%d %5p PID --- [%t] %-40.40logger{39} : %m%n`` (a broker embedded in a
    Spring application or test): the message was read with ``2537 --- [r-event-handler] state.change.logger   : ``
    in front, so the 3.5+ leader line (Partition.makeLeader, KRaft; `` (under-min-isr)`` left out, hence
    ``removing replicas [] .``) was no event. The leader line is verbatim from a public GitHub Markdown capture of a
    KRaft broker in a Spring Boot 3 application (2026-05-14); the client line from
    the GitHub repository giraffe-tree/Doc,
    bigData/kafka/kafka_error_record.md (Spring Boot 2)."""
    events, rejects = _read_one(spark, tmp_path, 7, [
        "2026-05-14T12:51:42.346Z  INFO 2537 --- [r-event-handler] state.change.logger                      : "
        "[Broker id=0] Leader trader-updates-0 with topic id Some(xwOSmueMQ26UEYGZcRxw-w) starts at leader epoch 0 "
        "from offset 0 with partition epoch 0, high watermark 0, ISR [0], adding replicas [] and removing replicas [] "
        ". Previous leader None and previous leader epoch was -1.",
        "2018-03-31 18:00:42.360  WARN 71050 --- [ad | producer-1] org.apache.kafka.clients.NetworkClient   : "
        "[Producer clientId=producer-1] Error while fetching metadata with correlation id 3 : "
        "{streams-input2=LEADER_NOT_AVAILABLE}",
    ])
    assert not rejects
    assert set(events) == {1}
    e = events[1]
    assert (e["kind"], e["topic"], e["partition"], e["broker"], e["leader_epoch"], e["isr"], e["adding"],
            e["removing"], e["partition_epoch"], e["offset"], e["ts_ms"]) == \
        ("leader_start", "trader-updates", 0, 0, 0, [0], [], [], 0, 0, 1778763102346)
