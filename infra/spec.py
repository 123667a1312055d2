"""The stack spec: the typed, validated form of a stack's `gpufleet:*` Pulumi config.

`load_spec` is the one door in: pydantic checks each field, then the platform checks (which call the
catalog predicates) run over the whole spec. Every problem is collected and raised at once as a
`SpecError` whose issues name the field path, the value and the rule.
"""

from __future__ import annotations

import functools
import importlib
import json
from dataclasses import dataclass

from pydantic import Field, ValidationError, create_model

from gpufleet.components.catalog import catalog
from gpufleet.components import simulate
from gpufleet.components.spec_model import SpecModel, Violation

NAMESPACE = "gpufleet"


@dataclass(frozen=True)
class _Fleet:
    """One fleet key of the spec: the args model it holds (module, class) and what it provisions."""

    module: str
    model: str
    description: str


_REGION = Field(None, description="AWS region of every AWS resource of the stack, e.g. us-east-1 (required with ecs or eks; ACK has its own).")
_FLEETS = {
    "ecs": _Fleet("gpufleet.components.ecs.args", "EcsFleetArgs", "An ECS cluster of GPU or Neuron instances; absent provisions none."),
    "eks": _Fleet("gpufleet.components.eks.args", "EksFleetArgs", "An EKS cluster with accelerated managed node groups (EFA); absent provisions none."),
    "ack": _Fleet(
        "gpufleet.components.ack.args", "AckFleetArgs",
        "GPU node pools for shared GPU scheduling on an existing Alibaba ACK Pro cluster; absent provisions none.",
    ),
    "gke": _Fleet(
        "gpufleet.components.gke.args", "GkeFleetArgs",
        "GPU node pools (MIG partitions, time-sharing or MPS) in a new or existing Google GKE cluster; absent provisions none.",
    ),
    "aks": _Fleet(
        "gpufleet.components.aks.args", "AksFleetArgs",
        "GPU node pools (MIG instance profiles, the GPU driver) in an existing Azure AKS cluster; absent provisions none.",
    ),
}


@functools.cache
def spec_model(fleets: frozenset[str]) -> type[SpecModel]:
    """The stack spec's model with the args models of `fleets`; the other fleet keys may only be
    absent (they are never present when the spec is validated with this model). A stack imports
    only its own clouds' models: AKS's alone take 0.1 s, and a cold preview should not pay for
    clouds it does not use. `FleetSpec` is the model with every fleet (docs, JSON schema)."""
    fields: dict[str, tuple] = {"region": (str | None, _REGION)}
    for key, fleet in _FLEETS.items():
        kind = getattr(importlib.import_module(fleet.module), fleet.model) | None if key in fleets else None
        fields[key] = (kind, Field(None, description=fleet.description))
    return create_model("FleetSpec", __base__=SpecModel, __doc__="Everything one stack provisions. Config keys are `gpufleet:<field>`.", **fields)


def __getattr__(name: str):
    if name == "FleetSpec":
        return spec_model(frozenset(_FLEETS))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class SpecIssue:
    """One problem with the stack config, as shown to the user."""

    field: tuple[str | int, ...]  # config path; the first element is the config key without namespace
    value: object
    rule: str
    reason: str

    @property
    def path(self) -> str:
        head, *rest = self.field or ("",)
        text = f"{NAMESPACE}:{head}"
        for part in rest:
            text += f"[{part}]" if isinstance(part, int) else f".{part}"
        return text

    def render(self) -> str:
        return f"{self.path} = {_show(self.value)}: {self.reason} [rule: {self.rule}]"


class SpecError(ValueError):
    """The stack config is invalid; `issues` lists every problem found."""

    def __init__(self, issues: list[SpecIssue]):
        self.issues = issues
        super().__init__("invalid stack config:\n" + "\n".join(f"  {i.render()}" for i in issues))


_MISSING = object()


def _show(value: object) -> str:
    """A value in one short line: an object or a list too long to show is named by its keys or length."""
    if value is _MISSING:
        return "(missing)"
    text = json.dumps(value, default=str, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    if len(text) <= 80:
        return text
    if isinstance(value, dict):
        keys: list[str] = []
        for key in map(str, value):
            if sum(len(k) + 2 for k in keys) + len(key) > 60:
                return "{" + ", ".join(keys) + ", ...}"
            keys.append(key)
        return "{" + ", ".join(keys) + "}"
    if isinstance(value, list):
        return f"[{len(value)} items]"
    return text[:77] + "..."


# pydantic's error types, in the kebab-case rule ids every other check uses.
_PYDANTIC_RULES = {"extra_forbidden": "unknown-key", "missing": "required"}


def _from_pydantic(err: ValidationError) -> list[SpecIssue]:
    issues = []
    for e in err.errors(include_url=False):
        value = _MISSING if e["type"] == "missing" else e.get("input")
        reason = "unknown key" if e["type"] == "extra_forbidden" else e["msg"]
        if e["type"] == "string_type" and isinstance(value, float):
            # `version: 1.30` reaches the spec as the number 1.3: YAML reads unquoted digits as numbers.
            reason += f' (YAML read an unquoted {value!r} as a number; quote version-like values: "1.30")'
        rule = _PYDANTIC_RULES.get(e["type"], e["type"].replace("_", "-"))
        issues.append(SpecIssue(tuple(e["loc"]), value, rule, reason))
    return issues


def _from_violation(v: Violation, *prefix: str) -> SpecIssue:
    return SpecIssue((*prefix, *v.field), v.value, v.rule, v.reason)


# Specs already validated, by their config's canonical JSON: the CLI validates first (for its line
# numbers) and the program it then runs in-process validates the same config again. A FleetSpec is
# frozen, so handing the same one out is safe.
_VALIDATED: dict[str, SpecModel] = {}


def load_spec(config: dict[str, object]) -> SpecModel:
    """Validate the `gpufleet:*` config (keys without the namespace, structured values decoded);
    a config validated before in this process is not validated again."""
    try:
        key = json.dumps([config, simulate.enabled()], sort_keys=True)
    except (TypeError, ValueError):
        key = None
    if key is not None and key in _VALIDATED:
        return _VALIDATED[key]
    spec = _validate(config)
    if key is not None:
        if len(_VALIDATED) >= 16:
            _VALIDATED.pop(next(iter(_VALIDATED)))
        _VALIDATED[key] = spec
    return spec


def _validate(config: dict[str, object]) -> SpecModel:
    model = spec_model(frozenset(key for key in config if key in _FLEETS and config[key] is not None))
    try:
        spec = model.model_validate(config)
    except ValidationError as err:
        raise SpecError(_from_pydantic(err)) from None
    cat = catalog.load()
    issues: list[SpecIssue] = []
    aws = spec.ecs is not None or spec.eks is not None
    if aws and spec.region is None:
        issues.append(SpecIssue(("region",), _MISSING, "region-required", "ecs and eks need the AWS region of the stack"))
    elif aws and spec.region not in cat.regions:
        issues.append(
            SpecIssue(("region",), spec.region, "region-known", f"not a region of the EC2 data (known: {', '.join(cat.regions)})")
        )
    elif aws:
        if spec.ecs is not None:
            from gpufleet.components.ecs import checks as ecs_checks

            issues += [_from_violation(v, "ecs") for v in ecs_checks.check_fleet(spec.ecs, spec.region, cat)]
        if spec.eks is not None:
            from gpufleet.components.eks import checks as eks_checks, placement as eks_placement

            found = eks_checks.check_fleet(spec.eks, spec.region, cat)
            # Placement needs a fleet whose every other rule holds (known types, one zone per EFA group).
            if not found and simulate.enabled():
                found = list(eks_placement.check_placement(spec.eks, spec.region, cat))
            issues += [_from_violation(v, "eks") for v in found]
    if spec.ack is not None:
        from gpufleet.components.ack import checks as ack_checks

        issues += [_from_violation(v, "ack") for v in ack_checks.check_fleet(spec.ack, cat.facts.ack, cat.facts.kubernetes)]
    if spec.gke is not None:
        from gpufleet.components.gke import checks as gke_checks, placement as gke_placement

        found = gke_checks.check_fleet(spec.gke, cat.facts.gke)
        if not found and simulate.enabled():
            found = list(gke_placement.check_placement(spec.gke, cat))
        issues += [_from_violation(v, "gke") for v in found]
    if spec.aks is not None:
        from gpufleet.components.aks import checks as aks_checks, placement as aks_placement

        found = aks_checks.check_fleet(spec.aks, cat.facts.aks)
        if not found and simulate.enabled():
            found = list(aks_placement.check_placement(spec.aks, cat))
        issues += [_from_violation(v, "aks") for v in found]
    if not aws and spec.ack is None and spec.gke is None and spec.aks is None:
        issues.append(
            SpecIssue(("ecs",), _MISSING, "fleet-not-empty", "the stack provisions nothing: add gpufleet:ecs, gpufleet:eks, gpufleet:ack, gpufleet:gke or gpufleet:aks")
        )
    if issues:
        raise SpecError(issues)
    return spec


def decode_config(raw: dict[str, object]) -> dict[str, object]:
    """Pulumi config as the runtime hands it over (`gpufleet:key` -> string or JSON text) to spec input.

    Structured values arrive as JSON text; plain values as strings. Keys of other namespaces (such as
    `aws:`) are not the spec's business and are left out.
    """
    decoded: dict[str, object] = {}
    issues: list[SpecIssue] = []
    prefix = f"{NAMESPACE}:"
    for key, value in raw.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix):]
        if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as err:
                issues.append(SpecIssue((name,), value, "config-json", f"not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}"))
                continue
        decoded[name] = value
    if issues:
        raise SpecError(issues)
    return decoded
