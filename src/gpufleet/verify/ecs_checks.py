"""An ECS fleet held against the plan: container instances registered per capacity provider (the
desired count of its Auto Scaling group, the plan's instance type, the type's GPUs registered as GPU
ids), the services' tasks running against desiredCount on their provider, and the MPS capability
where the plan's tasks share GPUs through MPS."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.plans.groups import Group
from gpufleet.plans.index import Index, Resource, mapping, seq
from gpufleet.verify.fleet import EcsFleet
from gpufleet.verify.verdict import MATCH, MISMATCH, NOT_JUDGED, Finding

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
        findings.append(
            Finding(
                "ecs-instances", NOT_JUDGED, "container instances", "no describe-container-instances output: instances are not compared"
            )
        )
    else:
        findings += _instances(groups, fleet.container_instances, cluster, mps_providers, cat)
    if fleet.tasks is None:
        findings.append(Finding("ecs-tasks", NOT_JUDGED, "tasks", "no describe-tasks output: tasks are not compared"))
    else:
        findings += _tasks(services, fleet.tasks)
    return findings


def _instances(groups: list[Group], instances: list[dict], cluster: str, mps_providers: set, cat: Catalog) -> list[Finding]:
    found = []
    mps = cat.facts.ecs.gpu_sharing.mps_capability
    for g in groups:
        mine = [ci for ci in instances if ci.get("capacityProviderName") == g.name]
        active = [ci for ci in mine if ci.get("status") == "ACTIVE" and ci.get("agentConnected") is not False]
        desired = g.sizes.get("desired")
        subject = f"capacity provider {g.name}"
        if isinstance(desired, int):
            verdict = MATCH if len(active) >= desired else MISMATCH
            found.append(
                Finding(
                    "ecs-instances",
                    verdict,
                    subject,
                    f"{len(active)} of {desired} desired container instances ACTIVE with the agent connected",
                    g.urn,
                    expected=desired,
                    observed=len(active),
                )
            )
        else:
            found.append(
                Finding(
                    "ecs-instances",
                    NOT_JUDGED,
                    subject,
                    f"{len(active)} container instances ACTIVE; its desired count is not in the plan",
                    g.urn,
                )
            )
        it = cat.find(g.instance_type)
        for ci in mine:
            attributes, ids = _attributes(ci), _gpu_ids(ci)
            problems = []
            if attributes.get(INSTANCE_TYPE) not in (None, g.instance_type):
                problems.append(f"{INSTANCE_TYPE} {attributes.get(INSTANCE_TYPE)}, the plan's is {g.instance_type}")
            if g.gpus and len(ids) < g.gpus:
                problems.append(f"{len(ids)} of {g.gpus} GPUs registered (GPU ids: {', '.join(ids) or 'none'})")
            if g.name in mps_providers and mps not in attributes:
                problems.append(f"no {mps} attribute: the plan's MPS tasks cannot be placed on it")
            subject_ci = f"container instance {_id(ci)}"
            if problems:
                found.append(
                    Finding(
                        "ecs-instances",
                        MISMATCH,
                        subject_ci,
                        f"{g.name} ({g.instance_type}): " + "; ".join(problems) + ": drain it (printed, not run)",
                        g.urn,
                        _drain(cluster, ci),
                    )
                )
            else:
                said = f"{len(ids)} GPU ids" if g.gpus else "no GPU in the plan"
                if it is not None and it.neuron is not None:
                    said += "; its Neuron devices are not reported by ECS (not compared)"
                found.append(Finding("ecs-instances", MATCH, subject_ci, f"{g.name} ({g.instance_type}): {said}", g.urn))
    return found


def _providers(service: Resource) -> set[str]:
    """The capacity providers a service's strategy names."""
    named = (mapping(p).get("capacityProvider") for p in seq(service.props.get("capacityProviderStrategies")))
    return {p for p in named if isinstance(p, str)}


def _tasks(services: list[Resource], tasks: list[dict]) -> list[Finding]:
    found = []
    for s in services:
        inputs = s.props
        name, desired = inputs.get("name") or s.name, inputs.get("desiredCount")
        providers = _providers(s)
        mine = [t for t in tasks if t.get("group") == f"service:{name}"]
        running = [t for t in mine if t.get("lastStatus") == "RUNNING"]
        waiting = sorted({str(t.get("lastStatus")) for t in mine if t.get("lastStatus") != "RUNNING"})
        elsewhere = sorted(
            {str(t.get("capacityProviderName")) for t in running if providers and t.get("capacityProviderName") not in providers}
        )
        subject = f"service {name}"
        if not isinstance(desired, int):
            found.append(Finding("ecs-tasks", NOT_JUDGED, subject, f"{len(running)} tasks RUNNING; desiredCount is not in the plan", s.urn))
        elif len(running) < desired or elsewhere:
            said = f"{len(running)} of {desired} tasks RUNNING" + (f" (others: {', '.join(waiting)})" if waiting else "")
            if elsewhere:
                said += f"; running on {', '.join(elsewhere)}, not the plan's {', '.join(sorted(providers))}"
            found.append(Finding("ecs-tasks", MISMATCH, subject, said, s.urn, expected=desired, observed=len(running)))
        else:
            found.append(
                Finding(
                    "ecs-tasks",
                    MATCH,
                    subject,
                    f"{len(running)} of {desired} tasks RUNNING on {', '.join(sorted(providers)) or 'the default strategy'}",
                    s.urn,
                )
            )
    return found
