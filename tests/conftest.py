"""Shared fixtures: one local SparkSession for the whole test run."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from replicaflow.pipeline.session import get_spark

    session = get_spark("local[2]", app_name="replicaflow-tests")
    yield session
    session.stop()
