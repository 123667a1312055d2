"""Read a saved plan for `gpufleet check`: gpufleet's JSON plan (design.md) or the output of
`pulumi preview --json` (resources under `steps[].newState`), into one list of resources in the
plan's shape (urn, type, name, parent, inputs, dependencies, propertyDependencies, provider).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from infra import plan_shapes
from infra.plan import PLAN_VERSION


class PlanFileError(ValueError):
    """The file is not a plan gpufleet can judge; the message says which field is wrong."""


@dataclass
class SavedPlan:
    kind: str  # "gpufleet" | "pulumi-preview"
    project: str
    stack: str
    resources: list[dict]


def _finite_only(constant: str):
    raise ValueError(f"{constant} is not a JSON number")


def load(path: Path) -> SavedPlan:
    from infra.stackfile import StackFileError, decode

    try:
        data = path.read_bytes()
    except OSError as err:
        raise PlanFileError(f"{path}: cannot read it ({err.strerror})") from None
    try:
        text = decode(path, data)
        document = json.loads(text, parse_constant=_finite_only)
    except StackFileError as err:
        raise PlanFileError(str(err)) from None
    except RecursionError:
        raise PlanFileError(f"{path}: JSON nested too deeply to be a plan") from None
    except ValueError as err:
        raise PlanFileError(f"{path}: not JSON ({err})") from None
    if not isinstance(document, dict):
        raise PlanFileError(f"{path}: expected a JSON object (a gpufleet plan or `pulumi preview --json` output)")
    if "steps" in document:
        return _from_pulumi_preview(path, document)
    if "resources" in document:
        return _from_gpufleet(path, document)
    raise PlanFileError(
        f"{path}: neither a gpufleet plan (no 'resources') nor `pulumi preview --json` output (no 'steps')"
    )


def _from_gpufleet(path: Path, document: dict) -> SavedPlan:
    if document.get("version") != PLAN_VERSION:
        raise PlanFileError(f"{path}: version = {document.get('version')!r}: gpufleet reads plan version {PLAN_VERSION}")
    resources = document["resources"]
    if not isinstance(resources, list):
        raise PlanFileError(f"{path}: resources must be a list")
    for i, r in enumerate(resources):
        _check_resource(path, f"resources[{i}]", r)
    resources = [{**r, "name": r.get("name") or r["urn"].rsplit("::", 1)[-1], "inputs": r.get("inputs") or {}} for r in resources]
    return SavedPlan("gpufleet", str(document.get("project", "")), str(document.get("stack", "")), resources)


def _from_pulumi_preview(path: Path, document: dict) -> SavedPlan:
    steps = document["steps"]
    if not isinstance(steps, list):
        raise PlanFileError(f"{path}: steps must be a list")
    by_urn: dict[str, dict] = {}
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise PlanFileError(f"{path}: steps[{i}] must be an object")
        state = step.get("newState")
        if state is None:
            continue  # a delete: nothing of it remains to judge
        where = f"steps[{i}].newState"
        _check_resource(path, where, state)
        urn = state["urn"]
        # A replacement lists the URN more than once; the last new state is what will exist.
        by_urn[urn] = {
            "urn": urn,
            "type": state["type"],
            "name": urn.rsplit("::", 1)[-1],
            "parent": state.get("parent") or None,
            "custom": bool(state.get("custom", True)),
            "inputs": state.get("inputs") or {},
            "provider": (state.get("provider") or "").rsplit("::", 1)[0],
            "dependencies": state.get("dependencies") or [],
            "propertyDependencies": state.get("propertyDependencies") or {},
        }
    if not by_urn:
        raise PlanFileError(f"{path}: steps[] carry no newState: nothing to judge")
    first = next(iter(by_urn))
    parts = first.split("::")
    stack, project = (parts[0].removeprefix("urn:pulumi:"), parts[1]) if len(parts) > 2 else ("", "")
    return SavedPlan("pulumi-preview", project, stack, list(by_urn.values()))


def _is_strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# What each field of a resource must be, where the plan has it: the shape every reader relies on.
_FIELDS = {
    "name": (lambda v: isinstance(v, str), "a string"),
    "parent": (lambda v: v is None or isinstance(v, str), "a URN string or null"),
    "custom": (lambda v: isinstance(v, bool), "true or false"),
    "inputs": (lambda v: isinstance(v, dict), "an object"),
    "provider": (lambda v: isinstance(v, str), "a provider reference string"),
    "dependencies": (_is_strings, "a list of URN strings"),
    "propertyDependencies": (lambda v: isinstance(v, dict) and all(_is_strings(x) for x in v.values()), "an object of URN string lists"),
    "replaceOnChanges": (_is_strings, "a list of property paths"),
    "deleteBeforeReplace": (lambda v: isinstance(v, bool), "true or false"),
}


def _short(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_resource(path: Path, where: str, r: object) -> None:
    """The resource's shape, before anything reads it: exit 2 names the field."""
    if not isinstance(r, dict):
        raise PlanFileError(f"{path}: {where} must be an object")
    for key in ("urn", "type"):
        if not isinstance(r.get(key), str) or not r[key]:
            raise PlanFileError(f"{path}: {where}.{key} = {_short(r.get(key))}: a non-empty string is required")
    for key, (valid, what) in _FIELDS.items():
        if key in r and r[key] is not None and not valid(r[key]) or (key == "inputs" and key in r and not valid(r[key])):
            raise PlanFileError(f"{path}: {where}.{key} = {_short(r[key])}: must be {what} [rule: plan-shape]")
    found = plan_shapes.resource_problems(r["type"], r.get("inputs") or {})
    if found:
        lines = [f"{path}: {where} ({r['type']}): {problem} [rule: plan-shape]" for problem in found[:5]]
        raise PlanFileError("\n".join(lines + ([f"... and {len(found) - 5} more"] if len(found) > 5 else [])))
