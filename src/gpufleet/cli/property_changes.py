"""Property changes as lines a person reads: the entries a list gains or loses whole become one line,
a text of many lines reads as its line counts and the lines that changed, and every value prints as
the reviewer would write it (unknowns as "known after apply")."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping

from gpufleet.engine.runtime import UNKNOWN
from gpufleet.plans import replacement

_ENTRY = re.compile(r"^([^\[]+)\[(\d+)\](.*)$")


def _runs(numbers: list[int]) -> str:
    """1, 2, 3, 7 -> '1-3, 7'."""
    out, start = [], None
    for i, n in enumerate(numbers):
        start = n if start is None else start
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            out.append(f"{start}-{n}" if n != start else str(n))
            start = None
    return ", ".join(out)


def _entries(inputs: Mapping) -> set[tuple[str, int]]:
    """The (list, index) entries that exist in a resource's inputs."""
    return {(m.group(1), int(m.group(2))) for path in replacement.flatten(dict(inputs)) if (m := _ENTRY.match(path))}


def summarize(changes: list[dict], before: Mapping, after: Mapping) -> list[str]:
    """Property changes as lines a person reads: the entries a list gains or loses whole become one
    line ("networkInterfaces: 16 entries removed ([17]-[32]; networkCardIndex 16-31)"); every other
    change stays a line of its own."""
    entries: dict[tuple[str, int], list[dict]] = {}
    for c in changes:
        m = _ENTRY.match(c["path"])
        if m:
            entries.setdefault((m.group(1), int(m.group(2))), []).append(c)
    had, has = _entries(before), _entries(after)
    whole: dict[tuple[str, str], list[int]] = {}
    for prop, i in entries:
        if (prop, i) in had and (prop, i) not in has:
            whole.setdefault((prop, "removed"), []).append(i)
        elif (prop, i) in has and (prop, i) not in had:
            whole.setdefault((prop, "added"), []).append(i)
    grouped = {(prop, i) for (prop, _), idx in whole.items() for i in idx}
    lines = []
    for (prop, how), idx in sorted(whole.items()):
        idx.sort()
        cards = sorted(
            {
                c["before" if how == "removed" else "after"]
                for i in idx
                for c in entries[(prop, i)]
                if c["path"].endswith(".networkCardIndex")
            }
        )
        detail = f"; networkCardIndex {_runs(cards)}" if cards and all(isinstance(x, int) for x in cards) else ""
        side = "before" if how == "removed" else "after"
        fields = [c for i in idx for c in entries[(prop, i)]]
        if len(idx) == 1 and len(fields) <= 6:  # one small entry reads best whole
            prefix = f"{prop}[{idx[0]}]."
            detail = ": " + ", ".join(f"{c['path'].removeprefix(prefix)}={value_text(c[side])}" for c in fields)
        count = "1 entry" if len(idx) == 1 else f"{len(idx)} entries"
        lines.append(f"{prop}: {count} {how} ([{_runs(idx).replace('-', ']-[').replace(', ', '], [')}]{detail})")
    for c in changes:
        m = _ENTRY.match(c["path"])
        if not (m and (m.group(1), int(m.group(2))) in grouped):
            lines.append(f"{c['path']}: {_change(c['before'], c['after'])}")
    return lines


def _change(before, after) -> str:
    """One property's change; a text of many lines (a function's source, a user-data script) reads
    as its line counts and the lines that differ, not as two whole texts."""
    if not any(isinstance(v, str) and "\n" in v for v in (before, after)):
        return f"{value_text(before)} -> {value_text(after)}"
    old = before.splitlines() if isinstance(before, str) else []
    new = after.splitlines() if isinstance(after, str) else []
    changed = [
        line[0] + " " + line[1:].strip()
        for line in difflib.unified_diff(old, new, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()
    ]
    shown = changed[:_LINES_SHOWN] + ([f"... {len(changed) - _LINES_SHOWN} more"] if len(changed) > _LINES_SHOWN else [])
    detail = f" ({' | '.join(shown)})" if shown else " (whitespace only)"
    return f"text of {len(old)} lines -> {len(new)} lines{detail}"


_LINES_SHOWN = 4


def value_text(v) -> str:
    if v is None:
        return "(none)"
    if v == UNKNOWN:
        return "(known after apply)"
    return json.dumps(v) if not isinstance(v, str) else v
