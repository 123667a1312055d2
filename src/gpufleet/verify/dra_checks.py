"""Dynamic Resource Allocation held against the plan (issue 57 item 6): the devices NVIDIA's DRA
driver publishes on each node of a group (ResourceSlices) against the devices the plan derives for
that group (simulate/dra_slices), and each claim of a placed pod allocated, reserved for the pod, on
a node of a group where the plan lets that pod land.

Devices are compared by what the plan can know: how many of `type` gpu, or of `type` mig per
`profile`. What only NVML gives on the node (uuid, productName, memory of a MIG device, PCI
addresses, driver versions) is not compared."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import partial

from gpufleet.catalog.catalog import Catalog
from gpufleet.errors import InputError
from gpufleet.plans import dra as plan_dra
from gpufleet.plans.placement import PlanPlacement
from gpufleet.simulate import k8s_scheduler
from gpufleet.simulate.dra_objects import Device, ResourceClaim, ResourceSlice, resource_slice
from gpufleet.simulate.k8s_dra import DraWorld
from gpufleet.simulate.k8s_shapes import NodeShape, PodClaim
from gpufleet.verify import kube_checks, pod_state
from gpufleet.verify.fleet import KubeFleet
from gpufleet.verify.verdict import MATCH, MISMATCH, NOT_JUDGED, BadInput, Finding

KINDS = ("ResourceSlice", "ResourceClaim")
DEVICES, CLAIMS = "dra-devices", "dra-claims"
NOT_READ = "no ResourceSlice or ResourceClaim was read (`kubectl get resourceslices -o json`, `kubectl get resourceclaims -A -o json`)"


def unread_version(kind: object, obj: object) -> str | None:
    """Why a recorded DRA object is not read (an apiVersion whose shape gpufleet does not read, as
    for a plan's: plans/dra.READ_VERSIONS), or None."""
    if kind not in KINDS or not isinstance(obj, Mapping):
        return None
    version = obj.get("apiVersion")
    if not isinstance(version, str) or version in (f"{plan_dra.GROUP}/{v}" for v in plan_dra.READ_VERSIONS):
        return None
    return f"{version}, a shape gpufleet does not read"


def read_slice(raw: Mapping, where: str) -> ResourceSlice:
    """A ResourceSlice through the allocator's one parser; what it refuses is bad input at `where`."""
    try:
        return resource_slice(raw)
    except InputError as err:
        raise BadInput(f"{where}: {err}") from None


def check(placement: PlanPlacement, fleet: KubeFleet, urns: Mapping[str, str], cat: Catalog, world: DraWorld) -> list[Finding]:
    """The devices of each DRA group's nodes, then each placed pod's claims."""
    members = kube_checks.nodes_by_group(placement, fleet.nodes or [], urns, cat)
    by_node = {kube_checks.name_of(n): group for group, nodes in members.items() for n in nodes}
    return _devices(placement, fleet, members, urns, cat.facts.dra.driver) + _claims(placement, fleet, by_node, world)


# --- devices ---------------------------------------------------------------------------------------


def _attribute(device: Device, name: str, driver: str) -> object:
    """An attribute by its name, bare or qualified by the driver's own domain (the same attribute)."""
    found = device.attributes.get(name) or device.attributes.get(f"{driver}/{name}")
    return None if found is None else found.value


def _kind(device: Device, driver: str) -> str:
    kind = _attribute(device, "type", driver)
    if kind == "mig":
        return f"mig {_attribute(device, 'profile', driver)}"
    return "untyped" if kind is None else str(kind)


def _count(slices: Iterable[ResourceSlice], driver: str) -> Counter:
    return Counter(_kind(d, driver) for s in slices for d in s.devices)


def _shown(counts: Counter) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "no device"


def _published(shape: NodeShape, driver: str) -> list[ResourceSlice]:
    """The slices the plan derives for one node of the group from the driver's kubelet plugin."""
    return [s for s in shape.slices if s.driver == driver and s.node_name == shape.group]


def _newest(slices: Sequence[ResourceSlice]) -> tuple[list[ResourceSlice], str]:
    """A node's slices of the newest generation of each pool (older ones are being replaced: a
    consumer reads only the highest), and why they are not complete yet ("" when they are)."""
    newest: list[ResourceSlice] = []
    for pool in dict.fromkeys(s.pool.name for s in slices):
        of_pool = [s for s in slices if s.pool.name == pool]
        generation = max(s.pool.generation for s in of_pool)
        current = [s for s in of_pool if s.pool.generation == generation]
        if len(current) < current[0].pool.resource_slice_count:
            return [], f"pool {pool} generation {generation}: {len(current)} of {current[0].pool.resource_slice_count} slices recorded"
        newest += current
    return newest, ""


def _devices(
    placement: PlanPlacement, fleet: KubeFleet, members: Mapping[str, list[Mapping]], urns: Mapping[str, str], driver: str
) -> list[Finding]:
    found = []
    for shape in placement.shapes:
        expected = _published(shape, driver)
        if expected or shape.slices_unknown:
            finding = partial(Finding, DEVICES, urn=urns.get(shape.group), item=f"node group {shape.group}")
            found += _group_devices(shape, expected, fleet, members.get(shape.group, []), driver, finding)
    return found


def _group_devices(shape: NodeShape, expected, fleet: KubeFleet, nodes: list[Mapping], driver: str, finding) -> list[Finding]:
    """Each recorded node of one DRA group: its driver's devices against the plan's, by kind."""
    item = f"node group {shape.group}"
    if shape.slices_unknown:
        return [finding(NOT_JUDGED, item, f"the devices its nodes publish are not known to the plan: {shape.slices_unknown}")]
    if fleet.slices is None:
        return [finding(NOT_JUDGED, item, f"{driver} devices not compared: {NOT_READ}")]
    want = _count(expected, driver)
    said = f"{shape.instance_type}: the plan derives {_shown(want)} per node"
    found = []
    for node in nodes:
        name = kube_checks.name_of(node)
        slices, incomplete = _newest([s for s in fleet.slices if s.driver == driver and s.node_name == name])
        got = _count(slices, driver)
        if incomplete:
            found.append(finding(NOT_JUDGED, f"node {name}", f"{driver} devices not compared: {incomplete}"))
        elif got == want:
            found.append(finding(MATCH, f"node {name}", f"{driver} publishes {_shown(got)} ({said})", observed=dict(got)))
        else:
            where = f"publishes {_shown(got)}" if slices else "publishes no device (no ResourceSlice of the driver names the node)"
            found.append(finding(MISMATCH, f"node {name}", f"{driver} {where}; {said}", expected=dict(want), observed=dict(got)))
    return found


# --- claims ----------------------------------------------------------------------------------------


def _key(obj: Mapping) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return (str(metadata.get("namespace") or "default"), str(metadata.get("name")))


def _allocated_on(allocation: Mapping) -> list[str]:
    """The nodes an allocation names (its node selector's metadata.name fields); [] when it names
    none (devices reachable from every node)."""
    terms = (allocation.get("nodeSelector") or {}).get("nodeSelectorTerms") or []
    return sorted(
        {
            value
            for term in terms
            for field in term.get("matchFields") or []
            if field.get("key") == "metadata.name" and field.get("operator") == "In"
            for value in field.get("values") or []
        }
    )


def _claim_of(pod: Mapping, entry: PodClaim, claims: Mapping[tuple[str, str], Mapping]) -> tuple[Mapping | None, str]:
    """The pod's ResourceClaim for one of its claims: the named one, or the one made from its
    template (PodStatus.resourceClaimStatuses); else why not."""
    namespace = _key(pod)[0]
    if entry.claim is not None:
        found = claims.get((namespace, entry.claim))
        return found, "" if found else f"ResourceClaim {namespace}/{entry.claim} is not in the cluster"
    made = next(
        (s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or [] if s.get("name") == entry.name),
        None,
    )
    if made is None:
        return None, f"no ResourceClaim made from template {entry.template} (its status.resourceClaimStatuses names none)"
    found = claims.get((namespace, made))
    return found, "" if found else f"ResourceClaim {namespace}/{made} (from template {entry.template}) is not in the cluster"


def _plan_claim(entry: PodClaim, namespace: str, world: DraWorld) -> ResourceClaim | None:
    if entry.claim is not None:
        return world.claims.get((namespace, entry.claim))
    return world.templates.get((namespace, entry.template or ""))


def _counts_differ(plan: ResourceClaim | None, results: list[Mapping]) -> list[str]:
    """Each request the plan counts (ExactCount) whose allocated devices are another number; a
    firstAvailable request against the subrequest that was chosen."""
    found = []
    for request in plan.requests if plan else ():
        chosen = [r for r in results if r.get("request") == request.name or str(r.get("request", "")).startswith(f"{request.name}/")]
        spec = request.exactly
        if spec is None and chosen:
            sub = str(chosen[0].get("request")).split("/", 1)[-1]
            spec = next((s for s in request.first_available if s.name == sub), None)
        if spec is not None and spec.allocation_mode == "ExactCount" and len(chosen) != spec.count:
            found.append(f"request {request.name}: {len(chosen)} device(s) allocated, the plan asks {spec.count}")
    return found


def _reserved_for(claim: Mapping, pod: Mapping) -> bool:
    metadata = pod.get("metadata") or {}
    return any(
        r.get("resource") == "pods"
        and (r.get("uid") == metadata.get("uid") if metadata.get("uid") else r.get("name") == metadata.get("name"))
        for r in (claim.get("status") or {}).get("reservedFor") or []
    )


def _judge_claim(pod: Mapping, claim: Mapping, plan: ResourceClaim | None, by_node: Mapping[str, str], may_land: set[str]) -> list[str]:
    """What differs for one allocated claim of one pod ([] where nothing does)."""
    name, allocation = _key(claim)[1], (claim.get("status") or {}).get("allocation") or {}
    results = (allocation.get("devices") or {}).get("results") or []
    nodes = _allocated_on(allocation)
    pod_node = (pod.get("spec") or {}).get("nodeName")
    problems = []
    node = nodes[0] if len(nodes) == 1 else pod_node
    group = by_node.get(node or "")
    if node is not None and group not in may_land:
        problems.append(f"ResourceClaim {name} allocated on node {node} ({f'node group {group}' if group else 'no group of the plan'})")
    if nodes and pod_node and pod_node not in nodes:
        problems.append(f"ResourceClaim {name} allocated for node {', '.join(nodes)}, its pod runs on {pod_node}")
    if not _reserved_for(claim, pod):
        problems.append(f"ResourceClaim {name} is not reserved for pod {_key(pod)[1]}")
    return problems + [f"ResourceClaim {name}: {d}" for d in _counts_differ(plan, results)]


def _claim_finding(subject: str, urn: str | None, verdict: str, message: str) -> Finding:
    return Finding(CLAIMS, verdict, subject, message, urn, item=subject)


def _claims(placement: PlanPlacement, fleet: KubeFleet, by_node: Mapping[str, str], world: DraWorld) -> list[Finding]:
    found = []
    claims = {_key(c): c for c in fleet.claims or []}
    for placed in placement.pods:
        if not placed.pod.claims or placed.status == k8s_scheduler.DAEMON:
            continue
        subject = kube_checks.workload(placed)
        finding = partial(_claim_finding, subject, placed.pod.urn)
        owner = kube_checks.owner_of(placed)
        if fleet.claims is None or fleet.pods is None:
            found.append(
                finding(NOT_JUDGED, f"its claims are not compared: {NOT_READ if fleet.claims is None else 'no Pod object was read'}")
            )
        elif owner is None:
            found.append(finding(NOT_JUDGED, "its owner is not named Kind namespace/name: its pods and claims cannot be told from others"))
        else:
            found.append(_judge_workload(placed, kube_checks.live_pods(owner, fleet.pods), claims, by_node, world, finding))
    return found


def _judge_workload(placed, pods: list[Mapping], claims: Mapping, by_node: Mapping[str, str], world: DraWorld, finding) -> Finding:
    """Every claim of every live pod of one placed template: allocated where the plan lets the pod
    land, reserved for it, as many devices as the plan asks; a Pending pod's claims unallocated only
    where the plan leaves that many pods Pending."""
    plan_pending = placed.status == k8s_scheduler.PENDING
    may_land = {g for g, n in placed.per_node.items() if n != 0} | set(placed.placed)
    plan_words = (
        f"the plan: Pending ({placed.message})" if plan_pending else f"the plan: on {', '.join(sorted(placed.placed)) or 'no group'}"
    )
    if not pods:
        return finding(NOT_JUDGED, f"no pod of it in the cluster: its claims are judged with its pods; {plan_words}")
    problems: list[str] = []
    allocated: list[str] = []
    waiting: list[str] = []
    for pod in pods:
        state = pod_state.read(pod)
        for entry in placed.pod.claims:
            claim, why = _claim_of(pod, entry, claims)
            allocation = ((claim or {}).get("status") or {}).get("allocation")
            if allocation and plan_pending:
                problems.append(f"pod {state.name}: its claim {entry.name} is allocated though the plan leaves it Pending")
            elif allocation:
                plan = _plan_claim(entry, _key(pod)[0], world)
                problems += [f"pod {state.name}: {p}" for p in _judge_claim(pod, claim or {}, plan, by_node, may_land)]
                allocated.append(f"{_key(claim or {})[1]} on {', '.join(_allocated_on(allocation)) or state.node or 'every node'}")
            elif state.node is None and (plan_pending or state.name in waiting or len(waiting) < placed.pending):
                waiting += [] if state.name in waiting else [state.name]  # Pending as the plan predicts
            else:
                live = f" (the live scheduler: {state.scheduler})" if state.scheduler else ""
                problems.append(
                    f"pod {state.name}: claim {entry.name}: {why or f'ResourceClaim {_key(claim or {})[1]} not allocated'}{live}"
                )
    if problems:
        return finding(
            MISMATCH, "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "") + f"; {plan_words}"
        )
    parts = ([f"{len(allocated)} claim(s) allocated and reserved: " + "; ".join(allocated[:5])] if allocated else []) + (
        [f"{len(waiting)} pod(s) Pending, their claims unallocated, as the plan predicts"] if waiting else []
    )
    return finding(MATCH, "; ".join(parts) + f"; {plan_words}")
