"""kube-scheduler's filters that a plan can decide, in its plugin order: TaintToleration (NoSchedule
and NoExecute), NodeAffinity (nodeSelector and required node affinity), NodePorts (host ports),
NodeResourcesFit (requests against allocatable, and the pod count), and FitError's own message
(k8s_scheduler runs them). A pod's requests and host ports are read by k8s_requests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import cast

from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import KubernetesFacts
from gpufleet.rules.k8s import k8s_effect, requirement_problem, toleration_matches, untolerated_taint_message
from gpufleet.simulate.k8s_requests import HostPort, ports_conflict
from gpufleet.simulate.k8s_shapes import NodeShape, PodTemplate

# NodePorts' reason (pkg/scheduler/framework/plugins/nodeports/node_ports.go at 1.35, ErrReason).
PORTS_TAKEN = "node(s) didn't have free ports for the requested pod ports"


def untolerated_taint(pod: PodTemplate, node: NodeShape, cat: Catalog) -> Mapping | None:
    """The first NoSchedule or NoExecute taint no toleration of the pod matches."""
    eks = cat.facts.eks
    for taint in node.taints:
        if k8s_effect(taint.get("effect"), eks) not in ("NoSchedule", "NoExecute"):
            continue
        if not any(toleration_matches(t, taint, eks) for t in pod.tolerations):
            return taint
    return None


def expression_matches(expression: Mapping, labels: Mapping[str, str]) -> bool:
    key, operator = expression.get("key"), expression.get("operator")
    values = [str(v) for v in expression.get("values") or []]
    present = key in labels  # labels[key] is read only where it is: key is one of the labels' names
    if operator == "In":
        return present and labels[cast(str, key)] in values
    if operator == "NotIn":
        return not present or labels[cast(str, key)] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(values) == 1:
        try:
            have, bound = int(labels[cast(str, key)]), int(values[0])
        except ValueError:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def affinity_matches(pod: PodTemplate, labels: Mapping[str, str], cat: Catalog) -> bool:
    """nodeSelector (every pair) and the required node affinity (any term; every expression)."""
    if any(labels.get(k) != str(v) for k, v in pod.node_selector.items()):
        return False
    if pod.affinity_terms is None:
        return True
    return any(_term_matches(term, labels, cat.facts.kubernetes) for term in pod.affinity_terms)


def lands(pod: PodTemplate, node: NodeShape, cat: Catalog) -> bool:
    """Do TaintToleration and NodeAffinity let the pod onto the node (what a DaemonSet's pod needs)?"""
    return untolerated_taint(pod, node, cat) is None and affinity_matches(pod, node.labels, cat)


def _term_matches(term: Mapping, labels: Mapping[str, str], facts: KubernetesFacts) -> bool:
    """A term matches when all its requirements do; a term with a requirement that does not parse
    (an invalid label value, even under NotIn) matches no node."""
    expressions = term.get("matchExpressions")
    if not expressions:
        return False
    return not any(requirement_problem(e, facts) for e in expressions) and all(expression_matches(e, labels) for e in expressions)


def selected_keys(pod: PodTemplate) -> set[str]:
    keys = set(pod.node_selector)
    for term in pod.affinity_terms or ():
        keys |= {e.get("key") for e in term.get("matchExpressions") or []}
    return keys


def device_bound(pod: PodTemplate, node: NodeShape) -> dict[str, int]:
    bound = {k for d in node.devices for k in d}
    return {k: v for k, v in pod.requests.items() if k in bound and v > 0}


def device_for(pod: PodTemplate, node: NodeShape, devices: Sequence[Mapping[str, int]]) -> int | None:
    """The first device (binpack) whose free amounts hold all the pod's device-bound requests."""
    wanted = device_bound(pod, node)
    for i, free in enumerate(devices):
        if all(free.get(k, 0) >= v for k, v in wanted.items()):
            return i
    return None


def insufficient(pod: PodTemplate, free: Mapping[str, int], node: NodeShape, devices: Sequence[Mapping[str, int]] = ()) -> list[str]:
    """NodeResourcesFit's reasons: 'Too many pods' and 'Insufficient <resource>' for each short one
    (for a device-bound resource: no single device has enough)."""
    reasons = []
    if "pods" not in node.unknown_resources and free.get("pods", 0) < 1:
        reasons.append("Too many pods")
    bound = device_bound(pod, node)
    for resource, amount in sorted(pod.requests.items()):
        if amount <= 0 or resource in node.unknown_resources or resource in bound:
            continue
        if free.get(resource, 0) < amount:
            reasons.append(f"Insufficient {resource}")
    if bound and device_for(pod, node, devices) is None:
        reasons += [f"Insufficient {r} on any one device" for r in sorted(bound)]
    return reasons


def _admission(pod: PodTemplate, node: NodeShape) -> str | None:
    """What the kubelet refuses after the scheduler placed the pod (it then fails, not Pending)."""
    for resource in sorted(node.single_unit_resources):
        if pod.requests.get(resource, 0) > 1:
            return (
                f"node(s) time-slice {resource} with failRequestsGreaterThanOne: the kubelet rejects a request of "
                f"{pod.requests[resource]} (UnexpectedAdmissionError)"
            )
    return None


def filter_reasons(
    pod: PodTemplate,
    node: NodeShape,
    free: Mapping[str, int],
    cat: Catalog,
    devices: Sequence[Mapping[str, int]] | None = None,
    ports: frozenset[HostPort] = frozenset(),
) -> list[str]:
    """Why the pod cannot run on this node, whose pods hold `ports`, in kube-scheduler's words: the
    first failing filter plugin's reasons (TaintToleration, NodeAffinity, NodePorts,
    NodeResourcesFit), [] when it fits."""
    taint = untolerated_taint(pod, node, cat)
    if taint is not None:
        return [untolerated_taint_message(taint, node.kubernetes_version, cat.facts.kubernetes)]
    if not affinity_matches(pod, node.labels, cat):
        return ["node(s) didn't match Pod's node affinity/selector"]
    if ports_conflict(pod.host_ports, ports):
        return [PORTS_TAKEN]
    reasons = insufficient(pod, free, node, node.devices if devices is None else devices)
    if reasons:
        return reasons
    admission = _admission(pod, node)
    return [admission] if admission else []


def fit_count(pod: PodTemplate, free: Mapping[str, int], node: NodeShape, devices: Sequence[Mapping[str, int]] | None = None) -> int | None:
    """How many pods of the template `free` holds (the pod count included; device-bound requests
    packed device by device); None when nothing the node's shape knows bounds it (a pool whose CPU,
    memory and pod count are not in the catalog)."""
    bound = device_bound(pod, node)
    counts = [] if "pods" in node.unknown_resources else [free.get("pods", 0)]
    for resource, amount in pod.requests.items():
        if amount > 0 and resource not in node.unknown_resources and resource not in bound:
            counts.append(free.get(resource, 0) // amount)
    if bound:
        counts.append(sum(min(d.get(k, 0) // v for k, v in bound.items()) for d in (node.devices if devices is None else devices)))
    if pod.one_per_node or pod.host_ports:
        # A second replica would ask for the host ports the first holds.
        counts.append(1)
    return max(0, min(counts)) if counts else None


def unavailable_message(total: int, reasons: Counter, prefilter: str | None = None) -> str:
    """FitError's message: '0/N nodes are available: <count> <reason>, ...', the '<count> <reason>'
    strings sorted (pkg/scheduler/framework FitError.Error); ErrNoNodesAvailable without nodes. A
    PreFilter plugin's refusal stands alone in their place ('0/N nodes are available: <refusal>.'):
    the framework gives every node that status, and FitError.Error leaves the counts out then."""
    if total == 0:
        return "no nodes available to schedule pods"
    if prefilter:
        return f"0/{total} nodes are available: {prefilter}."
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"0/{total} nodes are available: {', '.join(parts)}."
