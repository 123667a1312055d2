"""Upstream Go test tables kept unchanged under tests/fixtures: the names of a table's cases, each
with its line, for the census tests that hold every case translated or left out with a reason."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

# a table's entries in a `testcases := map[string]struct{...}{` literal, indented by two tabs
_CASE = re.compile(r'^\t\t"([^"]+)": \{')


def table_cases(path: Path, first: int, last: int) -> dict[str, int]:
    """The case names of the map literal between lines `first` and `last` (1-based), with their lines."""
    lines = path.read_text().splitlines()
    return {m.group(1): n for n, line in enumerate(lines[first - 1 : last], first) if (m := _CASE.match(line))}


def assert_census(upstream: dict[str, int], rows: Sequence, left_out: Mapping[str, str], reason: Callable[[str], str | None]) -> None:
    """Every upstream case is translated (a row with its name and line) or left out with a reason,
    never both, never twice; `left_out` names only cases the table has."""
    translated = {row.name: row.line for row in rows}
    assert len(translated) == len(rows), "a case translated twice"
    assert {n: upstream.get(n) for n in translated} == translated, "a row names a case or line the kept file lacks"
    assert not set(left_out) - set(upstream), "a case left out that the table lacks"
    assert not set(translated) & set(left_out), "a case both translated and left out"
    assert [n for n in upstream if n not in translated and not reason(n)] == [], "a case neither translated nor left out with a reason"
