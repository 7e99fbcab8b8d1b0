"""One tiny analysis (clusters alpha and beta) and its report, built once for the report tests."""

from __future__ import annotations

import pytest

from replicaflow.report.build import build_report
from tests.report.tiny import write_analysis


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """(directory, tiny data) after `build_report` wrote report.html, metrics.om and summary.json."""
    root = tmp_path_factory.mktemp("report")
    data = write_analysis(root, ("alpha", "beta"))
    build_report(root)
    return root, data


@pytest.fixture(scope="session")
def built_alpha(tmp_path_factory):
    """Only cluster alpha (one controller, so Strimzi's cluster-wide `sum()` rules apply unchanged)."""
    root = tmp_path_factory.mktemp("alpha")
    data = write_analysis(root, ("alpha",))
    build_report(root)
    return root, data
