"""One key of Karpenter's requirement algebra: the set of values a label may take, as Karpenter's
scheduler holds it (kubernetes-sigs/karpenter pkg/scheduling/requirement.go @6e7eab7a, v1.14.1;
"L" below are that file's lines).

A requirement is a set of values, or its complement, narrowed by inclusive integer bounds: In is
the set, NotIn and Exists its complement (Exists excludes nothing), DoesNotExist the empty set; Gt
and Lt become Gte and Lte one step in (L87-L108). Intersecting two keeps what both allow, the
larger minValues, and the bounds only while the set is a complement (L181-L214). Plain values, no
I/O; the well-known labels and aliases are facts (catalog karpenter.requirementLabels).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass

# Go's math.MaxInt64: Len() of a complement counts down from it (L303-L308).
MAX_INT = sys.maxsize

_INTEGER = re.compile(r"[+-]?[0-9]+")  # what Go's strconv.Atoi reads (no spaces, no underscores)

IN, NOT_IN, EXISTS, DOES_NOT_EXIST = "In", "NotIn", "Exists", "DoesNotExist"
GT, LT, GTE, LTE = "Gt", "Lt", "Gte", "Lte"


@dataclass(frozen=True)
class Term:
    """A NodeSelectorRequirementWithMinValues: what a requirement writes back (L128-L177)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    min_values: int | None = None


@dataclass(frozen=True)
class Requirement:
    """The values one label key may take (the struct at L36-L43)."""

    key: str
    complement: bool
    values: frozenset[str] = frozenset()
    gte: int | None = None  # inclusive lower bound
    lte: int | None = None  # inclusive upper bound
    min_values: int | None = None

    def operator(self) -> str:
        """L290-L301: a complement excluding nothing is Exists (bounds included), else NotIn; an empty set DoesNotExist."""
        if self.complement:
            return NOT_IN if self.length() < MAX_INT else EXISTS
        return IN if self.values else DOES_NOT_EXIST

    def length(self) -> int:
        return MAX_INT - len(self.values) if self.complement else len(self.values)

    def has(self, value: str) -> bool:
        """Whether the requirement allows the value (L275-L280)."""
        listed = value in self.values
        return (listed != self.complement) and _within(value, self.gte, self.lte)

    def intersection(self, other: Requirement) -> Requirement:
        """What both allow (L181-L214); bounds that cross leave nothing (DoesNotExist)."""
        gte, lte = _max(self.gte, other.gte), _min(self.lte, other.lte)
        min_values = _max(self.min_values, other.min_values)
        if gte is not None and lte is not None and gte > lte:
            return Requirement(self.key, complement=False, min_values=min_values)
        complement = self.complement and other.complement
        if complement:
            values = self.values | other.values
        elif self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        values = frozenset(v for v in values if _within(v, gte, lte))
        if not complement:  # a concrete set keeps no bounds (L209-L212)
            gte = lte = None
        return Requirement(self.key, complement, values, gte, lte, min_values)

    def has_intersection(self, other: Requirement) -> bool:
        """Whether any value is allowed by both (L220-L254)."""
        gte, lte = _max(self.gte, other.gte), _min(self.lte, other.lte)
        if gte is not None and lte is not None and gte > lte:
            return False
        if self.complement and other.complement:
            return True
        if gte is None and lte is None:  # no bounds: set algebra, the simulation's hot path
            if self.complement:
                return not other.values <= self.values
            if other.complement:
                return not self.values <= other.values
            return not self.values.isdisjoint(other.values)
        if self.complement or other.complement:
            concrete, excluded = (other, self) if self.complement else (self, other)
            return any(v not in excluded.values and _within(v, gte, lte) for v in concrete.values)
        return any(v in other.values and _within(v, gte, lte) for v in self.values)

    def any(self) -> str:
        """A value the requirement allows (L256-L272). Karpenter draws a random integer within the
        bounds for a complement; this takes the smallest one it does not exclude, so a plan is the
        same on every run."""
        operator = self.operator()
        if operator == IN:
            return min(self.values)
        if operator == DOES_NOT_EXIST:
            return ""
        value = self.gte if self.gte is not None else 0
        while str(value) in self.values:
            value += 1
        return str(value)

    def term(self) -> Term:
        """L128-L177: a bound first (Gte, then Lte), else the operator and the sorted values."""
        if self.gte is not None:
            return Term(self.key, GTE, (str(self.gte),), self.min_values)
        if self.lte is not None:
            return Term(self.key, LTE, (str(self.lte),), self.min_values)
        return Term(self.key, self.operator(), tuple(sorted(self.values)), self.min_values)

    def terms(self) -> tuple[Term, ...]:
        """Both bounds as two terms where both exist (L121-L126), else the one term."""
        if self.gte is not None and self.lte is not None:
            return (
                Term(self.key, GTE, (str(self.gte),), self.min_values),
                Term(self.key, LTE, (str(self.lte),), self.min_values),
            )
        return (self.term(),)

    def __str__(self) -> str:
        """L310-L332: Go's wording, at most five values listed."""
        operator = self.operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            text = f"{self.key} {operator}"
        else:
            values = sorted(self.values)
            if len(values) > 5:
                values = [*values[:5], f"and {len(values) - 5} others"]
            text = f"{self.key} {operator} [{' '.join(values)}]"
        if self.gte is not None:
            text += f" >={self.gte}"
        if self.lte is not None:
            text += f" <={self.lte}"
        if self.min_values is not None:
            text += f" minValues {self.min_values}"
        return text


def requirement(
    key: str, operator: str, *values: str, min_values: int | None = None, aliases: Mapping[str, str] | None = None
) -> Requirement:
    """NewRequirementWithFlexibility (L48-L110): the key read through its alias, Gt and Lt turned
    into inclusive bounds. The API server validated a bound's value as an integer; one that is not
    (a value read from a foreign plan) is read as Go's strconv.Atoi reads it, 0."""
    key = (aliases or {}).get(key, key)
    if operator == IN:
        return Requirement(key, False, frozenset(values), min_values=min_values)
    if operator == DOES_NOT_EXIST:
        return Requirement(key, False, min_values=min_values)
    if operator == NOT_IN:
        return Requirement(key, True, frozenset(values), min_values=min_values)
    bound = _atoi(values[0] if values else "") if operator in (GT, LT, GTE, LTE) else None
    if operator == GT and bound == MAX_INT:
        return Requirement(key, False)  # Gt MaxInt matches nothing (L89-L92; minValues dropped there too)
    gte = {GT: bound + 1 if bound is not None else None, GTE: bound}.get(operator)
    lte = {LT: bound - 1 if bound is not None else None, LTE: bound}.get(operator)
    return Requirement(key, True, gte=gte, lte=lte, min_values=min_values)


def _atoi(value: str) -> int:
    return int(value) if _INTEGER.fullmatch(value) else 0


def _within(value: str, gte: int | None, lte: int | None) -> bool:
    """L334-L350: with a bound, only an integer within it."""
    if gte is None and lte is None:
        return True
    if not _INTEGER.fullmatch(value):
        return False
    number = _atoi(value)
    return (gte is None or number >= gte) and (lte is None or number <= lte)


def _min(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _max(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)
