"""ECS cluster query language, as far as instance types go: the `memberOf` expression gpufleet writes,
and which instance types any task definition's expression admits.

The components write an expression with `member_of()`; the policy pack reads any program's
expression with `admitted_instance_types()`. Keeping both here means the pack understands exactly
what the components emit (a test round-trips them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from gpufleet.errors import InputError

ATTRIBUTE = "attribute:ecs.instance-type"

# Operators of the cluster query language that name instance types positively; negations and other
# attributes do not pin a type (ECS may place the task on any type they leave open).
_EQUALS = {"==", "equals"}
_IN = {"in"}
_MATCHES = {"=~", "matches"}
_TOKEN = re.compile(r"\s*(\(|\)|\[|\]|,|&&|\|\||==|!=|=~|!~|!|[^\s()\[\],!=]+)")
_Admitted = frozenset[str] | None  # the types an expression admits; None: it leaves the type open


class PlacementSyntaxError(InputError):
    """The expression is not one this parser understands."""


def member_of(instance_type: str) -> str:
    """The expression that pins a task to one instance type."""
    return f"{ATTRIBUTE} == {instance_type}"


def admitted_instance_types(expression: str, known: Collection[str]) -> frozenset[str] | None:
    """The instance types a `memberOf` expression admits, or None when it leaves the type open.

    `known` expands `=~` patterns (regular expressions, matched in full) into type names. Conservative:
    a negation, or a clause about another attribute, admits every type.
    """
    tokens = _tokens(expression)
    parser = _Parser(tokens, known)
    result = parser.expression()
    if parser.pos != len(tokens):
        raise PlacementSyntaxError(f"unexpected {tokens[parser.pos]!r} in {expression!r}")
    return result


def _tokens(expression: str) -> list[str]:
    tokens, pos = [], 0
    while pos < len(expression):
        if expression[pos:].strip() == "":
            break
        match = _TOKEN.match(expression, pos)
        if not match:
            raise PlacementSyntaxError(f"cannot read {expression[pos:]!r}")
        tokens.append(match.group(1))
        pos = match.end()
    return tokens


class _Parser:
    """or < and < not < term; a term is `attribute op value`, `attribute in [v, ...]` or `(expr)`."""

    def __init__(self, tokens: list[str], known: Collection[str]):
        self.tokens = tokens
        self.known = known
        self.pos = 0

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            raise PlacementSyntaxError("expression ends too early")
        self.pos += 1
        return token

    def _chain(
        self, words: tuple[str, str], operand: Callable[[], _Admitted], join: Callable[[_Admitted, _Admitted], _Admitted]
    ) -> _Admitted:
        """Operands joined by one operator (either spelling of it), left to right."""
        result = operand()
        while self._peek() in words:
            self._take()
            result = join(result, operand())
        return result

    def expression(self) -> frozenset[str] | None:
        # A side that leaves the type open (None) leaves the union open.
        return self._chain(("or", "||"), self._and, lambda a, b: None if a is None or b is None else a | b)

    def _and(self) -> frozenset[str] | None:
        # A side that leaves the type open does not narrow the other.
        return self._chain(("and", "&&"), self._not, lambda a, b: b if a is None else a if b is None else a & b)

    def _not(self) -> frozenset[str] | None:
        if self._peek() in ("not", "!"):
            self._take()
            self._not()
            return None
        return self._term()

    def _term(self) -> frozenset[str] | None:
        if self._peek() == "(":
            self._take()
            result = self.expression()
            if self._take() != ")":
                raise PlacementSyntaxError("missing ')'")
            return result
        attribute = self._take()
        operator = self._take()
        if operator == "!":  # `!in`, `!exists` arrive as two tokens
            operator += self._take()
        if operator in ("exists", "!exists"):
            return None
        if operator in _IN or operator in ("!in", "not_in"):
            values = self._list()
        else:
            values = [self._take()]
        if attribute != ATTRIBUTE:
            return None
        if operator in _EQUALS or operator in _IN:
            return frozenset(values)
        if operator in _MATCHES:
            pattern = re.compile(values[0])
            return frozenset(name for name in self.known if pattern.fullmatch(name))
        return None

    def _list(self) -> list[str]:
        opener = self._take()
        closer = {"[": "]", "(": ")"}.get(opener)
        if closer is None:
            raise PlacementSyntaxError(f"expected a list after 'in', got {opener!r}")
        values = []
        while (token := self._take()) != closer:
            if token != ",":
                values.append(token)
        return values
