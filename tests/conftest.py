"""Shared fixtures: one local SparkSession for the whole test run, and the system tools tests need."""

from __future__ import annotations

import os
import shutil

import pytest


def require_tool(name: str, debian_package: str) -> str:
    """The path of a system tool the test needs (Chromium, promtool).

    Missing: a failure when ``REPLICAFLOW_REQUIRE_TOOLS=1`` (``.ci/run`` sets it, after installing
    the packages), else a skip, so ``make test`` still passes on a machine with only Python and Java.
    """
    path = shutil.which(name)
    if path:
        return path
    message = f"{name} is not installed (Debian: apt-get install {debian_package}; .ci/run installs it)"
    if os.environ.get("REPLICAFLOW_REQUIRE_TOOLS") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def spark():
    from replicaflow.pipeline.session import get_spark

    session = get_spark("local[2]", app_name="replicaflow-tests")
    yield session
    session.stop()


# The files that take longest on the 2-core CI machine (pytest --durations), started first: `make test`
# runs two xdist workers with --dist loadfile, and a long file collected last would run alone at the end.
LONGEST_FIRST = ("test_logs_only_roundtrip.py", "golden/test_golden.py", "pipeline/test_cluster.py",
                 "test_docs_examples.py", "test_logs_only_garbage.py", "ingest/test_real_lines.py",
                 "ingest/test_logs_alone.py", "test_logs_only_crash.py")


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        path = item.nodeid.split("::")[0]
        return next((i for i, name in enumerate(LONGEST_FIRST) if path.endswith(name)), len(LONGEST_FIRST))

    items.sort(key=rank)
