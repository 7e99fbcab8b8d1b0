"""The literal text a regular expression needs, so that a cheap string test can skip it.

A regular expression call costs Spark a decoding of the whole line into a Java string; a rule table
tried in order on every line pays that once per rule. ``needed`` reads a pattern's syntax tree and
returns what any text it finds a match in must hold: a prefix (the pattern is anchored with ``^``
and starts with literal characters) and a literal run that every match contains. ``startswith`` and
``contains`` compare bytes without decoding, so ``guard & text.rlike(p)`` gives the same answer as
``text.rlike(p)`` at a fraction of the cost on the lines that cannot match.
"""

from __future__ import annotations

import re
import re._constants as C  # noqa: N812 -- the opcodes of Python's own regex parser
import re._parser as P  # noqa: N812

from pyspark.sql import Column
from pyspark.sql import functions as F

_MAX_ALTERNATIVES = 8
_OPAQUE_FLAGS = re.IGNORECASE | re.MULTILINE | re.VERBOSE | re.LOCALE


def needed(pattern: str) -> list[tuple[str, str]]:
    """Alternatives ``(prefix, run)``: a text in which ``pattern`` finds a match starts with ``prefix``
    and contains ``run``, for at least one alternative; ``[("", "")]`` when nothing is known (flags
    that change literal matching, or syntax Python's parser does not read)."""
    try:
        tree = P.parse(pattern)
    except re.error:
        return [("", "")]
    if tree.state.flags & _OPAQUE_FLAGS:
        return [("", "")]
    out = _alternatives(_inline(list(tree)))
    return out if len(out) <= _MAX_ALTERNATIVES else [("", "")]


def anchored(pattern: str) -> bool:
    """Every match of ``pattern`` starts at the start of the text (``^``, or ``^`` in each alternative)."""
    items = list(P.parse(pattern))
    if items and items[0] == (C.AT, C.AT_BEGINNING):
        return True
    return len(items) == 1 and items[0][0] is C.BRANCH and \
        all(list(b) and list(b)[0] == (C.AT, C.AT_BEGINNING) for b in items[0][1][1])


def _inline(items: list) -> list:
    """Capturing groups without flags of their own are a sequence like any other."""
    out = []
    for op, av in items:
        if op is C.SUBPATTERN and not av[1] and not av[2]:
            out += _inline(list(av[3]))
        else:
            out.append((op, av))
    return out


def _alternatives(items: list) -> list[tuple[str, str]]:
    if len(items) == 1 and items[0][0] is C.BRANCH:
        return [alt for branch in items[0][1][1] for alt in _alternatives(_inline(list(branch)))]
    anchored = bool(items) and items[0] == (C.AT, C.AT_BEGINNING)
    rest = items[1:] if anchored else items
    if anchored and rest and rest[0][0] is C.BRANCH:  # ^(?:a|b)c: each of ^ac and ^bc
        head = [(C.AT, C.AT_BEGINNING)]
        return [alt for branch in rest[0][1][1]
                for alt in _alternatives(head + _inline(list(branch)) + rest[1:])]
    prefix = ""
    if anchored:
        for op, av in rest:
            if op is not C.LITERAL:
                break
            prefix += chr(av)
    best = run = ""
    for op, av in items:
        run = run + chr(av) if op is C.LITERAL else ""
        best = max(best, run, key=len)
    return [(prefix, "" if best in prefix else best)]


def guard(text: Column, pattern: str) -> Column:
    """A necessary condition for ``text.rlike(pattern)`` made of ``startswith`` and ``contains`` only."""
    cond = None
    for prefix, run in needed(pattern):
        alt = F.lit(True)
        if prefix:
            alt = text.startswith(prefix)
        if run:
            alt = alt & text.contains(run) if prefix else text.contains(run)
        cond = alt if cond is None else cond | alt
    return cond


def guarded_rlike(text: Column, pattern: str) -> Column:
    """``text.rlike(pattern)``, with the regular expression run only where ``guard`` holds."""
    return guard(text, pattern) & text.rlike(pattern)
