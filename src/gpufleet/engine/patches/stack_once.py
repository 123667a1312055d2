"""AnalyzeStack with the stack's resources built once for all the stack policies.

pulumi_policy's AnalyzeStack rebuilds every resource of the stack (properties, options, provider,
then the parent and dependency links) inside its loop over the stack policies: with this pack's 27
stack policies, a stack of 4,000 resources is built 27 times, over a second of the largest ECS
stack's preview. `install()` swaps in the same method with that construction hoisted out of the
loop. The policies share the resources, which they only read (servicer_memo already shares their
properties).

Installed only over the exact source it was written from (pulumi_policy 1.21.0's method, by the
hash of its text): any other pulumi_policy keeps its own AnalyzeStack, slower, never wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
from collections.abc import Iterator
from inspect import isawaitable

import pulumi_policy.policy as _policy
from pulumi.runtime import proto
from pulumi_policy.policy import EnforcementLevel, PolicyResource, StackValidationArgs, StackValidationPolicy, UnknownValueError

# sha256 of pulumi_policy 1.21.0's _PolicyAnalyzerServicer.AnalyzeStack source.
WRITTEN_FROM = "3917a008482c2387d7da37f65d889970933e8df8efc57270559e20b36be837bf"


def source_hash(method) -> str | None:
    try:
        return hashlib.sha256(inspect.getsource(method).encode()).hexdigest()
    except (OSError, TypeError):
        return None


def stack_resources(servicer, request) -> list[PolicyResource]:
    """The request's resources as the stack policies see them, linked to their parents and
    dependencies (pulumi_policy's construction, once)."""
    by_urn: dict[str, PolicyResource] = {}
    links = []
    for r in request.resources:
        # The module's names, as pulumi_policy's own method reads them (servicer_memo may have replaced them).
        props = _policy.unknown_checking_proxy(_policy.deserialize_properties(_policy.json_format.MessageToDict(r.properties)))
        resource = PolicyResource(
            r.type, props, r.urn, r.name, servicer._get_resource_options(r), servicer._get_provider_resource(r), None, [], {}
        )
        property_dependencies = {k: list(v.urns) for k, v in r.propertyDependencies.items()}
        links.append((resource, r.parent, list(r.dependencies), property_dependencies))
        by_urn[resource.urn] = resource
    for resource, parent, dependencies, property_dependencies in links:
        if parent in by_urn:  # the wire's parent is a string, empty for none
            resource.parent = by_urn[parent]
        resource.dependencies.extend(by_urn[d] for d in dependencies if d in by_urn)
        for key, urns in property_dependencies.items():
            resource.property_dependencies[key] = [by_urn[d] for d in urns if d in by_urn]
    return [resource for resource, *_ in links]


def validated(servicer, policy, args, report_violation, response):
    """pulumi_policy 1.21.0's call of one policy, in Analyze and AnalyzeStack alike: an awaitable it
    returns run to its end; an unknown value it reads, an advisory diagnostic; "not applicable", an entry."""
    pack_name = servicer._PolicyAnalyzerServicer__policy_pack_name
    pack_version = servicer._PolicyAnalyzerServicer__policy_pack_version
    try:
        result = policy.validate(args, report_violation)
        if result is not None and isawaitable(result):
            loop = asyncio.new_event_loop()
            task = asyncio.Task(result, loop=loop)
            loop.run_until_complete(task)
            loop.close()
    except UnknownValueError as e:
        response.diagnostics.append(
            proto.AnalyzeDiagnostic(
                policyName=policy.name,
                policyPackName=pack_name,
                policyPackVersion=pack_version,
                message=f"can't run policy '{policy.name}' from policy pack '{pack_name}@v{pack_version}' during preview: {e.message}",
                urn="",
                description=policy.description,
                enforcementLevel=servicer._map_enforcement_level(EnforcementLevel.ADVISORY),
            )
        )
    except _policy._NotApplicableError as e:
        response.not_applicable.append(proto.PolicyNotApplicable(policy_name=policy.name, reason=e.reason or ""))


def analyze_stack(self, request, _context):
    """pulumi_policy 1.21.0's AnalyzeStack, the resources built before the loop over policies."""
    self._configure_runtime_settings()
    response = proto.AnalyzeResponse()
    resources: list[PolicyResource] | None = None
    for policy in self._PolicyAnalyzerServicer__policies:
        enforcement_level = self._get_enforcement_level(policy)
        if enforcement_level == EnforcementLevel.DISABLED or not isinstance(policy, StackValidationPolicy):
            continue
        if enforcement_level == EnforcementLevel.REMEDIATE:
            enforcement_level = EnforcementLevel.MANDATORY  # stack policies cannot remediate
        report_violation = self._create_report_violation(response, policy.name, policy.description, enforcement_level, policy.severity)
        if resources is None:
            resources = stack_resources(self, request)
        args = StackValidationArgs(list(resources), self._get_policy_config(policy.name), self._PolicyAnalyzerServicer__stack_tags)
        validated(self, policy, args, report_violation, response)
    return response


@contextlib.contextmanager
def swapped(method: str, install) -> Iterator[bool]:
    """Within: what `install()` swaps in for the servicer's `method`; the servicer's own afterwards."""
    servicer = getattr(_policy, "_PolicyAnalyzerServicer", None)
    original = servicer.__dict__.get(method) if servicer else None
    try:
        yield install()
    finally:
        if original is not None:
            setattr(servicer, method, original)


def swap_in(method: str, replacement, written_from: str) -> bool:
    """`replacement` for the servicer's `method` when that method's source is the one it was written from."""
    servicer = getattr(_policy, "_PolicyAnalyzerServicer", None)
    if servicer is None or source_hash(getattr(servicer, method)) != written_from:
        return False
    replacement.__wrapped__ = getattr(servicer, method)
    setattr(servicer, method, replacement)
    return True


def stack_once() -> contextlib.AbstractContextManager[bool]:
    """Within: `analyze_stack` in place of pulumi_policy's AnalyzeStack, where it was written from it."""
    return swapped("AnalyzeStack", install)


def install() -> bool:
    """Swap in `analyze_stack` when pulumi_policy's AnalyzeStack is the one it was written from."""
    return swap_in("AnalyzeStack", analyze_stack, WRITTEN_FROM)
