"""Broker log excerpts from public bug reports, tutorials and vendors' troubleshooting pages, read whole: each line's
event, or no event and no reject where the line carries no replication meaning. Broker lines verbatim from the sources
named in each test (one wraps them in journald's and a log shipper's JSON, and says so)."""

from __future__ import annotations

import json

import pytest

from replicaflow.ingest.log_layouts import parse_layout
from replicaflow.ingest.logs import read_logs

pytestmark = pytest.mark.spark

# ZooKeeper's classic `%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m%n`, which Debezium's Kafka image (debezium/kafka) and
# kcm write for the broker. debezium/debezium, documentation/modules/ROOT/pages/modules/tutorial/p_starting-kafka.adoc
# (0.11: `[Kafka Server 1], started`, two blanks after it); vrischmann/kcm, README.md (2.x, the controller's lines);
# adrian3ka/shared-article, debezium-kafka-stream-aggregates/README.md (`docker-compose up` of debezium/kafka 1.2).
DEBEZIUM = [
    "2017-09-21 07:16:59,085 - INFO  [main-EventThread:ZkClient@713] - zookeeper state changed (SyncConnected)",
    "2017-09-21 07:16:59,218 - INFO  [main:Logging$class@70] - Cluster ID = LPtcBFxzRvOzDSXhc6AamA",
    "2017-09-21 07:16:59,649 - INFO  [main:Logging$class@70] - [Kafka Server 1], started  ",
    "2019-10-14 00:21:00,377 - INFO  [controller-event-thread:Logging@66] - [Controller id=1] Starting preferred replica "
    "leader election for partitions",
    "2019-10-14 00:21:00,388 - INFO  [controller-event-thread:Logging@66] - [Controller id=1] Starting the controller "
    "scheduler",
    "kafka_1           | 2020-08-18 05:48:45,389 - INFO  [kafka-scheduler-9:Logging$class@72] - Incrementing log start "
    "offset of partition streaming-aggregates-dbserver1.inventory.addresses_table_aggregate-changelog-0 to 8 in dir "
    "/kafka/data/1",
    "kafka_1           | 2020-08-18 05:49:45,376 - INFO  [kafka-scheduler-1:Logging$class@72] - Deleting segment 0 "
    "from log streaming-aggregates-dbserver1.inventory.addresses_table_aggregate-changelog-0.",
]
# Huawei FusionInsight / MRS: `%d | %-5p | [%t] | %m | %c (%F:%L)` (or `%l`), huaweicloudDocs/mrs, cn.zh-cn/故障排除/
# Consumer消费数据存在重复消费现象.md and Kafka-Broker上报进程异常-日志提示IllegalArgumentException.md (a FATAL record with
# an empty message and its stack trace, as KafkaServerStartable's start-up logged it)
MRS = [
    "2018-05-12 10:58:42,561 | INFO | [kafka-request-handler-3] | [GroupCoordinator 2]: Preparing to restabilize group "
    "DemoConsumer with old generation 118 | kafka.coordinator.GroupCoordinator (Logging.scala:68)",
    "2018-05-12 10:59:43,802 | INFO | [kafka-request-handler-2] | Rolled new log segment for '__consumer_offsets-17' "
    "in 2 ms. | kafka.log.Log (Logging.scala:68)",
    "2017-01-25 09:09:14,930 | FATAL | [main] |  | kafka.Kafka$ (Logging.scala:113)",
    "java.lang.IllegalArgumentException: requirement failed: replica.fetch.max.bytes should be equal or greater than "
    "message.max.bytes",
    "        at scala.Predef$.require(Predef.scala:233)",
    "        at kafka.server.KafkaConfig.validateValues(KafkaConfig.scala:959)",
]


def test_debezium_and_fusioninsight_layouts_are_records(spark, tmp_path):
    """Both layouts were rejects (`truncated or malformed timestamp/layout`: a ` - ` or ` | ` between the date and the
    level), so the broker's start was lost and every replication line of such a broker would have been. Now the
    start is a `broker_started` row (KafkaServer.startup's `[Kafka Server N], started`, 0.8-0.11), the stack trace
    attaches to its FATAL record, and the other lines are records of no event. The controller's `Starting preferred
    replica leader election for partitions` with an empty list (KafkaController.onPreferredReplicaElection at a
    failover with nothing to elect) is the controller's election line, read, naming no partition: no row."""
    for name, lines in (("broker-1/server.log", DEBEZIUM), ("broker-2/server.log", MRS)):
        (tmp_path / name).parent.mkdir(parents=True)
        (tmp_path / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = read_logs(spark, str(tmp_path), cluster="r")
    assert [(r["source"], r["line_number"], r["reason"]) for r in out["rejects"].collect()] == []
    events = [(r["line_number"], r["kind"], r["broker"], r["ts_ms"]) for r in out["log_events"].collect()]
    assert events == [(3, "broker_started", 1, 1505978219649)]
    counts = {(r["source"].split("/")[-2], r["category"]): r["lines"] for r in out["line_counts"].collect()}
    assert counts == {("broker-1", "event"): 2, ("broker-1", "other"): 5, ("broker-2", "other"): 3,
                      ("broker-2", "attached"): 3}, counts


def test_the_layouts_give_time_level_message_and_logger(spark):
    """The fields each layout holds: Debezium's `[%t:%C{1}@%L] - ` names the calling class (`Logging` for Kafka's
    Scala classes), not the logger, so none is taken (the line from a Chinese write-up of the Debezium tutorial, whose
    debezium/kafka 2.7 runs Kafka 3.7.0: KafkaServer's 1.0+ logIdent); FusionInsight's `%c (%F:%L)` is the logger, `%l` the calling
    class and method (a Flume agent's Kafka producer, huaweicloudDocs/mrs, cn.zh-cn/故障排除/
    Flume可以正常连接Kafka-但是发送消息失败.md). A message holding ` | ` keeps it: the logger is after the last one."""
    lines = [
        "2024-10-01 15:33:53,098 - INFO  [main:Logging@66] - [KafkaServer id=1] started",
        "2016-02-26 14:55:19,126 | WARN  | [SinkRunner-PollingRunner-DefaultSinkProcessor] |  Produce request with "
        "correlation id 349829 failed due to [LOG,7]: kafka.common.MessageSizeTooLargeException  | "
        "kafka.utils.Logging$class.warn(Logging.scala:83)",
        "2018-05-12 10:59:43,802 | INFO | [kafka-request-handler-2] | a | b | kafka.log.Log (Logging.scala:68)",
    ]
    rows = parse_layout(spark.createDataFrame([(x,) for x in lines], "inner string")).collect()
    got = [(r["ts_ms"], r["level"], r["msg"], r["logger"]) for r in rows]
    assert got == [
        (1727796833098, "INFO", "[KafkaServer id=1] started", None),
        (1456498519126, "WARN", "Produce request with correlation id 349829 failed due to [LOG,7]: "
         "kafka.common.MessageSizeTooLargeException", "kafka.utils.Logging$class"),
        (1526122783802, "INFO", "a | b", "kafka.log.Log"),
    ]


def test_log4j_ttcc_layout_with_an_empty_ndc(spark, tmp_path):
    """log4j 1's TTCC pattern `%d [%t] %-5p %c %x - %m`: the empty NDC (`%x`) leaves two blanks between the logger and
    the dash, so the logger stayed in the message and ReplicaFetcherManager's `Removed fetcher for partitions [t,p]`
    (AbstractFetcherManager.removeFetcherForPartitions, 0.8-0.10's TopicAndPartition form) was no event. Lines from a
    2016 write-up of moving a 0.9 cluster's brokers to new hosts one at a time (server.log of the restarted broker 0)."""
    path = tmp_path / "broker-0" / "server.log"
    path.parent.mkdir()
    path.write_text("".join(line + "\n" for line in [
        "2016-06-30 12:24:36,047 [ReplicaFetcherThread-0-1] INFO  kafka.server.ReplicaFetcherThread  - "
        "[ReplicaFetcherThread-0-1], Starting",
        "2016-06-30 12:27:38,967 [kafka-request-handler-3] INFO  kafka.server.ReplicaFetcherManager  - "
        "[ReplicaFetcherManager on broker 0] Removed fetcher for partitions [pomelo,1]",
        "2016-06-30 12:27:39,017 [kafka-processor-9092-7] INFO  kafka.network.Processor  - Closing socket connection to "
        "/172.31.238.29.",
        "2016-06-30 12:27:39,128 [kafka-request-handler-2] INFO  kafka.server.ReplicaFetcherManager  - "
        "[ReplicaFetcherManager on broker 0] Removed fetcher for partitions [velocity,1]",
    ]), encoding="utf-8")
    out = read_logs(spark, str(tmp_path), cluster="r")
    assert out["rejects"].collect() == []
    events = sorted((r["line_number"], r["kind"], r["broker"], r["topic"], r["partition"], r["ts_ms"])
                    for r in out["log_events"].collect())
    assert events == [(2, "fetcher_removed", 0, "pomelo", 1, 1467289658967),
                      (4, "fetcher_removed", 0, "velocity", 1, 1467289659128)]


def test_journald_json_and_a_log_shippers_event_hold_the_brokers_line(spark, tmp_path):
    """`journalctl -u kafka -o json` puts the broker's line in `MESSAGE`; Filebeat (and Logstash, Fluent Bit) ship the
    line as read in `message`, with a `log` object (`offset`, `file.path`) that docker json-file's string `log` was
    taken for: both were `unreadable JSON log record` rejects. The envelopes are the field names systemd.journal-fields
    and Filebeat's ECS event document; the broker lines in them are real: Partition's 3.5+ ISR update from a 2025-10-15
    KRaft run (see-quick.github.io, 2025-10-16-kafka-practical-performance-testing-and-runtime-verification.md), and
    from lyhistory.github.io's kafka_consumer.md (2.x) a shrink and a fetcher's failed request whose stack trace a
    multiline setting joined on (the record is read; the trace is not)."""
    isr = ("[2025-10-15 20:36:54,506] INFO [Partition __consumer_offsets-1 broker=1] ISR updated to 2,1,3  and version "
           "updated to 18 (kafka.cluster.Partition)")
    shrink = ("[2022-03-12 18:10:07,139] INFO [Partition __consumer_offsets-43 broker=3] Shrinking ISR from 3,1,4 to 3. "
              "Leader: (highWatermark: 115, endOffset: 120). Out of sync replicas: (brokerId: 1, endOffset: 115) "
              "(brokerId: 4, endOffset: 116). (kafka.cluster.Partition)")
    failed = ("[2022-03-14 09:00:32,612] WARN [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error in response for "
              "fetch request (type=FetchRequest, replicaId=1, maxWait=500, minBytes=1, maxBytes=10485760, "
              "fetchData={T-EOD-SNP-1=(fetchOffset=86, logStartOffset=86, maxBytes=1048576, "
              "currentLeaderEpoch=Optional[0])}, isolationLevel=READ_UNCOMMITTED, toForget=, metadata=(sessionId="
              "2095832195, epoch=INITIAL)) (kafka.server.ReplicaFetcherThread)\n"
              "java.net.SocketTimeoutException: Failed to connect within 30000 ms")
    lines = [
        {"__REALTIME_TIMESTAMP": "1760560614600000", "_HOSTNAME": "kafka-1", "SYSLOG_IDENTIFIER":
         "kafka-server-start.sh", "_PID": "1234", "MESSAGE": isr},
        {"@timestamp": "2022-03-12T18:10:08.001Z", "log": {"offset": 4096, "file": {"path": "/opt/kafka/logs/server.log"}},
         "message": shrink, "input": {"type": "log"}, "host": {"name": "kafka-3"}},
        {"@timestamp": "2022-03-14T09:00:33.000Z", "log": {"offset": 8192, "file": {"path":
         "/opt/kafka/logs/server.log"}, "flags": ["multiline"]}, "message": failed},
    ]
    path = tmp_path / "broker-1" / "server.log"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines), encoding="utf-8")
    out = read_logs(spark, str(tmp_path), cluster="r")
    assert out["rejects"].collect() == []
    events = sorted((r["line_number"], r["kind"], r["broker"], r["partition"], r["isr"], r["partition_epoch"],
                     r["offset"], r["leader"], r["ts_ms"]) for r in out["log_events"].collect())
    assert events == [  # the record's own time, not journald's or the shipper's
        (1, "isr_updated", 1, 1, [2, 1, 3], 18, None, None, 1760560614506),
        (2, "isr_shrink", 3, 43, [3], None, 120, None, 1647108607139),
        (3, "fetch_request_failed", 1, None, None, None, None, 2, 1647248432612),
    ]
