"""Counts in the words a reviewer reads: "1 GPU", "8 GPUs", "1 Neuron chip". Rule messages, reports
and diffs all count accelerators, and a count of one is common (a g5.xlarge, a one-GPU task)."""

from __future__ import annotations


def counted(n: int | float, noun: str) -> str:
    """`n` and the noun, plural unless `n` is one (a whole number is printed without ".0")."""
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
