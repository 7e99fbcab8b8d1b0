"""The end-to-end commands: each module chains sim/, ingest/, pipeline/ and report/ for one CLI command.

The only layer that knows more than one of those packages (docs/architecture.md): it decides what runs in
which order and passes one package's outputs to the next; it holds no rule and no computation.
Only ``cli`` imports it.
"""

from __future__ import annotations

import sys


def stop_spark() -> None:
    """End the JVM this process started, at once (``session.stop_jvm_now``): the command line's Ctrl-C and
    SIGTERM. Without Spark loaded (``simulate``, ``report``) there is none, and nothing to import."""
    session = sys.modules.get("replicaflow.pipeline.session")
    if session is not None:
        session.stop_jvm_now()
