"""Hostile log input (docs/logs.md, "Hostile input"): a 4 KB log-shaped line with a long ISR list, a long
dotted token, 10 MB lines, binary bytes, UTF-16 and BOM files -> no crash, bounded rejects without control
characters, and the other lines of the same files still read."""

from __future__ import annotations

import pytest

from replicaflow.ingest.log_layouts import REJECT_SHOWN_CHARS
from replicaflow.ingest.log_text import MAX_LINE_CHARS
from replicaflow.ingest.logs import read_logs

pytestmark = pytest.mark.spark

GOOD = "[2024-01-01 10:00:00,000] INFO [Partition t-0 broker=1] Shrinking ISR from 1,2 to 1 (kafka.cluster.Partition)"


@pytest.fixture(scope="module")
def hostile(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    long_isr = ",".join(str(i) for i in range(1, 1000))  # ~4 KB
    files = {
        "broker-1/server.log": "\n".join([
            f"[2024-01-01 10:00:00,000] INFO [Partition t-1 broker=1] Shrinking ISR from {long_isr},1000 to {long_isr} "
            "(kafka.cluster.Partition)",
            "[2024-01-01 10:00:00,000] ERROR x " + "a." * 3000 + "Exception",
            "org." + "a." * 3000 + "SomeException: boom",
            GOOD]).encode() + b"\n",
        "broker-2/server.log": ("x" * (10 << 20)).encode() + b"\n" + GOOD.encode() + b"\n",
        "broker-3/server.log": ("[2024-01-01 10:00:00,000] INFO [Partition t-0 broker=3] Shrinking ISR from "
                                + "1," * (5 << 20) + " to 1 (kafka.cluster.Partition)").encode() + b"\n"
                               + GOOD.encode() + b"\n",
        "broker-4/server.log": b"\x00\x01\x02\xff\xfe binary \x1b[31m\n" + GOOD.encode() + b"\n",
        "broker-5/server.log": (GOOD + "\n" + GOOD + "\n").encode("utf-16"),  # with its BOM
        "broker-6/server.log": b"\xef\xbb\xbf" + GOOD.encode() + b"\n",
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True)
        (root / rel).write_bytes(data)
    out = read_logs(spark, str(root), cluster="h")
    return ({(r["source"].split("/")[-2], r["line_number"]): r.asDict() for r in out["log_events"].collect()},
            {(r["source"].split("/")[-2], r["line_number"]): r.asDict() for r in out["rejects"].collect()})


def test_a_4kb_isr_list_and_long_dotted_tokens_are_read_without_stack_overflow(hostile):
    events, rejects = hostile
    assert events[("broker-1", 1)]["isr"] == list(range(1, 1000))
    assert ("broker-1", 2) not in rejects and ("broker-1", 2) not in events  # an ERROR line, no event
    assert events[("broker-1", 4)]["kind"] == "isr_shrink"


def test_10mb_lines_are_rejected_with_a_bounded_prefix_and_the_rest_is_read(hostile):
    events, rejects = hostile
    for broker in ("broker-2", "broker-3"):
        r = rejects[(broker, 1)]
        assert r["reason"].startswith(f"line longer than {MAX_LINE_CHARS} characters")
        assert len(r["raw_line"]) < REJECT_SHOWN_CHARS + 40 and r["raw_line"].endswith("more characters)")
        assert events[(broker, 2)]["isr"] == [1]


def test_binary_bytes_never_reach_rejects_raw(hostile):
    events, rejects = hostile
    raw = rejects[("broker-4", 1)]["raw_line"]
    assert rejects[("broker-4", 1)]["reason"] == "invalid UTF-8"
    assert not any(ord(c) < 32 and c != "\t" for c in raw) and "\x7f" not in raw
    assert events[("broker-4", 2)]["kind"] == "isr_shrink"


def test_utf16_and_bom_files_are_read(hostile):
    events, rejects = hostile
    assert [events[("broker-5", n)]["isr"] for n in (1, 2)] == [[1], [1]]
    assert events[("broker-6", 1)]["topic"] == "t"
    assert not [k for k in rejects if k[0] in ("broker-5", "broker-6")]
