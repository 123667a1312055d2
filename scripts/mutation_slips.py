"""Mutants of the everyday slips cosmic-ray's operators do not make: `all` written for `any` (and
`min` for `max`, each way), and one element dropped from a literal tuple, list or set (a key left out
of a tuple of keys). Both were made in the rule code once, one at a time, and the whole suite stayed
green; scripts/mutation.py judges these beside cosmic-ray's own.

Each mutant is the module's whole source with the one slip made, checked to parse."""

from __future__ import annotations

import ast
from dataclasses import dataclass

SWAPS = {"all": "any", "any": "all", "min": "max", "max": "min"}


@dataclass(frozen=True)
class Slip:
    """A mutant made here: the names scripts/mutation.py reads of cosmic-ray's work items."""

    operator_name: str
    start_pos: tuple[int, int]  # (line, column) of what changes, 1-based line
    occurrence: int
    mutated: str
    operator_args: None = None


def _offsets(source: str) -> list[int]:
    """Where each line starts, in characters."""
    starts, total = [], 0
    for line in source.splitlines(keepends=True):
        starts.append(total)
        total += len(line)
    return starts


def _position(source_lines: list[str], starts: list[int], line: int, col_bytes: int) -> int:
    """The character offset of ast's (line, UTF-8 byte column)."""
    text = source_lines[line - 1]
    return starts[line - 1] + len(text.encode("utf-8")[:col_bytes].decode("utf-8", "ignore"))


def _literals(tree: ast.AST) -> list[ast.AST]:
    """Tuple, list and set displays that are values: not assignment targets, not a subscript's
    index tuple (`x[a, b]`), not a del or for target."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            skip.add(id(node.slice))
    return [
        n for n in ast.walk(tree)
        if isinstance(n, (ast.Tuple, ast.List, ast.Set)) and isinstance(getattr(n, "ctx", ast.Load()), ast.Load) and id(n) not in skip and n.elts
    ]


def slips(source: str, inside_annotation) -> list[Slip]:
    """Every slip of the source, in order; `inside_annotation((line, col))` leaves out positions in
    type annotations (strings under `from __future__ import annotations`)."""
    tree = ast.parse(source)
    lines, starts = source.splitlines(keepends=True), _offsets(source)
    original = ast.dump(tree)
    found: list[Slip] = []
    counts: dict[str, int] = {}

    def add(operator: str, where: tuple[int, int], mutated: str) -> None:
        try:
            if ast.dump(ast.parse(mutated)) == original:
                return
        except SyntaxError:
            return  # a slip Python would refuse is no slip a test must catch
        found.append(Slip(operator, where, counts.get(operator, 0), mutated))
        counts[operator] = counts.get(operator, 0) + 1

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SWAPS:
            where = (node.func.lineno, node.func.col_offset)
            if inside_annotation(where):
                continue
            at = _position(lines, starts, *where)
            swapped = SWAPS[node.func.id]
            add(f"gpufleet/SwapBuiltin_{node.func.id}_{swapped}", where, source[:at] + swapped + source[at + len(node.func.id):])
    for node in _literals(tree):
        if inside_annotation((node.lineno, node.col_offset)):
            continue
        elts = node.elts
        for i, element in enumerate(elts):
            begin = _position(lines, starts, element.lineno, element.col_offset)
            end = _position(lines, starts, element.end_lineno, element.end_col_offset)
            if i + 1 < len(elts):
                end = _position(lines, starts, elts[i + 1].lineno, elts[i + 1].col_offset)
            elif i > 0:
                begin = _position(lines, starts, elts[i - 1].end_lineno, elts[i - 1].end_col_offset)
            else:
                # The only element: `(x,)` loses its comma too, `{x}` would become a dict: skip sets.
                if isinstance(node, ast.Set):
                    continue
                rest = source[end:]
                if rest.startswith(","):
                    end += 1
            kind = type(node).__name__
            add(f"gpufleet/DropElement_{kind}", (element.lineno, element.col_offset), source[:begin] + source[end:])
    return found
