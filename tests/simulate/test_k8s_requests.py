"""src/gpufleet/simulate/k8s_requests.py and the filters that read it, against the upstream suites:
component-helpers' PodRequests cases (tests/fixtures/kubernetes, v0.35.0, kept unchanged), then
kube-scheduler's NodeResourcesFit and NodePorts Filter cases (fit_test.go, node_ports_test.go at
release 1.35; see tests/fixtures/kubernetes/SOURCE.md for why those two are cited, not kept), each
case by its name (and, in the kept file, its line). A case gpufleet does not run sits in GAPS or
FIT_GAPS with its reason."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog
from gpufleet.simulate import k8s_filters as kf
from gpufleet.simulate.k8s_requests import host_ports, pod_requests, ports_conflict
from gpufleet.simulate.k8s_shapes import NodeShape
from gpufleet.simulate.k8s_workloads import pod_template
from tests.conftest import ROOT

CAT = catalog.load()
FIXTURES = ROOT / "tests" / "fixtures" / "kubernetes"
HELPERS_TEST = FIXTURES / "component-helpers-resource-helpers_test.go.txt"
MI, GI = 2**20, 2**30


def c(**requests) -> dict:
    """A container requesting `requests` (keys with '_' spell '-' and '/' as resources do)."""
    return {"resources": {"requests": {_name(k): v for k, v in requests.items()}}}


def side(**requests) -> dict:
    """A sidecar: an init container with restartPolicy Always."""
    return {**c(**requests), "restartPolicy": "Always"}


def _name(key: str) -> str:
    return {"hp2": "hugepages-2Mi", "hp1": "hugepages-1Gi", "ext": "example.com/aaa", "storage": "storage"}.get(key, key)


def spec(containers=(), init=(), pod_level=None, overhead=None) -> dict:
    found: dict = {"containers": list(containers), "initContainers": list(init)}
    if pod_level is not None:
        found["resources"] = {"requests": {_name(k): v for k, v in pod_level.items()}}
    if overhead is not None:
        found["overhead"] = overhead
    return found


# component-helpers resource/helpers_test.go @v0.35.0: (line of the case's name, its name, the pod, the requests wanted).
HELPERS = [
    (301, "nil options, larger init container", spec([c(cpu="1")], [c(cpu="4")]), {"cpu": 4000}),
    (325, "nil options, larger containers", spec([c(cpu="2"), c(cpu="3")], [c(cpu="2")]), {"cpu": 5000}),
    (
        393,
        "pod overhead included",
        spec([c(cpu="2"), c(cpu="3")], [c(cpu="2")], overhead={"cpu": "1", "memory": "1Gi"}),
        {"cpu": 6000, "memory": GI},
    ),
    (691, "restartable init container", spec([c(cpu="1")], [side(cpu="1")]), {"cpu": 2000}),
    (
        719,
        "multiple restartable init containers",
        spec([c(cpu="1")], [c(cpu="5"), side(cpu="1"), side(cpu="2"), side(cpu="3")]),
        {"cpu": 7000},
    ),
    (
        773,
        "multiple restartable and regular init containers",
        spec([c(cpu="1")], [c(cpu="5"), side(cpu="1"), side(cpu="2"), c(cpu="5"), side(cpu="3")]),
        {"cpu": 8000},
    ),
    (837, "restartable-init, init and regular", spec([c(cpu="100")], [side(cpu="10"), c(cpu="200")]), {"cpu": 210000}),
    (1622, "nil", spec(), {}),
    (1632, "pod level memory resource with SkipPodLevelResources false", spec(pod_level={"memory": "2Mi"}), {"memory": 2 * MI}),
    (
        1638,
        "pod level memory and container level cpu resources",
        spec([c(cpu="2m")], pod_level={"memory": "2Mi"}),
        {"memory": 2 * MI, "cpu": 2},
    ),
    (
        1649,
        "pod level unsupported resources set at both pod-level and container-level",
        spec([c(storage="3Mi")], pod_level={"storage": "2Mi"}),
        {"storage": 3 * MI},
    ),
    (1660, "pod level unsupported resources set at pod-level", spec([c(memory="3Mi")], pod_level={"storage": "2Mi"}), {"memory": 3 * MI}),
    (1671, "only container level resources set", spec([c(memory="3Mi", cpu="2m")]), {"memory": 3 * MI, "cpu": 2}),
    (
        1686,
        "both container-level and pod-level resources set",
        spec([c(memory="3Mi", cpu="2m")], pod_level={"memory": "6Mi", "cpu": "8m"}),
        {"memory": 6 * MI, "cpu": 8},
    ),
    (
        1707,
        "container-level resources and init container set",
        spec([c(memory="3Mi", cpu="2m")], [c(memory="5Mi", cpu="4m")]),
        {"memory": 5 * MI, "cpu": 4},
    ),
    (
        1757,
        "container-level resources and sidecar container set",
        spec([c(memory="3Mi", cpu="2m")], [side(memory="5Mi", cpu="4m")]),
        {"memory": 8 * MI, "cpu": 6},
    ),
    (
        1783,
        "container-level resources, init and sidecar container set",
        spec([c(memory="3Mi", cpu="2m")], [side(memory="5Mi", cpu="4m"), c(memory="6Mi", cpu="8m")]),
        {"memory": 11 * MI, "cpu": 12},
    ),
    (
        1817,
        "pod-level resources, container-level resources, init and sidecar container set",
        spec(
            [c(memory="3Mi", cpu="2m")],
            [side(memory="5Mi", cpu="4m"), c(memory="6Mi", cpu="8m")],
            pod_level={"memory": "15Mi", "cpu": "18m"},
        ),
        {"memory": 15 * MI, "cpu": 18},
    ),
    (
        1857,
        "pod-level resources, hugepage request/limit single page size",
        spec(pod_level={"memory": "10Mi", "hp2": "2Mi"}),
        {"memory": 10 * MI, "hugepages-2Mi": 2 * MI},
    ),
    (
        1871,
        "pod-level resources, hugepage request/limit multiple page sizes",
        spec(pod_level={"cpu": "1", "hp2": "2Mi", "hp1": "1Gi"}),
        {"cpu": 1000, "hugepages-2Mi": 2 * MI, "hugepages-1Gi": GI},
    ),
    (
        1887,
        "pod-level resources, container-level resources, hugepage request/limit single page size",
        spec([c(hp2="6Mi")], pod_level={"cpu": "1", "hp2": "10Mi"}),
        {"cpu": 1000, "hugepages-2Mi": 10 * MI},
    ),
    (
        1913,
        "pod-level resources, container-level resources, hugepage request/limit multiple page sizes",
        spec([c(cpu="1", hp1="2Gi")], pod_level={"cpu": "1", "hp2": "10Mi", "hp1": "2Gi"}),
        {"cpu": 1000, "hugepages-2Mi": 10 * MI, "hugepages-1Gi": 2 * GI},
    ),
    (
        1942,
        "pod-level resources, container-level resources, hugepage request/limit multiple page sizes between pod-level and container-level",
        spec([c(memory="4Mi", hp1="1Gi")], pod_level={"cpu": "1", "hp2": "10Mi"}),
        {"cpu": 1000, "memory": 4 * MI, "hugepages-2Mi": 10 * MI, "hugepages-1Gi": GI},
    ),
]

# L1732 is L1707 with SkipPodLevelResources true: with no pod-level resources the option changes nothing.
HELPERS.append(
    (1732, "container-level resources and init container set (SkipPodLevelResources true)", *next(h[2:] for h in HELPERS if h[0] == 1707))
)

# Cases gpufleet does not run, by line, and why.
GAPS = {
    356: "pod overhead excluded: an option (ExcludeOverhead) neither scheduler sets; both count the overhead",
    432: "resized, infeasible: an in-place resize reads the pod's status, which a plan's pod template does not have",
    464: "resized, infeasible & in-progress: the pod's status (as L432)",
    499: "resized, no resize status: the pod's status (as L432)",
    526: "resized: per-resource 3-way maximum: the pod's status (as L432)",
    565: "resized, infeasible, but don't use status: the pod's status (as L432)",
    597: "resized, restartable init container, infeasible: the pod's status (as L432)",
    630: "resized, restartable init container, no resize status: the pod's status (as L432)",
    658: "resized, restartable init container, infeasible, but don't use status: the pod's status (as L432)",
    1626: "pod level memory resource with SkipPodLevelResources true: kube-scheduler 1.35 and Karpenter read pod-level requests (the gate is on by default)",
}


def test_every_case_named_is_the_fixture_s_own():
    lines = HELPERS_TEST.read_text().splitlines()
    for line, name, *_ in HELPERS:
        assert name.split(" (")[0] in lines[line - 1], (line, name)
    for line, reason in GAPS.items():
        assert reason.split(":")[0] in lines[line - 1], (line, reason)


def test_the_lines_k8s_requests_cites_are_the_helpers_own():
    lines = (FIXTURES / "component-helpers-resource-helpers.go.txt").read_text().splitlines()
    assert lines[64] == "var supportedPodLevelResources = sets.New(v1.ResourceCPU, v1.ResourceMemory)"
    assert lines[148].startswith("func PodRequests(") and lines[190].startswith("func AggregateContainerRequests(")
    assert lines[278] == "}" and "addResourceList(reqs, pod.Spec.Overhead)" in lines[180]


@pytest.mark.parametrize("line, name, pod, wanted", HELPERS, ids=[f"L{h[0]} {h[1]}" for h in HELPERS])
def test_component_helpers_pod_requests(line, name, pod, wanted):
    assert pod_requests(pod) == wanted


# kube-scheduler's NodeResourcesFit (fit_test.go, testEnoughRequests at 1.35): every case's node has
# cpu 10m, memory 20, pods 32, example.com/aaa 5, ephemeral-storage 20, hugepages-2Mi 5 allocatable
# (makeAllocatableResources(10, 20, 32, 5, 20, 5)) and one pod already on it requesting `used`.
FIT_ALLOCATABLE = {"cpu": 10, "memory": 20, "pods": 32, "example.com/aaa": 5, "ephemeral-storage": 20, "hugepages-2Mi": 5}
FIT = [
    (
        "too many resources fails due to init container cpu",
        spec([c(cpu="1m", memory="1")], [c(cpu="3m", memory="1")]),
        {"cpu": 8, "memory": 19},
        ["Insufficient cpu"],
    ),
    (
        "too many resources fails due to highest init container cpu",
        spec([c(cpu="1m", memory="1")], [c(cpu="3m", memory="1"), c(cpu="2m", memory="1")]),
        {"cpu": 8, "memory": 19},
        ["Insufficient cpu"],
    ),
    (
        "too many resources fails due to init container memory",
        spec([c(cpu="1m", memory="1")], [c(cpu="1m", memory="3")]),
        {"cpu": 9, "memory": 19},
        ["Insufficient memory"],
    ),
    (
        "init container fits because it's the max, not sum, of containers and init containers",
        spec([c(cpu="1m", memory="1")], [c(cpu="1m", memory="1")]),
        {"cpu": 9, "memory": 19},
        [],
    ),
    ("equal edge case for init container", spec([c(cpu="4m", memory="1")], [c(cpu="5m", memory="1")]), {"cpu": 5, "memory": 19}, []),
    ("extended resource fits for init container", spec([c()], [c(ext="1")]), {}, []),
    (
        "extended resource allocatable enforced for init container",
        spec([c()], [c(cpu="1m", memory="1", ext="1")]),
        {"example.com/aaa": 5},
        ["Insufficient example.com/aaa"],
    ),
    (
        "extended resource allocatable admits multiple init containers",
        spec([c()], [c(cpu="1m", memory="1", ext="3"), c(cpu="1m", memory="1", ext="3")]),
        {"example.com/aaa": 2},
        [],
    ),
    (
        "extended resource allocatable enforced for multiple init containers",
        spec([c()], [c(cpu="1m", memory="1", ext="6"), c(cpu="1m", memory="1", ext="3")]),
        {"example.com/aaa": 2},
        ["Insufficient example.com/aaa"],
    ),
    (
        "hugepages resource capacity enforced for init container",
        spec([c()], [c(cpu="1m", memory="1", hp2="10")]),
        {},
        ["Insufficient hugepages-2Mi"],
    ),
    ("resources + pod overhead fits", spec([c(cpu="1m", memory="1")], overhead={"cpu": "3m", "memory": "13"}), {"cpu": 5, "memory": 5}, []),
    (
        "requests + overhead does not fit for memory",
        spec([c(cpu="1m", memory="1")], overhead={"cpu": "1m", "memory": "15"}),
        {"cpu": 5, "memory": 5},
        ["Insufficient memory"],
    ),
    (
        "both pod-level and container-level resources fit",
        spec([c(cpu="1m", memory="1")], pod_level={"cpu": "1m", "memory": "2"}),
        {"cpu": 5, "memory": 5},
        [],
    ),
    (
        "pod-level cpu resource not fit",
        spec([c(cpu="1m", memory="1")], pod_level={"cpu": "7m", "memory": "2"}),
        {"cpu": 5, "memory": 5},
        ["Insufficient cpu"],
    ),
    (
        "pod-level memory resource not fit",
        spec([c(cpu="1m", memory="1")], pod_level={"cpu": "3m", "memory": "2"}),
        {"cpu": 5, "memory": 19},
        ["Insufficient memory"],
    ),
    ("pod-level hugepages resource fit", spec(pod_level={"cpu": "3m", "memory": "2", "hp2": "5"}), None, []),
    (
        "both pod-level and container-level hugepages resource fit",
        spec([c(cpu="1m", memory="1", hp2="3")], pod_level={"cpu": "3m", "memory": "2", "hp2": "5"}),
        None,
        [],
    ),
    (
        "pod-level hugepages resource not fit",
        spec(pod_level={"cpu": "3m", "memory": "2", "hp2": "10"}),
        None,
        ["Insufficient hugepages-2Mi"],
    ),
    (
        "one pod-level cpu resource fits and all init and non-init containers resources fit",
        spec([c(cpu="1m", memory="1")], [c(cpu="1m", memory="1")], pod_level={"cpu": "3m", "memory": "2"}),
        {"cpu": 5, "memory": 19},
        ["Insufficient memory"],
    ),
]
# TestRestartableInitContainers (fit_test.go at 1.35): a node of cpu 2m and one pod
# (makeAllocatableResources(2, 0, 1, 0, 0, 0)), empty.
SIDECAR_ALLOCATABLE = {"cpu": 2, "memory": 0, "pods": 1, "example.com/aaa": 0, "ephemeral-storage": 0, "hugepages-2Mi": 0}
SIDECAR_FIT = [
    ("allow pod with restartable init containers if sidecar containers is enabled", spec([c()], [side()]), []),
    (
        "allow pod if the total requested resources do not exceed the node's allocatable resources",
        spec([c(cpu="1m")], [side(cpu="1m")]),
        [],
    ),
    (
        "not allow pod if the total requested resources do exceed the node's allocatable resources",
        spec([c(cpu="1m")], [side(cpu="2m")]),
        ["Insufficient cpu"],
    ),
]
# Their cases about init containers, sidecars, overhead and pod-level resources that gpufleet does not run.
FIT_GAPS = {
    "not allow pod with restartable init containers if sidecar containers is disabled": "SidecarContainers has been on (GA) since 1.33; no cluster gpufleet plans turns it off",
    "allow pod without restartable init containers if sidecar containers is disabled": "the same feature gate turned off",
}


def _node(allocatable) -> NodeShape:
    return NodeShape(group="g", instance_type="t", labels={}, taints=(), allocatable=allocatable, nodes=1, max_nodes=1, min_nodes=1)


@pytest.mark.parametrize("name, pod, used, wanted", FIT, ids=[f[0] for f in FIT])
def test_node_resources_fit(name, pod, used, wanted):
    # `used` None: the case's NodeInfo holds no pod.
    on_node = {**(used or {}), "pods": 0 if used is None else 1}
    free = {k: v - on_node.get(k, 0) for k, v in FIT_ALLOCATABLE.items()}
    template = pod_template("Pod default/p", 1, pod)
    assert kf.filter_reasons(template, _node(FIT_ALLOCATABLE), free, CAT) == wanted


@pytest.mark.parametrize("name, pod, wanted", SIDECAR_FIT, ids=[f[0] for f in SIDECAR_FIT])
def test_node_resources_fit_with_sidecars(name, pod, wanted):
    template = pod_template("Pod default/p", 1, pod)
    assert kf.filter_reasons(template, _node(SIDECAR_ALLOCATABLE), dict(SIDECAR_ALLOCATABLE), CAT) == wanted


def _ported(*ports: str) -> dict:
    """node_ports_test.go's newPod: one container holding each "PROTOCOL/hostIP/hostPort"."""
    given = []
    for p in ports:
        protocol, ip, port = p.split("/")
        given.append({"hostIP": ip, "hostPort": int(port), "protocol": protocol})
    return {"containers": [{"ports": given}]}


def _init_port(sidecar: bool) -> dict:
    """st.MakePod().InitContainerPort(sidecar, [{ContainerPort: 8001, HostPort: 8001, TCP}])."""
    init = {"ports": [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]}
    return {"initContainers": [{**init, "restartPolicy": "Always"} if sidecar else init]}


# TestNodePorts (nodeports/node_ports_test.go at 1.35): (name, the pod, the pod on the node, fits).
NODE_PORTS = [
    ("skip filter", {}, {}, True),
    ("other port", _ported("UDP/127.0.0.1/8080"), _ported("UDP/127.0.0.1/9090"), True),
    ("same udp port", _ported("UDP/127.0.0.1/8080"), _ported("UDP/127.0.0.1/8080"), False),
    ("same tcp port", _ported("TCP/127.0.0.1/8080"), _ported("TCP/127.0.0.1/8080"), False),
    ("different host ip", _ported("TCP/127.0.0.1/8080"), _ported("TCP/127.0.0.2/8080"), True),
    ("different protocol", _ported("UDP/127.0.0.1/8080"), _ported("TCP/127.0.0.1/8080"), True),
    ("second udp port conflict", _ported("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), _ported("UDP/127.0.0.1/8080"), False),
    (
        "first tcp port conflict",
        _ported("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        _ported("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
        False,
    ),
    ("first tcp port conflict due to 0.0.0.0 hostIP", _ported("TCP/0.0.0.0/8001"), _ported("TCP/127.0.0.1/8001"), False),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        _ported("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        _ported("TCP/127.0.0.1/8001"),
        False,
    ),
    ("second tcp port conflict to 0.0.0.0 hostIP", _ported("TCP/127.0.0.1/8001"), _ported("TCP/0.0.0.0/8001"), False),
    ("second different protocol", _ported("UDP/127.0.0.1/8001"), _ported("TCP/0.0.0.0/8001"), True),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", _ported("UDP/127.0.0.1/8001"), _ported("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"), False),
    ("non-sidecar initContainer using hostPort", _init_port(False), _ported("TCP/0.0.0.0/8001"), True),
    ("TCP hostPort conflict from sidecar initContainer", _init_port(True), _ported("TCP/0.0.0.0/8001"), False),
]


@pytest.mark.parametrize("name, pod, existing, fits", NODE_PORTS, ids=[n[0] for n in NODE_PORTS])
def test_node_ports(name, pod, existing, fits):
    template = pod_template("Pod default/p", 1, pod)
    node = _node({"cpu": 1000, "pods": 10})
    reasons = kf.filter_reasons(template, node, dict(node.allocatable), CAT, ports=frozenset(host_ports(existing)))
    assert reasons == ([] if fits else [kf.PORTS_TAKEN])


def test_an_unset_host_ip_and_protocol_read_as_the_scheduler_reads_them():
    pod = {"containers": [{"ports": [{"containerPort": 80, "hostPort": 80.0}, {"containerPort": 81}]}]}
    assert host_ports(pod) == (("0.0.0.0", "TCP", 80),)
    assert ports_conflict((("10.0.0.1", "TCP", 80),), frozenset(host_ports(pod)))


def test_a_quantity_the_api_refuses_is_noted_wherever_it_is_written():
    notes: list[str] = []
    assert pod_requests(spec([c(cpu="1")], overhead={"cpu": "lots"}, pod_level={"memory": "x"}), notes) == {"cpu": 1000}
    assert [n.split(":")[0] for n in notes] == ["pod-level resources", "overhead"]


def test_pod_level_limits_alone_are_a_named_gap():
    notes: list[str] = []
    given = {"containers": [c(cpu="1")], "resources": {"limits": {"cpu": "2"}}}
    assert pod_requests(given, notes) == {"cpu": 1000}
    assert notes == ["pod-level limits without pod-level requests: the API server's defaulting of the requests is not simulated"]
