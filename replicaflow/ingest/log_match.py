"""The rule table (``log_messages.RULES``) as a few regular expressions, each giving a line's rule and all its
fields from one call.

Matching rule after rule cost two calls per line (``rlike``, then ``regexp_replace`` for the groups), each
decoding the line into a Java string, and one ``regexp_replace`` per rule made the generated code of the
stage outgrow the 64 KB of a Java method, which sends Spark back to row-at-a-time projections. Here each
run of consecutive plain rules (no logIdent condition, not for attached lines) is one alternation
``^(?:(P0)|(P1)|...)``: Java tries the alternatives in order at the start of the text, so the first rule of
the table that matches wins, as with one ``rlike`` after another (every pattern is anchored at the start;
checked below). The replacement text lays the match out in fixed slots, one per field: a field's slot
concatenates, over the alternatives, the group that holds it, and only the alternative that matched took
part, so the slot holds that rule's group (a group that took no part is empty, as in ``regexp_extract``).
The last slots tell the rule: the index of the run's first rule, then the alternatives' whole-match groups
joined by NUL -- the number of NULs before the first character is the position in the run. Rules with a
logIdent condition or for attached lines are tried one by one with the same layout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from replicaflow.ingest.log_messages import LIST_FIELDS, RULES
from replicaflow.ingest.log_text import method_boundary
from replicaflow.ingest.regex_literals import anchored

SEP = "\x00"  # between slots; NUL is taken out of the text first
_FIELDS_PER_METHOD = 5
FIELDS = sorted({name for rule in RULES for name in rule.fields} | {"state"})


@dataclass(frozen=True)
class Matcher:
    """One regular expression call: ``pattern`` (matched at the start of the text) rewrites the whole text
    into ``template``'s slots. ``rules``: the table indices it can give; ``single``: one rule with a
    condition of its own (logIdent, attached line)."""

    rules: tuple[int, ...]
    pattern: str
    template: str

    @property
    def single(self) -> int | None:
        return self.rules[0] if len(self.rules) == 1 else None


def _group(spec: int | tuple) -> int:
    return spec if isinstance(spec, int) else spec[0]


def _template(slots: dict[str, str], first: int, wholes: list[str]) -> str:
    return "".join(SEP + slots[f] for f in FIELDS) + SEP + str(first) + SEP + SEP.join(wholes)


def _run(indices: list[int]) -> Matcher:
    """Consecutive rules as one alternation: rule i's group g is group w_i + g, w_i its whole match."""
    slots, wholes, alternatives, w = dict.fromkeys(FIELDS, ""), [], [], 1
    for i in indices:
        rule = RULES[i]
        alternatives.append(f"({rule.pattern})")
        for name, spec in rule.fields.items():
            slots[name] += f"${w + _group(spec)}"
        wholes.append(f"${w}")
        w += re.compile(rule.pattern).groups + 1
    return Matcher(tuple(indices), "^(?:" + "|".join(alternatives) + r")[\s\S]*", _template(slots, indices[0], wholes))


def single(i: int, dotall: bool = False) -> Matcher:
    """Rule i alone; ``dotall``: ``.`` also matches line terminators (see ``DOTALL``)."""
    rule = RULES[i]
    slots = dict.fromkeys(FIELDS, "")
    for name, spec in rule.fields.items():
        slots[name] = f"${_group(spec)}"
    head = r"(?s)^.*?" if dotall else "^"
    return Matcher((i,), f"{head}(?:{rule.pattern})" + (".*$" if dotall else r"[\s\S]*"), _template(slots, i, ["#"]))


def _matchers() -> list[Matcher]:
    out, run = [], []
    for i, rule in enumerate(RULES):
        if not anchored(rule.pattern):
            raise ValueError(f"rule {i} ({rule.kind}): its pattern must be anchored at the start")
        if rule.ident is None and rule.parent is None:
            run.append(i)
            continue
        if run:
            out.append(_run(run))
            run = []
        out.append(single(i))
    if run:
        out.append(_run(run))
    return out


MATCHERS = _matchers()
# Before, a line's groups came from its rule's pattern with DOTALL (`.` across line terminators) while the
# rule was chosen without it; a text holding a terminator takes its groups that way still.
DOTALL = [single(i, dotall=True) for i in range(len(RULES))]
LINE_TERMINATORS = ("\n", "\r", "\u0085", "\u2028", "\u2029")


def _meta() -> Column:
    """Per rule, as one literal array indexed by rule: its kind, its default state, whether it is for
    attached lines, whether it lists partitions (``explode``), and bit j of ``has`` / ``keep`` / ``sub`` for field ``FIELDS[j]``: the rule has the field,
    keeps it empty as [] (a list group that matched nothing is the empty list, `adding replicas []`, but a
    rule that leaves unchanged fields out says nothing about them) and reads it inside its group with the
    field's sub-pattern. (Bit masks, not a struct field each: Spark generates no code for a stage whose
    rows hold over 100 fields, nested ones included.)"""
    rows = []
    for rule in RULES:
        has = keep = sub = 0
        for j, name in enumerate(FIELDS):
            spec = rule.fields.get(name)
            has |= (spec is not None) << j
            keep |= (name in LIST_FIELDS and isinstance(spec, int) and not rule.sparse) << j
            sub |= isinstance(spec, tuple) << j
        rows.append(F.struct(F.lit(rule.kind).alias("kind"), F.lit(rule.state).cast("string").alias("state"),
                             F.lit(rule.parent is not None).alias("attached"),
                             F.lit(rule.explode is not None).alias("listing"), F.lit(has).cast("long").alias("has"),
                             F.lit(keep).cast("long").alias("keep"), F.lit(sub).cast("long").alias("sub")))
    return F.array(*rows)


def _bit(mask: str, j: int) -> Column:
    return F.col(f"meta.{mask}").bitwiseAND(F.lit(1 << j).cast("long")) != 0


def _subs() -> dict[str, tuple[str, int]]:
    out: dict[str, set] = {}
    for rule in RULES:
        for name, spec in rule.fields.items():
            if isinstance(spec, tuple):
                out.setdefault(name, set()).add(spec[1:])
    if any(len(s) > 1 for s in out.values()):
        raise ValueError("one sub-pattern per field")
    return {name: next(iter(s)) for name, s in out.items()}


def _renamed(state: Column) -> Column:
    """A rule's state as its ``states`` keeps it (a text the rule's own release spells another way)."""
    renames = {f"{i}\x01{text}": kept for i, rule in enumerate(RULES) for text, kept in (rule.states or {}).items()}
    if not renames:
        return state
    table = F.create_map(*[c for key, kept in renames.items() for c in (F.lit(key), F.lit(kept).cast("string"))])
    key = F.concat(F.col("rule").cast("string"), F.lit("\x01"), F.coalesce(state, F.lit("")))
    return F.when(F.map_contains_key(table, key), F.element_at(table, key)).otherwise(state)


def _clean(text: Column) -> Column:
    return F.when(text.contains(SEP), F.replace(text, F.lit(SEP), F.lit("\ufffd"))).otherwise(text)


def match_rules(df: DataFrame, conds: list[Column], body: Column, inner: Column) -> DataFrame:
    """Adds ``rule`` (index in RULES), ``meta`` (see ``_meta``) and ``f_<field>`` (the field's text) to every
    line a rule matches. ``conds[k]``: where ``MATCHERS[k]`` is tried (a run: records; a single rule: its own
    conditions); ``body``: the text of records, ``inner``: of attached lines."""
    df = df.select("*", _clean(body).alias("_body"), _clean(inner).alias("_inner"))
    texts = {False: F.col("_body"), True: F.col("_inner")}
    tried = [F.when(cond, F.regexp_replace(texts[m.single is not None and RULES[m.single].parent is not None],
                                           F.lit(m.pattern), F.lit(m.template))).alias(f"_m{k}")
             for k, (m, cond) in enumerate(zip(MATCHERS, conds, strict=True))]
    df = method_boundary(df.select("*", *tried))
    # (a rewritten text starts with NUL; the text itself has none)
    matched = F.coalesce(*[F.when(F.col(f"_m{k}").startswith(SEP), F.col(f"_m{k}")) for k in range(len(MATCHERS))])
    n = len(FIELDS)
    df = df.select(*[c for c in df.columns if not c.startswith("_m")], F.split(matched, F.lit(SEP), n + 3).alias("_p"))
    wholes = F.col("_p")[n + 2]
    rule = F.col("_p")[n + 1].cast("int") + (F.octet_length(wholes) - F.octet_length(F.ltrim(wholes, F.lit(SEP))))
    df = df.select("*", rule.alias("rule"))
    # (element_at of a literal array at a null index keeps the previous row's value in generated code)
    meta = F.when(F.col("rule").isNotNull(), F.element_at(_meta(), F.col("rule") + 1))
    df = df.select("*", meta.alias("meta"))
    text = F.when(F.col("meta.attached"), F.col("_inner")).otherwise(F.col("_body"))
    terminator = None
    for t in LINE_TERMINATORS:
        terminator = text.contains(t) if terminator is None else terminator | text.contains(t)
    dotall = F.regexp_replace(text, F.element_at(F.array(*[F.lit(m.pattern) for m in DOTALL]), F.col("rule") + 1),
                              F.element_at(F.array(*[F.lit(m.template) for m in DOTALL]), F.col("rule") + 1))
    df = df.select(*[c for c in df.columns if c != "_p"],
                   F.when(F.col("rule").isNotNull() & terminator, F.split(dotall, F.lit(SEP), n + 3))
                   .otherwise(F.col("_p")).alias("_slots"))
    subs = _subs()
    fields = []
    for j, name in enumerate(FIELDS):
        slot = F.col("_slots")[j + 1]
        if name in subs:
            sub, sub_group = subs[name]
            slot = F.when(_bit("sub", j), F.regexp_extract(slot, sub, sub_group)).otherwise(slot)
        value = F.when(_bit("has", j), F.when(_bit("keep", j), slot).otherwise(F.nullif(slot, F.lit(""))))
        if name == "state":
            value = _renamed(F.coalesce(value, F.col("meta.state")))
        fields.append(value.alias(f"f_{name}"))
    df = method_boundary(df.select(*[c for c in df.columns if c not in ("_body", "_inner")]))
    for start in range(0, len(fields), _FIELDS_PER_METHOD):
        df = method_boundary(df.select("*", *fields[start:start + _FIELDS_PER_METHOD]))
    return df.drop("_slots")
