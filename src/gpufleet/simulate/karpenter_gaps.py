"""What of a pod's provisioning the Karpenter simulation does not model, named on the pod: a pool's
nodes it does not simulate (static, Windows, instance store as ephemeral storage), a resource the
provider computes per type that the simulation gives no type, a selector on an OS or a zone it
cannot judge, a topology rule whose domains or inclusion policies it does not read. A pod named so
is advisory (PlanPlacement.certain), never a definite Pending or a silent "provisioned".

Plain functions over the pools, no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from gpufleet.catalog.catalog import Catalog
from gpufleet.rules import karpenter_requirements
from gpufleet.rules.k8s import tolerates
from gpufleet.rules.karpenter_requirement import IN
from gpufleet.rules.karpenter_requirements import Requirements
from gpufleet.simulate.k8s_shapes import NodeShape, PodTemplate

# The only OS the simulated nodes carry (node_capacity.karpenter_labels), and the one a Windows AMI
# family gives them instead (getOS, karpenter-provider-aws pkg/providers/instancetype/types.go
# @bde00654 L313-L321: corev1.Linux, corev1.Windows).
LINUX, WINDOWS = "linux", "windows"


@dataclass(frozen=True)
class Unmodelled:
    """Something of a NodePool's nodes the simulation does not model: named on each pod the pool
    provisions or refuses (one requesting `requested`, where given)."""

    what: str
    requested: str | None = None


class _Type(Protocol):
    """An instance type a pool may launch, as read here (karpenter.Candidate)."""

    @property
    def shape(self) -> NodeShape: ...
    @property
    def requirements(self) -> Requirements: ...


class Pool(Protocol):
    """A NodePool as read here (karpenter.Pool, which imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def candidates(self) -> Sequence[_Type]: ...
    @property
    def requirements(self) -> Requirements: ...
    @property
    def taints(self) -> Sequence[Mapping]: ...
    @property
    def aliases(self) -> Mapping[str, str]: ...
    @property
    def unmodelled(self) -> Sequence[Unmodelled]: ...


def notes(
    pod: PodTemplate,
    touched: Sequence[Pool],
    provisioned: Sequence[Mapping],
    pools: Sequence[Pool],
    shapes: Sequence[NodeShape],
    cat: Catalog,
) -> list[str]:
    """What the pod's verdict rests on that the simulation does not model; `touched`: the pools it
    was provisioned from or refused by; `provisioned`: the nodes launched for it (its Placement's)."""
    wanted = karpenter_requirements.of_pod(pod.node_selector, pod.affinity_terms, pools[0].aliases) if pools else Requirements()
    found = [
        *_of_pools(pod, touched),
        *_capacity(pod, pools, cat),
        *_windows(wanted, cat),
        *_zones(wanted, touched, provisioned, cat),
        *_topology(pod, pools, shapes, cat),
    ]
    return list(dict.fromkeys(found))


def _of_pools(pod: PodTemplate, touched: Iterable[Pool]) -> list[str]:
    return [
        f"NodePool {pool.name}: {u.what}"
        for pool in touched
        for u in pool.unmodelled
        if u.requested is None or pod.requests.get(u.requested, 0) > 0
    ]


def _capacity(pod: PodTemplate, pools: Sequence[Pool], cat: Catalog) -> list[str]:
    """A resource the provider gives a type and the simulation does not (a NodeOverlay setting it
    makes it given)."""
    missing = [
        r
        for r in cat.facts.karpenter.unmodelled.capacity
        if pod.requests.get(r, 0) > 0 and not any(r in c.shape.allocatable for p in pools for c in p.candidates)
    ]
    if not missing:
        return []
    return [
        f"requests {', '.join(missing)}, which Karpenter's provider computes for each type (from the node class's storage, or "
        "its own tables) and gpufleet's simulation gives no type: whether a NodePool's nodes hold it is not judged"
    ]


def selects_windows(wanted: Requirements, cat: Catalog) -> bool:
    """Whether requirements (a pod's, a pool's) admit Windows nodes and not Linux ones."""
    key = cat.facts.eks.well_known_labels.os
    return wanted.has(key) and wanted.get(key).has(WINDOWS) and not wanted.get(key).has(LINUX)


def _windows(wanted: Requirements, cat: Catalog) -> list[str]:
    key = cat.facts.eks.well_known_labels.os
    if not selects_windows(wanted, cat):
        return []
    return [
        f"it selects {key} {WINDOWS}: gpufleet's simulated nodes are Linux only, so whether Karpenter launches one for it is not judged"
    ]


def _zones(wanted: Requirements, touched: Iterable[Pool], provisioned: Sequence[Mapping], cat: Catalog) -> list[str]:
    """A zone the pod or a pool asks for, on types whose zones are not known (the plan names no
    region for the pool, or the catalog holds no offerings of the type): Karpenter keeps only the
    zones a type is offered in, gpufleet admits any there. Of a pool that launched for the pod,
    the types it launched; of one that refused it, all its types."""
    key = cat.facts.eks.well_known_labels.zone
    found = []
    for pool in touched:
        asked = [r for r in (wanted, pool.requirements) if r.has(key)]
        launched = {p["instanceType"] for p in provisioned if p["nodePool"] == pool.name}
        blind = [
            c.shape.instance_type
            for c in pool.candidates
            if not c.requirements.has(key) and (not launched or c.shape.instance_type in launched)
        ]
        if asked and blind:
            shown = f"{', '.join(blind[:3])}{f' and {len(blind) - 3} more' if len(blind) > 3 else ''}"
            found.append(
                f"NodePool {pool.name}: {asked[0].get(key)} is asked for, but the zones {shown} are offered in are not known "
                "(no region in the plan for the pool, or no offerings in the catalog): whether a zone is offered is not judged"
            )
    return found


def _known(key: str, pools: Sequence[Pool], shapes: Sequence[NodeShape]) -> bool:
    """Whether any domain of the key is known: a node's label, a pool's or a type's In values
    (karpenter_topology._known judges a rule only then)."""
    return any(key in s.labels for s in shapes) or any(
        r.has(key) and r.get(key).operator() == IN for p in pools for r in (p.requirements, *(c.requirements for c in p.candidates))
    )


def _topology(pod: PodTemplate, pools: Sequence[Pool], shapes: Sequence[NodeShape], cat: Catalog) -> list[str]:
    """Rules over a key with no known domain (the simulation skips them; Karpenter takes its
    domains from the pools' requirements and their types' offerings, buildDomainGroups,
    kubernetes-sigs/karpenter topology.go @6e7eab7a L105-L144, and refuses a pod whose rule finds
    none), and the spread inclusion policies the simulation does not read (TopologyNodeFilter,
    topologynodefilter.go @6e7eab7a L68-L79)."""
    hostname, eks = cat.facts.eks.well_known_labels.hostname, cat.facts.eks
    rules = [("topology spread", s.topology_key) for s in pod.spread if not s.unknown]
    rules += [("pod affinity", t.topology_key) for t in pod.pod_affinity if not t.unknown]
    rules += [("pod anti-affinity", t.topology_key) for t in pod.pod_anti_affinity if not t.unknown]
    found = [
        f"{kind} over {key}: no NodePool, instance type or node of the plan gives that label a value (for the zone: no region "
        "in the plan), so Karpenter's domains of it are not known: the rule is not judged"
        for kind, key in dict.fromkeys(rules)
        if key != hostname and not _known(key, pools, shapes)
    ]
    untolerated = any(not tolerates(pod.tolerations, t, eks) for p in pools for t in p.taints)
    for s in pod.spread:
        if s.honor_taints and untolerated:
            found.append(
                f"topology spread over {s.topology_key} with nodeTaintsPolicy Honor: Karpenter leaves out the domains of nodes whose "
                "taints the pod does not tolerate, gpufleet counts them: the spread is not judged"
            )
        if not s.honor_affinity:
            found.append(
                f"topology spread over {s.topology_key} with nodeAffinityPolicy Ignore: Karpenter counts the domains the pod's "
                "node affinity excludes too, gpufleet does not: the spread is not judged"
            )
    return found


def claims_note(cat: Catalog, verdicts: Sequence[str]) -> str:
    """A pod with resourceClaims the node groups leave Pending, where some NodePool's provisioner may
    launch a node for it (`verdicts`: why that is open, per provisioner): Karpenter refuses such pods
    while its ignore-dra-requests flag is on, and its DRA scheduling with the flag off is not
    simulated, nor EKS Auto Mode's: the pod is not provisioned here, and its verdict is not judged."""
    fact = cat.facts.dra.karpenter
    return (
        f"DRA: it has resourceClaims: {'; '.join(verdicts)}. Karpenter refuses such pods while its ignore-dra-requests flag is on "
        f'("{fact.value}"; {fact.source}): whether a NodePool launches a node for it is not judged'
    )
