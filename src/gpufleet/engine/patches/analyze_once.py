"""Analyze with the resource read once, the policies' levels read once per resource type, and the
policies that name their resource types answered "not applicable" for every other type without
being called.

pulumi_policy's Analyze runs every resource policy of the pack on every resource: for each, it
builds a violation reporter and the validation arguments and calls the policy, which (in this
pack, most of the time) raises "not applicable" because the resource is of another type. With
this pack's 48 resource policies, a 200-service ECS preview made 23,520 such calls for its 490
resources, 13,140 of them to hear "not applicable": most of the pack's time per resource, profiled
(`GPUFLEET_PACK_PROFILE`). A policy that declares its types (`not_applicable_to`, which the rule
modules' registry sets: src/gpufleet/policies/registry.py) is answered here with the very entry
it would have raised. A policy that judges some types only (`judges_only`) passes the others here
as it would have: without a finding or an entry, and without the call (the 200-service preview's
490 resources made about 9,800 calls that returned at once). Every other policy is called as
pulumi_policy calls it.

Installed only over the exact source it was written from (pulumi_policy 1.21.0's method, by the
hash of its text): any other pulumi_policy keeps its own Analyze, slower, never different.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pulumi_policy.policy as _policy
from pulumi.runtime import proto
from pulumi_policy.policy import EnforcementLevel, ResourceValidationArgs, ResourceValidationPolicy

from gpufleet.engine.patches.stack_once import swap_in, swapped, validated

# sha256 of pulumi_policy 1.21.0's _PolicyAnalyzerServicer.Analyze source.
WRITTEN_FROM = "75db9cf8fc9d158596909b9b3f77bf48815990a6f513f2bb35728a67e4d8a515"
# A policy's answer to "why not this resource type?" (None: it applies): set by the pack's registry.
DECLARED = "not_applicable_to"
# The resource types a policy judges at all; it passes every other silently: set by the registry.
ONLY = "judges_only"


# What the pack prepares of each resource as it is analysed, for its stack's judgement: (which
# resource types, what to do with their properties), registered with `per_resource`.
_PREPARED: list[tuple[Callable[[str], bool], Callable[[Any], object]]] = []


def per_resource(wanted: Callable[[str], bool], prepare: Callable[[Any], object]) -> None:
    """`prepare(props)` after the Analyze of every resource of a type `wanted`: work AnalyzeStack
    would otherwise do after the program has ended, done while it runs (the CLI analyses each
    resource as it registers). The same properties reach AnalyzeStack as the same object where
    servicer_memo is in; elsewhere the preparation is only not used."""
    _PREPARED.append((wanted, prepare))


def _props(request):
    """The request's properties as the policies see them (pulumi_policy's construction, read
    through the module's names, which servicer_memo may have replaced)."""
    return _policy.unknown_checking_proxy(_policy.deserialize_properties(_policy.json_format.MessageToDict(request.properties)))


def _resource(servicer, request) -> tuple:
    """The request's properties, options and provider as the policies see them."""
    return _props(request), servicer._get_resource_options(request), servicer._get_provider_resource(request)


def _prepare(request, props) -> None:
    for wanted, prepare in _PREPARED:
        if wanted(request.type):
            props = _props(request) if props is None else props
            # Only ahead of time: what fails here fails again, and is reported, where AnalyzeStack needs it.
            with contextlib.suppress(Exception):
                prepare(props)


def _route(servicer, resource_type: str) -> list[tuple]:
    """What each policy does with a resource of this type under the pack's current levels, in the
    pack's order: (policy, level, None) to be called, or (None, None, bytes): the "not applicable"
    entries of the policies in between, serialized (merged, a repeated field's entries append in order)."""
    levels = servicer._PolicyAnalyzerServicer__policy_pack_config_enforcement_level  # Configure replaces it
    routes = servicer.__dict__.setdefault("_gpufleet_routes", {})
    kept = routes.get(resource_type)
    if kept is not None and kept[0] is levels:
        return kept[1]
    route: list[tuple] = []
    skipped = proto.AnalyzeResponse()
    for policy in servicer._PolicyAnalyzerServicer__policies:
        level = servicer._get_enforcement_level(policy)
        if level == EnforcementLevel.DISABLED or not isinstance(policy, ResourceValidationPolicy):
            continue
        declared = getattr(policy, DECLARED, None)
        reason: str | None = None
        if not policy.has_validation():
            reason = "Policy does not implement validate"  # pulumi_policy's words
        elif declared is not None:
            reason = declared(resource_type)
        if reason is not None:
            skipped.not_applicable.add(policy_name=policy.name, reason=reason)
            continue
        if resource_type not in getattr(policy, ONLY, (resource_type,)):
            continue  # its call would return at once: nothing to answer
        if skipped.not_applicable:
            route.append((None, None, skipped.SerializeToString()))
            skipped = proto.AnalyzeResponse()
        # Still violated after remediation: reported as mandatory, as pulumi_policy does.
        route.append((policy, EnforcementLevel.MANDATORY if level == EnforcementLevel.REMEDIATE else level, None))
    if skipped.not_applicable:
        route.append((None, None, skipped.SerializeToString()))
    routes[resource_type] = (levels, route)
    return route


def analyze(self, request, _context):
    """pulumi_policy 1.21.0's Analyze, the resource read once and declared types answered here."""
    self._configure_runtime_settings()
    response = proto.AnalyzeResponse()
    resource: tuple | None = None
    for policy, enforcement_level, skipped in _route(self, request.type):
        if skipped is not None:
            response.MergeFromString(skipped)
            continue
        report_violation = self._create_report_violation(response, policy.name, policy.description, enforcement_level, policy.severity)
        if resource is None:
            resource = _resource(self, request)
        props, opts, provider = resource
        config = self._get_policy_config(policy.name)
        stack_tags = self._PolicyAnalyzerServicer__stack_tags
        args = ResourceValidationArgs(request.type, props, request.urn, request.name, opts, provider, config, stack_tags)
        validated(self, policy, args, report_violation, response)
    _prepare(request, None if resource is None else resource[0])
    return response


def analyze_once() -> contextlib.AbstractContextManager[bool]:
    """Within: `analyze` in place of pulumi_policy's Analyze, where it was written from it."""
    return swapped("Analyze", install)


def install() -> bool:
    """Swap in `analyze` when pulumi_policy's Analyze is the one it was written from."""
    return swap_in("Analyze", analyze, WRITTEN_FROM)
