"""A command's progress on stderr, and the step that says Spark is starting: shared by ``analyze`` (runner.py,
jobs/analyze.py) and ``plan`` (jobs/plan.py), which both start a session of their own when given none."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from pyspark.sql import SparkSession
from rich.console import Console


@contextlib.contextmanager
def progress_steps(progress: bool) -> Iterator[Callable[[str], None]]:
    """``step(text)`` for a command's long phases: the text on a status line (a spinner on a terminal) and
    logged with its time, on stderr; a no-op without ``progress`` (``-q``). One status at a time: rich
    shows a single live display, so a caller closes its own before calling ``analyze``."""
    if not progress:
        yield lambda text: None
        return
    console = Console(stderr=True, log_path=False)
    with console.status("") as status:
        def step(text: str) -> None:
            status.update(text)
            console.log(text)
        yield step


def session_for(spark: SparkSession | None, step: Callable[[str], None],
                start: Callable[[], SparkSession], command: str = "analyze") -> SparkSession:
    """``spark``, or a session ``start()``-ed with the step that says so (a JVM takes seconds to start),
    in ``command``'s words."""
    if spark is not None:
        return spark
    step(f"{command}: starting Spark")
    return start()
