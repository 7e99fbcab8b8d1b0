"""The log reader on arbitrary bytes (hypothesis): it never raises anything but ReplicaflowError, and every
line of every file is accounted for as an event, a reject with its reason, or skipped noise."""

from __future__ import annotations

import pyarrow  # noqa: F401  (the Spark session fixture needs Arrow loaded first)
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from replicaflow.errors import ReplicaflowError
from replicaflow.ingest.logs import read_logs

pytestmark = [pytest.mark.spark]

LINE = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"[2024-01-01 10:00:00,123] INFO ", b"[Partition t-0 broker=1] Shrinking ISR from 1,2,3 to ",
                     b"2024-01-01 10:00:00,123 INFO ISR updated to ", b"\x00\x00\xff\xfe", b"\xef\xbb\xbf"]).flatmap(
        lambda head: st.binary(max_size=200).map(lambda tail: head + tail)),
)


@settings(max_examples=2, deadline=None, phases=[Phase.explicit, Phase.generate], suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@example(files=[b"\x00", b"x" * 5000, b"[2024-01-01 10:00:00,123] INFO \x00\x01 (kafka.x)"])
@given(files=st.lists(st.lists(LINE, min_size=1, max_size=40).map(lambda ls: b"\n".join(ls)), min_size=1,
                      max_size=25))
def test_arbitrary_bytes_only_raise_our_error_and_every_line_is_accounted(spark, tmp_path_factory, files):
    root = tmp_path_factory.mktemp("fuzz")
    for i, data in enumerate(files):
        (root / f"broker-{i}").mkdir()
        (root / f"broker-{i}" / "server.log").write_bytes(data)
    try:
        parsed = read_logs(spark, [str(root)], "fuzz")
        counted = sum(r["lines"] for r in parsed["line_counts"].collect())
        events = parsed["log_events"].collect()
        rejects = parsed["rejects"].collect()
    except ReplicaflowError:
        return
    assert counted >= len(events) + len(rejects)
    assert all(r["reason"] for r in rejects)
    assert all("\x00" not in (r["raw_line"] or "") and len(r["raw_line"] or "") < 1100 for r in rejects)
