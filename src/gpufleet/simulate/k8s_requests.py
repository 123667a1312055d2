"""What a pod asks of a node, as kube-scheduler's NodeResourcesFit and NodePorts and Karpenter's
provisioner both read it: one computation for both, since both call the same upstream helper.

kube-scheduler 1.35 computes a pod's request with k8s.io/component-helpers' PodRequests
(pkg/scheduler/framework/plugins/noderesources/fit.go, computePodResourceRequest), and so does
Karpenter v1.14.1 (kubernetes-sigs/karpenter pkg/utils/resources/resources.go @v1.14.1 L115-L126,
Ceiling and RequestsForSpec; its go.mod pins k8s.io/component-helpers v0.35.0). Cited below at
kubernetes/component-helpers @v0.35.0 (commit 71c97d70a960fc0833d5566ea1eb5a8819d58221), the
release of the staging repository that Kubernetes 1.35.0 publishes.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpufleet.apis.quantity import QuantityError, quantity
from gpufleet.simulate.loose import mapping, seq

# kube-scheduler's HostPortInfo spells an unset hostIP and protocol so (kubernetes/kube-scheduler
# @v0.35.0 framework/types.go L526-L547 and L630-L638, DefaultBindAllHostIP and sanitize).
ANY_IP, DEFAULT_PROTOCOL = "0.0.0.0", "TCP"

HostPort = tuple[str, str, int]  # (hostIP, protocol, hostPort)


def _sidecar(container: Mapping) -> bool:
    """An init container with restartPolicy Always runs for the pod's whole life (a sidecar)."""
    return container.get("restartPolicy") == "Always"


def _pod_level_resource(name: str) -> bool:
    """The resources pod-level requests may set (helpers.go L65-L76, IsSupportedPodLevelResource)."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def _quantities(given: object, where: str, notes: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for name, value in mapping(given).items():
        try:
            found[str(name)] = quantity(str(name), value)
        except QuantityError as err:
            notes.append(f"{where}: {err}")
    return found


def container_requests(container: Mapping, notes: list[str]) -> dict[str, int]:
    """A container's requests; a resource with a limit and no request requests its limit (the API
    server's defaulting, before any scheduler reads the pod)."""
    resources = mapping(container.get("resources"))
    given = {**mapping(resources.get("limits")), **mapping(resources.get("requests"))}
    return _quantities(given, f"container {container.get('name', '?')!r}", notes)


def _add(total: dict[str, int], more: Mapping[str, int]) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, 0) + amount


def _at_least(total: dict[str, int], other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        total[name] = max(total.get(name, 0), amount)


def _containers(spec: Mapping, key: str) -> list[Mapping]:
    return [c for c in seq(spec.get(key)) if isinstance(c, Mapping)]


def aggregate_container_requests(spec: Mapping, notes: list[str]) -> dict[str, int]:
    """AggregateContainerRequests (helpers.go L191-L279): the regular containers and every sidecar
    run together; init container i runs beside the sidecars started before it; the pod needs the
    larger of the two, resource by resource."""
    total: dict[str, int] = {}
    for c in _containers(spec, "containers"):
        _add(total, container_requests(c, notes))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for c in _containers(spec, "initContainers"):
        own = container_requests(c, notes)
        if _sidecar(c):
            _add(total, own)
            _add(sidecars, own)
            running = dict(sidecars)
        else:
            running = dict(own)
            _add(running, sidecars)
        _at_least(init_peak, running)
    _at_least(total, init_peak)
    return total


def pod_requests(spec: Mapping, notes: list[str] | None = None) -> dict[str, int]:
    """PodRequests (helpers.go L149-L185) with the pod's overhead included: the containers'
    aggregate; where the pod sets pod-level requests (spec.resources, PodLevelResources: beta and on
    by default since 1.34), those replace it for the resources pod-level requests may set; then
    spec.overhead is added (what RuntimeClass admission writes)."""
    notes = notes if notes is not None else []
    total = aggregate_container_requests(spec, notes)
    pod_resources = mapping(spec.get("resources"))
    pod_level = {
        k: v for k, v in _quantities(pod_resources.get("requests"), "pod-level resources", notes).items() if _pod_level_resource(k)
    }
    total.update(pod_level)
    if not pod_level and any(_pod_level_resource(str(k)) for k in mapping(pod_resources.get("limits"))):
        # The API server defaults pod-level requests from these limits and the containers'
        # requests (pkg/apis/core/v1/defaults.go, defaultPodRequests): not simulated.
        notes.append("pod-level limits without pod-level requests: the API server's defaulting of the requests is not simulated")
    _add(total, _quantities(spec.get("overhead"), "overhead", notes))
    return total


def _port(given: Mapping) -> HostPort | None:
    port = given.get("hostPort")
    if isinstance(port, bool) or not isinstance(port, (int, float)) or port != int(port) or port <= 0:
        return None
    return (str(given.get("hostIP") or ANY_IP), str(given.get("protocol") or DEFAULT_PROTOCOL), int(port))


def host_ports(spec: Mapping) -> tuple[HostPort, ...]:
    """The host ports the pod holds on its node: its containers' and its sidecars' (kube-scheduler's
    util.GetHostPorts, pkg/scheduler/util/utils.go at 1.35; a plain init container's port is free
    again before the pod runs), each with the hostIP and protocol the scheduler reads an unset one as.
    Karpenter v1.14.1 reads the containers' alone (pkg/scheduling/hostportusage.go L93-L115); a
    sidecar's port is judged here as kube-scheduler, which binds the pod, judges it."""
    found: list[HostPort] = []
    for c in [*(c for c in _containers(spec, "initContainers") if _sidecar(c)), *_containers(spec, "containers")]:
        for given in seq(c.get("ports")):
            port = _port(given) if isinstance(given, Mapping) else None
            if port is not None:
                found.append(port)
    return tuple(found)


def ports_conflict(wanted: tuple[HostPort, ...], used: frozenset[HostPort]) -> bool:
    """HostPortInfo.CheckConflict (kube-scheduler framework/types.go @v0.35.0 L597-L628): a port on
    0.0.0.0 conflicts with the same protocol and port on any address; one on an address, with the
    same on that address or on 0.0.0.0."""
    return any(
        protocol == p and port == n and (ip == ANY_IP or address in (ANY_IP, ip)) for ip, protocol, port in wanted for address, p, n in used
    )
