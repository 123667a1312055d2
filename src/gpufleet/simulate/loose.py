"""Inputs read whatever their shape: a foreign program may pass anything where a map, a list, a
count or a boolean is expected, and a reader takes what it can and never raises on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

_T = TypeVar("_T")


def truthy(value: object) -> bool:
    """A boolean input as a plan carries it: the providers type some as text ("true"/"false")."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def as_int(value: object, default: int = 0) -> int:
    """A count a plan gives as a number or text; `default` when it is none ("lots", "inf", NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return default
    try:
        return int(float(value))
    except (ValueError, OverflowError):
        return default


def mapping(value: object) -> Mapping:
    """An input read as a map: any other shape (a foreign program may pass anything) reads empty."""
    return value if isinstance(value, Mapping) else {}


def str_or(value: object, default: _T) -> str | _T:
    """A text input as given; `default` for any other shape."""
    return value if isinstance(value, str) else default


def seq(value: object) -> list:
    """An input read as a list: any other shape reads empty."""
    return list(value) if isinstance(value, (list, tuple)) else []
