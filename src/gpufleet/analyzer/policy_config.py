"""Policy pack configuration, reconciled as the Pulumi CLI does before it calls `Configure`.

The file is the one `pulumi preview --policy-pack-config` takes: a JSON object keyed by policy name
(or "all"), each value an enforcement level or an object with an optional `enforcementLevel` and the
policy's properties. The result holds every policy of the pack: the schema defaults, then the
pack's initial config, then the file, validated against each policy's config schema.

One departure from the CLI, on purpose: a key that names no policy of the pack is an error (the CLI
passes it on and the pack ignores it, so a typo silently keeps the default).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema

from gpufleet.errors import InputError

LEVELS = ("advisory", "mandatory", "remediate", "disabled")


class PolicyConfigError(InputError):
    """The policy config is invalid: the message names the policy, the value and the rule."""


@dataclass
class PolicyConfig:
    enforcement_level: str | None = None
    properties: dict = field(default_factory=dict)


@dataclass(frozen=True)
class PolicyMeta:
    """What the pack's GetAnalyzerInfo says of one policy."""

    name: str
    enforcement_level: str
    config_schema: dict  # {"properties": ..., "required": [...]} or {}
    remediation: str = ""


def load_file(path: Path) -> dict[str, PolicyConfig]:
    try:
        text = path.read_text()
    except OSError as err:
        raise PolicyConfigError(f"--policy-config {path}: cannot read it ({err.strerror})") from None
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except ValueError as err:
        raise PolicyConfigError(f"--policy-config {path}: not JSON ({err})") from None
    return parse(document, str(path))


def parse(document: object, where: str = "policy config") -> dict[str, PolicyConfig]:
    if not isinstance(document, dict):
        raise PolicyConfigError(f"{where}: must be a JSON object keyed by policy name, got {type(document).__name__}")
    result: dict[str, PolicyConfig] = {}
    for name, value in document.items():
        if isinstance(value, str):
            result[name] = PolicyConfig(_level(where, name, value))
        elif isinstance(value, dict):
            props = dict(value)
            level = props.pop("enforcementLevel", None)
            result[name] = PolicyConfig(None if level is None else _level(where, name, level), props)
        else:
            raise PolicyConfigError(f"{where}: {name}: {json.dumps(value)} is not a valid value; must be an enforcement level or an object")
    return result


def _level(where: str, name: str, value: object) -> str:
    if value not in LEVELS:
        raise PolicyConfigError(f"{where}: {name}: enforcementLevel {json.dumps(value)} is not one of {', '.join(LEVELS)}")
    return value


def reconcile(
    policies: list[PolicyMeta], initial: dict[str, PolicyConfig], given: dict[str, PolicyConfig], pack: str
) -> dict[str, PolicyConfig]:
    """Defaults from the schemas, then the pack's initial config, then the given config; validated."""
    known = {p.name for p in policies}
    for name in given:
        if name != "all" and name not in known:
            raise PolicyConfigError(f"policy config: {name!r} is not a policy of pack {pack} (policies: {', '.join(sorted(known))})")
    result = {
        p.name: PolicyConfig(
            p.enforcement_level,
            {k: v["default"] for k, v in p.config_schema.get("properties", {}).items() if "default" in v},
        )
        for p in policies
    }
    for layer in (initial, given):
        _apply(result, layer)
    errors = []
    for p in policies:
        if not p.config_schema:
            continue
        schema = {"type": "object", **p.config_schema}
        for err in jsonschema.Draft7Validator(schema).iter_errors(result[p.name].properties):
            where = ".".join(str(x) for x in err.absolute_path) or "(config)"
            errors.append(f"{p.name}: {where}: {err.message}")
    if errors:
        raise PolicyConfigError("policy config does not match the policies' config schemas: " + "; ".join(errors))
    return result


def _apply(result: dict[str, PolicyConfig], layer: dict[str, PolicyConfig]) -> None:
    everything = layer.get("all")
    if everything is not None and everything.enforcement_level:
        for config in result.values():
            config.enforcement_level = everything.enforcement_level
    for name, given in layer.items():
        if name == "all" or name not in result:
            continue
        if given.enforcement_level:
            result[name].enforcement_level = given.enforcement_level
        result[name].properties.update(given.properties)
