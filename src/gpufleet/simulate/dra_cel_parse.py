"""The CEL subset DRA selectors use, read: tokens, a tree, and the one compile error the subset is
sure of. dra_cel evaluates the tree; anything this reader does not know raises CelUnsupported (a
named gap), never a guess. The grammar is CEL's (google/cel-spec doc/langdef.md, "Syntax", commit
cab4548c3d3601db084a24d994d5205062343a23): || below && below the relations below unary ! and
member access; its other levels (?:, + - * / %) are outside the subset."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gpufleet.errors import GpufleetError, NotJudged


class CelError(GpufleetError):
    """An error CEL itself reports for this expression; the allocator aborts with it, as upstream does."""


class CelCompileError(CelError):
    pass


class CelRuntimeError(CelError):
    pass


class CelUnsupported(NotJudged):
    """The expression leaves the subset gpufleet evaluates: its result is unknown, a named gap."""


_TOKEN = re.compile(
    r"\s*(?:(?P<string>\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')|(?P<num>[0-9]+(?![0-9.eExXu]))"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>==|!=|<=|>=|&&|\|\||[<>!().,\[\]-]))"
)
_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r"}
_RELATIONS = ("==", "!=", "<", "<=", ">", ">=", "in")


def _unescape(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\":
            if body[i + 1] not in _ESCAPES:
                raise CelUnsupported(f"escape \\{body[i + 1]} is outside the subset")
            out.append(_ESCAPES[body[i + 1]])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def _tokens(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    while text[pos:].strip():
        match = _TOKEN.match(text, pos)
        if not match:
            raise CelUnsupported(f"{text[pos:].strip()[:20]!r} is outside the subset")
        pos = match.end()
        if match.group("string") is not None:
            out.append(("lit", _unescape(match.group("string")[1:-1])))
        elif match.group("num") is not None:
            out.append(("lit", int(match.group("num"))))
        elif match.group("ident") is not None:
            word = match.group("ident")
            literals: dict[str, object] = {"true": True, "false": False, "null": None}
            out.append(("lit", literals[word]) if word in literals else ("op", "in") if word == "in" else ("ident", word))
        else:
            out.append(("op", match.group("op")))
    return out + [("end", None)]


class _Parser:
    def __init__(self, text: str):
        self.tokens = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, Any]:
        return self.tokens[self.i]

    def take(self, op: str | None = None) -> tuple[str, Any]:
        token = self.tokens[self.i]
        if op is not None and token != ("op", op):
            raise CelUnsupported(f"expected {op!r}, found {token[1]!r}")
        self.i += 1
        return token

    def _chain(self, op: str, kind: str, operand: Callable[[], tuple]) -> tuple:
        """A left-associative run of one logical operator over the level below."""
        node = operand()
        while self.peek() == ("op", op):
            self.take()
            node = (kind, node, operand())
        return node

    def expression(self) -> tuple:
        return self._chain("||", "or", self.conjunction)

    def conjunction(self) -> tuple:
        return self._chain("&&", "and", self.relation)

    def relation(self) -> tuple:
        node = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in _RELATIONS:
            node = ("rel", self.take()[1], node, self.unary())
        return node

    def unary(self) -> tuple:
        if self.peek() == ("op", "!"):
            self.take()
            return ("not", self.unary())
        if self.peek() == ("op", "-"):
            self.take()
            kind, value = self.take()
            if kind != "lit" or not isinstance(value, int) or isinstance(value, bool):
                raise CelUnsupported("unary minus outside an integer literal is outside the subset")
            return ("lit", -value)
        return self.member()

    def _until(self, close: str) -> tuple:
        """Comma-separated expressions up to `close` (the opening token already taken)."""
        items = []
        while self.peek() != ("op", close):
            items.append(self.expression())
            if self.peek() != ("op", close):
                self.take(",")
        self.take(close)
        return tuple(items)

    def arguments(self) -> tuple:
        self.take("(")
        return self._until(")")

    def member(self) -> tuple:
        node = self.primary()
        while self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == "[":
                node = ("index", node, self.expression())
                self.take("]")
                continue
            kind, name = self.take()
            if kind != "ident":
                raise CelUnsupported(f"{name!r} after '.' is outside the subset")
            node = ("call", node, name, self.arguments()) if self.peek() == ("op", "(") else ("select", node, name)
        return node

    def primary(self) -> tuple:
        kind, value = self.take()
        if kind == "lit":
            return ("lit", value)
        if kind == "ident":
            return ("call", None, value, self.arguments()) if self.peek() == ("op", "(") else ("ident", value)
        if (kind, value) == ("op", "("):
            node = self.expression()
            self.take(")")
            return node
        if (kind, value) == ("op", "["):
            return ("list", self._until("]"))
        raise CelUnsupported(f"{value!r} is outside the subset")


# CEL's macros and cel.bind (ext.Bindings, compile.go L330-L337) declare variables of their own
_MACROS = frozenset({"has", "all", "exists", "exists_one", "map", "filter", "bind"})


def _children(node: tuple) -> tuple:
    kind = node[0]
    if kind == "list":
        return node[1]
    if kind == "call":
        return ((node[1],) if node[1] else ()) + node[3]
    if kind == "rel":
        return node[2:]
    return tuple(n for n in node[1:] if isinstance(n, tuple))


def _check(node: tuple) -> None:
    """The one compile error the subset can be sure of: a name the DRA environment does not declare
    (its only variable is `device`, k8s.io/dynamic-resource-allocation cel/compile.go L47-L51)."""
    if node[0] == "call" and (node[2] in _MACROS or node[1] == ("ident", "cel")):
        raise CelUnsupported(f"{node[2]}() binds names of its own, outside the subset")
    if node[0] == "ident" and node[1] != "device":
        # cel-go's checker words it so (google/cel-go checker/errors.go undeclaredReference, commit 8759e09248184cb9370775d214a8e15679518e82)
        raise CelCompileError(f"undeclared reference to '{node[1]}' (in container '')")
    for child in _children(node):
        _check(child)


def parse(expression: str) -> tuple:
    """The expression's tree; CelCompileError for a name the environment lacks, CelUnsupported outside the subset."""
    parser = _Parser(expression)
    tree = parser.expression()
    if parser.peek()[0] != "end":
        raise CelUnsupported(f"{parser.peek()[1]!r} is outside the subset")
    _check(tree)
    return tree
