"""Broker log ingest: every release family of docs/semantics.md §7, container envelopes, JSON layouts, garbage.

The fixture logs are read once per module and collected; the tests assert on plain Python rows.
"""

from __future__ import annotations

import gzip
import os
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql.pandas.types import from_arrow_schema

from replicaflow.errors import ReplicaflowError
from replicaflow.ingest.log_files import resolve_paths, text_bytes
from replicaflow.ingest.logs import read_logs
from replicaflow.model.version import KafkaVersion
from replicaflow.telemetry.logformat import write_logs
from replicaflow.telemetry.schema import ANALYSIS, TELEMETRY

pytestmark = pytest.mark.spark

DATA = Path(__file__).resolve().parent.parent / "data" / "logs"


def rel(source: str) -> str:
    return source.split("/data/logs/", 1)[-1]


@pytest.fixture(scope="module")
def parsed(spark):
    out = read_logs(spark, str(DATA), cluster="prod")
    rows = {name: [r.asDict(recursive=True) for r in df.collect()] for name, df in out.items()}
    for table in rows.values():
        for r in table:
            if "source" in r:
                r["source"] = rel(r["source"])
    return out, rows


def events_in(rows, directory: str) -> list[dict]:
    return sorted((e for e in rows["log_events"] if e["source"].startswith(directory + "/")),
                  key=lambda e: (e["source"], e["line_number"], e["topic"] or "", e["partition"] or -1))


def kinds(rows, directory: str) -> Counter:
    return Counter(e["kind"] for e in events_in(rows, directory))


def test_schemas_conform_to_the_contract(parsed):
    out, _ = parsed
    for name, schema in [("log_events", ANALYSIS["log_events"]), ("rejects", ANALYSIS["rejects"]),
                         ("isr", TELEMETRY["isr"]), ("leaders", TELEMETRY["leaders"])]:
        expected = [(f.name, f.dataType) for f in from_arrow_schema(schema).fields]
        assert [(f.name, f.dataType) for f in out[name].schema.fields] == expected, name


def test_event_counts_per_family(parsed):
    _, rows = parsed
    assert kinds(rows, "0.10") == {"broker_started": 1, "isr_shrink": 1, "isr_update_failed": 1, "isr_expand": 1, "fetcher_removed": 2,
                                   "fetcher_added": 2, "thread_died": 1}
    assert kinds(rows, "1.1") == {"broker_started": 1, "leader_start": 1, "isr_shrink": 2, "isr_updated": 2,
                                  "isr_expand": 1, "fetcher_added": 1, "isr_update_failed": 1}
    assert kinds(rows, "2.2") == {"isr_shrink": 1, "isr_updated": 1, "thread_died": 1, "reassignment_started": 1,
                                  "reassignment_completed": 1}
    assert kinds(rows, "2.4") == {"isr_shrink": 1, "isr_updated": 1, "leader_start": 1, "partition_failed": 1,
                                  "fetcher_removed": 2, "reassignment_started": 1, "reassignment_caught_up": 1,
                                  "reassignment_completed": 1}
    assert kinds(rows, "2.7") == {"isr_shrink": 1, "isr_updated": 1, "isr_expand": 1, "leader_start": 1}
    assert kinds(rows, "3.0") == {"isr_shrink": 1, "isr_updated": 2}
    assert kinds(rows, "3.6") == {"broker_started": 1, "isr_shrink": 1, "isr_updated": 2, "leader_start": 2,
                                  "reassignment_started": 1, "reassignment_completed": 1}


def test_old_layouts_parse_partition_names_isr_and_timestamps(parsed):
    _, rows = parsed
    started, shrink, failed, expand, *_ = events_in(rows, "0.10")
    assert started["kind"] == "broker_started" and started["broker"] == 1
    assert (shrink["topic"], shrink["partition"], shrink["isr"], shrink["broker"], shrink["ts_ms"]) == \
        ("orders", 0, [1, 2], 1, 1488362401100)
    assert failed["kind"] == "isr_update_failed" and expand["isr"] == [1, 2, 3]
    fetch = {(e["kind"], e["topic"], e["partition"]) for e in events_in(rows, "0.10") if "fetcher" in e["kind"]}
    assert fetch == {(k, t, p) for k in ("fetcher_added", "fetcher_removed") for t, p in (("orders", 1),
                                                                                       ("payments", 0))}
    died = next(e for e in events_in(rows, "0.10") if e["kind"] == "thread_died")
    # the exception line carries the partition; time and broker come from the ERROR line it continues
    assert (died["line_number"], died["topic"], died["partition"], died["broker"], died["ts_ms"]) == \
        (9, "orders", 1, 1, 1488362409000)
    assert died["message"].startswith("[ReplicaFetcherThread-0-2], Error due to")


def test_isr_lists_epochs_and_brokers_exact(parsed):
    _, rows = parsed
    by = {(e["source"], e["line_number"]): e for e in rows["log_events"]}
    assert by[("1.1/broker-2/server.log", 2)]["leader_epoch"] == 3
    assert by[("1.1/broker-2/server.log", 3)]["isr"] == [2, 3]
    assert by[("1.1/broker-2/server.log", 6)]["isr"] == [2, 3, 1]
    assert by[("2.2/broker-3/server.log", 1)]["isr"] == [3, 1]
    died = by[("2.2/broker-3/server.log", 4)]
    assert (died["kind"], died["topic"], died["partition"], died["broker"]) == ("thread_died", "payments", 5, 3)
    assert by[("2.2/broker-3/server.log", 7)]["isr"] == [3, 1, 4]  # reassignment target replicas
    assert by[("2.4/broker-1/server.log", 3)]["leader_epoch"] == 8
    assert by[("2.4/broker-1/controller.log", 1)]["isr"] == [4, 1, 2, 3]
    assert by[("2.4/broker-1/controller.log", 3)]["kind"] == "reassignment_completed"
    lead27 = by[("2.7/broker-2/state-change.log", 1)]
    assert (lead27["isr"], lead27["leader_epoch"], lead27["broker"]) == ([2, 3, 1], 12, 2)
    assert by[("2.7/broker-2/server.log", 2)]["isr"] == [2, 3]
    assert by[("3.0/broker-2/server.log", 1)]["isr"] == [2, 1]  # endOffset: unknown
    assert by[("3.0/broker-2/server.log", 3)]["isr"] == [2, 1, 3]
    assert by[("3.6/broker-1/server.log", 2)]["isr"] == [1]
    assert by[("3.6/broker-1/server.log", 3)]["isr"] == [1]  # (under-min-isr)
    assert by[("3.6/broker-1/server.log", 4)]["isr"] == [1, 2, 3]  # two spaces
    lead36 = by[("3.6/broker-1/state-change.log", 1)]
    assert (lead36["topic"], lead36["partition"], lead36["isr"], lead36["leader_epoch"]) == ("orders", 7, [1, 2, 3], 6)
    kraft = by[("3.6/broker-1/controller.log", 1)]
    assert (kraft["kind"], kraft["topic"], kraft["partition"], kraft["isr"]) == \
        ("reassignment_started", "orders", 8, [1, 3, 4, 2])
    assert by[("3.6/broker-1/controller.log", 2)]["partition"] == 8


def test_container_envelopes_and_json_layouts(parsed):
    _, rows = parsed
    k8s = events_in(rows, "k8s")
    assert [(e["kind"], e["topic"], e["partition"], e["broker"], e["isr"]) for e in k8s] == [
        ("isr_updated", "orders", 9, 4, [4, 5]), ("partition_failed", "orders", 10, 4, None)]
    assert k8s[0]["ts_ms"] == 1704067200000
    docker = events_in(rows, "docker")
    assert [(e["kind"], e["isr"], e["broker"]) for e in docker] == [("isr_shrink", [5, 6], 5),
                                                                   ("isr_updated", [5, 6], 5)]
    js = events_in(rows, "json")
    assert [(e["kind"], e["ts_ms"]) for e in js] == [("isr_updated", 1709251200000), ("leader_start", 1709251201250),
                                                     ("broker_started", 1709251202000)]
    assert js[1]["leader_epoch"] == 4 and js[1]["isr"] == [6, 7]


def test_every_unreadable_line_is_rejected_with_its_reason(parsed):
    _, rows = parsed
    rejects = {(r["source"], r["line_number"]): r["reason"] for r in rows["rejects"]}
    assert all(r["reason"] and r["raw_line"] is not None for r in rows["rejects"])
    g = "garbage/broker-9/server.log"
    assert {n: rejects[(g, n)] for n in (1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13)} == {
        1: "continuation line",
        2: "truncated ISR list",
        3: "truncated or malformed isr_updated message",
        4: "truncated or malformed timestamp/layout",
        5: "invalid timestamp",
        6: "unknown log level 'NOTICE'",
        9: "no timestamp",
        10: "no partition prefix ([Partition topic-N broker=B]) on an ISR message",
        11: "unknown message",
        12: "invalid UTF-8",
        13: "invalid UTF-8",
    }
    # numbers no Kafka line carries (ids, epochs, partitions: ints; offsets: longs)
    too_large = "a number too large for Kafka's "
    assert {n: rejects[(g, n)] for n in range(14, 22)} == {
        14: too_large + "isr list",
        15: too_large + "leader_epoch field",
        16: too_large + "partition field",
        17: too_large + "offset field",
        18: "leader -5 is no broker id",
        19: too_large + "isr list",  # KRaft-era isrWithBrokerEpoch: it failed the whole read before
        20: too_large + "broker list",
        21: too_large + "partition list",
    }
    assert (g, 7) not in rejects and (g, 8) not in rejects  # blank lines are ignored
    assert rejects[("docker/broker-5-json.log", 4)] == "truncated ISR list"
    assert rejects[("docker/broker-5-json.log", 5)].startswith("unreadable JSON log record")
    assert rejects[("json/broker-6/server.json", 5)] == "no timestamp in JSON log record"
    assert rejects[("k8s/my-cluster-kafka-4/0.log", 3)].startswith("partial line (CRI 'P' flag)")
    assert rejects[("k8s/my-cluster-kafka-4/0.log", 4)] == "rest of a partial line (CRI 'P' flag before it)"
    assert len(rejects) == 11 + 8 + 2 + 1 + 2
    raw = {(r["source"], r["line_number"]): r["raw_line"] for r in rows["rejects"]}
    assert raw[(g, 2)].endswith("Shrinking ISR from 9,8,7 to 9,")
    assert "\ufffd" in raw[(g, 12)]


def test_every_line_is_accounted_for(parsed):
    _, rows = parsed
    total = Counter()
    for r in rows["line_counts"]:
        total[r["category"]] += r["lines"]
    physical = sum(len(p.read_bytes().split(b"\n")) - (p.read_bytes().endswith(b"\n"))
                   for p in DATA.rglob("*") if p.is_file())
    assert sum(total.values()) == physical
    assert total["reject"] == len(rows["rejects"])
    per_file = {(r["source"], r["category"]): r["lines"] for r in rows["line_counts"]}
    assert per_file[("0.10/broker-1/server.log", "other")] == 3  # generic INFO and the ERROR header
    assert per_file[("0.10/broker-1/server.log", "attached")] == 4  # stack trace of the dead thread
    assert per_file[("garbage/broker-9/server.log", "blank")] == 2


def test_markup_in_a_topic_field_is_kept_verbatim_for_the_report_to_escape(parsed):
    _, rows = parsed
    (e,) = events_in(rows, "xss")
    assert (e["kind"], e["topic"], e["partition"], e["isr"], e["broker"]) == \
        ("isr_shrink", "<script>alert(1)</script>", 0, [7], 7)
    assert "<script>alert(1)</script>" in e["message"]


def test_isr_and_leaders_history(parsed):
    _, rows = parsed
    isr = sorted(rows["isr"], key=lambda r: r["seq"])
    assert [r["seq"] for r in isr] == sorted({r["seq"] for r in isr})
    assert all(r["cluster"] == "prod" for r in isr + rows["leaders"])

    def history(topic, partition):
        return [(r["isr"], r["leader_epoch"]) for r in isr if (r["topic"], r["partition"]) == (topic, partition)]

    # ZooKeeper era: shrink/expand are the committed writes; the repeated "ISR updated" rows are dropped
    # (the first shrink's `from 2,3,1`: the ISR before it, so that the meters count that shrink)
    assert history("orders", 1) == [([2, 3, 1], 3), ([2, 3], 3), ([2, 3, 1], 3)]
    # ZooKeeper refused the shrink (the next line says "Cached zkVersion ... skip updating ISR"): not committed, and
    # no opening row; the expansion after it is the first change, from the ISR its line names
    assert history("orders", 0) == [([1, 2], None), ([1, 2, 3], None)]
    # 1.1+: the write failed with the broker's ZooKeeper session (Partition.maybeShrinkIsr through
    # KafkaZkClient.conditionalUpdatePath; KafkaScheduler logs the KeeperException of the `isr-expiration` task)
    assert history("sessions", 4) == []
    # 2.7+: shrink/expand are proposals; the committed ISR comes from "ISR updated" and the leader line
    assert history("orders", 5) == [([2, 3, 1], 12), ([2, 3], 12)]
    assert history("orders", 7) == [([1, 2, 3], 6), ([1], 6), ([1, 2, 3], 6)]
    leaders = {(r["topic"], r["partition"], r["leader"], r["leader_epoch"]) for r in rows["leaders"]}
    assert {("orders", 1, 2, 3), ("orders", 3, 1, 8), ("orders", 5, 2, 12), ("orders", 7, 1, 6),
            ("orders", 8, 1, 2), ("orders", 12, 6, 4)} == leaders
    seqs = [r["seq"] for r in isr + rows["leaders"]]
    assert len(seqs) == len(set(seqs))


def test_the_console_copy_beside_server_log_is_not_read_twice(tmp_path):
    """kafka-server-start.sh -daemon writes the JVM's stdout to kafkaServer.out, where log4j's root logger (stdout
    and kafkaAppender, config/log4j.properties) repeats every server.log record: read with its folder, each event
    counted twice. Beside server.log (or its rotated hours) it is left out; alone, or beside no server.log, kept."""
    both, alone = tmp_path / "broker-1", tmp_path / "broker-2"
    for d, names in ((both, ("server.log.2024-01-01-10", "kafkaServer.out", "controller.log")),
                     (alone, ("kafkaServer.out", "state-change.log"))):
        d.mkdir()
        for name in names:
            (d / name).write_text("[2024-01-01 10:00:00,000] INFO x (kafka.server.KafkaServer)\n")
    names = [os.path.relpath(p, tmp_path) for p in resolve_paths(tmp_path)]
    assert names == ["broker-1/controller.log", "broker-1/server.log.2024-01-01-10", "broker-2/kafkaServer.out",
                     "broker-2/state-change.log"]
    assert [os.path.relpath(p, tmp_path) for p in resolve_paths(str(tmp_path / "broker-1" / "*.out"))] == \
        ["broker-1/kafkaServer.out"]  # asked for alone: read


def test_paths_that_match_nothing_raise(tmp_path):
    with pytest.raises(ReplicaflowError, match="'/nonexistent/broker-1/server.log' matches no file"):
        resolve_paths("/nonexistent/broker-1/server.log")
    with pytest.raises(ReplicaflowError, match=r"matches no file"):
        resolve_paths(str(tmp_path / "*.log"))
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "server.log").write_text("x\n")
    (tmp_path / "a" / ".hidden.crc").write_text("x\n")
    assert resolve_paths(str(tmp_path / "**" / "*.log")) == [str(tmp_path / "a" / "server.log")]
    assert resolve_paths(tmp_path) == [str(tmp_path / "a" / "server.log")]


def test_a_broken_link_or_a_pipe_in_a_folder_or_glob_refuses_the_run(tmp_path):
    """A ``server.log`` link whose target was moved away was skipped without a word where a folder or a glob reached
    it, so its broker's events were missing from the analysis; a pipe was skipped too. Each is now named, before
    Spark starts, as a pipe named on its own already was."""
    (tmp_path / "broker-1").mkdir()
    (tmp_path / "broker-1" / "controller.log").write_text("[2024-01-01 10:00:00,000] INFO x (kafka.controller)\n")
    (tmp_path / "broker-1" / "server.log").symlink_to("/var/log/kafka-old/server.log")
    sentence = (r"--logs: .*broker-1/server\.log is a link to a missing file \(/var/log/kafka-old/server\.log\); "
                r"remove the link or name the files to read")
    for given in (tmp_path, str(tmp_path / "broker-1" / "*.log"), tmp_path / "broker-1" / "server.log"):
        with pytest.raises(ReplicaflowError, match=sentence):
            resolve_paths(given)
    (tmp_path / "broker-1" / "server.log").unlink()
    os.mkfifo(tmp_path / "broker-1" / "state-change.log")
    with pytest.raises(ReplicaflowError, match=r"broker-1/state-change\.log is not a regular file \(a device, pipe"):
        resolve_paths(tmp_path)
    (tmp_path / "broker-1" / "state-change.log").unlink()
    assert resolve_paths(tmp_path) == [str(tmp_path / "broker-1" / "controller.log")]


def test_a_file_reached_twice_through_links_is_read_once_and_links_do_not_loop(tmp_path):
    """A versioned install beside a `current` link (`kafka-3.7`, `current -> kafka-3.7`): `**` reached every file
    twice, and every event counted twice (2,326 produce rejections read as 4,652). A link back up (`up -> ..`)
    repeated a file 41 times, and two of them made the walk never end. A file is read once, under the first name
    it was reached by; a `**` follows no link below its root, as a directory's walk does not."""
    (tmp_path / "kafka-3.7" / "broker-1").mkdir(parents=True)
    (tmp_path / "kafka-3.7" / "broker-1" / "server.log").write_text("x\n")
    (tmp_path / "current").symlink_to("kafka-3.7")
    (tmp_path / "kafka-3.7" / "broker-1" / "up").symlink_to("..")
    (tmp_path / "kafka-3.7" / "latest").symlink_to("broker-1")
    one = [str(tmp_path / "kafka-3.7" / "broker-1" / "server.log")]
    assert resolve_paths(str(tmp_path / "**" / "*.log")) == one
    assert resolve_paths(str(tmp_path / "**")) == one
    assert resolve_paths(tmp_path) == one
    assert resolve_paths([str(tmp_path / "kafka-3.7"), str(tmp_path / "current")]) == one
    assert resolve_paths(str(tmp_path / "current")) == [str(tmp_path / "current" / "broker-1" / "server.log")]
    assert resolve_paths(str(tmp_path / "*" / "broker-1" / "*.log")) == [str(tmp_path / "current" / "broker-1" /
                                                                             "server.log")]


def test_logs_that_are_all_empty_are_refused_before_spark(tmp_path):
    """Empty files hold no replication event: `analyze --logs` said so only once Spark had started (42 s on a loaded
    machine). With no describe or log-dirs output beside them, nothing could be analyzed."""
    from replicaflow.ingest.sources import plan
    (tmp_path / "broker-1").mkdir()
    for name in ("server.log", "state-change.log"):
        (tmp_path / "broker-1" / name).write_text("")
    with pytest.raises(ReplicaflowError, match=r"^--logs: the 2 files given are all empty; nothing to analyze"):
        plan([str(tmp_path)])
    with pytest.raises(ReplicaflowError, match=r"^--logs: the file given is empty; nothing to analyze"):
        plan([str(tmp_path / "broker-1" / "server.log")])
    (tmp_path / "broker-1" / "server.log").write_text("[2024-01-01 10:00:00,000] INFO x (kafka.server.KafkaServer)\n")
    assert [len(c.logs) for c in plan([str(tmp_path)])] == [2]


def test_the_bytes_of_log_text_are_known_before_spark_starts(tmp_path):
    """``text_bytes`` sizes the JVM's compilers (``session.SHORT_RUN_LOG_BYTES``): a plain file's size, a gzip
    file's ISIZE trailer (RFC 1952 §2.3.1: the input's length modulo 2^32), never less than the file itself;
    a remote URI or another compressed format is not known, and says so (None)."""
    plain = tmp_path / "server.log"
    plain.write_text("a" * 1000)
    packed = tmp_path / "server.log.1.gz"
    packed.write_bytes(gzip.compress(b"b" * 50_000))
    assert packed.stat().st_size < 1000
    assert text_bytes([str(plain)]) == 1000
    assert text_bytes([str(plain), str(packed)]) == 51_000
    assert text_bytes([str(plain), "hdfs://nn/logs/server.log"]) is None
    (tmp_path / "old.log.bz2").write_bytes(b"BZh9")
    assert text_bytes([str(plain), str(tmp_path / "old.log.bz2")]) is None
    cut = tmp_path / "cut.gz"  # a gzip file cut short: its last bytes are not a trailer, its size still counts
    cut.write_bytes(gzip.compress(b"c" * 50_000)[:40] + b"\0\0\0\0")
    assert text_bytes([str(cut)]) == 44
    assert text_bytes([]) == 0


def test_a_cut_or_corrupt_gzip_log_is_one_sentence_before_spark(tmp_path):
    """Spark failed on a cut ``.gz`` only once it reached it, with a Java error (``FAILED_READ_FILE``), after
    reading and rebuilding the rest. ``resolve_paths`` decompresses each ``.gz`` first (RFC 1952: every
    member to its end and CRC): a whole file and a two-member file (``cat a.gz b.gz``) pass."""
    import random

    text = "".join(f"[2026-01-01 00:00:{i % 60:02d},000] INFO line {i} {random.getrandbits(64):x}\n"
                   for i in range(20_000)).encode()
    packed = gzip.compress(text)
    (tmp_path / "whole.log.1.gz").write_bytes(packed)
    (tmp_path / "two.log.2.gz").write_bytes(gzip.compress(b"a\n") + gzip.compress(b"b\n"))
    assert len(resolve_paths(tmp_path)) == 2
    for name, data, problem in (
            ("cut.log.3.gz", packed[: len(packed) // 2], "its stream ends before its last member does"),
            ("flipped.log.4.gz", packed[:-8] + bytes([packed[-8] ^ 1]) + packed[-7:], "incorrect data check"),
            ("empty.log.5.gz", b"", "its stream ends before its last member does")):
        bad = tmp_path / "bad" / name
        bad.parent.mkdir(exist_ok=True)
        bad.write_bytes(data)
        with pytest.raises(ReplicaflowError) as refused:
            resolve_paths([tmp_path / "whole.log.1.gz", bad])
        assert str(refused.value) == (f"--logs: {bad} is a cut or corrupt .gz file ({problem}); `gzip -t` checks a "
                                      "file, and `zcat FILE > FILE.log` keeps the part that reads")
        bad.unlink()


def test_an_archive_or_a_compression_spark_reads_as_text_is_one_sentence(tmp_path):
    """A support bundle given whole was read as one log: a `.tar.gz`'s members' lines ran together behind their tar
    headers (twelve brokers' lines, one file: stack traces under other brokers' records), a zip or an `.xz` was
    binary noise ("no replication event"). Spark picks a codec by the name, so a gzip or bzip2 file named otherwise
    (`server.log.1` gzipped by a rotation without its suffix) was noise too. Each is one sentence naming the file
    and what to do, before Spark starts; a plain log, a `.gz` and a `.bz2` pass."""
    import bz2
    import io
    import lzma
    import tarfile
    import zipfile
    import zlib

    log = b"[2026-01-01 00:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n"
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w") as t:
        member = tarfile.TarInfo("broker-1/server.log")
        member.size = len(log)
        t.addfile(member, io.BytesIO(log))
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("broker-1/server.log", log)
    ok = {"server.log": log, "server.log.1.gz": gzip.compress(log), "server.log.2.bz2": bz2.compress(log),
          "server.log.3.deflate": zlib.compress(log)}
    for name, data in ok.items():
        (tmp_path / name).write_bytes(data)
    assert len(resolve_paths(tmp_path)) == 4
    cases = {
        "bundle.tar": (tar.getvalue(), "is a tar archive: read as one file, its members' lines would run together; "
                       "extract it (`mkdir DIR && tar xf {f} -C DIR`) and give DIR"),
        "bundle.tar.gz": (gzip.compress(tar.getvalue()), "is a tar archive"),
        "bundle.tgz": (gzip.compress(tar.getvalue()), "is a tar archive"),
        "bundle.tar.bz2": (bz2.compress(tar.getvalue()), "is a tar archive"),
        "bundle.zip": (zipped.getvalue(), "is a zip archive, which Spark cannot read as a log: extract it "
                       "(`unzip {f} -d DIR`) and give DIR"),
        "server.log.xz": (lzma.compress(log), "is xz-compressed, which Spark cannot read as a log: decompress it "
                          "(`xz -dk {f}`) and give what that writes"),
        "server.log.zst": (b"\x28\xb5\x2f\xfd" + log, "is zstd-compressed"),
        "server.log.3": (gzip.compress(log), "is gzip-compressed but its name does not end in .gz: Spark picks the "
                         "codec by the name and would read the compressed bytes as text; give it a name ending in .gz"),
        "server.log.4": (bz2.compress(log), "is bzip2-compressed but its name does not end in .bz2"),
        # plain text under a codec's name: Hadoop decompressed it by the name (a .bz2's lines vanished, exit 0)
        "server.log.5.bz2": (log, "is named like a bzip2 file but its bytes are not bzip2-compressed: Spark picks "
                             "the codec by the name and would drop or fail on its lines; give it a name without .bz2"),
        "server.log.6.deflate": (log, "is named like a deflate file but its bytes are not deflate-compressed"),
        "server.log.7.zst": (log, "is named like a zstd file"),
    }
    for name, (data, sentence) in cases.items():
        bad = tmp_path / "bad" / name
        bad.parent.mkdir(exist_ok=True)
        bad.write_bytes(data)
        with pytest.raises(ReplicaflowError) as refused:
            resolve_paths([tmp_path, bad])
        assert str(refused.value).startswith(f"--logs: {bad} " + sentence.format(f=bad)), str(refused.value)
        bad.unlink()


def test_a_log_name_spark_cannot_read_by_name_is_refused_before_spark(tmp_path):
    """A name that is not UTF-8 (the JVM bridge cannot encode Python's surrogates: the run stopped "out of memory?")
    or that holds a ':' (Hadoop's Path takes it for a URI scheme: a cut-off FAILED_READ_FILE) is one sentence."""
    colon = tmp_path / "server.log.2026-01-01-10:00"
    colon.write_text("x\n")
    with pytest.raises(ReplicaflowError, match="has a ':' in its path, which Spark"):
        resolve_paths(colon)
    latin1 = os.fsdecode(bytes(tmp_path / "server") + b"\xe9.log")
    Path(latin1).write_text("x\n")
    with pytest.raises(ReplicaflowError, match=r"^--logs: the path '.*server\?\.log' is not valid UTF-8; rename it"):
        resolve_paths(latin1)


ROUND_TRIP_VERSIONS = ["0.10", "1.1", "2.2", "2.4", "2.5", "2.7", "3.1", "3.5", "3.7", "4.0"]


def _scenario(version: KafkaVersion, topic: str) -> tuple[list[dict], list[list[int]]]:
    """A leader election then shrinks and expands as the simulator records them; and the committed ISRs."""
    t0, events, committed = 1_767_225_600_000, [], []
    events.append({"ts_ms": t0, "broker": 1, "kind": "leader_start", "topic": topic, "partition": 0,
                   "leader_epoch": 5, "prev_leader_epoch": 4, "prev_leader": 2, "leo": 100, "hw": 100,
                   "isr": [1, 2, 3], "adding": [], "removing": [], "partition_epoch": 10})
    # from 2.6 the leader line names it; before, the first shrink's `from 1,2,3` (the ISR in force before it)
    committed.append([1, 2, 3])
    isr, epoch = [1, 2, 3], 10
    for step, new in enumerate([[1, 2], [1], [1, 3], [1, 3, 2]]):
        ts = t0 + 30_000 * (step + 1)
        kind = "isr_shrink" if len(new) < len(isr) else "isr_expand"
        ev = {"ts_ms": ts, "broker": 1, "kind": kind, "topic": topic, "partition": 0, "old_isr": isr,
              "new_isr": new, "hw": 100, "leo": 100,
              "out_of_sync": [{"broker": b, "leo": 90, "last_caught_up_ms": ts - 30_001} for b in isr if b not in new]}
        epoch += 1
        events += [ev, {"ts_ms": ts + 5, "broker": 1, "kind": "isr_updated", "topic": topic, "partition": 0,
                        "isr": new, "partition_epoch": epoch, "under_min_isr": len(new) < 2}]
        committed.append(new)
        isr = new
    return events, committed


def test_round_trip_render_then_read_recovers_the_isr_sequence(spark, tmp_path):
    expected, paths = {}, []
    for text in ROUND_TRIP_VERSIONS:
        version, topic = KafkaVersion.parse(text), f"t{text.replace('.', '_')}"
        events, committed = _scenario(version, topic)
        write_logs(events, version, tmp_path / text)
        expected[topic] = committed
        paths.append(str(tmp_path / text / "logs"))
    out = read_logs(spark, paths, cluster="sim")
    isr = sorted(out["isr"].collect(), key=lambda r: r["seq"])
    got = {topic: [list(r["isr"]) for r in isr if r["topic"] == topic] for topic in expected}
    assert got == expected
    # Partition.makeLeader logs no leader line before 0.11 (the leader epoch came with KIP-101): ReplicaManager's
    # become-leader line in state-change.log names the leader, with no epoch
    old = {f"t{v.replace('.', '_')}" for v in ROUND_TRIP_VERSIONS if not KafkaVersion.parse(v).at_least("0.11")}
    assert {r["leader_epoch"] for r in isr if r["topic"] not in old} == {5}
    assert {r["leader_epoch"] for r in isr if r["topic"] in old} == {None}
    assert out["rejects"].count() == 0
    assert {(r["topic"], r["leader"], r["leader_epoch"]) for r in out["leaders"].collect()} == \
        {(t, 1, None if t in old else 5) for t in expected}


def test_a_kraft_3_5_shrink_answered_with_a_new_epoch_is_the_leader_lines_isr(spark, tmp_path):
    """KRaft before metadata 3.6 answers the leader's AlterPartition shrink with a new leader epoch: the leader
    logs "Shrinking ISR" and, instead of "ISR updated", its start line of the new epoch with the ISR
    (Partition.makeLeader). The proposal is no committed row of its own; the leader line's row carries the
    shrink under the new epoch, so IsrShrinksPerSec does not count it (docs/semantics.md §6)."""
    from tests.sim.conftest import simulate, small

    logs: list = []
    simulate(small(kafka={"version": "3.5", "controller": "kraft", "replica_lag_time_max": "10s"}, duration="20s",
                   events=[{"at": "0s", "stall_follower": {"broker": 3}}]), log_events=logs)
    write_logs(logs, KafkaVersion.parse("3.5"), tmp_path)
    rows = [r.asDict(recursive=True) for r in read_logs(spark, str(tmp_path / "logs"), cluster="c")["isr"].collect()]
    # the creation's leader line, then the shrink under epoch 1 (the proposal would add ([1, 2], 0) between)
    assert [(r["isr"], r["leader_epoch"]) for r in sorted(rows, key=lambda r: r["seq"])] == [([1, 2, 3], 0),
                                                                                          ([1, 2], 1)]


def test_a_fetcher_line_up_to_2_0_gives_each_partition_its_own_leader(spark, tmp_path):
    """AbstractFetcherManager.addFetcherForPartitions up to 2.0 lists `[t-p, initOffset O to broker
    BrokerEndPoint(L,host,port)] ` per partition (0.10: `[[t,p], …]`): one line can name several leaders, one
    fetcher thread each. From 2.1 the line names one broker for all its partitions: its BrokerEndPoint
    (`BrokerEndPoint(id=L, host=h:p)`, 2.1-2.4), then its id (2.5+), and each partition's leader epoch: the map's
    values are OffsetAndEpoch (2.1-2.7), then InitialFetchState (2.8+, the topic id first from 3.1; a topic id may
    hold `-`). A line cut short keeps the partitions it names in full."""
    (tmp_path / "server.log").write_text(
        "[2018-06-01 08:01:05,000] INFO [ReplicaFetcherManager on broker 2] Added fetcher for partitions "
        "List([orders-4, initOffset 77 to broker BrokerEndPoint(1,kafka-1,9092)] , [orders-7, initOffset 0 to "
        "broker BrokerEndPoint(3,kafka-3,9092)] ) (kafka.server.ReplicaFetcherManager)\n"
        "[2017-03-01 10:00:06,001] INFO [ReplicaFetcherManager on broker 2] Added fetcher for partitions "
        "List([[payments,0], initOffset 0 to broker BrokerEndPoint(4,kafka-4,9092)] , [[payments,1], initOffset "
        "120 to broker BrokerEndPoint(5,kafka-5,9092)] ) (kafka.server.ReplicaFetcherManager)\n"
        "[2020-06-01 08:01:05,000] INFO [ReplicaFetcherManager on broker 2] Added fetcher to broker "
        "BrokerEndPoint(id=6, host=kafka-6:9092) for partitions Map(clicks-0 -> (offset=0, leaderEpoch=3), "
        "clicks-1 -> (offset=5, leaderEpoch=3)) (kafka.server.ReplicaFetcherManager)\n"
        "[2021-06-01 08:01:05,000] INFO [ReplicaFetcherManager on broker 2] Added fetcher to broker 7 for partitions "
        "Map(views-0 -> InitialFetchState(BrokerEndPoint(id=7, host=kafka-7:9092),12,1200)) "
        "(kafka.server.ReplicaFetcherManager)\n"
        "[2024-06-01 08:01:05,000] INFO [ReplicaFetcherManager on broker 2] Added fetcher to broker 8 for partitions "
        "HashMap(my-topic-10 -> InitialFetchState(Some(r0xE-fIE_SWSIcVEMDvZ-Q),BrokerEndPoint(id=8, host=k8:9092),0,5), "
        "my-topic-3 -> InitialFetchState(Some(r0xE-fIE_SWSIcVEMDvZ-Q),BrokerEndPoint(id=8, host=k8:9092),21,0), "
        "my-topic-4 -> InitialFetchState(Some(r0xE-fIE_SWSIcVEMDvZ-Q),Brok (kafka.server.ReplicaFetcherManager)\n")
    events = read_logs(spark, str(tmp_path), cluster="c")["log_events"].collect()
    assert sorted((r["topic"], r["partition"], r["broker"], r["leader"], r["leader_epoch"]) for r in events) == [
        ("clicks", 0, 2, 6, 3), ("clicks", 1, 2, 6, 3), ("my-topic", 3, 2, 8, 21), ("my-topic", 4, 2, 8, None),
        ("my-topic", 10, 2, 8, 0), ("orders", 4, 2, 1, None), ("orders", 7, 2, 3, None), ("payments", 0, 2, 4, None),
        ("payments", 1, 2, 5, None), ("views", 0, 2, 7, 12)]


def test_a_4_x_not_enough_replicas_names_the_isr_after_its_size(spark, tmp_path):
    """Partition.appendRecordsToLeader in 4.x: `The size of the current ISR : N is insufficient to satisfy the
    min.isr requirement of M for partition t-p, live replica(s) broker.id are : Set(a, b)`. N is a count; the ISR
    is the set at the end (1.1-3.9 put the set itself after `ISR `)."""
    (tmp_path / "server.log").write_text(
        "[2025-10-16 16:07:21,017] ERROR [ReplicaManager broker=11] Error processing append operation on partition "
        "AMNt6PcpRZOktSh6v-u00A:orders-0 (kafka.server.ReplicaManager)\n"
        "org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR : 2 is insufficient "
        "to satisfy the min.isr requirement of 3 for partition orders-0, live replica(s) broker.id are : Set(11, 12)\n")
    events = read_logs(spark, str(tmp_path), cluster="c")["log_events"].collect()
    assert [(r["kind"], r["topic"], r["partition"], r["broker"], r["isr"], r["min_isr"]) for r in events] == [
        ("produce_rejected", "orders", 0, 11, [11, 12], 3)]


# kinds the simulator writes that the reader names after what the line says
READ_AS = {"partition_fenced": "fetch_epoch_mismatch", "unclean_leader_election": "unclean_election",
           "fetch_storage_halt": "storage_halt",  # ReplicaFetcherThread's halt before 1.0 is a halt as the produce path's
           "election_started": "preferred_election_started"}  # and unclean_election_started, by the line's election type


def test_every_kind_the_simulator_writes_has_a_reading_rule():
    """A simulated run's logs are read back (``analyze --logs``): a kind ``telemetry.logformat`` renders with no
    rule of ``ingest.log_messages`` gave no event at all (``storage_halt`` was one, real lines of it too)."""
    from replicaflow.ingest.log_messages import RULES
    from replicaflow.telemetry.logformat import RENDERERS

    read = {rule.kind for rule in RULES}
    assert {READ_AS.get(kind, kind) for kind in RENDERERS} <= read


@pytest.mark.parametrize("release", ["0.10", "0.11"])
def test_a_storage_halt_before_1_0_is_read_with_the_partition_its_exception_names(spark, tmp_path, release):
    """ReplicaManager.appendToLocalLog (0.10.0.0, 0.11.0.0): FATAL `Halting due to unrecoverable I/O error while
    handling produce request: ` and the broker halts; the exception below it, Log.append's
    KafkaStorageException, names the log ('t-p'). The FATAL line alone, or another exception under it, gives no
    event."""
    halt = {"kind": "storage_halt", "ts_ms": 1_000, "broker": 2, "topic": "pay.ments-v2", "partition": 11,
            "log_dir": "/data"}
    write_logs([halt], KafkaVersion.parse(release), tmp_path)
    with (tmp_path / "logs" / "broker-2" / "server.log").open("a", encoding="utf-8") as f:
        f.write("[1970-01-01 00:00:02,000] FATAL [Replica Manager on Broker 2]: Halting due to unrecoverable I/O "
                "error while handling produce request:  (kafka.server.ReplicaManager)\n"
                "java.lang.IllegalStateException: I/O exception in append to log 'orders-1'\n")
    out = read_logs(spark, str(tmp_path / "logs"), cluster="c")
    assert [(r["kind"], r["broker"], r["topic"], r["partition"], r["ts_ms"]) for r in out["log_events"].collect()] \
        == [("storage_halt", 2, "pay.ments-v2", 11, 1_000)]
    assert out["rejects"].count() == 0
