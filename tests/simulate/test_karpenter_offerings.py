"""Karpenter's offerings and order (issue 53, item 4), each against the provider or core source at
v1.14.1: a type's zones and capacity types (types.go computeRequirements), the AL2023 AMI family
leaving a1 types out (compatibility.go), the EC2NodeClass's kubelet settings in the estimate of a
node (types.go pods(), kubeReservedResources, evictionThreshold, ENILimitedPods), and PreferNoSchedule
taints tolerated only as the last relaxation (preferences.go)."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog
from gpufleet.simulate import node_capacity
from gpufleet.simulate.node_capacity import MIB, NodeClassKubelet
from tests.simulate.karpenter_suites.suite import aws_provider
from tests.simulate.test_karpenter_provisioning import _deployment, _pods, _pool, _types

CAT = catalog.load()
KARPENTER, EKS = CAT.facts.karpenter, CAT.facts.eks
AWS = aws_provider("us-east-1")
ZONE = "topology.kubernetes.io/zone"
CAPACITY = "karpenter.sh/capacity-type"


def _node_class(spec: dict) -> dict:
    return {
        "urn": "urn:pulumi:s::p::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::default",
        "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
        "name": "default",
        "inputs": {"metadata": {"name": "default"}, "spec": spec},
    }


# --- offerings: zones, region and capacity types (types.go @bde00654 L170-L192) ----------------


def test_a_type_not_offered_in_the_zone_a_pod_selects_is_not_launched_there():
    # In the catalog's EC2 offerings, p4de.24xlarge is in us-east-1b and 1c only; p5.48xlarge in 1a too.
    pool = _pool("gpu", [_types(["p4de.24xlarge", "p5.48xlarge"])])
    anywhere = _pods(AWS, pool, _deployment("job", 1, {"cpu": "10"}))["job"]
    assert anywhere["provisioned"][0]["instanceType"] == "p4de.24xlarge"
    in_1a = _pods(AWS, pool, _deployment("job", 1, {"cpu": "10"}, node_selector={ZONE: "us-east-1a"}))["job"]
    assert (in_1a["provisioned"][0]["instanceType"], in_1a["provisioned"][0]["candidates"]) == ("p5.48xlarge", 1)


def test_a_pool_whose_zones_offer_none_of_its_types_launches_nothing_with_karpenter_s_reason():
    pool = _pool("gpu", [_types(["p4de.24xlarge"]), {"key": ZONE, "operator": "In", "values": ["us-east-1a"]}])
    job = _pods(AWS, pool, _deployment("job", 1, {"cpu": "10"}))["job"]
    assert job["status"] == "pending"
    assert (
        "NodePool gpu: NodePool requirements filtered out all compatible available instance types: "
        "none of its 1 instance types is offered where topology.kubernetes.io/zone In [us-east-1a]"
    ) in job["message"]
    # Without a region the zones are not judged.
    assert _pods(pool, _deployment("job", 1, {"cpu": "10"}))["job"]["status"] == "provisioned"


def test_a_type_not_offered_in_the_region_is_not_launched():
    # p5e.48xlarge has offerings in the catalog, none in us-east-1.
    assert not CAT.get("p5e.48xlarge").offerings.get("us-east-1") and CAT.get("p5e.48xlarge").offerings
    job = _pods(AWS, _pool("gpu", [_types(["p5e.48xlarge"])]), _deployment("job", 1, {"cpu": "10"}))["job"]
    assert "p5e.48xlarge is not offered in us-east-1" in job["message"]


@pytest.mark.parametrize(
    "capacity, status", [(["spot"], "pending"), (["on-demand"], "provisioned"), (["spot", "on-demand"], "provisioned")]
)
def test_capacity_types_are_the_type_s_usage_classes(capacity, status):
    # hpc7g.4xlarge's SupportedUsageClasses: on-demand only.
    assert "spot" not in CAT.get("hpc7g.4xlarge").usage_classes
    pool = _pool("hpc", [_types(["hpc7g.4xlarge"]), {"key": CAPACITY, "operator": "In", "values": capacity}])
    job = _pods(pool, _deployment("job", 1, {"cpu": "1"}))["job"]
    assert job["status"] == status
    if status == "pending":
        assert "none of its 1 instance types is offered where karpenter.sh/capacity-type In [spot]" in job["message"]


def test_a_pod_selecting_spot_gets_a_type_offered_as_spot():
    pool = _pool("mixed", [_types(["hpc7g.4xlarge", "hpc7g.8xlarge", "c7g.4xlarge"])])
    job = _pods(pool, _deployment("job", 1, {"cpu": "1"}, node_selector={CAPACITY: "spot"}))["job"]
    assert job["provisioned"][0]["instanceType"] == "c7g.4xlarge"


# --- the AMI family (compatibility.go @bde00654 L65-L71) ----------------------------------------


@pytest.mark.parametrize("alias, status", [("al2023@latest", "pending"), ("bottlerocket@latest", "provisioned")])
def test_al2023_runs_no_a1_type(alias, status):
    pool = _pool("arm", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["a1"]}])
    job = _pods(pool, _node_class({"amiSelectorTerms": [{"alias": alias}]}), _deployment("job", 1, {"cpu": "1"}))["job"]
    assert job["status"] == status
    if status == "pending":
        assert "a1.large cannot run the AL2023 AMI family of its EC2NodeClass" in job["message"]


def test_an_al2023_pool_of_a1_and_other_types_launches_another():
    pool = _pool("arm", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["a1", "m6g"]}])
    job = _pods(
        pool,
        _node_class({"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}]}),
        _deployment("job", 1, {"cpu": "1"}),
    )["job"]
    assert job["provisioned"][0]["instanceType"].startswith("m6g.")


# --- the EC2NodeClass's kubelet (types.go @bde00654 L126-L160, L485-L591) -----------------------


def _default(name: str) -> dict[str, int]:
    return node_capacity.karpenter_allocatable(CAT.get(name), KARPENTER, EKS)


def test_max_pods_replaces_the_eni_limited_count_but_al2023_reserves_memory_for_that_count():
    # m5.large: 3 ENIs x (10 - 1) + 2 = 29 pods.
    base = _default("m5.large")
    assert base["pods"] == 29
    capped = node_capacity.karpenter_allocatable(CAT.get("m5.large"), KARPENTER, EKS, NodeClassKubelet(max_pods=20))
    assert (capped["pods"], capped["memory"]) == (20, base["memory"])
    bottlerocket = NodeClassKubelet(max_pods=20, pods_per_core_enabled=False, eni_limited_memory_overhead=False)
    assert node_capacity.karpenter_allocatable(CAT.get("m5.large"), KARPENTER, EKS, bottlerocket)["memory"] == base["memory"] + 9 * 11 * MIB


def test_pods_per_core_caps_the_count_except_on_bottlerocket():
    assert node_capacity.karpenter_allocatable(CAT.get("m5.large"), KARPENTER, EKS, NodeClassKubelet(pods_per_core=4))["pods"] == 8
    off = NodeClassKubelet(pods_per_core=4, pods_per_core_enabled=False)
    assert node_capacity.karpenter_allocatable(CAT.get("m5.large"), KARPENTER, EKS, off)["pods"] == 29


def test_kube_reserved_system_reserved_and_eviction_hard_come_off_allocatable():
    base = _default("m5.large")
    kubelet = NodeClassKubelet(kube_reserved={"memory": 1024 * MIB}, system_reserved={"cpu": 100})
    found = node_capacity.karpenter_allocatable(CAT.get("m5.large"), KARPENTER, EKS, kubelet)
    assert found["memory"] == base["memory"] + (11 * 29 + 255) * MIB - 1024 * MIB
    assert found["cpu"] == base["cpu"] - 100
    # 5 % of the memory after VM overhead (8192 MiB less ceil(7.5 %)) replaces 100Mi.
    after_vm = (8192 - 615) * MIB
    percent = node_capacity.karpenter_allocatable(CAT.get("m5.large"), KARPENTER, EKS, NodeClassKubelet(eviction_hard_memory="5%"))
    assert percent["memory"] == base["memory"] + 100 * MIB - -(-after_vm * 5 // 100)
    assert (
        node_capacity.karpenter_allocatable(CAT.get("m5.large"), KARPENTER, EKS, NodeClassKubelet(eviction_hard_memory="100%"))["memory"]
        == base["memory"] + 100 * MIB
    )


def test_efa_only_interfaces_on_card_0_cut_the_eni_limited_pods():
    # p5.48xlarge: 2 ENIs on its default card x (50 - 1) + 2 = 100; one efa-only on card 0 leaves 51.
    assert _default("p5.48xlarge")["pods"] == 100
    assert node_capacity.karpenter_allocatable(CAT.get("p5.48xlarge"), KARPENTER, EKS, NodeClassKubelet(efa_only_on_card0=1))["pods"] == 51


def test_a_node_class_s_max_pods_decides_the_nodes_launched():
    pool = _pool("small", [_types(["m5.large"])])
    web = _deployment("web", 6, {"cpu": "10m"})
    assert _pods(pool, _node_class({"amiSelectorTerms": [{"alias": "al2023@latest"}]}), web)["web"]["provisioned"][0]["nodes"] == 1
    capped = _pods(pool, _node_class({"amiSelectorTerms": [{"alias": "al2023@latest"}], "kubelet": {"maxPods": 3}}), web)["web"]
    assert capped["provisioned"][0]["nodes"] == 2


def test_an_efa_only_layout_on_card_0_cuts_the_pods_a_node_holds():
    layout = [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"},
    ]
    pool = _pool("p5", [_types(["p5.48xlarge"])])
    web = _deployment("web", 60, {"cpu": "10m"})
    assert _pods(pool, _node_class({"amiSelectorTerms": [{"alias": "al2023@latest"}]}), web)["web"]["provisioned"][0]["nodes"] == 1
    cut = _pods(pool, _node_class({"amiSelectorTerms": [{"alias": "al2023@latest"}], "networkInterfaces": layout}), web)["web"]
    assert cut["provisioned"][0]["nodes"] == 2


# --- PreferNoSchedule (preferences.go @6e7eab7a L38-L57, L132-L146; scheduler.go L144-L153) ----

SOFT = {"key": "spot-only", "value": "true", "effect": "PreferNoSchedule"}


def test_a_prefer_no_schedule_pool_is_used_only_when_no_other_pool_holds_the_pod():
    soft = _pool("soft", [_types(["m5.large"])], taints=[SOFT], weight=100)
    plain = _pool("plain", [_types(["m5.large"])])
    web = _pods(soft, plain, _deployment("web", 1, {"cpu": "1"}))["web"]
    assert [p["nodePool"] for p in web["provisioned"]] == ["plain"]
    # The other pool's limits hold one node: the rest tolerate the taint, Karpenter's last relaxation.
    limited = _pool("plain", [_types(["m5.large"])], limits={"cpu": "2"})
    spilled = _pods(soft, limited, _deployment("web", 3, {"cpu": "1500m"}))["web"]
    assert {p["nodePool"]: p["nodes"] for p in spilled["provisioned"]} == {"plain": 1, "soft": 2}


def test_a_pod_tolerating_the_prefer_no_schedule_taint_takes_the_heaviest_pool():
    soft = _pool("soft", [_types(["m5.large"])], taints=[SOFT], weight=100)
    plain = _pool("plain", [_types(["m5.large"])])
    pod = _deployment("web", 1, {"cpu": "1"})
    pod["inputs"]["spec"]["template"]["spec"]["tolerations"] = [{"key": "spot-only", "operator": "Exists", "effect": "PreferNoSchedule"}]
    assert [p["nodePool"] for p in _pods(soft, plain, pod)["web"]["provisioned"]] == ["soft"]


def test_a_prefer_no_schedule_pool_alone_still_launches():
    soft = _pool("soft", [_types(["m5.large"])], taints=[SOFT])
    assert _pods(soft, _deployment("web", 1, {"cpu": "1"}))["web"]["status"] == "provisioned"


# --- the provider's labels (types.go @bde00654 L186-L309; website .../instance-types.md) --------


@pytest.mark.parametrize(
    "key, value, launched",
    [
        ("karpenter.k8s.aws/instance-hypervisor", "nitro", "m5.large"),
        ("karpenter.k8s.aws/instance-cpu-manufacturer", "amd", "m5a.large"),
        ("karpenter.k8s.aws/instance-local-nvme", "75", "m5d.large"),
        ("karpenter.k8s.aws/instance-encryption-in-transit-supported", "true", "m5n.large"),
        ("karpenter.k8s.aws/instance-ebs-bandwidth", "4750", "m5.large"),
    ],
)
def test_a_pod_selecting_a_label_of_ec2_s_record_gets_a_type_that_has_it(key, value, launched):
    pool = _pool("general", [_types(["m4.large", "m5.large", "m5a.large", "m5d.large", "m5n.large"])])
    job = _pods(pool, _deployment("job", 1, {"cpu": "1"}, node_selector={key: value}))["job"]
    assert (job["status"], job["provisioned"][0]["instanceType"]) == ("provisioned", launched)


def test_a_pool_requiring_a_tenancy_keeps_its_types():
    pool = _pool(
        "dedicated", [_types(["m5.large"]), {"key": "karpenter.k8s.aws/instance-tenancy", "operator": "In", "values": ["dedicated"]}]
    )
    assert _pods(pool, _deployment("job", 1, {"cpu": "1"}))["job"]["status"] == "provisioned"


@pytest.mark.parametrize("key, value", [("karpenter.k8s.aws/instance-network-bandwidth", "750"), ("topology.k8s.aws/zone-id", "use1-az1")])
def test_a_pod_selecting_a_label_gpufleet_cannot_derive_is_advisory_never_pending(key, value):
    job = _pods(_pool("general", [_types(["m5.large"])]), _deployment("job", 1, {"cpu": "1"}, node_selector={key: value}))["job"]
    assert job["status"] == "provisioned"
    assert any(key in note and "not judged" in note for note in job["notes"])
