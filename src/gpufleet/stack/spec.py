"""The stack spec: the typed, validated form of a stack's `gpufleet:*` Pulumi config.

`load_spec` is the one door in: pydantic checks each field, then the platform checks (which call the
catalog predicates) run over the whole spec. Every problem is collected and raised at once as a
`SpecError` whose issues name the field path, the value and the rule.
"""

from __future__ import annotations

import difflib
import functools
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import Field, ValidationError, create_model

from gpufleet import simulate
from gpufleet.catalog import catalog
from gpufleet.errors import InputError
from gpufleet.platform.model import SpecModel, Violation
from gpufleet.stack.platforms import BY_KEY, PLATFORMS

NAMESPACE = "gpufleet"


_REGION = Field(
    None,
    description=f"AWS region of every AWS resource of the stack, e.g. us-east-1 (required with {' or '.join(p.key for p in PLATFORMS if p.aws)}; ACK has its own).",
)


@functools.cache
def spec_model(fleets: frozenset[str]) -> type[SpecModel]:
    """The stack spec's model with the args models of `fleets`; the other fleet keys may only be
    absent (they are never present when the spec is validated with this model). A stack imports
    only its own clouds' models: AKS's alone take 0.1 s, and a cold preview should not pay for
    clouds it does not use. `FleetSpec` is the model with every fleet (docs, JSON schema)."""
    fields: dict[str, Any] = {"region": (str | None, _REGION)}
    for platform in PLATFORMS:
        kind = platform.model() | None if platform.key in fleets else None
        fields[platform.key] = (kind, Field(None, description=platform.description))
    return create_model(
        "FleetSpec", __base__=SpecModel, __doc__="Everything one stack provisions. Config keys are `gpufleet:<field>`.", **fields
    )


def __getattr__(name: str):
    if name == "FleetSpec":
        return spec_model(frozenset(BY_KEY))
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


class SpecError(InputError):
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


def _from_pydantic(err: ValidationError, model: type[SpecModel]) -> list[SpecIssue]:
    issues = []
    for e in err.errors(include_url=False):
        value = _MISSING if e["type"] == "missing" else e.get("input")
        reason = _unknown_key(model, e["loc"]) if e["type"] == "extra_forbidden" else e["msg"]
        if e["type"] == "string_type" and isinstance(value, float):
            # `version: 1.30` reaches the spec as the number 1.3: YAML reads unquoted digits as numbers.
            reason += f' (YAML read an unquoted {value!r} as a number; quote version-like values: "1.30")'
        rule = _PYDANTIC_RULES.get(e["type"], e["type"].replace("_", "-"))
        issues.append(SpecIssue(tuple(e["loc"]), value, rule, reason))
    return issues


def _unknown_key(model: type[SpecModel], loc: tuple) -> str:
    """ "unknown key", with what replaced it (the model's MOVED) or the nearest key of its model."""
    owner = _model_at(model, loc[:-1])
    key = loc[-1] if loc else None
    if owner is None or not isinstance(key, str):
        return "unknown key"
    if key in owner.MOVED:
        return f"unknown key: {owner.MOVED[key]}"
    keys = [f.alias or name for name, f in owner.model_fields.items()]
    near = difflib.get_close_matches(key, keys, n=1, cutoff=0.75)
    return f"unknown key; did you mean {near[0]}?" if near else f"unknown key (keys here: {', '.join(sorted(keys))})"


def _model_at(model: type[SpecModel], loc: tuple) -> type[SpecModel] | None:
    """The spec model a pydantic error location points into, following fields by their keys (list
    indexes and dict keys pass through); None where a union leaves it ambiguous."""
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for name, f in model.model_fields.items() if part in (name, f.alias)), None)
        if field is None:
            return None
        nested = _models_in(field.annotation)
        if len(nested) != 1:
            return None
        model = nested[0]
    return model if isinstance(model, type) and issubclass(model, SpecModel) else None


def _models_in(annotation) -> list[type[SpecModel]]:
    if isinstance(annotation, type) and issubclass(annotation, SpecModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


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
    model = spec_model(frozenset(key for key in config if key in BY_KEY and config[key] is not None))
    try:
        spec = model.model_validate(config)
    except ValidationError as err:
        raise SpecError(_from_pydantic(err, model)) from None
    cat = catalog.load()
    region: str | None = cast(Any, spec).region  # a field of spec_model's dynamic model
    present = [p for p in PLATFORMS if getattr(spec, p.key) is not None]
    region_issue = _region_issue(region, cat) if any(p.aws for p in present) else None
    issues: list[SpecIssue] = [region_issue] if region_issue else []
    for platform in present:
        if platform.aws and region_issue:
            continue  # its rules read the region's offerings
        fleet = getattr(spec, platform.key)
        found = platform.checks(fleet, region, cat)
        # Placement needs a fleet whose every other rule holds (known types, one zone per EFA group).
        if not found and simulate.enabled():
            found = platform.pending(fleet, region, cat)
        issues += [_from_violation(v, platform.key) for v in found]
    if not present:
        keys = [f"gpufleet:{p.key}" for p in PLATFORMS]
        issues.append(
            SpecIssue(
                (PLATFORMS[0].key,), _MISSING, "fleet-not-empty", f"the stack provisions nothing: add {', '.join(keys[:-1])} or {keys[-1]}"
            )
        )
    if issues:
        raise SpecError(issues)
    return spec


def _region_issue(region: str | None, cat) -> SpecIssue | None:
    """The stack's AWS region, which the AWS platforms need, missing or not one of the EC2 data."""
    if region is None:
        needing = " and ".join(p.key for p in PLATFORMS if p.aws)
        return SpecIssue(("region",), _MISSING, "region-required", f"{needing} need the AWS region of the stack")
    if region not in cat.regions:
        return SpecIssue(("region",), region, "region-known", f"not a region of the EC2 data (known: {', '.join(cat.regions)})")
    return None


def decode_config(raw: Mapping[str, object]) -> dict[str, object]:
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
        name = key[len(prefix) :]
        if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as err:
                issues.append(
                    SpecIssue((name,), value, "config-json", f"not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}")
                )
                continue
        decoded[name] = value
    if issues:
        raise SpecError(issues)
    return decoded
