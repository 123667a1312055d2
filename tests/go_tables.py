"""Upstream Go test tables kept unchanged under tests/fixtures: the names of a table's cases, each
with its line, for the census tests that hold every case translated or left out with a reason."""

from __future__ import annotations

import re
from pathlib import Path

# a table's entries in a `testcases := map[string]struct{...}{` literal, indented by two tabs
_CASE = re.compile(r'^\t\t"([^"]+)": \{')


def table_cases(path: Path, first: int, last: int) -> dict[str, int]:
    """The case names of the map literal between lines `first` and `last` (1-based), with their lines."""
    lines = path.read_text().splitlines()
    return {m.group(1): n for n, line in enumerate(lines[first - 1 : last], first) if (m := _CASE.match(line))}
