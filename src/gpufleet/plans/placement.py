"""Placement of a whole plan: node groups, capacity providers, pods and tasks read from any Pulumi
program's resources (types, inputs and property dependencies only), then simulated.

The policy pack hands in the resources of `pulumi preview` (`k8s-pods-schedulable`,
`ecs-tasks-placeable`); gpufleet's plan and `check` hand in a JSON plan's resources. Both reach the
same `placement()`, which calls the same simulators the stack spec calls.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gpufleet import simulate
from gpufleet.catalog import catalog, charts, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.plans import awsx, dra
from gpufleet.plans.index import Index, Resource, from_plan, mapping, seq, str_or  # noqa: F401 - from_plan: its callers read it here too
from gpufleet.plans.karpenter import pools as karpenter_pools
from gpufleet.plans.pods import node_shapes, plugins, pod_templates
from gpufleet.plans.tasks import task_placements
from gpufleet.rules import fargate as fargate_rules
from gpufleet.simulate import ecs_scheduler, k8s_scheduler, karpenter

# Where gpufleet's pack writes the placement it judged a stack by (the offline engine names the file
# and reads it back: one simulation per preview).
PLACEMENT_OUT = "GPUFLEET_PLACEMENT_OUT"
# A file each simulation appends a line to (its process id): how the tests and the bench count the
# simulations of one preview across the engine's and the pack's processes.
PLACEMENT_RUNS = "GPUFLEET_PLACEMENT_RUNS"


@dataclass
class PlanPlacement:
    pods: list[k8s_scheduler.Placement]
    tasks: list[ecs_scheduler.TaskPlacement]
    shapes: list[k8s_scheduler.NodeShape]
    gaps: list[str]  # what the plan lacks for a judgement (its verdicts are then advisory)
    networks: list[dict] = field(default_factory=list)  # networks a component library will create (derived)
    provisioned: list[dict] = field(default_factory=list)  # nodes Karpenter launches: per NodePool and type, how many
    pools: list = field(default_factory=list)  # the NodePools read (simulate/karpenter.Pool)

    def certain(self, placed) -> bool:
        """Is a verdict decided by what the plan holds (no gap, nothing assumed)?"""
        return not self.gaps and not placed.notes

    def pending_pods(self) -> list[k8s_scheduler.Placement]:
        return [p for p in self.pods if p.status == k8s_scheduler.PENDING]

    def unserved(self) -> list[tuple[k8s_scheduler.Placement, k8s_scheduler.NodeShape, list[str]]]:
        """(device plugin, group, resources) where a plugin runs on no node of a group it serves."""
        return [(p, shape, wanted) for p in self.pods for shape, wanted in k8s_scheduler.unserved(p, self.shapes, self.pods)]

    def pending_tasks(self) -> list[ecs_scheduler.TaskPlacement]:
        return [t for t in self.tasks if t.status == ecs_scheduler.PENDING]

    def as_dict(self) -> dict:
        """The plan's `placement` block (documented in README "Placement")."""
        return {
            "nodeGroups": [
                {
                    "nodeGroup": s.group,
                    "instanceType": s.instance_type,
                    "nodes": {"min": s.min_nodes, "desired": s.nodes, "max": s.max_nodes},
                    "allocatable": {k: k8s_scheduler.show(k, v) for k, v in sorted(s.allocatable.items())},
                    **({"derived": s.derived} if s.derived else {}),
                }
                for s in self.shapes
            ],
            "pods": [
                {
                    "pod": p.pod.owner,
                    "urn": p.pod.urn,
                    "replicas": p.pod.replicas if p.pod.replicas is not None else "one per node",
                    "status": p.status,
                    "nodeGroups": {g: {"perNode": n, "placed": p.placed.get(g, 0)} for g, n in sorted(p.per_node.items())},
                    **({"scaleUp": dict(p.scaled_up)} if p.scaled_up else {}),
                    **({"provisioned": list(p.provisioned)} if p.provisioned else {}),
                    **({"fargate": dict(p.fargate)} if p.fargate else {}),
                    **({"pending": p.pending, "message": p.message} if p.pending else {}),
                    **({"notes": list(p.notes)} if p.notes else {}),
                    **({"source": p.pod.source} if p.pod.source else {}),
                }
                for p in self.pods
            ],
            "tasks": [
                {
                    "task": t.task.family,
                    "urn": t.task.urn,
                    "capacityProvider": t.provider,
                    "status": t.status,
                    "perInstance": t.per_instance,
                    **({"desiredCount": t.desired, "instancesNeeded": t.instances_needed} if t.desired is not None else {}),
                    **({"reason": t.reason} if t.reason else {}),
                    **({"notes": list(t.notes)} if t.notes else {}),
                }
                for t in self.tasks
            ],
            **({"provisioned": self.provisioned} if self.provisioned else {}),
            **({"networks": self.networks} if self.networks else {}),
            "gaps": list(self.gaps),
        }


def _profiles(index: Index) -> list[tuple[str, list[Mapping]]]:
    """The plan's Fargate profiles (name, selectors), by name: of several that match a pod, EKS picks
    the first so."""
    found = []
    for profile in index.of(tokens.EKS_FARGATE_PROFILE):
        name = str_or(profile.props.get("fargateProfileName"), profile.name)
        found.append((name, [mapping(s) for s in seq(profile.props.get("selectors")) if isinstance(s, Mapping)]))
    return sorted(found, key=lambda p: p[0])


def _namespace(pod: k8s_scheduler.PodTemplate) -> str | None:
    """The pod's namespace, from its owner ("Deployment nginx/web")."""
    parts = pod.owner.split(" ", 2)
    return parts[1].split("/", 1)[0] if len(parts) > 1 and "/" in parts[1] else None


def _matching(pod: k8s_scheduler.PodTemplate, profiles: list[tuple[str, list[Mapping]]], label: str) -> tuple[str | None, bool]:
    """(the profile that takes the pod, whether one may take it though the plan does not tell): the
    first by name whose selector matches, or the one its profile label names."""
    namespace = _namespace(pod)
    if namespace is None:
        return None, False
    named = pod.labels.get(label) if pod.labels else None
    maybe = False
    for name, selectors in profiles:
        if named is not None and name != named:
            continue
        found = [fargate_rules.selects(s, namespace, pod.labels) for s in selectors]
        if True in found:
            return name, maybe
        maybe = maybe or None in found
    return None, maybe


def _on_fargate(pod: k8s_scheduler.PodTemplate, profile: str, cat: Catalog) -> k8s_scheduler.Placement:
    """A pod a Fargate profile selects: EKS's Fargate scheduler takes it, never a node of the plan,
    and runs each replica on a Fargate node of its own, at the smallest size that holds its requests."""
    facts = cat.facts.fargate
    group = f"Fargate profile {profile}"
    notes = list(pod.notes)
    gpu = cat.facts.eks.accelerator_resources.nvidia
    others = sorted(r for r in pod.requests if "/" in r and r != gpu and pod.requests[r] > 0)
    if others:
        notes.append(f"requests {', '.join(others)}, which gpufleet's sources do not say Fargate offers or refuses: not judged")
    problem = fargate_rules.pod_problem(pod.requests, gpu, facts)
    size = fargate_rules.pod_size(pod.requests, facts)
    replicas = pod.replicas or 0
    if problem is not None or size is None:  # pod_problem says why there is no size
        return k8s_scheduler.Placement(pod, k8s_scheduler.PENDING, pending=replicas, message=f"{group}: {problem}", notes=notes)
    return k8s_scheduler.Placement(
        pod,
        k8s_scheduler.SCHEDULED,
        per_node={group: facts.pods.pods_per_node},
        placed={group: replicas},
        notes=notes,
        fargate={"profile": profile, "capacityProvisioned": fargate_rules.show_size(*size)},
    )


def _may_run_on_fargate(placed: Sequence[k8s_scheduler.Placement], profiles: list[tuple[str, list[Mapping]]], label: str) -> None:
    """A pod left Pending that a Fargate profile may select (labels the plan does not give, or a
    namespace known only after apply): whether EKS runs it on Fargate is not the plan's to tell, so
    its verdict is advisory, and says why."""
    for p in placed:
        if p.status != k8s_scheduler.PENDING:
            continue
        name, maybe = _matching(p.pod, profiles, label)
        if name is None and maybe:
            namespace = _namespace(p.pod)
            said = "; ".join(
                f"{n} (labels {dict(mapping(s.get('labels'))) or 'any'})"
                for n, selectors in profiles
                for s in selectors
                if fargate_rules.selects(s, namespace or "", p.pod.labels) is not False
            )
            p.notes.append(
                f"Fargate profiles of the plan select namespace {namespace}: {said}: a pod they match runs on AWS Fargate, "
                "and whether they match this one the plan does not tell (its labels, or a namespace known only after apply)"
            )


def placement(resources: Sequence[Resource], cat: Catalog | None = None) -> PlanPlacement:
    """Every pod template and task definition of the plan, placed."""
    if not simulate.enabled():
        return PlanPlacement([], [], [], ["the placement simulation is off (GPUFLEET_PLACEMENT=off)"])
    runs = os.environ.get(PLACEMENT_RUNS)
    if runs:
        with open(runs, "a") as log:
            log.write(f"{os.getpid()}\n")
    cat = cat or catalog.load()
    awsx_lib = cat.facts.libraries.awsx
    index = Index(resources)
    derived = awsx.ecs_resources(index, awsx_lib)
    index = Index([*resources, *derived])
    eks = cat.facts.eks
    nvidia = next((r for key, _, r in plugins(index, cat) if key == "nvidiaDevicePlugin"), None)
    values = nvidia.props.get("values") if nvidia is not None and isinstance(nvidia.props.get("values"), Mapping) else {}
    if nvidia is None:
        # The GPU Operator's device plugin, when the plan installs the operator instead.
        operator = next((r for r in index.of(tokens.HELM_RELEASE) if r.props.get("chart") == cat.facts.charts.gpu_operator.chart), None)
        given = operator.props.get("values") if operator is not None and isinstance(operator.props.get("values"), Mapping) else {}
        values = charts.operator_plugin_values(given)
    sharing = charts.nvidia_sharing(values, eks.accelerator_resources.nvidia)
    shapes, gaps = node_shapes(index, cat, sharing)
    pods, pod_gaps = pod_templates(index, cat)
    gaps += pod_gaps
    dra_world, dra_gaps = dra.world(index, cat) if any(p.claims for p in pods) else (None, [])
    if dra_world is not None:
        shapes, slice_gaps = dra.with_slices(shapes, index, cat)
        dra_gaps += slice_gaps
    gaps += dra_gaps
    profiles = _profiles(index)
    label = cat.facts.fargate.pods.profile_label
    # EKS's Fargate admission decides before any scheduler does: a pod a profile selects never
    # reaches a node. DaemonSets do not run on Fargate, so theirs stay with the nodes.
    fargate: dict[int, k8s_scheduler.Placement] = {}
    for pod in pods if profiles else ():
        profile = _matching(pod, profiles, label)[0] if pod.replicas is not None else None
        if profile is not None:
            fargate[id(pod)] = _on_fargate(pod, profile, cat)
    on_nodes = [p for p in pods if id(p) not in fargate]
    simulated = k8s_scheduler.simulate(shapes, on_nodes, cat, dra_world) if on_nodes else []
    pools, pool_gaps = karpenter_pools(index, cat)
    gaps += pool_gaps
    launched = karpenter.provision(simulated, pools, [p for p in on_nodes if p.replicas is None], sharing, shapes=shapes)
    _may_run_on_fargate(simulated, profiles, label)
    by_pod = {id(p.pod): p for p in simulated} | fargate
    placed = [by_pod[id(p)] for p in pods]
    tasks, task_gaps = task_placements(index, cat)
    networks, network_gaps = awsx.networks(index, awsx_lib)
    if derived or networks:
        # The defaults are awsx's at the pinned version; the program's own awsx may differ.
        named = [f"{r.type.rsplit(':', 1)[-1]} {r.name!r}" for r in derived] + [f"network {n['network']!r}" for n in networks]
        gaps.append(
            f"derived from awsx {awsx_lib.version}'s defaults, not read from the plan (verdicts on them are advisory): {', '.join(named)}"
        )
    return PlanPlacement(placed, tasks, shapes, gaps + task_gaps + network_gaps, networks, launched, pools)
