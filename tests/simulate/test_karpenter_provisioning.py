"""Karpenter's provisioning of the pods the node groups leave Pending, read from a plan's NodePool
CustomResources: the provider's own accelerator cases (tests/fixtures/karpenter, v1.14.1), then one
test per outcome: provisioned, held back by limits or by the reservation count, never provisioned
with the reason, over-provisioned by time-slicing, corrected by a NodeOverlay."""

from __future__ import annotations

import re

import pytest

from gpufleet.catalog import catalog
from gpufleet.catalog.wording import counted
from gpufleet.plans import placement as plan_placement
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "karpenter"
# The instance types the provider's fake EC2 answers with: its accelerator cases launch from these.
_RECORDS = (FIXTURES / "zz_generated.describe_instance_types.go.txt").read_text().split("var defaultDescribeInstanceTypesOutput", 1)[1].split("\nvar ", 1)[0]
FAKE_TYPES = sorted(set(re.findall(r'^\s+InstanceType:\s+"([^"]+)"', _RECORDS, re.M)))
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}


def _pool(name: str, requirements: list[dict], *, taints=(), limits=None, weight=None, labels=None) -> dict:
    spec = {"template": {"spec": {"requirements": requirements, "taints": list(taints), "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}
    if labels:
        spec["template"]["metadata"] = {"labels": labels}
    if limits:
        spec["limits"] = limits
    if weight is not None:
        spec["weight"] = weight
    inputs = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}
    return {"urn": f"urn:pulumi:s::p::kubernetes:karpenter.sh/v1:NodePool::{name}", "type": "kubernetes:karpenter.sh/v1:NodePool", "name": name, "inputs": inputs}


def _deployment(name: str, replicas: int, requests: dict, *, tolerate_gpu=False, node_selector=None, match=None) -> dict:
    pod = {"containers": [{"name": "c", "image": "x", "resources": {"requests": requests, "limits": {k: v for k, v in requests.items() if "/" in k}}}]}
    if match:
        pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": match}]}}}
    if tolerate_gpu:
        pod["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if node_selector:
        pod["nodeSelector"] = node_selector
    inputs = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
              "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": {"metadata": {"labels": {"app": name}}, "spec": pod}}}
    return {"urn": f"urn:pulumi:s::p::kubernetes:apps/v1:Deployment::{name}", "type": "kubernetes:apps/v1:Deployment", "name": name, "inputs": inputs}


def _placed(*resources: dict) -> dict:
    return plan_placement.placement(plan_placement.from_plan({"resources": list(resources)})).as_dict()


def _pods(*resources: dict) -> dict[str, dict]:
    return {p["pod"].rsplit("/", 1)[-1]: p for p in _placed(*resources)["pods"]}


def _smallest(n: int) -> str:
    """The rule that names a claim's type where the plan gives no region: the smallest, unpriced."""
    return f"smallest of {counted(n, 'type')} holding them (no prices: its region is not known before apply)"


def _types(types: list[str]) -> dict:
    return {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types}


# The provider's accelerator cases (instancetype/suite_test.go): pods in creation order, each one
# replica; the pool restricted to the fake's types (or as the case restricts it); every pod lands on
# `type`, on `nodes` nodes in all.
UPSTREAM = [
    ("L759 nvidia.com/gpu", FAKE_TYPES, [("nvidia.com/gpu", "1"), ("nvidia.com/gpu", "2"), ("nvidia.com/gpu", "4")], "g5.12xlarge", 2),
    ("L823 aws.amazon.com/neuron", FAKE_TYPES, [("aws.amazon.com/neuron", "2"), ("aws.amazon.com/neuron", "2"), ("aws.amazon.com/neuron", "4")], "inf2.24xlarge", 2),
    ("L856 trn1", ["trn1.2xlarge"], [("aws.amazon.com/neuron", "1")], "trn1.2xlarge", 1),
    ("L882 neuroncore", ["inf2.xlarge"], [("aws.amazon.com/neuroncore", "2")], "inf2.xlarge", 1),
]
# L909 (vpc.amazonaws.com/efa on dl1.24xlarge) is not run: dl1 is not in the catalog's EC2 data
# (moto's snapshot), so no record says what it offers; the Gaudi and AMD cases ask for resources
# gpufleet does not advertise.
NOT_RUN = {"dl1.24xlarge": "L909 vpc.amazonaws.com/efa"}


def test_the_fake_types_are_the_provider_s():
    assert len(FAKE_TYPES) == 17 and "g5.12xlarge" in FAKE_TYPES


def test_a_case_not_run_is_one_the_catalog_cannot_judge():

    for type_ in NOT_RUN:
        assert catalog.load().find(type_) is None
    placed = _placed(_pool("default", [_types(list(NOT_RUN))]), _deployment("p0", 1, {"vpc.amazonaws.com/efa": "1"}))
    assert placed["pods"][0]["message"].endswith("NodePool default: its requirements admit no instance type of the catalog")


@pytest.mark.parametrize("case, types, requests, launched, nodes", UPSTREAM, ids=[c[0] for c in UPSTREAM])
def test_the_provider_s_accelerator_cases(case, types, requests, launched, nodes):
    deployments = [_deployment(f"p{i}", 1, {resource: amount}) for i, (resource, amount) in enumerate(requests)]
    placed = _placed(_pool("default", [_types(types)]), *deployments)
    assert all(p["status"] == "provisioned" for p in placed["pods"]), case
    assert {p["instanceType"] for d in placed["pods"] for p in d["provisioned"]} == {launched}, case
    assert placed["provisioned"] == [{"nodePool": "default", "instanceType": launched, "nodes": nodes, "chosen": _smallest(1)}], case


def test_provisioned_on_the_smallest_type_that_holds_them_all():
    pods = _pods(
        _pool("gpu", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5", "g6e"]}], taints=[GPU_TAINT]),
        _deployment("llm", 6, {"nvidia.com/gpu": "1", "cpu": "2", "memory": "8Gi"}, tolerate_gpu=True),
    )
    llm = pods["llm"]
    # Karpenter packs the six onto one NodeClaim while a type holds them all: an eight-GPU type.
    assert llm["status"] == "provisioned"
    assert llm["provisioned"] == [{"nodePool": "gpu", "instanceType": "g5.48xlarge", "nodes": 1, "placed": 6, "candidates": 2, "chosen": _smallest(2)}]


def test_held_back_by_limits():
    pods = _pods(
        _pool("gpu", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5", "g6e"]}], taints=[GPU_TAINT], limits={"nvidia.com/gpu": "4"}),
        _deployment("llm", 6, {"nvidia.com/gpu": "1", "cpu": "2", "memory": "8Gi"}, tolerate_gpu=True),
    )
    llm = pods["llm"]
    assert (llm["status"], llm["pending"]) == ("pending", 2)
    assert llm["provisioned"] == [{"nodePool": "gpu", "instanceType": "g5.12xlarge", "nodes": 1, "placed": 4, "candidates": 4, "chosen": _smallest(4)}]
    assert "; Karpenter launches no node for 2: NodePool gpu: held back by its limits (nvidia.com/gpu 4)" in llm["message"]


def test_never_provisioned_with_each_pool_s_reason():
    pods = _pods(
        _pool("gpu", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}], taints=[GPU_TAINT]),
        _pool("general", [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["m"]}]),
        _deployment("llm", 1, {"nvidia.com/gpu": "1"}),  # no toleration of the GPU pool's taint
    )
    llm = pods["llm"]
    assert (llm["status"], llm["pending"], llm.get("provisioned")) == ("pending", 1, None)
    assert "NodePool gpu: none of its 8 instance types holds the pod: 8 node(s) had untolerated taint" in llm["message"]
    assert "NodePool general: none of its" in llm["message"] and "Insufficient nvidia.com/gpu" in llm["message"]


def test_a_custom_label_the_pool_does_not_define_admits_nothing():
    selector = {"team": "ml"}
    refused = _pods(_pool("general", [_types(["m5.large"])]), _deployment("web", 1, {"cpu": "1"}, node_selector=selector))["web"]
    assert refused["status"] == "pending" and 'incompatible requirements, label "team" does not have known values' in refused["message"]
    admitted = _pods(_pool("general", [_types(["m5.large"])], labels=selector), _deployment("web", 1, {"cpu": "1"}, node_selector=selector))["web"]
    assert admitted["status"] == "provisioned"


# Karpenter's requirement algebra (rules/karpenter_requirements.py) where a pod meets a pool, and
# where it joins a NodeClaim (issue 53): each case as Karpenter decides it.
_ZONES = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a", "us-east-1b"]}
_TEAMS = {"key": "team", "operator": "In", "values": ["a", "b"]}


def _one(pool: dict, *match: dict, node_selector=None) -> dict:
    return _pods(pool, _deployment("web", 1, {"cpu": "1"}, match=list(match), node_selector=node_selector))["web"]


@pytest.mark.parametrize("pool_requirements, match, admitted", [
    # A pod's exclusion on a key the pool does not define is compatible (requirements.go L189).
    ([], {"key": "team", "operator": "NotIn", "values": ["x"]}, True),
    ([], {"key": "team", "operator": "DoesNotExist"}, True),
    # An exclusion of every value the pool allows is not (L254-L274: In against NotIn or DoesNotExist).
    ([_TEAMS], {"key": "team", "operator": "NotIn", "values": ["a", "b"]}, False),
    ([_TEAMS], {"key": "team", "operator": "DoesNotExist"}, False),
    ([_ZONES], {"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["us-east-1a", "us-east-1b"]}, False),
    # Exists on a key the pool defines: the node takes one of its values.
    ([_TEAMS], {"key": "team", "operator": "Exists"}, True),
    # The types without GPUs have no instance-gpu-count.
    ([], {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"}, True),
    # Well-known keys a pool leaves undefined, and the aliases Karpenter reads as them.
    ([], {"key": "topology.kubernetes.io/region", "operator": "In", "values": ["us-east-1"]}, True),
    ([], {"key": "topology.k8s.aws/zone-id", "operator": "In", "values": ["use1-az1"]}, True),
    ([_ZONES], {"key": "topology.ebs.csi.aws.com/zone", "operator": "In", "values": ["us-east-1b"]}, True),
    ([_ZONES], {"key": "topology.ebs.csi.aws.com/zone", "operator": "In", "values": ["us-east-1c"]}, False),
    ([_ZONES], {"key": "failure-domain.beta.kubernetes.io/zone", "operator": "In", "values": ["us-east-1c"]}, False),
])
def test_a_pod_s_requirements_meet_the_pool_s(pool_requirements, match, admitted):
    web = _one(_pool("general", [_types(["m5.large", "g5.xlarge"]), *pool_requirements]), match)
    assert (web["status"] == "provisioned") is admitted, web.get("message")
    if admitted:
        assert web["provisioned"][0]["instanceType"] == "m5.large"
    else:
        assert "incompatible requirements" in web["message"]


@pytest.mark.parametrize("key, values", [("team", ["a", "b"]), ("topology.kubernetes.io/zone", ["us-east-1a", "us-east-1b"])])
def test_pods_that_want_different_values_of_a_key_get_a_node_each(key, values):
    """A NodeClaim keeps the intersection of its pods' requirements: a pod whose values do not meet
    it starts a claim of its own (nodeclaim.go L130-L136)."""
    pool = _pool("general", [_types(["m5.xlarge"]), {"key": key, "operator": "In", "values": values}])
    apart = _placed(pool, *(_deployment(f"w{v[-1]}", 1, {"cpu": "500m"}, match=[{"key": key, "operator": "In", "values": [v]}]) for v in values))
    assert sum(n["nodes"] for n in apart["provisioned"]) == 2
    together = _placed(pool, *(_deployment(f"w{i}", 1, {"cpu": "500m"}, match=[{"key": key, "operator": "In", "values": values[:1]}]) for i in "12"))
    assert sum(n["nodes"] for n in together["provisioned"]) == 1


def test_the_heaviest_pool_is_tried_first():
    requirements = [_types(["m5.large", "m5.xlarge"])]
    for weights, pool in (((None, 10), "b"), ((10, None), "a"), ((None, None), "b")):
        pods = _pods(_pool("a", requirements, weight=weights[0]), _pool("b", requirements, weight=weights[1]), _deployment("web", 1, {"cpu": "1"}))
        assert pods["web"]["provisioned"][0]["nodePool"] == pool, weights


def _daemonset(name: str, requests: dict) -> dict:
    inputs = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "kube-system"},
              "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"metadata": {"labels": {"app": name}}, "spec": {
                  "tolerations": [{"operator": "Exists"}], "containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}]}}}}
    return {"urn": f"urn:pulumi:s::p::kubernetes:apps/v1:DaemonSet::{name}", "type": "kubernetes:apps/v1:DaemonSet", "name": name, "inputs": inputs}


def test_daemonsets_take_their_share_of_each_new_node():
    """As the core suite's DaemonSet case (provisioning/suite_test.go L935-L955): the pod and the
    daemon together choose the type. An m5.large leaves 1930m to pods in Karpenter's estimate."""
    pool = _pool("general", [_types(["m5.large", "m5.xlarge"])])
    alone = _pods(pool, _deployment("web", 1, {"cpu": "1500m"}))["web"]
    assert alone["provisioned"][0]["instanceType"] == "m5.large"
    beside = _pods(pool, _deployment("web", 1, {"cpu": "1500m"}), _daemonset("agent", {"cpu": "1"}))["web"]
    assert beside["provisioned"][0]["instanceType"] == "m5.xlarge"


def test_a_type_its_daemonsets_overload_holds_no_pod_whatever_the_pod_asks():
    """Karpenter merges the DaemonSets' requests with the pod's and keeps a type only where every
    resource fits (nodeclaim.go @v1.14.1 L562-L582, resources.Fits): a pod asking for no CPU still
    does not get an m5.large (1930m left to pods) whose DaemonSet asks for 3 CPUs."""
    pool = _pool("general", [_types(["m5.large", "m5.xlarge"])])
    web = _pods(pool, _deployment("web", 1, {"memory": "1Gi"}), _daemonset("agent", {"cpu": "3"}))["web"]
    assert web["provisioned"][0]["instanceType"] == "m5.xlarge"
    refused = _pods(_pool("small", [_types(["m5.large"])]), _deployment("web", 1, {"memory": "1Gi"}), _daemonset("agent", {"cpu": "3"}))[
        "web"
    ]
    assert refused["status"] == "pending"
    assert "Insufficient cpu (the DaemonSets' requests exceed the type's)" in refused["message"]


def test_karpenter_counts_a_sidecar_as_kube_scheduler_does():
    """Karpenter v1.14.1 reads requests with component-helpers' PodRequests, as kube-scheduler does
    (pkg/utils/resources/resources.go L115-L126): 1 CPU and a 1.5-CPU sidecar need 2.5 CPUs, more
    than an m5.large leaves to pods."""
    web = _deployment("web", 1, {"cpu": "1"})
    web["inputs"]["spec"]["template"]["spec"]["initContainers"] = [
        {"name": "proxy", "image": "x", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1500m"}}}
    ]
    placed = _pods(_pool("general", [_types(["m5.large", "m5.xlarge"])]), web)["web"]
    assert placed["provisioned"][0]["instanceType"] == "m5.xlarge"


def test_replicas_asking_for_one_host_port_get_a_node_each():
    """Karpenter's NodeClaim refuses a pod whose host port another of its pods holds (nodeclaim.go
    @v1.14.1, Add: HostPortUsage.Conflicts)."""
    web = _deployment("web", 2, {"cpu": "100m"})
    web["inputs"]["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80}]
    placed = _pods(_pool("general", [_types(["m5.large"])]), web)["web"]
    assert placed["provisioned"] == [{"nodePool": "general", "instanceType": "m5.large", "nodes": 2, "placed": 2, "candidates": 1, "chosen": _smallest(1)}]


@pytest.mark.parametrize("operator, values, admitted", [
    ("In", ["8"], {"p5.48xlarge", "g6e.48xlarge"}),
    # A type without GPUs holds no instance-gpu-count (DoesNotExist): NotIn admits it, Exists does not.
    ("NotIn", ["8"], {"g6e.xlarge", "g6e.12xlarge", "m5.large"}),
    ("Gt", ["4"], {"p5.48xlarge", "g6e.48xlarge"}),
    ("Gte", ["4"], {"p5.48xlarge", "g6e.48xlarge", "g6e.12xlarge"}),
    ("Lt", ["4"], {"g6e.xlarge"}),
    ("Lte", ["4"], {"g6e.xlarge", "g6e.12xlarge"}),
    ("Exists", [], {"p5.48xlarge", "g6e.48xlarge", "g6e.xlarge", "g6e.12xlarge"}),
    ("DoesNotExist", [], {"m5.large"}),
])
def test_requirement_operators_on_a_type_s_labels(operator, values, admitted):
    """Karpenter's operators, Gte and Lte beside Kubernetes' own, over instance-gpu-count."""
    pool = _pool("gpu", [_types(["p5.48xlarge", "g6e.48xlarge", "g6e.xlarge", "g6e.12xlarge", "m5.large"]),
                         {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": operator, "values": values}])
    from gpufleet.plans import karpenter as plan_karpenter
    from gpufleet.plans.index import Index

    [found], _ = plan_karpenter.pools(Index(plan_placement.from_plan({"resources": [pool]})), catalog.load())
    assert {c.shape.instance_type for c in found.candidates} == admitted


def test_what_a_pool_leaves_unknown_is_a_gap():
    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # an output not known at preview
    placed = _placed(
        _pool("gpu", [_types(["g5.xlarge"]), {"key": "karpenter.k8s.aws/instance-network-bandwidth", "operator": "In", "values": ["750"]},
                      {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": [unknown]}], limits={"nvidia.com/gpu": unknown}),
        _deployment("llm", 1, {"cpu": "1"}),
    )
    assert any("limit nvidia.com/gpu='04da6b54" in g and "not counted" in g for g in placed["gaps"])
    assert any("requirements on karpenter.k8s.aws/instance-network-bandwidth" in g and "not judged" in g for g in placed["gaps"])
    assert any("requirement on karpenter.k8s.aws/instance-family has a value not known until apply" in g for g in placed["gaps"])
    assert placed["pods"][0]["status"] == "provisioned"  # judged without them


def _device_plugin(replicas: int | None = None) -> dict:

    chart = catalog.load().facts.charts.nvidia_device_plugin
    values = {}
    if replicas:
        config = f"version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: {replicas}\n"
        values = {"config": {"map": {"default": config}}}
    inputs = {"chart": chart.chart, "version": chart.version, "namespace": "kube-system", "name": "nvdp", "values": values}
    return {"urn": "urn:pulumi:s::p::kubernetes:helm.sh/v3:Release::nvdp", "type": "kubernetes:helm.sh/v3:Release", "name": "nvdp", "inputs": inputs}


def _overlay(capacity: dict, gate: bool | None) -> list[dict]:

    facts = catalog.load().facts.karpenter
    spec = {"requirements": [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "In", "values": ["1"]}], "capacity": capacity}
    overlay = {"urn": "urn:pulumi:s::p::kubernetes:karpenter.sh/v1alpha1:NodeOverlay::slices", "type": "kubernetes:karpenter.sh/v1alpha1:NodeOverlay",
               "name": "slices", "inputs": {"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": "slices"}, "spec": spec}}
    if gate is None:
        return [overlay]
    values = {"settings": {"clusterName": "ml", "featureGates": {"nodeOverlay": gate}}}
    release = {"urn": "urn:pulumi:s::p::kubernetes:helm.sh/v3:Release::karpenter", "type": "kubernetes:helm.sh/v3:Release", "name": "karpenter",
               "inputs": {"chart": facts.chart.chart, "version": facts.chart.version, "namespace": "kube-system", "values": values}}
    return [overlay, release]


# The NVIDIA device plugin's default affinity wants this label where NFD does not run (curated eks.acceleratorLabels).
GPU_POOL = _pool("gpu", [_types(["g5.xlarge", "g5.2xlarge"])], taints=[GPU_TAINT], labels=catalog.load().facts.eks.accelerator_labels.of("nvidia"))


def test_over_provisioned_by_time_slicing():
    """Karpenter counts physical GPUs (aws/karpenter-provider-aws#3376): four one-GPU pods make four
    one-GPU nodes, where one holds them once the plugin shares each GPU four ways."""
    placed = _placed(GPU_POOL, _device_plugin(replicas=4), _deployment("llm", 4, {"nvidia.com/gpu": "1"}, tolerate_gpu=True))
    assert placed["provisioned"] == [{"nodePool": "gpu", "instanceType": "g5.xlarge", "nodes": 4, "chosen": _smallest(2)}]
    [llm] = [p for p in placed["pods"] if p["pod"].endswith("/llm")]
    assert llm["status"] == "provisioned"
    assert "NodePool gpu launches 4 nodes where 1 hold these pods once the device plugin shares each GPU 4 ways" in " ".join(llm["notes"])
    # Whole GPUs: four nodes are what the pods need, and nothing is said.
    whole = [p for p in _placed(GPU_POOL, _device_plugin(), _deployment("llm", 4, {"nvidia.com/gpu": "1"}, tolerate_gpu=True))["pods"] if p["pod"].endswith("/llm")]
    assert not any("physical GPUs" in n for n in whole[0].get("notes", []))


def test_corrected_by_a_node_overlay():
    pods = (GPU_POOL, _device_plugin(replicas=4), _deployment("llm", 4, {"nvidia.com/gpu": "1"}, tolerate_gpu=True))
    placed = _placed(*pods, *_overlay({"nvidia.com/gpu": "4"}, gate=True))
    assert placed["provisioned"] == [{"nodePool": "gpu", "instanceType": "g5.xlarge", "nodes": 1, "chosen": _smallest(2)}]
    assert not any("physical GPUs" in n for p in placed["pods"] for n in p.get("notes", []))
    # Karpenter reads an overlay only with its feature gate on (off by default): otherwise it is inert, said.
    inert = _placed(*pods, *_overlay({"nvidia.com/gpu": "4"}, gate=False))
    assert inert["provisioned"] == [{"nodePool": "gpu", "instanceType": "g5.xlarge", "nodes": 4, "chosen": _smallest(2)}]
    assert any("leaves its NodeOverlay feature gate off (settings.featureGates.nodeOverlay)" in g for g in inert["gaps"])
    assumed = _placed(*pods, *_overlay({"nvidia.com/gpu": "4"}, gate=None))
    assert assumed["provisioned"] == [{"nodePool": "gpu", "instanceType": "g5.xlarge", "nodes": 1, "chosen": _smallest(2)}]
    assert any("the Karpenter release is not in the plan; its NodeOverlay feature gate is taken as on" in g for g in assumed["gaps"])


def test_a_node_no_device_plugin_serves_leaves_its_pods_pending():
    """Karpenter launches for the type's GPUs; the kubelet offers only what a plugin advertises."""
    unlabelled = _pool("gpu", [_types(["g5.xlarge"])], taints=[GPU_TAINT])  # the plugin's affinity finds no label
    [llm] = [p for p in _placed(unlabelled, _device_plugin(), _deployment("llm", 1, {"nvidia.com/gpu": "1"}, tolerate_gpu=True))["pods"] if p["pod"].endswith("/llm")]
    assert (llm["status"], llm["pending"]) == ("pending", 1)
    assert "Karpenter launches nodes for it, but no device plugin of the plan runs on them to advertise nvidia.com/gpu" in llm["message"]


def test_never_provisioned_from_reserved_capacity_without_a_reservation():
    pool = _pool("reserved", [_types(["g5.xlarge"]), {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved"]}])
    node_class = {"urn": "urn:pulumi:s::p::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::default", "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "name": "default",
                  "inputs": {"metadata": {"name": "default"}, "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}]}}}
    web = _pods(pool, node_class, _deployment("web", 1, {"cpu": "1"}))["web"]
    assert web["status"] == "pending" and "NodePool reserved: it allows only reserved capacity, and its EC2NodeClass selects no capacity reservation" in web["message"]
    node_class["inputs"]["spec"]["capacityReservationSelectorTerms"] = [{"id": "cr-0123456789abcdef0"}]
    assert _pods(pool, node_class, _deployment("web", 1, {"cpu": "1"}))["web"]["status"] == "provisioned"


def test_held_back_by_the_reservation_count():
    """A reserved pool launches no more nodes than its reservations hold (gpufleet records the count
    on the EC2NodeClasses it makes); a pool that also allows on-demand is not held to it."""
    pool = _pool("reserved", [_types(["g5.xlarge"]), {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved"]}])
    node_class = {"urn": "urn:pulumi:s::p::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::default", "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "name": "default",
                  "inputs": {"metadata": {"name": "default", "annotations": {"gpufleet.dev/reserved-instances": "2"}},
                             "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "capacityReservationSelectorTerms": [{"id": "cr-0123456789abcdef0"}]}}}
    web = _pods(pool, node_class, _deployment("web", 3, {"cpu": "3"}))["web"]
    assert (web["status"], web["pending"]) == ("pending", 1)
    assert web["provisioned"][0]["nodes"] == 2
    assert "NodePool reserved: held back by its capacity reservations: all 2 reserved instances are launched" in web["message"]
    node_class["inputs"]["metadata"]["annotations"]["gpufleet.dev/reserved-instances"] = "3"
    assert _pods(pool, node_class, _deployment("web", 3, {"cpu": "3"}))["web"]["status"] == "provisioned"
    either = _pool("reserved", [_types(["g5.xlarge"]), {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved", "on-demand"]}])
    node_class["inputs"]["metadata"]["annotations"]["gpufleet.dev/reserved-instances"] = "2"
    assert _pods(either, node_class, _deployment("web", 3, {"cpu": "3"}))["web"]["status"] == "provisioned"


def test_efa_pods_get_the_interfaces_the_node_class_lays_out():
    """With networkInterfaces, a node's vpc.amazonaws.com/efa is its efa-only entries, and a type that
    cannot take the layout is not launched (Karpenter's compatibility filter); an EFA pod no pool can
    give its interfaces to is never provisioned."""
    layout = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}] + [
        {"networkCardIndex": c, "deviceIndex": 1 if c == 0 else 0, "interfaceType": "efa-only"} for c in range(2)]
    node_class = {"urn": "urn:pulumi:s::p::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::default", "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "name": "default",
                  "inputs": {"metadata": {"name": "default"}, "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "networkInterfaces": layout}}}
    pool = _pool("p5", [_types(["p5.48xlarge", "g5.48xlarge"])], taints=[GPU_TAINT])
    train = _deployment("train", 1, {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}, tolerate_gpu=True)
    pod = _pods(pool, node_class, train)["train"]
    # g5.48xlarge has one network card: the two-card layout leaves it out.
    assert pod["status"] == "pending" and "NodePool p5: none of its 1 instance types holds the pod" in pod["message"]
    assert "Insufficient vpc.amazonaws.com/efa" in pod["message"]
    fits = _pods(pool, node_class, _deployment("train", 1, {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "2"}, tolerate_gpu=True))["train"]
    assert fits["provisioned"][0]["instanceType"] == "p5.48xlarge" and fits["provisioned"][0]["candidates"] == 1
    # A layout on 33 network cards: no type takes it, so the pool admits none.
    node_class["inputs"]["spec"]["networkInterfaces"] = layout + [{"networkCardIndex": 32, "deviceIndex": 0, "interfaceType": "efa-only"}]
    assert "its requirements admit no instance type of the catalog" in _pods(pool, node_class, train)["train"]["message"]


def _auto_cluster(pools=("general-purpose", "system")) -> dict:
    inputs = {"computeConfig": {"enabled": True, "nodePools": list(pools)}, "storageConfig": {"blockStorage": {"enabled": True}},
              "kubernetesNetworkConfig": {"elasticLoadBalancing": {"enabled": True}}, "bootstrapSelfManagedAddons": False}
    return {"urn": "urn:pulumi:s::p::aws:eks/cluster:Cluster::auto", "type": "aws:eks/cluster:Cluster", "name": "auto", "inputs": inputs}


def test_eks_auto_mode_s_built_in_pools_provision_what_tolerates_them():
    """general-purpose and system (the user guide's description, derived and said so): a plain pod
    lands on general-purpose, a C, M or R type of generation 5 or newer; system keeps its taint."""
    placed = _placed(_auto_cluster(), _deployment("web", 2, {"cpu": "1", "memory": "1Gi"}))
    [web] = [p for p in placed["pods"] if p["pod"].endswith("/web")]
    assert web["status"] == "provisioned" and web["provisioned"][0]["nodePool"] == "general-purpose"
    launched = web["provisioned"][0]["instanceType"]
    assert launched.split(".")[0][0] in "cmr" and int("".join(ch for ch in launched.split(".")[0] if ch.isdigit())) >= 5
    assert any("EKS Auto Mode's built-in pools, derived from the user guide's description" in g for g in placed["gaps"])
    # Without general-purpose, only the tainted system pool is left.
    [web] = [p for p in _placed(_auto_cluster(("system",)), _deployment("web", 1, {"cpu": "1"}))["pods"] if p["pod"].endswith("/web")]
    assert web["status"] == "pending" and "NodePool system: none of its" in web["message"] and "untolerated taint" in web["message"]


def test_an_auto_mode_gpu_pool_needs_no_device_plugin_of_the_plan():
    """Auto Mode's nodes advertise their GPUs themselves; its labels are under eks.amazonaws.com."""
    pool = _pool("gpu", [{"key": "eks.amazonaws.com/instance-gpu-name", "operator": "In", "values": ["l40s"]}], taints=[GPU_TAINT])
    pool["inputs"]["spec"]["template"]["spec"]["nodeClassRef"] = {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}
    placed = _placed(_auto_cluster(), pool, _deployment("llm", 1, {"nvidia.com/gpu": "1"}, tolerate_gpu=True))
    [llm] = [p for p in placed["pods"] if p["pod"].endswith("/llm")]
    assert llm["status"] == "provisioned" and llm["provisioned"][0]["instanceType"].startswith("g6e.")
    # The same pool on Karpenter's own EC2NodeClass needs a device plugin the plan runs.
    pool["inputs"]["spec"]["template"]["spec"]["nodeClassRef"] = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
    pool["inputs"]["spec"]["template"]["spec"]["requirements"][0]["key"] = "karpenter.k8s.aws/instance-gpu-name"
    [llm] = [p for p in _placed(pool, _device_plugin(), _deployment("llm", 1, {"nvidia.com/gpu": "1"}, tolerate_gpu=True))["pods"] if p["pod"].endswith("/llm")]
    assert llm["status"] == "pending" and "no device plugin of the plan runs on them" in llm["message"]


def test_cpu_and_memory_limits_count_each_node_s_capacity():
    pool = _pool("general", [_types(["m5.xlarge"])], limits={"cpu": "8"})  # two 4-vCPU nodes
    web = _pods(pool, _deployment("web", 3, {"cpu": "3"}))["web"]
    assert (web["pending"], web["provisioned"][0]["nodes"]) == (1, 2)
    pool = _pool("general", [_types(["m5.xlarge"])], limits={"memory": "20Gi"})  # one 16 GiB node
    web = _pods(pool, _deployment("web", 3, {"cpu": "3"}))["web"]
    assert (web["pending"], web["provisioned"][0]["nodes"]) == (2, 1)


def test_keys_a_pool_s_requirements_define_admit_the_pods_that_select_them():
    """A custom key the requirements define: In admits its values only, Exists any value."""
    team_in = _pool("general", [_types(["m5.large"]), {"key": "team", "operator": "In", "values": ["ml"]}])
    assert _pods(team_in, _deployment("web", 1, {"cpu": "1"}, node_selector={"team": "ml"}))["web"]["status"] == "provisioned"
    assert _pods(team_in, _deployment("web", 1, {"cpu": "1"}, node_selector={"team": "web"}))["web"]["status"] == "pending"
    team_any = _pool("general", [_types(["m5.large"]), {"key": "team", "operator": "Exists"}])
    assert _pods(team_any, _deployment("web", 1, {"cpu": "1"}, node_selector={"team": "web"}))["web"]["status"] == "provisioned"
    # A well-known key the pool leaves open (the zone) admits any value.
    zone = _pods(_pool("general", [_types(["m5.large"])]), _deployment("web", 1, {"cpu": "1"}, node_selector={"topology.kubernetes.io/zone": "us-west-2a"}))
    assert zone["web"]["status"] == "provisioned"


def test_a_generic_type_is_launched_before_an_accelerated_one_of_its_size():
    """Karpenter's ExoticInstanceTypeFilter: g5.xlarge and inf2.xlarge match m5.xlarge's 4 vCPUs and 16 GiB."""
    for accelerated in ("g5.xlarge", "inf2.xlarge"):
        web = _pods(_pool("general", [_types([accelerated, "m5.xlarge"])]), _deployment("web", 1, {"cpu": "3"}))["web"]
        assert web["provisioned"][0]["instanceType"] == "m5.xlarge", accelerated


def test_the_heaviest_node_overlay_sets_a_type_s_capacity_and_all_its_requirements_must_match():
    def overlay(name: str, weight: int, gpus: str, requirements: list[dict]) -> dict:
        spec = {"weight": weight, "requirements": requirements, "capacity": {"nvidia.com/gpu": gpus}}
        return {"urn": f"urn:pulumi:s::p::kubernetes:karpenter.sh/v1alpha1:NodeOverlay::{name}", "type": "kubernetes:karpenter.sh/v1alpha1:NodeOverlay", "name": name,
                "inputs": {"metadata": {"name": name}, "spec": spec}}
    one_gpu = [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "In", "values": ["1"]}]
    pods = (GPU_POOL, _device_plugin(replicas=4), _deployment("llm", 4, {"nvidia.com/gpu": "1"}, tolerate_gpu=True))
    heavy_four = _placed(*pods, overlay("a", 10, "4", one_gpu), overlay("b", 1, "2", one_gpu))
    assert heavy_four["provisioned"] == [{"nodePool": "gpu", "instanceType": "g5.xlarge", "nodes": 1, "chosen": _smallest(2)}]
    heavy_two = _placed(*pods, overlay("a", 1, "4", one_gpu), overlay("b", 10, "2", one_gpu))
    assert heavy_two["provisioned"] == [{"nodePool": "gpu", "instanceType": "g5.xlarge", "nodes": 2, "chosen": _smallest(2)}]
    unmatched = one_gpu + [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6"]}]
    assert _placed(*pods, overlay("a", 1, "4", unmatched))["provisioned"] == [{"nodePool": "gpu", "instanceType": "g5.xlarge", "nodes": 4, "chosen": _smallest(2)}]


def test_a_node_overlay_s_not_in_matches_a_type_without_the_label():
    """An overlay's NotIn holds for a type that lacks the label, as a NodePool's does: m5.large has no
    instance-gpu-count, and `NotIn ["8"]` still gives it the overlay's capacity (issue 58: a NotIn
    that required the label passed every other test)."""
    spec = {"requirements": [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "NotIn", "values": ["8"]}], "capacity": {"example.com/widget": "2"}}
    overlay = {"urn": "urn:pulumi:s::p::kubernetes:karpenter.sh/v1alpha1:NodeOverlay::widgets", "type": "kubernetes:karpenter.sh/v1alpha1:NodeOverlay", "name": "widgets",
               "inputs": {"metadata": {"name": "widgets"}, "spec": spec}}
    pool = _pool("general", [_types(["m5.large"])])
    placed = _placed(pool, overlay, _deployment("web", 2, {"example.com/widget": "1"}))
    assert placed["provisioned"] == [{"nodePool": "general", "instanceType": "m5.large", "nodes": 1, "chosen": _smallest(1)}]


def test_a_node_overlay_matches_a_type_under_its_pool_s_name_and_labels():
    """Karpenter judges an overlay against the type's requirements plus the pool's name and template
    labels (nodeoverlay/controller.go @v1.14.1 L231-L244): an overlay selecting a pool's label or the
    pool itself applies there, and only there."""

    def widgets(requirement: dict) -> dict:
        spec = {"requirements": [requirement], "capacity": {"example.com/widget": "2"}}
        return {"urn": "urn:pulumi:s::p::kubernetes:karpenter.sh/v1alpha1:NodeOverlay::widgets", "type": "kubernetes:karpenter.sh/v1alpha1:NodeOverlay",
                "name": "widgets", "inputs": {"metadata": {"name": "widgets"}, "spec": spec}}

    web = _deployment("web", 2, {"example.com/widget": "1"})
    ml = _pool("general", [_types(["m5.large"])], labels={"team": "ml"})
    by_label = _placed(ml, widgets({"key": "team", "operator": "In", "values": ["ml"]}), web)
    assert by_label["provisioned"] == [{"nodePool": "general", "instanceType": "m5.large", "nodes": 1, "chosen": _smallest(1)}]
    by_pool = _placed(ml, widgets({"key": "karpenter.sh/nodepool", "operator": "In", "values": ["general"]}), web)
    assert by_pool["provisioned"] == [{"nodePool": "general", "instanceType": "m5.large", "nodes": 1, "chosen": _smallest(1)}]
    elsewhere = _placed(ml, widgets({"key": "team", "operator": "In", "values": ["web"]}), web)
    assert not elsewhere.get("provisioned")


def test_an_auto_mode_node_holds_at_most_110_pods():
    pool = _pool("auto", [_types(["m5.24xlarge"])])  # 737 pods by its ENIs
    pool["inputs"]["spec"]["template"]["spec"]["nodeClassRef"] = {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}
    tiny = _pods(pool, _deployment("tiny", 200, {"cpu": "10m"}))["tiny"]
    assert tiny["provisioned"][0]["nodes"] == 2
    pool["inputs"]["spec"]["template"]["spec"]["nodeClassRef"] = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
    assert _pods(pool, _deployment("tiny", 200, {"cpu": "10m"}))["tiny"]["provisioned"][0]["nodes"] == 1


def test_a_reserved_pool_whose_node_class_is_elsewhere_is_a_gap():
    pool = _pool("reserved", [_types(["g5.xlarge"]), {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved"]}])
    placed = _placed(pool, _deployment("web", 1, {"cpu": "1"}))
    assert "Karpenter NodePool 'reserved': its EC2NodeClass 'default' is not in the plan, so the capacity reservations it selects are not known" in placed["gaps"]
    spot = _pool("spot", [_types(["g5.xlarge"]), {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}])
    assert not any("capacity reservations" in g for g in _placed(spot, _deployment("web", 1, {"cpu": "1"}))["gaps"])


def test_a_new_claim_takes_the_largest_capacity_of_its_types_from_the_limits():
    """subtractMax (scheduler.go L1045-L1066): a claim that may be an m5.xlarge takes 4 vCPUs from a
    6-vCPU limit even when it ends an m5.large, so the fourth replica is held back."""
    pool = _pool("general", [_types(["m5.large", "m5.xlarge"])], limits={"cpu": "6"})
    web = _pods(pool, _deployment("web", 4, {"cpu": "1500m"}))["web"]
    assert web["pending"] == 1 and sorted((p["instanceType"], p["nodes"]) for p in web["provisioned"]) == [("m5.large", 1), ("m5.xlarge", 1)]
    one = _pods(_pool("general", [_types(["m5.large"])], limits={"nodes": "1"}), _deployment("web", 3, {"cpu": "1500m"}))["web"]
    assert (one["pending"], one["provisioned"][0]["nodes"]) == (2, 1)


def test_comparison_operators_need_the_label_and_one_value():
    for operator, values, admitted in (("Gt", ["0"], {"g5.xlarge"}), ("Gt", ["0", "1"], set()), ("Lt", ["9"], {"g5.xlarge"})):
        pool = _pool("p", [_types(["m5.large", "g5.xlarge"]), {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": operator, "values": values}])
        from gpufleet.plans import karpenter as plan_karpenter
        from gpufleet.plans.index import Index

        [found], _ = plan_karpenter.pools(Index(plan_placement.from_plan({"resources": [pool]})), catalog.load())
        assert {c.shape.instance_type for c in found.candidates} == admitted, (operator, values)


def test_time_slicing_that_saves_no_node_is_not_said():
    placed = _placed(GPU_POOL, _device_plugin(replicas=2), _deployment("llm", 1, {"nvidia.com/gpu": "1"}, tolerate_gpu=True))
    [llm] = [p for p in placed["pods"] if p["pod"].endswith("/llm")]
    assert llm["status"] == "provisioned" and not any("physical GPUs" in n for n in llm.get("notes", []))


def test_a_pod_s_required_affinity_picks_among_the_values_a_pool_allows():
    pool = _pool("general", [_types(["m5.large"]), {"key": "team", "operator": "In", "values": ["ml", "web"]}])

    def with_affinity(values: list[str]) -> dict:
        web = _deployment("web", 1, {"cpu": "1"})
        term = {"matchExpressions": [{"key": "team", "operator": "In", "values": values}]}
        web["inputs"]["spec"]["template"]["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
        return web

    assert _pods(pool, with_affinity(["data", "web"]))["web"]["status"] == "provisioned"
    assert _pods(pool, with_affinity(["data"]))["web"]["status"] == "pending"


def test_a_requirement_not_read_leaves_the_next_one_read():
    family = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}
    size = {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large"]}
    for unread in ({"key": "x", "operator": "Near", "values": ["1"]}, {"key": "x", "operator": "In", "values": "m5"},
                   {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["04da6b54-80e4-46f7-96ec-b56ff0331ba9"]}):
        placed = _placed(_pool("p", [unread, family, size]), _deployment("web", 1, {"cpu": "1"}))
        assert placed["pods"][0]["provisioned"][0]["instanceType"] == "m5.large", unread
        assert any("not judged" in g for g in placed["gaps"]), unread


def test_limits_count_capacity_not_allocatable():
    """Two m5.xlarge have 8 vCPUs (7,840m allocatable): a 7,900m limit holds one."""
    web = _pods(_pool("general", [_types(["m5.xlarge"])], limits={"cpu": "7900m"}), _deployment("web", 2, {"cpu": "3"}))["web"]
    assert (web["pending"], web["provisioned"][0]["nodes"]) == (1, 1)


def test_a_pod_may_select_the_capacity_type_a_pool_leaves_open():
    web = _pods(_pool("general", [_types(["m5.large"])]), _deployment("web", 1, {"cpu": "1"}, node_selector={"karpenter.sh/capacity-type": "spot"}))["web"]
    assert web["status"] == "provisioned"


def test_the_unadvertised_resources_named_are_the_plugins_only():
    unlabelled = _pool("gpu", [_types(["g5.xlarge"])], taints=[GPU_TAINT])
    [llm] = [p for p in _placed(unlabelled, _device_plugin(), _deployment("llm", 1, {"nvidia.com/gpu": "1", "cpu": "1", "memory": "1Gi"}, tolerate_gpu=True))["pods"] if p["pod"].endswith("/llm")]
    assert "to advertise nvidia.com/gpu: its pods stay Pending there" in llm["message"]


def test_only_the_built_in_pools_a_cluster_names_are_read():
    plain = {"urn": "urn:pulumi:s::p::aws:eks/cluster:Cluster::plain", "type": "aws:eks/cluster:Cluster", "name": "plain", "inputs": {}}
    auto = _auto_cluster(("no-such-pool", "system"))
    placed = _placed(plain, auto, _deployment("web", 1, {"cpu": "1"}))
    assert any("NodePools 'system' are EKS Auto Mode's built-in pools" in g for g in placed["gaps"])


def test_without_prices_the_type_with_least_memory_of_the_fewest_vcpus_is_named():
    """d3.xlarge and m6i.xlarge have 4 vCPUs each; m6i.xlarge has half the memory (EC2's records), so
    it is the smaller, though its name sorts after."""
    cat = catalog.load()
    assert cat.get("d3.xlarge").vcpus == cat.get("m6i.xlarge").vcpus and cat.get("m6i.xlarge").memory_mib < cat.get("d3.xlarge").memory_mib
    web = _pods(_pool("general", [_types(["d3.xlarge", "m6i.xlarge"])]), _deployment("web", 1, {"cpu": "1"}))["web"]
    assert web["provisioned"][0]["instanceType"] == "m6i.xlarge" and web["provisioned"][0]["candidates"] == 2


def test_a_node_takes_each_label_the_pod_selects_that_the_pool_allows():
    """The pod selects a label the type has (its architecture) and one the pool's requirements allow
    several values of: the node gets the value the pod selects for the second too."""
    pool = _pool("general", [_types(["m6i.xlarge"]), {"key": "team", "operator": "In", "values": ["ml", "web"]}])
    web = _pods(pool, _deployment("web", 1, {"cpu": "1"}, node_selector={"kubernetes.io/arch": "amd64", "team": "ml"}))["web"]
    assert web["status"] == "provisioned"


def test_the_last_replica_spills_to_the_next_pool():
    first = _pool("first", [_types(["g5.xlarge"])], taints=[GPU_TAINT], limits={"nvidia.com/gpu": "4"}, weight=50)
    second = _pool("second", [_types(["g6e.xlarge"])], taints=[GPU_TAINT], weight=10)
    llm = _pods(first, second, _deployment("llm", 5, {"nvidia.com/gpu": "1"}, tolerate_gpu=True))["llm"]
    assert llm["status"] == "provisioned"
    assert [(p["nodePool"], p["nodes"]) for p in llm["provisioned"]] == [("first", 4), ("second", 1)]


def test_a_pool_s_refusal_names_its_three_commonest_reasons():
    pod = _deployment("big", 1, {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1", "vpc.amazonaws.com/efa": "1"})
    big = _pods(_pool("small", [_types(["m5.large"])]), pod)["big"]
    assert big["message"].endswith(
        "NodePool small: none of its 1 instance types holds the pod: 1 Insufficient cpu; 1 Insufficient memory; 1 Insufficient nvidia.com/gpu"
    )


def test_a_layout_on_a_second_network_card_leaves_out_a_type_of_one():
    """g5.48xlarge has one network card and one EFA interface (EC2's record): one efa-only interface
    on card 0 fits it, the same on card 1 does not."""
    def node_class(card: int) -> dict:
        layout = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}, {"networkCardIndex": card, "deviceIndex": 1 if card == 0 else 0, "interfaceType": "efa-only"}]
        return {"urn": "urn:pulumi:s::p::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::default", "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "name": "default",
                "inputs": {"metadata": {"name": "default"}, "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "networkInterfaces": layout}}}
    it = catalog.load().get("g5.48xlarge")
    assert (it.max_network_cards, it.max_efa_interfaces) == (1, 1)
    pool = _pool("efa", [_types(["g5.48xlarge"])], taints=[GPU_TAINT])
    pod = _deployment("train", 1, {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "1"}, tolerate_gpu=True)
    assert _pods(pool, node_class(0), pod)["train"]["status"] == "provisioned"
    assert "its requirements admit no instance type of the catalog" in _pods(pool, node_class(1), pod)["train"]["message"]


def test_a_pod_selecting_a_deprecated_label_is_provisioned_as_by_the_ga_one():
    """Karpenter reads a pod's requirement on a deprecated spelling as the GA label's
    (kubernetes-sigs/karpenter NormalizedLabels), and the node it launches carries both."""
    pool = _pool("general", [_types(["m5.large", "m5.xlarge"])])
    for selector in ({"beta.kubernetes.io/instance-type": "m5.xlarge", "beta.kubernetes.io/os": "linux"},
                     {"failure-domain.beta.kubernetes.io/zone": "us-west-2a"}):
        web = _pods(pool, _deployment("web", 1, {"cpu": "1"}, node_selector=selector))["web"]
        assert web["status"] == "provisioned", (selector, web)
    web = _pods(pool, _deployment("web", 1, {"cpu": "1"}, node_selector={"beta.kubernetes.io/instance-type": "m5.xlarge"}))["web"]
    assert web["provisioned"][0]["instanceType"] == "m5.xlarge"
