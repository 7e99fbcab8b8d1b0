"""``runner.once``: ``analyze`` builds each table on a thread of its own, and a step that several tables share
(partition events and state, the lagging replicas, …) is built, and cached, once."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from replicaflow.pipeline.runner import once


def test_once_builds_for_the_first_caller_and_the_others_wait_for_it():
    calls: list[str] = []

    def make() -> object:
        calls.append(threading.current_thread().name)
        time.sleep(0.05)  # long enough that every other thread asks while it is being made
        return object()

    get = once(make)
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda _: get(), range(8)))
    assert len(calls) == 1
    assert all(g is got[0] for g in got)
    assert get() is got[0]


def test_once_builds_again_after_a_failure():
    attempts = []

    def make() -> int:
        attempts.append(1)
        if len(attempts) == 1:
            raise ValueError("first try")
        return 7

    get = once(make)
    with pytest.raises(ValueError, match="first try"):
        get()
    assert get() == 7 and get() == 7
    assert len(attempts) == 2
