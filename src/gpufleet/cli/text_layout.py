"""Tables and trees laid out as text, in rich's look, fast enough for a preview of thousands of rows.

rich measures and wraps every cell through its renderables: the report of the largest ECS stack
(4,000 resources in the tree, 2,000 workloads and 2,000 tasks in the tables) took 1.5 s to lay
out, longer than judging the stack. Here a column's width is its longest line, and a row is only
wrapped when the table does not fit the console; the result goes to the console as one Text (its
styles kept: bold headers, bold totals, bold component names in the tree).
"""

from __future__ import annotations

import re
import textwrap

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

# rich's box.HEAVY_HEAD, the look of rich's default table.
_TOP = ("┏", "━", "┳", "┓")
_HEAD = "┃"
_HEAD_RULE = ("┡", "━", "╇", "┩")
_BODY = "│"
_BOTTOM = ("└", "─", "┴", "┘")


# A line may also break after a slash ("min/des/max", a namespace/name) and after the "ecs." that
# begins Alibaba's instance types (ecs.gn6i-c24g1.24xlarge keeps its family whole), never at a
# hyphen or another dot: names such as "ml-neuron-inference", "p5.48xlarge" and versions stay whole.
_BREAK_AFTER = r"(?<=/)(?=[^\s/])|(?<=(?<![\w.-])ecs\.)(?=\w)"


class _Wrapper(textwrap.TextWrapper):
    wordsep_simple_re = re.compile(r"(\s+)|" + _BREAK_AFTER)


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            lines.append(line)
        else:
            lines += _Wrapper(width, break_long_words=True, break_on_hyphens=False).wrap(line) or [""]
    return lines


def _longest_word(text: str) -> int:
    """The widest piece a line of the text cannot be broken inside (see _Wrapper)."""
    return max((cell_len(part) for word in text.split() for part in re.split(_BREAK_AFTER, word)), default=0)


class TextTable:
    """A titled table of text cells: headers, rows, and bold rows (totals)."""

    def __init__(self, title: str, columns: list[str]) -> None:
        self.title = title
        self.columns = columns
        self.rows: list[tuple[list[str], bool]] = []

    def add_row(self, *cells: str, bold: bool = False) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{self.title}: a row of {len(cells)} cells in a table of {len(self.columns)} columns")
        self.rows.append(([str(c) for c in cells], bold))

    def widths(self, width: int) -> list[int]:
        """Each column's longest line; in a console too narrow, the widest columns narrowed first
        (as rich collapses a table), each down to its longest word. A word that cannot be kept
        whole (the longest first, until the others fit) holds its column only to an even share of
        the console, where it folds: one long name does not squeeze every other column to its
        words. A console narrower than a character a column leaves the table wider than it."""
        cells = [self.columns, *(row for row, _ in self.rows)]
        natural = [max(cell_len(line) for cell in column for line in cell.split("\n")) for column in zip(*cells)]
        room = width - (3 * len(self.columns) + 1)
        floors = [max(_longest_word(cell) for cell in column) for column in zip(*cells)]
        share = max(room // len(floors), 1)
        for i in sorted(range(len(floors)), key=lambda i: -floors[i]):
            if sum(floors) > room:
                floors[i] = min(floors[i], share)
        widths = list(natural)
        excess = sum(widths) - room
        while excess > 0:
            narrowable = [i for i, w in enumerate(widths) if w > floors[i]]
            if not narrowable:
                break
            widest = max(narrowable, key=lambda i: widths[i])
            widths[widest] -= 1
            excess -= 1
        return widths

    def render(self, width: int) -> Text:
        widths = self.widths(width)
        out = Text()
        out.append(self.title + "\n", style="italic")

        def rule(parts: tuple[str, str, str, str]) -> None:
            left, line, cross, right = parts
            out.append(left + cross.join(line * (w + 2) for w in widths) + right + "\n")

        def lines(cells: list[str], bar: str, style: str | None, bottom: bool) -> None:
            wrapped = [_wrap(cell, w) for cell, w in zip(cells, widths)]
            height = max(len(w) for w in wrapped)
            # Headers sit on their last line, as rich aligns them; cells start at the top.
            starts = [height - len(w) if bottom else 0 for w in wrapped]
            for k in range(height):
                for i, column in enumerate(wrapped):
                    out.append(bar)
                    line = column[k - starts[i]] if starts[i] <= k < starts[i] + len(column) else ""
                    out.append(" " + line + " " * (widths[i] - cell_len(line) + 1), style=style)
                out.append(bar + "\n")

        rule(_TOP)
        lines(self.columns, _HEAD, "bold", bottom=True)
        rule(_HEAD_RULE)
        for cells, bold in self.rows:
            lines(cells, _BODY, "bold" if bold else None, bottom=False)
        rule(_BOTTOM)
        return out

    def print(self, console: Console) -> None:
        console.print(self.render(console.width), end="", soft_wrap=True)


class TextTree:
    """A tree of labels with rich's guides; a label may be bold (a component)."""

    def __init__(self, label: str, bold: bool = False) -> None:
        self.label = label
        self.bold = bold
        self.children: list[TextTree] = []

    def add(self, label: str, bold: bool = False) -> TextTree:
        child = TextTree(label, bold)
        self.children.append(child)
        return child

    def render(self, width: int) -> Text:
        out = Text()
        # Iterative, so a deep tree does not meet the recursion limit: (node, prefix of its first
        # line, prefix of its further lines).
        stack = [(self, "", "")]
        while stack:
            node, first, rest = stack.pop()
            label = _wrap(node.label, max(width - cell_len(first), 8))
            for k, line in enumerate(label):
                out.append(first if k == 0 else rest)  # a wrapped label stays under its first line
                out.append(line + "\n", style="bold" if node.bold else None)
            last = len(node.children) - 1
            for i, child in reversed(list(enumerate(node.children))):
                stack.append((child, rest + ("└── " if i == last else "├── "), rest + ("    " if i == last else "│   ")))
        return out

    def print(self, console: Console) -> None:
        console.print(self.render(console.width), end="", soft_wrap=True)
