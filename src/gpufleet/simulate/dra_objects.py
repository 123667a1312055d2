"""What the DRA allocator reads, as resource.k8s.io/v1 writes it: DeviceClasses, ResourceSlices and
ResourceClaims (camelCase dictionaries in, frozen records out), and the node they are judged for.

The shapes are the API's (kubernetes/api @v0.35.6, commit c6912955960bfa7dba668f1d2d9bac711876d7fc,
resource/v1/types.go): a Device's attributes carry exactly one of bool/int/string/version
(DeviceAttribute, L602), a capacity is a Quantity, a request is `exactly` or `firstAvailable`.
A shape the API would refuse (a list where a map belongs, a count that is no integer) is an
InputError naming its field. What the API accepts but the stable allocator refuses at allocation
time (a selector without CEL, a constraint without matchAttribute, a future allocation mode) is
kept as given, so the allocator can answer in upstream's words.

Alpha-gated fields (consumesCounters, bindingConditions, taints, capacity requests) are read only
as far as the stable allocator looks at them with their gates off."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpufleet.apis.quantity import OutOfRange, QuantityError, scaled_value
from gpufleet.errors import InputError

ATTRIBUTE_KINDS = ("bool", "int", "string", "version")


class DraShapeError(InputError):
    """A DRA object the API server would not accept: names the field, the value and the rule."""


@dataclass(frozen=True)
class Attribute:
    """One DeviceAttribute; `kind` None when it carries none of the four (a future type)."""

    kind: str | None
    value: bool | int | str | None


@dataclass(frozen=True)
class Quantity:
    """A resource.Quantity in thousandths (MilliValue), the project's one quantity reading; `exact`
    False when the amount has a part below a thousandth, which this reading rounds away."""

    milli: int
    exact: bool = True


def read_quantity(value: str | int) -> Quantity:
    """QuantityError where the text is no quantity or leaves Kubernetes' int64."""
    milli = scaled_value(value, 3)
    try:
        exact = scaled_value(value, 9) == milli * 10**6
    except OutOfRange:
        exact = True  # past 9.2e9 units the parser's finest int64 reading is the thousandth
    return Quantity(milli, exact)


@dataclass(frozen=True)
class Requirement:
    """A NodeSelectorRequirement: key, operator, values (core/v1)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Term:
    """A NodeSelectorTerm: every expression (on labels) and field (metadata.name) must match."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()


@dataclass(frozen=True)
class NodeSelector:
    terms: tuple[Term, ...]


@dataclass(frozen=True)
class Node:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Device:
    name: str
    attributes: Mapping[str, Attribute] = field(default_factory=dict)
    capacity: Mapping[str, Quantity] = field(default_factory=dict)
    consumes_counters: bool = False
    binding_conditions: bool = False


@dataclass(frozen=True)
class Pool:
    name: str
    generation: int
    resource_slice_count: int


@dataclass(frozen=True)
class ResourceSlice:
    name: str
    driver: str
    pool: Pool
    node_name: str | None = None
    all_nodes: bool = False
    node_selector: NodeSelector | None = None
    per_device_node_selection: bool = False
    devices: tuple[Device, ...] = ()


@dataclass(frozen=True)
class DeviceClass:
    name: str
    # each selector's CEL expression; None for a selector without `cel` (a future selector type)
    selectors: tuple[str | None, ...] = ()


@dataclass(frozen=True)
class DeviceRequestSpec:
    """An ExactDeviceRequest or a DeviceSubRequest: what one choice of devices must satisfy."""

    name: str
    device_class_name: str
    selectors: tuple[str | None, ...] = ()
    allocation_mode: str = "ExactCount"
    count: int = 1
    admin_access: bool = False


@dataclass(frozen=True)
class DeviceRequest:
    name: str
    exactly: DeviceRequestSpec | None = None
    first_available: tuple[DeviceRequestSpec, ...] = ()


@dataclass(frozen=True)
class Constraint:
    requests: tuple[str, ...] = ()
    match_attribute: str | None = None


@dataclass(frozen=True)
class ResourceClaim:
    name: str
    namespace: str = ""
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[Constraint, ...] = ()

    @property
    def shown(self) -> str:
        """klog.KObj's text: namespace/name, or the name alone without a namespace."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def _at(raw: Mapping, key: str, path: str, kind: type | tuple[type, ...], default: object = None) -> object:
    value = raw.get(key, default)
    # a JSON true is a Python int: a boolean is taken only where the API types one
    if value is None or (isinstance(value, kind) and (bool in _kinds(kind) or not isinstance(value, bool))):
        return value
    raise DraShapeError(f"{path}.{key}: {value!r} is not {_named(kind)}")


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _named(kind: type | tuple[type, ...]) -> str:
    names = {dict: "a map", Mapping: "a map", list: "a list", str: "a string", int: "an integer", bool: "a boolean"}
    return " or ".join(names.get(k, k.__name__) for k in _kinds(kind))


def _map(raw: Mapping, key: str, path: str) -> Mapping:
    value = _at(raw, key, path, Mapping)
    return value if isinstance(value, Mapping) else {}


def _items(raw: Mapping, key: str, path: str, kind: type) -> list:
    value = _at(raw, key, path, list)
    items = value if isinstance(value, list) else []
    for i, item in enumerate(items):
        if not isinstance(item, kind):
            raise DraShapeError(f"{path}.{key}[{i}]: {item!r} is not {_named(kind)}")
    return items


def _list(raw: Mapping, key: str, path: str) -> list[Mapping]:
    return _items(raw, key, path, Mapping)


def _text(raw: Mapping, key: str, path: str, required: bool = False) -> str:
    value = _at(raw, key, path, str)
    if required and not value:
        raise DraShapeError(f"{path}.{key}: required, a non-empty string")
    return value if isinstance(value, str) else ""


def _strings(raw: Mapping, key: str, path: str) -> tuple[str, ...]:
    return tuple(_items(raw, key, path, str))


def _name(raw: Mapping, path: str) -> str:
    return _text(_map(raw, "metadata", path), "name", f"{path}.metadata", required=True)


def _attribute(raw: object, path: str) -> Attribute:
    if not isinstance(raw, Mapping):
        raise DraShapeError(f"{path}: {raw!r} is not a map")
    given = [k for k in ATTRIBUTE_KINDS if raw.get(k) is not None]
    if len(given) > 1:
        raise DraShapeError(f"{path}: sets {', '.join(given)}; a DeviceAttribute carries exactly one")
    if not given:
        return Attribute(None, None)
    kind = given[0]
    value = _at(raw, kind, path, {"bool": bool, "int": int, "string": str, "version": str}[kind])
    return Attribute(kind, value)  # type: ignore[arg-type]


def _capacity(raw: object, path: str) -> Quantity:
    value = raw.get("value") if isinstance(raw, Mapping) else None
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise DraShapeError(f"{path}.value: {value!r} is not a quantity (DeviceCapacity.value is required)")
    try:
        return read_quantity(value)
    except QuantityError as err:
        raise DraShapeError(f"{path}.value: {err}") from None


def _requirements(raw: Mapping, key: str, path: str) -> tuple[Requirement, ...]:
    return tuple(
        Requirement(
            _text(r, "key", f"{path}.{key}[{i}]", True),
            _text(r, "operator", f"{path}.{key}[{i}]", True),
            _strings(r, "values", f"{path}.{key}[{i}]"),
        )
        for i, r in enumerate(_list(raw, key, path))
    )


def node_selector(raw: object, path: str) -> NodeSelector | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise DraShapeError(f"{path}: {raw!r} is not a map")
    terms = _list(raw, "nodeSelectorTerms", path)
    return NodeSelector(
        tuple(
            Term(
                _requirements(t, "matchExpressions", f"{path}.nodeSelectorTerms[{i}]"),
                _requirements(t, "matchFields", f"{path}.nodeSelectorTerms[{i}]"),
            )
            for i, t in enumerate(terms)
        )
    )


def _device(raw: Mapping, path: str) -> Device:
    attributes = {str(k): _attribute(v, f"{path}.attributes[{k}]") for k, v in _map(raw, "attributes", path).items()}
    return Device(
        name=_text(raw, "name", path, required=True),
        attributes=attributes,
        capacity={str(k): _capacity(v, f"{path}.capacity[{k}]") for k, v in _map(raw, "capacity", path).items()},
        consumes_counters=bool(_list(raw, "consumesCounters", path)),
        binding_conditions=bool(_strings(raw, "bindingConditions", path)),
    )


def _integer(raw: Mapping, key: str, path: str, default: int) -> int:
    value = _at(raw, key, path, int, default)
    return default if value is None else value  # type: ignore[return-value]


def resource_slice(raw: Mapping) -> ResourceSlice:
    path = "ResourceSlice"
    name = _name(raw, path)
    path = f"ResourceSlice {name}.spec"
    spec = _map(raw, "spec", f"ResourceSlice {name}")
    pool = _map(spec, "pool", path)
    return ResourceSlice(
        name=name,
        driver=_text(spec, "driver", path, required=True),
        pool=Pool(
            _text(pool, "name", f"{path}.pool", True),
            _integer(pool, "generation", f"{path}.pool", 0),
            _integer(pool, "resourceSliceCount", f"{path}.pool", 0),
        ),
        node_name=_text(spec, "nodeName", path) or None,
        all_nodes=bool(_at(spec, "allNodes", path, bool)),
        node_selector=node_selector(spec.get("nodeSelector"), f"{path}.nodeSelector"),
        per_device_node_selection=spec.get("perDeviceNodeSelection") is not None,
        devices=tuple(_device(d, f"{path}.devices[{i}]") for i, d in enumerate(_list(spec, "devices", path))),
    )


def _selectors(raw: Mapping, path: str) -> tuple[str | None, ...]:
    out: list[str | None] = []
    for i, selector in enumerate(_list(raw, "selectors", path)):
        cel = selector.get("cel")
        out.append(
            None
            if cel is None
            else _text(cel if isinstance(cel, Mapping) else {"expression": cel}, "expression", f"{path}.selectors[{i}].cel")
        )
    return tuple(out)


def device_class(raw: Mapping) -> DeviceClass:
    name = _name(raw, "DeviceClass")
    return DeviceClass(name, _selectors(_map(raw, "spec", f"DeviceClass {name}"), f"DeviceClass {name}.spec"))


def _spec(raw: Mapping, name: str, path: str) -> DeviceRequestSpec:
    return DeviceRequestSpec(
        name=name,
        device_class_name=_text(raw, "deviceClassName", path),
        selectors=_selectors(raw, path),
        allocation_mode=_text(raw, "allocationMode", path) or "ExactCount",
        count=_integer(raw, "count", path, 1),
        admin_access=bool(_at(raw, "adminAccess", path, bool)),
    )


def _request(raw: Mapping, path: str) -> DeviceRequest:
    name = _text(raw, "name", path, required=True)
    exactly = raw.get("exactly")
    subs = _list(raw, "firstAvailable", path)
    if (exactly is None) == (not subs):
        raise DraShapeError(f"{path}: one of exactly or firstAvailable must be set (DeviceRequest)")
    if exactly is not None and not isinstance(exactly, Mapping):
        raise DraShapeError(f"{path}.exactly: {exactly!r} is not a map")
    return DeviceRequest(
        name=name,
        exactly=None if exactly is None else _spec(exactly, name, f"{path}.exactly"),
        first_available=tuple(
            _spec(s, _text(s, "name", f"{path}.firstAvailable[{i}]", True), f"{path}.firstAvailable[{i}]") for i, s in enumerate(subs)
        ),
    )


def resource_claim(raw: Mapping) -> ResourceClaim:
    name = _name(raw, "ResourceClaim")
    path = f"ResourceClaim {name}.spec.devices"
    devices = _map(_map(raw, "spec", f"ResourceClaim {name}"), "devices", f"ResourceClaim {name}.spec")
    return ResourceClaim(
        name=name,
        namespace=_text(_map(raw, "metadata", "ResourceClaim"), "namespace", f"ResourceClaim {name}.metadata"),
        requests=tuple(_request(r, f"{path}.requests[{i}]") for i, r in enumerate(_list(devices, "requests", path))),
        constraints=tuple(
            Constraint(_strings(c, "requests", f"{path}.constraints[{i}]"), _text(c, "matchAttribute", f"{path}.constraints[{i}]") or None)
            for i, c in enumerate(_list(devices, "constraints", path))
        ),
    )


def node(raw: Mapping) -> Node:
    metadata = _map(raw, "metadata", "Node")
    labels = _map(metadata, "labels", "Node.metadata")
    return Node(_text(metadata, "name", "Node.metadata", required=True), {str(k): str(v) for k, v in labels.items()})
