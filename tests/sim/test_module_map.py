"""The module map of docs/simulator.md: each sim/ module imports only the sim/ modules below it."""

from __future__ import annotations

import ast
from pathlib import Path

import replicaflow.sim

SIM = Path(replicaflow.sim.__file__).parent

# module → the sim/ modules it may import (``scenario`` is the input model every module may read)
MAY_IMPORT = {
    "state": set(),
    "clock": set(),
    "emitter": {"state"},
    "quota_manager": {"state"},
    "configs": {"state", "emitter", "quota_manager"},
    "fetcher_manager": {"state", "emitter", "quota_manager"},
    "replica_manager": {"state", "emitter", "configs", "fetcher_manager"},
    "partition": {"state", "emitter", "configs", "fetcher_manager"},
    "controller": {"state", "clock", "emitter", "configs", "fetcher_manager", "partition"},
    "faults": {"state", "clock", "emitter", "quota_manager", "fetcher_manager", "replica_manager", "partition",
               "controller"},
    "scrape": {"state", "partition", "controller", "replica_manager"},
    "engine": {"state", "clock", "emitter", "quota_manager", "configs", "fetcher_manager", "replica_manager",
               "partition", "controller", "faults", "scrape"},
    "snapshot": {"state", "configs"},
    "runner": {"engine", "snapshot"},
}


def sim_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("replicaflow.sim."):
            found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("replicaflow.sim."))
    return found - {"scenario"}


def test_every_module_is_on_the_map_and_imports_only_what_it_may():
    modules = {p.stem for p in SIM.glob("*.py")} - {"__init__", "scenario"}
    assert modules == set(MAY_IMPORT)
    wrong = {m: sim_imports(SIM / f"{m}.py") - MAY_IMPORT[m] for m in MAY_IMPORT}
    assert not any(wrong.values()), wrong


def test_no_module_over_500_lines():
    sizes = {p.name: len(p.read_text().splitlines()) for p in SIM.glob("*.py") if p.stem != "scenario"}
    assert max(sizes.values()) <= 500, sizes
