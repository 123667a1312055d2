"""DRA device selectors: the subset of CEL they use in practice, evaluated over one device as
k8s.io/dynamic-resource-allocation's cel/compile.go (v0.35.6, commit
c181a505b8c74dfba3c9bcb0e2e4d53d00a7334d) builds it, and nothing outside that subset guessed.

Why not a CEL library: none on PyPI carries Kubernetes' quantity() and semver() (research for
issue 57, section 4), and the one with the closest environment (cel-expr-python) would need both
written against its C++ value types; a small evaluator whose every construct is tested, and which
names what it cannot evaluate, is the smaller honest thing.

The subset: literals (string, int, bool, null, lists), `device.driver`, `device.attributes[domain]`
and `device.capacity[domain]` with field or index access, `==` `!=` `<` `<=` `>` `>=` on values of
one primitive type, `in` (list or map), `!`, `&&`, `||` with CEL's error absorption (a side that
decides the result wins over an error or a gap on the other), quantity() with compareTo /
isLessThan / isGreaterThan (k8s.io/apiserver @v0.35.7 pkg/cel/library/quantity.go L219, L270,
L284, L298), semver() with the same three and major/minor/patch (semverlib.go L212, L245-L297),
and lowerAscii(). Anything else (arithmetic, macros, other functions, mixed-type comparisons, a
quantity with a part below a thousandth) raises CelUnsupported: the device's match is unknown, never True or
False."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpufleet.apis.quantity import QuantityError
from gpufleet.simulate.dra_cel_parse import CelError, CelRuntimeError, CelUnsupported, parse
from gpufleet.simulate.dra_objects import Device, Quantity, read_quantity


@dataclass(frozen=True)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()


# semver.org 2.0.0's grammar, as blang/semver v4 Parse takes it (compile.go L236 parses version attributes with it)
_NUM = r"(0|[1-9][0-9]*)"
_PRE = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER = re.compile(rf"{_NUM}\.{_NUM}\.{_NUM}(?:-({_PRE}(?:\.{_PRE})*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?")


def semver(text: str) -> Semver:
    match = _SEMVER.fullmatch(text)
    if not match:
        raise CelRuntimeError(f"could not parse {text!r} as semver")
    major, minor, patch, pre = match.groups()
    return Semver(int(major), int(minor), int(patch), tuple(pre.split(".")) if pre else ())


def _pre_key(pre: tuple[str, ...]) -> tuple:
    # semver.org rule 11: a release sorts after its pre-releases; numeric identifiers before alphanumeric
    return (1,) if not pre else (0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre))


def _semver_key(v: Semver) -> tuple:
    return (v.major, v.minor, v.patch, _pre_key(v.pre))


def quantity(text: str) -> Quantity:
    """quantity() (quantity.go L219): an invalid text is a runtime error."""
    try:
        return read_quantity(text)
    except QuantityError as err:
        raise CelRuntimeError(str(err)) from None


@dataclass(frozen=True)
class Selector:
    """A compiled selector: its text and its tree."""

    expression: str
    tree: tuple

    def matches(self, device: Device, driver: str) -> bool:
        """Whether the device satisfies the selector; CelRuntimeError or CelUnsupported otherwise."""
        result = _eval(self.tree, _variables(device, driver))
        if not isinstance(result, bool):
            raise CelRuntimeError(f"CEL result of type {type(result).__name__} could not be converted to bool")
        return result


def compile_selector(expression: str) -> Selector:
    """CelCompileError for a name the environment lacks, CelUnsupported outside the subset."""
    return Selector(expression, parse(expression))


# --- evaluation --------------------------------------------------------------------------------


class _DomainMap(dict):
    """device.attributes / device.capacity: an unknown domain reads as an empty map (compile.go L277-L278, L394-L400)."""

    def __missing__(self, key: str) -> dict:
        return {}


def _split(name: str, driver: str) -> tuple[str, str]:
    # parseQualifiedName (compile.go L380-L389): an unqualified name is in the driver's domain
    domain, _, ident = name.rpartition("/")
    return (domain or driver, ident)


def _attribute_value(name: str, kind: str | None, value: object) -> object:
    # getAttributeValue (compile.go L227-L243), with DeviceMatches' prefix (L255)
    if kind is None:
        raise CelRuntimeError(f"attribute {name}: unsupported attribute value")
    if kind == "version":
        try:
            return semver(str(value))
        except CelRuntimeError as err:
            raise CelRuntimeError(f"attribute {name}: parse semantic version: {err}") from None
    return value


def _variables(device: Device, driver: str) -> dict[str, object]:
    attributes: _DomainMap = _DomainMap()
    for name, attribute in device.attributes.items():
        domain, ident = _split(name, driver)
        attributes.setdefault(domain, {})[ident] = _attribute_value(name, attribute.kind, attribute.value)
    capacity: _DomainMap = _DomainMap()
    for name, amount in device.capacity.items():
        domain, ident = _split(name, driver)
        capacity.setdefault(domain, {})[ident] = amount
    return {"driver": driver, "attributes": attributes, "capacity": capacity}


_DEVICE_FIELDS = ("driver", "attributes", "capacity")


def _lookup(container: object, key: object) -> object:
    if isinstance(container, _Device):
        if key not in _DEVICE_FIELDS:
            raise CelUnsupported(f"device.{key} is outside the subset")
        return container.fields[key]
    if isinstance(container, Mapping):
        if isinstance(container, _DomainMap):
            return container[key]
        if key not in container:
            raise CelRuntimeError(f"no such key: {key}")
        return container[key]
    raise CelUnsupported(f"field or index access on {type(container).__name__} is outside the subset")


@dataclass(frozen=True)
class _Device:
    fields: Mapping[str, object]


def _same_kind(a: object, b: object) -> bool:
    kinds = (bool, int, str, type(None))
    return any(isinstance(a, k) and isinstance(b, k) for k in kinds) and isinstance(a, bool) == isinstance(b, bool)


def _equal(a: object, b: object) -> bool:
    if not _same_kind(a, b):
        raise CelUnsupported(f"comparing {type(a).__name__} with {type(b).__name__} is outside the subset")
    return a == b


def _contains(item: object, container: object) -> bool:
    if isinstance(container, Mapping):
        return item in container
    if not isinstance(container, tuple):
        raise CelUnsupported(f"'in' over {type(container).__name__} is outside the subset")
    gap = None
    for element in container:
        try:
            if _equal(item, element):
                return True
        except CelUnsupported as err:
            gap = err
    if gap:
        raise gap
    return False


def _relation(op: str, a: object, b: object) -> bool:
    if op == "in":
        return _contains(a, b)
    if op in ("==", "!="):
        return _equal(a, b) == (op == "==")
    if not _same_kind(a, b) or isinstance(a, (bool, type(None))):
        raise CelUnsupported(f"{op} between {type(a).__name__} and {type(b).__name__} is outside the subset")
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]  # type: ignore[operator]


def _compare(a: object, b: object) -> int:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        if not (a.exact and b.exact):
            raise CelUnsupported("a quantity finer than a thousandth is outside what gpufleet compares")
        x, y = a.milli, b.milli
    elif isinstance(a, Semver) and isinstance(b, Semver):
        x, y = _semver_key(a), _semver_key(b)  # type: ignore[assignment]
    else:
        raise CelUnsupported(f"comparing {type(a).__name__} with {type(b).__name__} is outside the subset")
    return (x > y) - (x < y)


_METHODS: dict[str, Callable[..., object]] = {
    "compareTo": _compare,
    "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "isLessThan": lambda a, b: _compare(a, b) < 0,
}
_SEMVER_PARTS = ("major", "minor", "patch")


def _call(target: object, name: str, args: list) -> object:
    if target is None and name in ("quantity", "semver") and len(args) == 1 and isinstance(args[0], str):
        return quantity(args[0]) if name == "quantity" else semver(args[0])
    if name in _METHODS and len(args) == 1 and target is not None:
        return _METHODS[name](target, args[0])
    if name == "lowerAscii" and isinstance(target, str) and not args:
        return "".join(c.lower() if c.isascii() else c for c in target)
    if name in _SEMVER_PARTS and isinstance(target, Semver) and not args:
        return getattr(target, name)
    raise CelUnsupported(f"function {name}() is outside the subset")


def _logical(node: tuple, scope: dict[str, object]) -> bool:
    """&& and ||: a side that decides the result wins over an error or a gap on the other (CEL's
    commutative logical operators); otherwise the first error or gap stands."""
    decisive = node[0] == "or"
    failure: Exception | None = None
    for side in node[1:]:
        try:
            value = _eval(side, scope)
        except (CelError, CelUnsupported) as err:
            failure = failure or err
            continue
        if not isinstance(value, bool):
            raise CelUnsupported(f"{node[0]} over {type(value).__name__} is outside the subset")
        if value == decisive:
            return decisive
    if failure:
        raise failure
    return not decisive


def _eval(node: tuple, scope: dict[str, object]) -> object:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "ident":
        return _Device(scope)
    if kind == "list":
        return tuple(_eval(item, scope) for item in node[1])
    if kind in ("select", "index"):
        return _lookup(_eval(node[1], scope), node[2] if kind == "select" else _eval(node[2], scope))
    if kind == "call":
        target = None if node[1] is None else _eval(node[1], scope)
        return _call(target, node[2], [_eval(a, scope) for a in node[3]])
    if kind == "not":
        value = _eval(node[1], scope)
        if not isinstance(value, bool):
            raise CelUnsupported(f"! over {type(value).__name__} is outside the subset")
        return not value
    if kind in ("and", "or"):
        return _logical(node, scope)
    return _relation(node[1], _eval(node[2], scope), _eval(node[3], scope))
