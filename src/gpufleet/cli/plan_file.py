"""Read a saved plan for `gpufleet check`: gpufleet's JSON plan (design.md) or the output of
`pulumi preview --json` (resources under `steps[].newState`), into one list of resources in the
plan's shape (urn, type, name, parent, inputs, dependencies, propertyDependencies, provider).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpufleet.catalog.bounds import MAX_DEPTH
from gpufleet.engine.plan import PLAN_VERSION
from gpufleet.errors import InputError
from gpufleet.plans import shapes as plan_shapes
from gpufleet.plans.index import from_plan, write_remediated

if TYPE_CHECKING:  # the client imports gRPC: only the commands that start a pack pay for it
    from gpufleet.analyzer.client import PolicyPack
    from gpufleet.analyzer.policy_config import PolicyConfig
    from gpufleet.analyzer.results import PolicyResult


class PlanFileError(InputError):
    """The file is not a plan gpufleet can judge; the message says which field is wrong."""


@dataclass
class SavedPlan:
    kind: str  # "gpufleet" | "pulumi-preview"
    project: str
    stack: str
    resources: list[dict]
    # A preview against a deployed stack: the resources as they are (steps[].oldState) and the
    # engine's verdict per URN (ops in step order, diffReasons, replaceReasons, detailedDiff paths).
    before: list[dict] | None = None
    verdicts: dict[str, dict] | None = None


def judged(pack: PolicyPack, given: dict[str, PolicyConfig], resources: list[dict]) -> PolicyResult:
    """The pack's verdict on a plan's resources, read as typed resources; the inputs its remediations
    rewrote are written back into `resources`, so what is shown or compared next is what will be
    created."""
    result = pack.judge(given, from_plan({"resources": resources}))
    write_remediated(resources, result.remediated)
    return result


def _finite_only(constant: str):
    raise ValueError(f"{constant} is not a JSON number")


def load(path: Path) -> SavedPlan:
    from gpufleet.stack.files import StackFileError, decode

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
    problem = _value_problem(document)
    if problem:
        raise PlanFileError(f"{path}: {problem} [rule: plan-values]")
    if "steps" in document:
        return _from_pulumi_preview(path, document)
    if "resources" in document:
        return _from_gpufleet(path, document)
    raise PlanFileError(f"{path}: neither a gpufleet plan (no 'resources') nor `pulumi preview --json` output (no 'steps')")


def _value_problem(document: dict) -> str | None:
    """The first value no reader can take, with where it is: nesting past MAX_DEPTH, a number past
    what a Pulumi property value holds (a double), a string that is not Unicode (a lone surrogate,
    which JSON's escapes allow and no gRPC message carries)."""
    stack: list[tuple[object, int, tuple | None, object]] = [(document, 0, None, None)]
    while stack:
        entry = stack.pop()
        value, depth, _, key = entry
        problem = None
        if isinstance(key, str) and not _unicode(key):
            problem = "a key that is not valid Unicode (a lone surrogate)"
        elif isinstance(value, str) and not _unicode(value):
            problem = "not valid Unicode (a lone surrogate)"
        elif isinstance(value, int) and not isinstance(value, bool) and not _double(value):
            problem = "a number past what a Pulumi property value holds (a double)"
        elif isinstance(value, (dict, list)) and depth >= MAX_DEPTH:
            problem = f"values nested more than {MAX_DEPTH} deep, the bound"
        if problem:
            return f"{_where(entry)}: {problem}"
        if isinstance(value, dict):
            stack.extend((v, depth + 1, entry, k) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, depth + 1, entry, i) for i, v in enumerate(value))
    return None


def _unicode(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _double(number: int) -> bool:
    try:
        float(number)
    except OverflowError:
        return False
    return True


def _where(entry: tuple) -> str:
    keys = []
    while entry[2] is not None:
        keys.append(entry[3])
        entry = entry[2]
    text = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in reversed(keys)).lstrip(".")
    return _clip(text.encode("utf-8", "backslashreplace").decode(), 120) or "the document"


def _clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def _from_gpufleet(path: Path, document: dict) -> SavedPlan:
    if document.get("version") != PLAN_VERSION:
        raise PlanFileError(f"{path}: version = {_short(document.get('version'))}: gpufleet reads plan version {PLAN_VERSION}")
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
    before: dict[str, dict] = {}
    verdicts: dict[str, dict] = {}
    olds: list[tuple[int, dict]] = []
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise PlanFileError(f"{path}: steps[{i}] must be an object")
        for key, (valid, what) in _STEP_FIELDS.items():
            if step.get(key) is not None and not valid(step[key]):
                raise PlanFileError(f"{path}: steps[{i}].{key} = {_short(step[key])}: must be {what} [rule: plan-shape]")
        for side in ("oldState", "newState"):
            state = step.get(side)
            if state is None:
                continue  # a create has no old state, a delete no new one
            if isinstance(state, dict) and "urn" not in state and isinstance(step.get("urn"), str):
                state = {**state, "urn": step["urn"]}
            if side == "oldState":
                olds.append((i, state))  # read once there is something to judge
                continue
            _check_resource(path, f"steps[{i}].newState", state)
            # A replacement lists the URN more than once; the last new state is what will exist.
            by_urn[state["urn"]] = _resource(state)
        urn = step.get("urn") or (step.get("newState") or step.get("oldState") or {}).get("urn")
        op = step.get("op")
        if isinstance(urn, str) and isinstance(op, str):
            verdict = verdicts.setdefault(urn, {"ops": [], "diffReasons": [], "replaceReasons": [], "detailedDiff": []})
            verdict["ops"].append(op)
            for key in ("diffReasons", "replaceReasons"):
                verdict[key] += [k for k in step.get(key) or [] if isinstance(k, str) and k not in verdict[key]]
            verdict["detailedDiff"] += [k for k in step.get("detailedDiff") or {} if k not in verdict["detailedDiff"]]
    if not by_urn:
        raise PlanFileError(f"{path}: steps[] carry no newState: nothing to judge")
    for i, state in olds:
        _check_resource(path, f"steps[{i}].oldState", state)
        before[state["urn"]] = _resource(state)
    for urn, verdict in verdicts.items():
        ops = verdict["ops"]
        # The engine deletes first only when the provider or the program says so; the step order shows it.
        if "delete-replaced" in ops and "create-replacement" in ops and ops.index("delete-replaced") < ops.index("create-replacement"):
            if urn in by_urn:
                by_urn[urn]["deleteBeforeReplace"] = True
    first = next(iter(by_urn))
    parts = first.split("::")
    stack, project = (parts[0].removeprefix("urn:pulumi:"), parts[1]) if len(parts) > 2 else ("", "")
    return SavedPlan("pulumi-preview", project, stack, list(by_urn.values()), list(before.values()), verdicts)


def _resource(state: dict) -> dict:
    urn = state["urn"]
    return {
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


# What a step of `pulumi preview --json` carries beside its states (pulumi's display.PreviewStep),
# where present: read for the engine's verdict per URN.
_STEP_FIELDS = {
    "urn": (lambda v: isinstance(v, str), "a URN string"),
    "op": (lambda v: isinstance(v, str), "a step kind string (create, update, replace, ...)"),
    "oldState": (lambda v: isinstance(v, dict), "an object"),
    "newState": (lambda v: isinstance(v, dict), "an object"),
    "diffReasons": (_is_strings, "a list of property names"),
    "replaceReasons": (_is_strings, "a list of property names"),
    "detailedDiff": (lambda v: isinstance(v, dict) and all(isinstance(x, dict) for x in v.values()), "an object of property diffs"),
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
