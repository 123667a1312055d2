"""How a rule module declares its policies. What each policy holds, its level, its fix and its config
are one reviewable table, policies.yaml; the module marks the function that judges each one by
name, and its POLICIES list is served in the order the functions are written."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ResourceValidationPolicy, StackValidationPolicy

TABLE = Path(__file__).with_name("policies.yaml")


@functools.cache
def table() -> dict[str, dict[str, dict[str, Any]]]:
    """policies.yaml: rule module -> policy name -> its row."""
    # libyaml where PyYAML has it: the same YAML 1.1 reading, about 3 ms of every pack start where
    # the pure-Python reader took 30 (the first rule module's import reads it).
    with TABLE.open(encoding="utf-8") as f:
        data = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return {module: {row["name"]: row for row in rows} for module, rows in data.items()}


# Every rule module's policies, in the order the modules are imported: the not-judged report
# (src/gpufleet/policies/coverage.py) asks each what it could not judge.
ALL: list[Policies] = []


class Policies(list):
    """A rule module's policies: `@POLICIES.resource("name")` or `@POLICIES.stack("name")` on each
    validate function, the name one of the module's rows in policies.yaml.

    A resource policy may name what it judges, so its function holds only the judgement:
    - `on=TOKEN`: any other resource type is not applicable;
    - `only=TOKEN` (or tokens): the types the function judges at all; any other passes without a call
      (no finding and no not-applicable entry, as the function's own early return gave);
    - `subject=f`: `f(args)` finds the subject (None: nothing to judge, or f marks the policy not
      applicable), and the function is called as `validate(args, report, subject)`;
    - `unjudged=f`: `f(resource)` says why the policy cannot judge an applicable resource before
      apply (a region or type not known yet), or None. The function is then not called, and the
      advisory `rules-not-judged` names the policy, the resource and the reason: never a silent pass.

    A stack policy may give `unjudged=f`, `f(args)` listing (urn, reason) of what it could not judge."""

    def __init__(self, module: str) -> None:
        super().__init__()
        self.module = module.rsplit(".", 1)[-1]
        self.unjudged: list[tuple[str, tuple[str, ...] | None, Callable[[Any], Any], bool]] = []  # (policy, on, f, per resource)
        ALL.append(self)

    def resource(
        self,
        name: str,
        on: str | tuple[str, ...] | None = None,
        subject: Callable[[Any], Any] | None = None,
        unjudged: Callable[[Any], str | None] | None = None,
        only: str | tuple[str, ...] | None = None,
    ) -> Callable:
        """`on`: the resource type (or types) the policy applies to; every other is not applicable."""
        on = (on,) if isinstance(on, str) else on
        only = (only,) if isinstance(only, str) else only
        if unjudged is not None:
            self.unjudged.append((name, on, unjudged, True))

        outside = None if on is None else functools.partial(_not_a, on)

        def narrowed(validate: Callable) -> Callable:
            @functools.wraps(validate)
            def judge(args, report) -> None:
                if only is not None and args.resource_type not in only:
                    return None
                reason = None if outside is None else outside(args.resource_type)
                if reason is not None:
                    args.not_applicable(reason)
                if unjudged is not None and unjudged(args) is not None:
                    return None
                if subject is None:
                    return validate(args, report)
                found = subject(args)
                if found is not None:
                    validate(args, report, found)

            return judge

        return self._declare(ResourceValidationPolicy, name, narrowed if on or subject or unjudged or only else None, outside, only)

    def stack(self, name: str, unjudged: Callable[[Any], list[tuple[str, str]]] | None = None) -> Callable:
        if unjudged is not None:
            self.unjudged.append((name, None, unjudged, False))
        return self._declare(StackValidationPolicy, name)

    def _declare(
        self, kind: type, name: str, narrowed: Callable | None = None, outside: Callable | None = None, only: tuple[str, ...] | None = None
    ) -> Callable:
        row = table().get(self.module, {}).get(name)
        if row is None:
            # A policy served with no description or level would be a silent gap in the pack.
            raise LookupError(f"policy {name!r} of src/gpufleet/policies/{self.module}.py has no row under {self.module!r} in {TABLE}")

        def register(validate: Callable) -> Callable:
            config = row.get("config")
            policy = kind(
                name=name,
                description=row["description"],
                enforcement_level=EnforcementLevel(row["level"]),
                validate=narrowed(validate) if narrowed else validate,
                config_schema=PolicyConfigSchema(properties=config) if config else None,
                remediation_steps=row["fix"],
            )
            if outside is not None:
                # The pack's Analyze answers other types from this, without calling the policy
                # (src/gpufleet/engine/patches/analyze_once.py): the same answer, found without the call.
                policy.not_applicable_to = outside
            if only is not None:
                # ... and passes the types it does not judge, without calling it or answering for it.
                policy.judges_only = frozenset(only)
            self.append(policy)
            return validate

        return register


def _not_a(on: tuple[str, ...], resource_type: str) -> str | None:
    """Why a policy on the types `on` does not apply to `resource_type` (None: it applies)."""
    return None if resource_type in on else f"not a {' or '.join(on)}"


def not_judged(args: Any) -> list[tuple[str, str, str]]:
    """(policy, urn, reason) for each applicable resource a policy of the pack could not judge."""
    found = []
    for module in ALL:
        for name, on, why, per_resource in module.unjudged:
            if not per_resource:
                found += [(name, urn, reason) for urn, reason in why(args)]
                continue
            for r in args.resources:
                if on is None or r.resource_type in on:
                    reason = why(r)
                    if reason is not None:
                        found.append((name, r.urn, reason))
    return found
