"""Every problem of a scenario at once, each with its file, YAML line and field path.

Validation goes on past the first problem so an operator fixes a file in one round: the loader
adds each problem here and raises one ReplicaflowError listing them all at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError

from replicaflow.errors import ReplicaflowError, show
from replicaflow.model.units import counted
from replicaflow.sim.scenario.yamldoc import field_path, load

MAX_LISTED = 50  # a file with thousands of bad rows still gives a readable message


@dataclass(frozen=True)
class Problem:
    loc: tuple
    message: str
    source: str | None = None  # None: the scenario file itself; else a reassignment file it names
    line: int | None = None  # when known without a line map (a JSON syntax error)


# pydantic's words for a wrong container ("a valid tuple", "a valid dictionary or instance of BrokerSpec") in
# the words of a YAML file
_PLAIN = {"tuple_type": "a list", "list_type": "a list", "dict_type": "a mapping of fields",
          "model_type": "a mapping of fields", "model_attributes_type": "a mapping of fields"}


def describe(error: dict) -> str:
    """One pydantic error as the rest of the sentence after the field path."""
    kind, msg, found = error["type"], error["msg"], error.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    expected = _PLAIN.get(kind) or msg.removeprefix("Input should be ").removeprefix("Value should have ")
    if kind in ("too_short", "too_long"):
        ctx = error.get("ctx", {})
        bound = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        return f"expected {'at least' if kind == 'too_short' else 'at most'} {counted(bound, 'item')}, found {ctx.get('actual_length')}"
    return f"expected {expected}, found {show(found)}"


@dataclass
class Problems:
    """The problems found so far, and the line maps that place them in their files."""

    source: str
    lines: dict[str | None, dict[tuple, int]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # other files, mapped to lines only on a problem
    found: list[Problem] = field(default_factory=list)

    def add(self, loc: tuple, message: str, source: str | None = None, line: int | None = None) -> None:
        self.found.append(Problem(tuple(loc), message, source, line))

    def add_validation(self, exc: ValidationError, prefix: tuple = (), source: str | None = None) -> None:
        """All errors of one pydantic validation; an event's ``at``, ``throttle`` and ``additional`` sit beside its
        kind."""
        errors = exc.errors()
        for error in errors:
            if error["type"] == "too_short" and any(  # pydantic counts only the valid items of a list
                    len(e["loc"]) > len(error["loc"]) and tuple(e["loc"][:len(error["loc"])]) == tuple(error["loc"])
                    for e in errors):
                continue
            loc = prefix + tuple(error["loc"])
            if len(loc) >= 4 and loc[0] == "events" and loc[3] in ("at", "throttle", "additional"):
                loc = loc[:2] + loc[3:]
            self.add(loc, describe(error), source)

    def __bool__(self) -> bool:
        return bool(self.found)

    def where(self, problem: Problem) -> str:
        """``file:line: path`` — the line of the deepest part of the path the file has."""
        source = problem.source or self.source
        line = problem.line
        if line is None:
            lines = self._lines(problem.source)
            for n in range(len(problem.loc), -1, -1):
                if problem.loc[:n] in lines:
                    line = lines[problem.loc[:n]]
                    break
        path = field_path(problem.loc)
        return f"{source}{f':{line}' if line else ''}{f': {path}' if path else ''}"

    def _order(self, problem: Problem) -> tuple:
        """The scenario file first, then each plan file; within a file, by line."""
        line = problem.line or next((self._lines(problem.source)[problem.loc[:n]]
                                     for n in range(len(problem.loc), -1, -1)
                                     if problem.loc[:n] in self._lines(problem.source)), 0)
        return (problem.source is not None, problem.source or "", line)

    def _lines(self, source: str | None) -> dict[tuple, int]:
        if source not in self.lines and source in self.texts:
            try:  # JSON is YAML; a JSON file YAML cannot read just has no lines
                self.lines[source] = load(self.texts[source], source).lines
            except ReplicaflowError:
                self.lines[source] = {}
        return self.lines.get(source, {})

    def sentence(self, problem: Problem) -> str:
        return f"{self.where(problem)}: {problem.message}"

    def raise_if_any(self) -> None:
        """One problem: one sentence. Several: a count, then one sentence per line, in the order found."""
        if not self.found:
            return
        unique = sorted(dict.fromkeys(self.found), key=self._order)
        if len(unique) == 1:
            raise ReplicaflowError(self.sentence(unique[0]))
        listed = [f"  {self.sentence(p)}" for p in unique[:MAX_LISTED]]
        if len(unique) > MAX_LISTED:
            listed.append(f"  … and {len(unique) - MAX_LISTED} more")
        raise ReplicaflowError(f"{self.source}: {len(unique)} problems\n" + "\n".join(listed))
