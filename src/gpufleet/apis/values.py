"""The JSON value kinds a cloud API's schema names (GKE's discovery document, AKS's SDK models),
judged one way for both API checks (`gke_api`, `aks_api`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeAlias

# A mapping's target for an input: the API's field name, None for the provider's own (never sent),
# or another target that `rename`'s `place` puts in the body (a field and a nested schema or key).
Target: TypeAlias = str | tuple[str, str] | None


def whole_number(value: object) -> bool:
    """An integer, or a float with no fraction (the engine's JSON numbers are doubles); never a boolean."""
    return not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))


def whole_numbers(value):
    """The engine's wire, and a protobuf Struct, carry every number as a double: integral ones back to
    ints, as Go writes a whole float64 (1, not Python's 1.0)."""
    if isinstance(value, Mapping):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def decimal(text: object) -> int | None:
    """A count written in ASCII decimal digits, as the APIs read one, or None. `str.isdigit()` alone
    also passes "²" (which int() refuses) and other scripts' digits (which int() reads, and no API does)."""
    return int(text) if isinstance(text, str) and text.isascii() and text.isdigit() else None


def kind_problem(kind: str, value: object) -> str | None:
    """Why the value is not of the kind (string, integer, number, boolean, list, object), or None."""
    if kind == "string" and not isinstance(value, str):
        return f"a string, not {value!r}"
    if kind == "integer" and not whole_number(value):
        return f"an integer, not {value!r}"
    if kind == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return f"a number, not {value!r}"
    if kind == "boolean" and not isinstance(value, bool):
        return f"true or false, not {value!r}"
    if kind == "list" and not isinstance(value, list):
        return f"a list, not {value!r}"
    if kind == "object" and not isinstance(value, dict):
        return f"an object, not {value!r}"
    return None


def rename(
    inputs: Mapping, mapping: Mapping[str, Target], place: Callable[[dict, tuple[str, str], str, object], list[str]]
) -> tuple[dict, list[str]]:
    """A request body from the provider's inputs, and the inputs with no mapping. A target of None is
    the provider's own (never sent); a string is the API's name for the input; any other target is
    put in the body by `place(body, target, key, value)`, which returns what it could not map."""
    body: dict = {}
    unmapped: list[str] = []
    for key, value in inputs.items():
        if key not in mapping:
            unmapped.append(key)
            continue
        target = mapping[key]
        if isinstance(target, str):
            body[target] = value
        elif target is not None:
            unmapped += place(body, target, key, value)
    return body, unmapped
