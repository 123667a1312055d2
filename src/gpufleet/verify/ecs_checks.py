"""An ECS fleet held against the plan, accounted in full: every container instance belongs to a
capacity provider of the plan (its `capacityProviderName`) or is listed as outside it; an instance
counts toward its provider's desired count only once it is ACTIVE, its agent connected, its type one
the plan gives the provider and its registered GPU ids as many as the catalog gives that type. The
services' tasks run against desiredCount on their provider, and the MPS capability is there where
the plan's tasks share GPUs through MPS."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog, UnknownInstanceType
from gpufleet.plans.groups import Group
from gpufleet.plans.index import Index, Resource, mapping, seq
from gpufleet.rules import gpus as gpu_rules
from gpufleet.verify.fleet import EcsFleet
from gpufleet.verify.verdict import MATCH, MISMATCH, NOT_JUDGED, Finding, PlanItem

INSTANCE_TYPE = "ecs.instance-type"  # the attribute the agent registers


def _attributes(ci: Mapping) -> dict[str, str | None]:
    return {a.get("name"): a.get("value") for a in ci.get("attributes") or []}


def _gpu_ids(ci: Mapping) -> list[str]:
    return [v for r in ci.get("registeredResources") or [] if r.get("name") == "GPU" for v in r.get("stringSetValue") or []]


def _id(ci: Mapping) -> str:
    return str(ci.get("ec2InstanceId") or ci.get("containerInstanceArn"))


def _drain(cluster: str, ci: Mapping) -> tuple[str, ...]:
    arn = ci.get("containerInstanceArn") or _id(ci)
    return (f"aws ecs update-container-instances-state --cluster {cluster} --container-instances {arn} --status DRAINING",)


def _container_definitions(task: Resource) -> list[dict]:
    text = task.props.get("containerDefinitions")
    try:
        found = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return []
    return [c for c in found or [] if isinstance(c, dict)]


def _mps(task_definition: Resource) -> bool:
    return any(
        isinstance(r, dict) and r.get("type") == "GPU" and "nvidiaMps" in (r.get("sharingStrategy") or {})
        for c in _container_definitions(task_definition)
        for r in c.get("resourceRequirements") or []
    )


def _service_name(service: Resource) -> str:
    return f"service {service.props.get('name') or service.name}"


def items(resources: Sequence[Resource], groups: list[Group]) -> list[PlanItem]:
    """What the plan holds on ECS, each to be judged: its capacity providers and its services (a task
    definition no service runs is not kept running by the plan: nothing holds it to a count)."""
    found = [PlanItem("group", f"capacity provider {g.name}", g.urn) for g in groups]
    found += [PlanItem("workload", _service_name(s), s.urn) for s in Index(resources).of(tokens.ECS_SERVICE)]
    return found


def unjudged(resources: Sequence[Resource], groups: list[Group], reason: str) -> list[Finding]:
    """Every ECS item of the plan, not judged for one reason (nothing of the kind was read)."""
    return [
        Finding("ecs-instances" if i.kind == "group" else "ecs-tasks", NOT_JUDGED, i.subject, reason, i.urn, item=i.subject)
        for i in items(resources, groups)
    ]


def check(resources: Sequence[Resource], groups: list[Group], fleet: EcsFleet, cluster: str, cat: Catalog) -> list[Finding]:
    index = Index(resources)
    services = index.of(tokens.ECS_SERVICE)
    mps_providers = set()
    for s in services:
        definition = next(iter(index.deps(s, tokens.ECS_TASK_DEFINITION, prop="taskDefinition")), None)
        if definition is not None and _mps(definition):
            mps_providers |= _providers(s)
    findings = []
    if fleet.container_instances is None:
        reason = "no describe-container-instances output: its container instances are not compared"
        findings += [f for f in unjudged(resources, groups, reason) if f.check == "ecs-instances"]
    else:
        findings += _instances(groups, fleet.container_instances, cluster, mps_providers, cat)
    if fleet.tasks is None:
        reason = "no describe-tasks output: its tasks are not compared"
        findings += [Finding("ecs-tasks", NOT_JUDGED, _service_name(s), reason, s.urn, item=_service_name(s)) for s in services]
    else:
        findings += _tasks(services, fleet.tasks)
    return findings


def _type_gpus(instance_type: str, cat: Catalog) -> int | None:
    """Whole GPUs the catalog gives the type; None where that is not known (a fractional GPU, a type
    the catalog lacks)."""
    try:
        return gpu_rules.whole_gpus(cat.get(instance_type))
    except UnknownInstanceType:
        return None


def _instance_problems(ci: Mapping, g: Group, mps_needed: str | None, cat: Catalog) -> tuple[list[str], list[str]]:
    """(what differs from the plan, what could not be judged) for one container instance."""
    attributes, ids = _attributes(ci), _gpu_ids(ci)
    planned = g.instance_type.split(", ")
    kind = attributes.get(INSTANCE_TYPE) or (planned[0] if len(planned) == 1 else None)
    problems, unjudged = [], []
    if kind is None:
        unjudged.append(f"no {INSTANCE_TYPE} attribute, and the plan gives {g.name} several types: its GPUs are not compared")
    elif kind not in planned:
        problems.append(f"{INSTANCE_TYPE} {kind}, the plan's is {g.instance_type}")
    else:
        gpus = _type_gpus(kind, cat)
        if gpus is None:
            unjudged.append(f"the catalog gives {kind} no whole GPU count: its registered GPU ids are not compared")
        elif len(ids) != gpus:
            problems.append(
                f"{len(ids)} of {gpus} GPUs registered, as many as the catalog gives {kind} (GPU ids: {', '.join(ids) or 'none'})"
            )
    if mps_needed is not None and mps_needed not in attributes:
        problems.append(f"no {mps_needed} attribute: the plan's MPS tasks cannot be placed on it")
    return problems, unjudged


def _instances(groups: list[Group], instances: list[dict], cluster: str, mps_providers: set, cat: Catalog) -> list[Finding]:
    found = []
    mps = cat.facts.ecs.gpu_sharing.mps_capability
    names = {g.name for g in groups}
    outside = [ci for ci in instances if ci.get("capacityProviderName") not in names]
    for g in groups:
        subject = f"capacity provider {g.name}"
        counted, unjudged_here = 0, []
        for ci in (ci for ci in instances if ci.get("capacityProviderName") == g.name):
            problems, unjudged = _instance_problems(ci, g, mps if g.name in mps_providers else None, cat)
            active = ci.get("status") == "ACTIVE" and ci.get("agentConnected") is not False
            subject_ci = f"container instance {_id(ci)}"
            if problems:
                message = f"{g.name} ({g.instance_type}): " + "; ".join(problems) + ": drain it (printed, not run)"
                found.append(Finding("ecs-instances", MISMATCH, subject_ci, message, g.urn, _drain(cluster, ci), item=subject))
            elif unjudged:
                unjudged_here.append(_id(ci))
                found.append(Finding("ecs-instances", NOT_JUDGED, subject_ci, f"{g.name}: " + "; ".join(unjudged), g.urn, item=subject))
            else:
                counted += active
                said = f"{len(_gpu_ids(ci))} GPU ids, as its type has" if g.gpus else "no GPU in the plan"
                if (it := cat.find(g.instance_type)) is not None and it.neuron is not None:
                    said += "; its Neuron devices are not reported by ECS (not compared)"
                found.append(Finding("ecs-instances", MATCH, subject_ci, f"{g.name} ({g.instance_type}): {said}", g.urn, item=subject))
        found.append(_provider_count(g, subject, counted, unjudged_here))
    if outside:
        listed = ", ".join(f"{_id(ci)} ({ci.get('capacityProviderName') or 'no capacity provider'})" for ci in outside[:10])
        more = f" and {len(outside) - 10} more" if len(outside) > 10 else ""
        message = f"{len(outside)} container instance(s) belong to no capacity provider of the plan: {listed}{more}"
        found.append(Finding("ecs-instances", NOT_JUDGED, "container instances outside the plan", message, observed=len(outside)))
    return found


def _provider_count(g: Group, subject: str, counted: int, unjudged: list[str]) -> Finding:
    """A capacity provider's instances that count (ACTIVE, agent connected, as the plan gives them)
    against its Auto Scaling group's desired count."""
    desired = g.sizes.get("desired")
    said = f"{counted} container instance(s) ACTIVE with the agent connected and their type's GPUs registered"
    if not isinstance(desired, int):
        return Finding("ecs-instances", NOT_JUDGED, subject, f"{said}; its desired count is not in the plan", g.urn, item=subject)
    if counted >= desired:
        return Finding(
            "ecs-instances", MATCH, subject, f"{said} (desired {desired})", g.urn, expected=desired, observed=counted, item=subject
        )
    if unjudged:
        message = f"{said} of {desired} desired; not judged: {', '.join(unjudged)}"
        return Finding("ecs-instances", NOT_JUDGED, subject, message, g.urn, expected=desired, observed=counted, item=subject)
    return Finding(
        "ecs-instances", MISMATCH, subject, f"{said}, of {desired} desired", g.urn, expected=desired, observed=counted, item=subject
    )


def _providers(service: Resource) -> set[str]:
    """The capacity providers a service's strategy names."""
    named = (mapping(p).get("capacityProvider") for p in seq(service.props.get("capacityProviderStrategies")))
    return {p for p in named if isinstance(p, str)}


def _tasks(services: list[Resource], tasks: list[dict]) -> list[Finding]:
    found = []
    for s in services:
        inputs = s.props
        name, desired = inputs.get("name") or s.name, inputs.get("desiredCount")
        subject = _service_name(s)
        providers = _providers(s)
        mine = [t for t in tasks if t.get("group") == f"service:{name}"]
        running = [t for t in mine if t.get("lastStatus") == "RUNNING"]
        waiting = sorted({str(t.get("lastStatus")) for t in mine if t.get("lastStatus") != "RUNNING"})
        elsewhere = sorted(
            {str(t.get("capacityProviderName")) for t in running if providers and t.get("capacityProviderName") not in providers}
        )
        if not isinstance(desired, int):
            found.append(
                Finding(
                    "ecs-tasks", NOT_JUDGED, subject, f"{len(running)} tasks RUNNING; desiredCount is not in the plan", s.urn, item=subject
                )
            )
        elif len(running) < desired or elsewhere:
            said = f"{len(running)} of {desired} tasks RUNNING" + (f" (others: {', '.join(waiting)})" if waiting else "")
            if elsewhere:
                said += f"; running on {', '.join(elsewhere)}, not the plan's {', '.join(sorted(providers))}"
            found.append(Finding("ecs-tasks", MISMATCH, subject, said, s.urn, expected=desired, observed=len(running), item=subject))
        else:
            found.append(
                Finding(
                    "ecs-tasks",
                    MATCH,
                    subject,
                    f"{len(running)} of {desired} tasks RUNNING on {', '.join(sorted(providers)) or 'the default strategy'}",
                    s.urn,
                    item=subject,
                )
            )
    return found
