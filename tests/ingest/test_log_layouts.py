"""Layouts and envelopes of log lines: pasted code blocks, config lines, ISO and CSV exports, Jira marks, LinkedIn's
and Confluent for Kubernetes' layouts, docker compose, grep, kubectl, pdsh and aws logs prefixes, the log time
zone."""

from __future__ import annotations

import pytest

from replicaflow.errors import ReplicaflowError
from replicaflow.ingest.logs import read_logs
from tests.ingest.log_cases import T, read_file

pytestmark = pytest.mark.spark


def test_a_pastes_code_block_marks_are_blank_and_cut_the_record_before_them(spark, tmp_path):
    """A bug report's log sits between code-block marks, Jira's `{code:java}`/`{noformat}` or a Markdown fence with
    its language, each alone on its line: `no timestamp` rejects before, they are `blank`. Two blocks are two
    excerpts: the exception opening the second one is not the end of the first one's record (it gave a refusal
    from the first block's append)."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        "{code:java}\n" + T + REFUSED.format(b=1) + "\n{code}\n\n"
        "And later:\n{noformat}\n" + NOT_ENOUGH.format(b=1) + "\n{noformat}\n```log\n"
        + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)\n```\n")
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == \
        [(5, "no timestamp"), (7, "continuation line")]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts == {"blank": 7, "other": 1, "event": 1, "reject": 2}, counts
    assert [r["kind"] for r in out["log_events"].collect()] == ["isr_shrink"]


def test_a_config_line_needs_its_indent_and_a_record_before_it(spark, tmp_path):
    """AbstractConfig.logAll indents each setting with a tab, which a log pasted into a bug report or a blog often
    carries as spaces (a 0.10.0.1 start-up pasted with eight: lines 5-6, each rejected as 'no timestamp' before);
    without an indent, or with no record before it in the file, a `name = value` line is no part of a record and
    stays a reject."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        "\tlog.dirs = /var/lib/kafka/data\n" + T + "INFO KafkaConfig values: \nlog.dirs = /var/lib/kafka/data\n"
        "\tlog.dirs /var/lib/kafka/data\n        advertised.host.name = null\n        authorizer.class.name =\n"
        " log.dirs = /var/lib/kafka/data\n (kafka.server.KafkaConfig)\n")
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == \
        [(1, "continuation line"), (3, "no timestamp"), (4, "no timestamp"), (7, "no timestamp")]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts["attached"] == 3, counts


def test_a_record_behind_an_unknown_prefix_is_rejected_not_attached(spark, tmp_path):
    """A whole record behind a prefix no envelope rule knows, or led by a date whose time is cut short, ends in
    ` (logger)` like a message tail, but it is not part of the record before it: its event would be lost without a
    trace."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        T + "INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n"
        "web-7f9c | host | " + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)\n"
        "2024/01/02 03:04 INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)\n")
    assert [r["kind"] for r in out["log_events"].collect()] == ["broker_started"]
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == \
        [(2, "unknown prefix before a log record"), (3, "truncated or malformed timestamp/layout")]


def test_an_iso_time_with_its_offset_and_a_csv_export_are_records(spark, tmp_path):
    """A layout writing ISO-8601 with a `T` and an offset (`%d{yyyy-MM-dd'T'HH:mm:ss.SSSZ} %p %m (%c)`) looked like a
    container runtime's time before a message tail: its lines were rejected as `continuation line`, their ISR
    changes lost. A log tool's CSV export (`"time","level","logger","message"`, as pasted in confluentinc/
    librdkafka#4401, one line cut before its closing quote) was `no timestamp`; it is read as the record it holds."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        "2024-01-02T03:04:05.678+0100 INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)\n"
        "2024-01-02T03:04:05.678Z INFO [Partition t-0 broker=1] Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)\n"
        '"2023-08-18T09:07:19.279Z","WARN","kafka.server.ReplicaFetcherThread","[ReplicaFetcher replicaId=7, '
        'leaderId=12, fetcherId=5] Partition other-topic-003-0 marked as failed"\n'
        '"2023-08-18T09:07:20.100Z","INFO","kafka.server.KafkaServer","[KafkaServer id=7] shutting down ""now""\n'
        '"2023-08-18T09:07:21.000Z","INFO","kafka.server.KafkaServer","[KafkaServer id=7] shutting down"\n')
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["ts_ms"], r["broker"], r["leader"])
                 for r in out["log_events"].collect())
    assert got == [(1, "isr_shrink", 1704161045678, 1, None), (2, "isr_expand", 1704164645678, 1, None),
                                    (3, "partition_failed", 1692349639279, 7, 12),
                                    (5, "broker_shutting_down", 1692349641000, 7, None)]
    messages = {r["line_number"]: r["message"] for r in out["log_events"].collect()}
    assert messages[3].endswith("Partition other-topic-003-0 marked as failed")


def test_a_thai_locale_jvms_buddhist_year_is_the_common_eras(spark, tmp_path):
    """A JVM whose locale is Thai formats dates in its BuddhistCalendar, 543 years past the common era: a public
    Windows 3.x paste's broker wrote `[2565-09-05 22:15:46,505]`, which was read literally and put the logs in 2565.
    2567-02-29 is 2024's leap day (no leap year of its own in the proleptic calendar); an ISO stamp is moved too."""
    out = read_file(spark, tmp_path, "broker-0/server.log",
        "[2565-09-05 22:15:46,505] INFO [Partition t-0 broker=0] Shrinking ISR from 0,1 to 0 (kafka.cluster.Partition)\n"
        "[2567-02-29 01:00:00,000] INFO [Partition t-0 broker=0] Expanding ISR from 0 to 0,1 (kafka.cluster.Partition)\n"
        "2565-09-05T22:15:47.000Z INFO [Partition t-0 broker=0] Shrinking ISR from 0,1 to 0 (kafka.cluster.Partition)\n")
    assert out["rejects"].count() == 0
    assert sorted((r["line_number"], r["ts_ms"]) for r in out["log_events"].collect()) == [
        (1, 1662416146505), (2, 1709168400000), (3, 1662416147000)]


def test_a_jira_code_mark_is_no_json_record_and_a_braced_date_is_a_record(spark, tmp_path):
    """A JSON layout's record starts `{"`; a Jira `{code:java}` mark around a pasted log (KAFKA-14778 as relayed by
    mail) was rejected as `unreadable JSON log record`, a reason that sent the reader to the wrong place: it is
    `blank` (see the code-block marks below). A layout
    that writes the date in braces (`{%d} %p [%t] (%F:%L) - %m`, KAFKA-903) is a record: the thread and the file's
    line come off before the message (0.8's KafkaServer `[Kafka Server 0], started`)."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        "{code:java}\n{2013-05-10 19:14:52,156}  INFO [Thread-1] (Logging.scala:67) - [Kafka Server 0], started\n"
        '{"message": "x"\n')
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == [
        (3, "unreadable JSON log record (no message field or invalid JSON)")]
    assert [(r["line_number"], r["kind"], r["broker"], r["ts_ms"], r["message"])
            for r in out["log_events"].collect()] == [
        (2, "broker_started", 0, 1368213292156, "[Kafka Server 0], started")]


def test_linkedins_layout_is_read(spark, tmp_path):
    """LinkedIn's `%d{yyyy/MM/dd HH:mm:ss.SSS} %p [%c{1}] [%t] [app] [context] %m` (its fork's brokers; the lines its
    engineers paste into Kafka's Jira, KAFKA-1398, and linkedin/kafka#458) was rejected whole as a malformed layout.
    The four bracketed fields come off before the message, whose own logIdent names the broker (Partition.maybeShrinkIsr,
    AbstractFetcherThread.processFetchRequest); an exception's lines stay under their record, also through docker
    compose; a line with fewer fields is still a record, of no event."""
    out = read_file(spark, tmp_path, "broker-1/server.log",
        "2023/05/23 21:09:35.182 INFO [DefaultAlterIsrManager] [data-plane-kafka-request-handler-7] [kafka-server] [] "
        "Sending to controller org.apache.kafka.common.requests.AlterIsrRequest$Builder of ~274 bytes (1 items)\n"
        "2023/05/23 21:09:36.000 INFO [Partition] [data-plane-kafka-request-handler-7] [kafka-server] [] [Partition "
        "payments-2 broker=78001] Shrinking ISR from 78001,78002,78003 to 78001,78003. Leader: (highWatermark: 5, "
        "endOffset: 9). Out of sync replicas: (brokerId: 78002, endOffset: 5).\n"
        "2023/05/23 21:09:37.000 WARN [ReplicaFetcherThread] [ReplicaFetcherThread-0-78002] [kafka-server] [] "
        "[ReplicaFetcher replicaId=78001, leaderId=78002, fetcherId=0] Error for partition payments-3 at offset 10\n"
        "org.apache.kafka.common.errors.NotLeaderOrFollowerException: not the leader\n"
        "2014/04/15 19:35:34.223 ERROR [TopicConfigManager] [kafka-server] [] Ignoring topic config change\n"
        "kafka-1 | 2023/05/23 21:09:38.250 INFO [Partition] [t-1] [kafka-server] [] [Partition payments-2 "
        "broker=78001] Expanding ISR from 78001,78003 to 78001,78003,78002\n"
        "kafka-1 |         at kafka.server.ReplicaManager.appendToLocalLog(ReplicaManager.scala:10)\n")
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["broker"], r["topic"], r["partition"], r["isr"], r["leader"],
                  r["ts_ms"]) for r in out["log_events"].collect())
    assert got == [(2, "isr_shrink", 78001, "payments", 2, [78001, 78003], None, 1684876176000),
                   (3, "fetch_error", 78001, "payments", 3, None, 78002, 1684876177000),
                   (6, "isr_expand", 78001, "payments", 2, [78001, 78003, 78002], None, 1684876178250)]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts == {"event": 3, "other": 2, "attached": 2}, counts


def test_sparks_layout_of_an_embedded_broker_is_read(spark, tmp_path):
    """Spark's log4j default `%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n` (a broker embedded in a Spark job or its tests; a
    public 2019 README quotes a 2.3 one, `>>> ` before each line): every line was rejected as "no timestamp". The
    year is 20yy, the logger's short name or two and a colon come off, an exception's lines stay under their
    record, and the broker's `Kafka version` line tells the release."""
    out = read_file(spark, tmp_path, "broker-0/server.log",
        ">>> 19/07/12 11:01:39 INFO utils.AppInfoParser: Kafka version: 2.3.0\n"
        ">>> 19/07/12 11:01:43 INFO server.ReplicaFetcherManager: [ReplicaFetcherManager on broker 0] Removed fetcher "
        "for partitions Set(__consumer_offsets-0)\n"
        ">>> 19/07/12 11:01:43 INFO cluster.Partition: [Partition __consumer_offsets-0 broker=0] __consumer_offsets-0 "
        "starts at Leader Epoch 0 from offset 0. Previous Leader Epoch was: -1\n"
        "24/02/29 23:59:59 INFO Partition: [Partition t-1 broker=0] Shrinking ISR from 0,1 to 0. Leader: (highWatermark: "
        "5, endOffset: 9). Out of sync replicas: (brokerId: 1, endOffset: 5).\n"
        "24/02/29 23:59:59 WARN ReplicaFetcherThread: [ReplicaFetcher replicaId=0, leaderId=1, fetcherId=0] Error for "
        "partition t-2 at offset 10\n"
        "org.apache.kafka.common.errors.NotLeaderOrFollowerException: not the leader\n"
        "19/07/12 11:01:4 INFO Partition: a time cut short\n")
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == [
        (7, "truncated or malformed timestamp/layout")]
    got = sorted((r["line_number"], r["kind"], r["broker"], r["topic"], r["partition"], r["ts_ms"])
                 for r in out["log_events"].collect())
    assert got == [(2, "fetcher_removed", 0, "__consumer_offsets", 0, 1562929303000),  # 2019-07-12 11:01:43 UTC
                   (3, "leader_start", 0, "__consumer_offsets", 0, 1562929303000),
                   (4, "isr_shrink", 0, "t", 1, 1709251199000),  # 2024-02-29 23:59:59 UTC
                   (5, "fetch_error", 0, "t", 2, 1709251199000)]
    assert [r["kafka_version"] for r in out["printed_versions"].collect()] == ["2.3.0"]


def test_brokers_interleaved_in_one_compose_file_keep_their_own_lines(spark, tmp_path):
    """`docker compose logs` of a cluster is one file holding every broker's lines. ReplicaManager.appendToLocalLog's
    exception follows its record with another broker's line between them: it belongs to its own service's record
    (it went under kafka-2's, no event). KafkaRaftServer's 2.8-3.2 start line names no broker: it is its service's
    broker (it took the file's first, broker 1). Partition.updateIsr's "Cached zkVersion" refusal is broker 2's, not
    broker 1's shrink's (KAFKA-2729: two brokers both leading a partition log both)."""
    out = read_file(spark, tmp_path, "compose.log",
        "kafka-1  | " + T + "ERROR [ReplicaManager broker=1] Error processing append operation on partition "
        "orders-1 (kafka.server.ReplicaManager)\n"
        "kafka-2  | " + T + "INFO [BrokerServer id=2] Transition from STARTING to STARTED (kafka.server.BrokerServer)\n"
        "kafka-1  | org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR Set(1) is "
        "insufficient to satisfy the min.isr requirement of 2 for partition orders-1\n"
        "kafka-2  | " + T + "INFO Kafka Server started (kafka.server.KafkaRaftServer)\n"
        "kafka-1  | " + T + "INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)\n"
        "kafka-2  | " + T + "INFO [Partition orders-0 broker=2] Cached zkVersion [4] not equal to that in zookeeper, "
        "skip updating ISR (kafka.cluster.Partition)\n")
    assert out["rejects"].count() == 0
    got = sorted((r["line_number"], r["kind"], r["broker"], r["state"]) for r in out["log_events"].collect())
    assert got == [(3, "produce_rejected", 1, None), (4, "broker_started", 2, None), (5, "isr_shrink", 1, None),
                   (6, "isr_update_failed", 2, None)]


def test_grep_over_several_brokers_files_names_each_lines_broker(spark, tmp_path):
    """`grep -r` over a cluster's log folders, saved to one file: each line is led by the file it came from. A line
    naming no broker (KafkaServer.startup's `Kafka Server started` of KafkaRaftServer 2.8-3.2, KafkaServerStartable's
    `Exiting Kafka.`) is that file's broker (`broker-2/...`), not the first broker the saved file names; from a
    file whose name and lines name no broker, it is a reject (it was broker 1's)."""
    out = read_file(spark, tmp_path, "grep.txt",
        "logs/broker-1/server.log:" + T + "INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 "
        "(kafka.cluster.Partition)\n"
        "logs/broker-2/server.log:" + T + "INFO Kafka Server started (kafka.server.KafkaRaftServer)\n"
        "logs/broker-3/server.log.1:" + T + "INFO Exiting Kafka. (kafka.server.KafkaServerStartable)\n"
        "logs/other/server.log:" + T + "INFO Exiting Kafka. (kafka.server.KafkaServerStartable)\n")
    assert [(r["line_number"], r["reason"]) for r in out["rejects"].collect()] == [
        (4, "unknown broker id (no prefix, path has no broker-N)")]
    got = sorted((r["line_number"], r["kind"], r["broker"]) for r in out["log_events"].collect())
    assert got == [(1, "isr_shrink", 1), (2, "broker_started", 2), (3, "broker_exit", 3)]


def test_confluent_for_kubernetes_layout_is_read(spark, tmp_path):
    """Confluent for Kubernetes writes its brokers' lines level first, `[%p] %d [%t] %c %M - %m`, and CP 8 puts the
    MDC (`app=kafka, clusterId=…, server=N - `) before the message (a cp-server 8.3 pod's lines,
    vdesabou/kafka-docker-playground#8514): every line was a `no timestamp` reject, the cluster's events lost. The
    message's own logIdent names the broker (Partition, AbstractFetcherThread); an exception stays under its
    record, also through `kubectl logs --prefix`; a line whose level's bracket is not closed is still a reject. Its
    Connect pods write the MDC after the logger instead (`(logger:line) - app=connect, …`, #8332): the same there."""
    mdc = "app=kafka, clusterId=confluent, server=0 - "
    out = read_file(spark, tmp_path, "kafka-0.log",
        "[INFO] 2026-07-23 19:36:22,834 [group-coordinator-event-processor-1] org.apache.kafka.coordinator.group."
        "GroupMetadataManager completeClassicGroupJoin - " + mdc + "[GroupCoordinator id=0 topic=__consumer_offsets "
        "partition=8] Stabilized group confluent.connect generation 5 with 1 members.\n"
        "[INFO] 2026-07-23 19:36:22,920 [data-plane-kafka-request-handler-3] kafka.cluster.Partition info - " + mdc +
        "[Partition orders-8 broker=0] ISR updated to 0,1 and version updated to 7\n"
        "[WARN] 2026-07-23 19:36:23,000 [ReplicaFetcherThread-0-1] kafka.server.ReplicaFetcherThread warn - "
        "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Error for partition orders-1 at offset 5\n"
        "org.apache.kafka.common.errors.NotLeaderOrFollowerException: not the leader\n"
        "[pod/kafka-1/kafka] [INFO] 2026-07-23 19:36:24,920 [kafka-scheduler-2] kafka.cluster.Partition info - "
        "app=kafka, clusterId=confluent, server=1 - [Partition orders-2 broker=1] Shrinking ISR from 1,0 to 1. "
        "Leader: (highWatermark: 10, endOffset: 12). Out of sync replicas: (brokerId: 0, endOffset: 10).\n"
        "[2026-07-23 19:36:24,950] INFO [Partition orders-3 broker=0] ISR updated to 0,1 and version updated to 9 "
        "(kafka.cluster.Partition:1200) - " + mdc.removesuffix(" - ") + "\n"
        "[INFO 2026-07-23 19:36:25,000 [main] kafka.server.KafkaServer info - started\n")
    assert [(r["line_number"], r["reason"]) for r in out["rejects"].collect()] == [(7, "no timestamp")]
    got = sorted((r["line_number"], r["kind"], r["broker"], r["topic"], r["partition"], r["isr"], r["leader"],
                  r["ts_ms"]) for r in out["log_events"].collect())
    assert got == [(2, "isr_updated", 0, "orders", 8, [0, 1], None, 1784835382920),
                   (3, "fetch_error", 2, "orders", 1, None, 1, 1784835383000),
                   (5, "isr_shrink", 1, "orders", 2, [1], None, 1784835384920),
                   (6, "isr_updated", 0, "orders", 3, [0, 1], None, 1784835384950)]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts == {"event": 4, "other": 1, "attached": 1, "reject": 1}, counts


def test_kubectl_logs_prefix_of_several_pods_keeps_each_pods_lines(spark, tmp_path):
    """`kubectl logs -l strimzi.io/kind=Kafka --prefix` (kubectl 1.17+) puts every broker pod's lines in one
    stream, each led by `[pod/<pod>/<container>] `; with `--timestamps` the runtime's time follows it. They were
    `unknown prefix before a log record` rejects, the whole cluster's log lost. Each pod is a stream of its own:
    ReplicaManager.appendToLocalLog's exception continues its own pod's record with the other pod's lines between,
    and a line naming no broker (KafkaRaftServer's 2.8-3.2 start) is its pod's broker. Strimzi's layout
    (`%d{ISO8601} %p %m (%c) [%t]`), also pasted behind a Markdown quote."""
    s = "2024-01-02 03:04:05,678 "
    out = read_file(spark, tmp_path, "kubectl.log",
        "[pod/my-cluster-kafka-0/kafka] " + s + "ERROR [ReplicaManager broker=0] Error processing append operation on "
        "partition orders-1 (kafka.server.ReplicaManager) [data-plane-kafka-request-handler-3]\n"
        "[pod/my-cluster-kafka-1/kafka] 2024-01-02T03:04:05.700000000Z " + s + "INFO [Partition orders-0 broker=1] "
        "Shrinking ISR from 1,0 to 1. Leader: (highWatermark: 10, endOffset: 12). Out of sync replicas: (brokerId: 0, "
        "endOffset: 10). (kafka.cluster.Partition) [kafka-scheduler-2]\n"
        "[pod/my-cluster-kafka-0/kafka] " + NOT_ENOUGH.format(b=1) + "\n"
        "[pod/my-cluster-kafka-1/kafka] \tat kafka.cluster.Partition.maybeShrinkIsr(Partition.scala:1)\n"
        "> [pod/my-cluster-kafka-1/kafka] " + s + "INFO Kafka Server started (kafka.server.KafkaRaftServer) [main]\n")
    assert out["rejects"].count() == 0, out["rejects"].collect()
    got = sorted((r["line_number"], r["kind"], r["broker"]) for r in out["log_events"].collect())
    assert got == [(2, "isr_shrink", 1), (3, "produce_rejected", 0), (5, "broker_started", 1)]


def test_pdsh_over_the_broker_hosts_keeps_each_hosts_lines(spark, tmp_path):
    """`pdsh -w kafka[1-2] 'grep -A2 ... server.log'` (or clush) puts each host's name before its lines; they were
    `unknown prefix before a log record` rejects. Each host is a stream: ReplicaManager.appendToLocalLog's exception
    continues its own host's record, and a line naming no broker is its host's broker. In a plain log, an exception
    whose message is another's toString (`java.util.concurrent.ExecutionException: org.apache...`) and a
    `Suppressed: ` line are no host's lines: they continue the record before them."""
    out = read_file(spark, tmp_path, "pdsh.txt", two_brokers_interleaved("kafka1: ", "kafka2.example.com: "))
    plain = read_file(spark, tmp_path / "plain", "server.log",
        T + "ERROR [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error in response for fetch request "
        "(type=FetchRequest, replicaId=1, maxWait=500, minBytes=1) (kafka.server.ReplicaFetcherThread)\n"
        "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: timed out\n"
        "Suppressed: java.io.IOException: Connection to 2 was disconnected\n")
    for got in (out, plain):
        assert got["rejects"].count() == 0, got["rejects"].collect()
    assert sorted((r["line_number"], r["kind"], r["broker"]) for r in out["log_events"].collect()) == INTERLEAVED
    counts = {r["category"]: r["lines"] for r in plain["line_counts"].collect()}
    assert counts.get("attached") == 2, counts


def test_aws_logs_tail_of_a_log_group_keeps_each_log_streams_lines(spark, tmp_path):
    """`aws logs tail` of a CloudWatch log group (Amazon MSK delivers broker logs to one) prints each event's time,
    its log stream and the message: `unknown prefix before a log record` rejects before. Each log stream is a
    stream of its own, so a broker's exception continues its record across another broker's line. A layout that
    writes its own ISO time (`%d{yyyy-MM-dd'T'HH:mm:ss.SSSZ} %p %m`) is still its own record, not a stream named
    `ERROR`: its exception message is no stack-trace line."""
    out = read_file(spark, tmp_path, "tail.txt", two_brokers_interleaved(
        "2024-01-02T03:04:05.678000+00:00 Broker-1 ", "2024-01-02T03:04:05.679000+00:00 Broker-2 "))
    own = read_file(spark, tmp_path / "own", "broker-3/server.log",
        "2024-01-02T03:04:05.678+0100 ERROR org.apache.kafka.common.errors.KafkaStorageException: Error while "
        "writing to checkpoint file /data/replication-offset-checkpoint (kafka.server.LogDirFailureChannel)\n")
    for got in (out, own):
        assert got["rejects"].count() == 0, got["rejects"].collect()
    assert sorted((r["line_number"], r["kind"], r["broker"]) for r in out["log_events"].collect()) == INTERLEAVED
    assert {r["category"]: r["lines"] for r in own["line_counts"].collect()} == {"other": 1}


REFUSED = ("ERROR [ReplicaManager broker={b}] Error processing append operation on partition orders-1 "
           "(kafka.server.ReplicaManager)")
NOT_ENOUGH = ("org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR Set({b}) is "
              "insufficient to satisfy the min.isr requirement of 2 for partition orders-1")


def two_brokers_interleaved(first: str, second: str) -> str:
    """Two brokers' lines in one file, each led by its broker's envelope (``first``, ``second``): broker 1's refused
    append, broker 2's shrink between it and its exception, broker 1's frame, and broker 2's start line, which
    names no broker. Read apart, they give ``INTERLEAVED``."""
    return (first + T + REFUSED.format(b=1) + "\n"
            + second + T + "INFO [Partition orders-0 broker=2] Shrinking ISR from 2,1 to 2 (kafka.cluster.Partition)\n"
            + first + NOT_ENOUGH.format(b=1) + "\n"
            + first + "\tat kafka.cluster.Partition.appendRecordsToLeader(Partition.scala:1031)\n"
            + second + T + "INFO Kafka Server started (kafka.server.KafkaRaftServer)\n")


INTERLEAVED = [(2, "isr_shrink", 2), (3, "produce_rejected", 1), (5, "broker_started", 2)]


def test_grep_context_lines_are_read_as_their_files_lines(spark, tmp_path):
    """`grep -r -B1 -A2` over two brokers' folders of hourly files (log4j's DailyRollingFileAppender names
    `server.log.2019-10-09-19`): a context line has `-` where a matching line has `:`, and a name ending in `-19` is
    that file's (a matching line names it so), not `server.log.2019-10-09` at line 19. ReplicaManager.appendToLocalLog's
    exception, a context line, continues its own file's record; the end of a later trace that `-B` cut from its
    record, after grep's `--`, continues none (it gave a second refusal): a reject. KafkaRaftServer's 2.8-3.2 start
    line names no broker: it is the broker of its file's folder. Every line was a reject before."""
    d1, d2 = "logs/broker-1/server.log.2019-10-09-19", "logs/kafka-2/server.log.2019-10-09-19"
    out = read_file(spark, tmp_path, "grep.txt",
        f"{d1}-" + T + "INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)\n"
        f"{d1}:" + T + REFUSED.format(b=1) + "\n"
        f"{d1}-" + NOT_ENOUGH.format(b=1) + "\n"
        f"{d1}-\tat kafka.cluster.Partition.appendRecordsToLeader(Partition.scala:1031) ~[kafka_2.13-3.5.0.jar:?]\n"
        "--\n"
        f"{d1}-" + NOT_ENOUGH.format(b=1) + "\n"
        f"{d1}-\t... 12 more\n"
        f"{d2}:" + T + "INFO Kafka Server started (kafka.server.KafkaRaftServer)\n")
    assert sorted((r["line_number"], r["reason"]) for r in out["rejects"].collect()) == \
        [(6, "continuation line"), (7, "continuation line")]
    counts = {r["category"]: r["lines"] for r in out["line_counts"].collect()}
    assert counts == {"event": 3, "other": 1, "attached": 1, "blank": 1, "reject": 2}, counts
    got = sorted((r["line_number"], r["kind"], r["broker"], r["topic"], r["partition"])
                 for r in out["log_events"].collect())
    assert got == [(1, "isr_shrink", 1, "orders", 0), (3, "produce_rejected", 1, "orders", 1),
                   (8, "broker_started", 2, None, None)]


def test_grep_b_over_logrotated_files_finds_the_record_before_the_exception(spark, tmp_path):
    """`grep -r -B1 NotEnoughReplicasException` over logrotate's dated files (`dateext`: `server.log-20191009`): the
    matching line is the exception, the context line before it its record, and no matching line before them tells
    whether `-20191009-` is part of the name or `-n`'s line number: a date is the name's. Both lines are one
    stream, so ReplicaManager.appendToLocalLog's refusal is found (broker 3, of the folder's name)."""
    d3 = "logs/broker-3/server.log-20191009"
    out = read_file(spark, tmp_path, "grep.txt",
        f"{d3}-" + T + "ERROR [ReplicaManager] Error processing append operation on partition orders-1 "
        "(kafka.server.ReplicaManager)\n" + f"{d3}:" + NOT_ENOUGH.format(b=3) + "\n")
    assert out["rejects"].count() == 0, out["rejects"].collect()
    got = sorted((r["line_number"], r["kind"], r["broker"], r["partition"]) for r in out["log_events"].collect())
    assert got == [(2, "produce_rejected", 3, 1)]


def test_grep_n_context_lines_take_the_number_off(spark, tmp_path):
    """`grep -n -A1` over one file names no file: `12:` leads a matching line and `13-` a context line; over several,
    `path:18:` and `path-19-`, the number off the name, also where the two make an hourly file's name (a daily file,
    `server.log.2019-10-09`, at line 19: the matching line has its number). A record led by a date (Strimzi's
    layout) is read too, and behind a Markdown quote."""
    strimzi, d2 = "2024-01-02 03:04:05,678 ", "broker-2/server.log.2019-10-09"
    out = read_file(spark, tmp_path, "grep.txt",
        "12:" + T + REFUSED.format(b=1) + "\n13-" + NOT_ENOUGH.format(b=1) + "\n--\n"
        f"{d2}:18:" + strimzi + REFUSED.format(b=2) + "\n"
        f"{d2}-19-" + NOT_ENOUGH.format(b=2) + "\n"
        f"> {d2}-20-" + strimzi + "INFO Kafka Server started (kafka.server.KafkaRaftServer)\n")
    assert out["rejects"].count() == 0, out["rejects"].collect()
    got = sorted((r["line_number"], r["kind"], r["broker"]) for r in out["log_events"].collect())
    assert got == [(2, "produce_rejected", 1), (5, "produce_rejected", 2), (6, "broker_started", 2)]


def test_unknown_time_zone_is_one_sentence(spark, tmp_path):
    (tmp_path / "server.log").write_text(T + "INFO x\n")
    with pytest.raises(ReplicaflowError, match="not an IANA time zone"):
        read_logs(spark, str(tmp_path), cluster="r", log_timezone="Mars/Olympus")


YAJSW = "INFO|5652/0|Service org.apache.kafka|22-01-19 10:44:46|"


def test_a_java_service_wrappers_fields_come_off_before_the_line(spark, tmp_path):
    """Kafka run as a service under a Java service wrapper (YAJSW, as a product's Windows install runs it) has each
    line the JVM prints behind the wrapper's level, process, name and time: every line was an `unknown prefix before a
    log record` or `no timestamp` reject, so an ISR change there (Partition.maybeShrinkIsr / maybeExpandIsr) was lost.
    The first two lines are verbatim from a KB article (intercax, LogDirFailureChannel.maybeAddOfflineLogDir's error
    and its exception); the Tanuki wrapper's `L|P|T|M` reads the same way. The time read is the record's own."""
    out = read_file(spark, tmp_path, "broker-1/wrapper.log",
        YAJSW + "[2022-01-19 10:44:46,289] ERROR Failed to clean up log for __consumer_offsets-30 in dir "
        "C:\\cygwin64\\opt\\kafka-current\\logs due to IOException (kafka.server.LogDirFailureChannel)\n"
        + YAJSW + "java.nio.file.FileSystemException: C:\\cywin64\\opt\\kafka-current\\logs__consumer_offsets-30\\"
        "00000000000000000000.log.cleaned -> C:\\cygwin64\\opt\\kafka-current\\logs__consumer_offsets-30\\"
        "00000000000000000000.log.swap: The process cannot access the file because it is being used by another "
        "process.\n"
        + YAJSW + "\n"
        + YAJSW.replace("46|", "47|") + "[2022-01-19 10:44:47,001] INFO [Partition orders-0 broker=1] Shrinking ISR "
        "from 1,2 to 1 (kafka.cluster.Partition)\n"
        "INFO   | jvm 1    | 2022/01/19 10:44:48 | [2022-01-19 10:44:48,002] INFO [Partition orders-0 broker=1] "
        "Expanding ISR from 1 to 1,2 (kafka.cluster.Partition)\n")
    assert out["rejects"].count() == 0, out["rejects"].collect()
    assert sorted((r["line_number"], r["kind"], r["broker"], r["ts_ms"]) for r in out["log_events"].collect()) == [
        (4, "isr_shrink", 1, 1642589087001), (5, "isr_expand", 1, 1642589088002)]
    assert {r["category"]: r["lines"] for r in out["line_counts"].collect()} == {
        "other": 1, "attached": 1, "blank": 1, "event": 2}
