"""`ast.parse` for the engine's gRPC threads. CPython 3.11 keeps the AST constructor's recursion
depth per interpreter, not per thread, so two threads parsing at once can fail with "AST constructor
recursion depth mismatch" (seen on the corpus under CI). The monitor's handlers read providers' SDK
sources (auto-names, output types) concurrently: every such parse takes its turn here."""

from __future__ import annotations

import ast
import threading

_TURN = threading.RLock()


def module(source: str) -> ast.Module:
    with _TURN:
        return ast.parse(source)


def expression(source: str) -> ast.Expression:
    with _TURN:
        return ast.parse(source, mode="eval")
