"""The literal guards put before the reader's regular expressions (ingest/regex_literals.py): a guard
must hold on every text its pattern finds a match in, or the reader would miss a line."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replicaflow.ingest.log_messages import RULES
from replicaflow.ingest.log_truncation import TRUNCATED_STARTS
from replicaflow.ingest.logs import PARENTS
from replicaflow.ingest.regex_literals import needed

PATTERNS = sorted({r.pattern for r in RULES} | {r.ident for r in RULES if r.ident} | {p for _, p in TRUNCATED_STARTS}
                  | set(PARENTS))


def holds(pattern: str, text: str) -> bool:
    return any(text.startswith(prefix) and run in text for prefix, run in needed(pattern))


@pytest.mark.parametrize(("pattern", "want"), [
    (r"^Shrinking ISR (?:for partition \[[^\[\]]+,\d+\] )?from (\d+)", [("Shrinking ISR ", "")]),
    (r"^(?:Broker (\d+) h|H)andling LeaderAndIsr", [("Broker ", " handling LeaderAndIsr"),
                                                     ("Handling LeaderAndIsr", "")]),
    (r"^Leader \S+ starts at|starts at Leader Epoch", [("Leader ", " starts at"), ("", "starts at Leader Epoch")]),
    (r"^(?:Kafka Server )?started$", [("", "started")]),
    (r"(?i)^broker-(\d+)", [("", "")]),        # a flag that changes what a literal matches: nothing known
    (r"^(?m)x", [("", "")]),
    (r"^(\d+) (x)y(z)$", [("", " xyz")]),     # capturing groups are part of the sequence
    (r"^a(?<!,)bc", [("a", "bc")]),           # a zero-width assertion ends a run
])
def test_needed_reads_prefixes_runs_and_alternatives(pattern, want):
    assert needed(pattern) == want


def test_every_rule_is_guarded_by_some_literal():
    assert all(needed(p) != [("", "")] for p in PATTERNS)


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_the_guard_holds_on_every_text_the_pattern_finds_a_match_in(pattern, data):
    text = data.draw(st.from_regex(pattern, alphabet=st.characters(codec="utf-8")))
    assert re.search(pattern, text)
    assert holds(pattern, text), (text, needed(pattern))
