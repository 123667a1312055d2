"""What an instance offers pods and tasks, against the numbers of the sources: nodeadm's own tests
and eni-max-pods values, and the ECS guide's m4.large example."""

from __future__ import annotations

import pytest

from gpufleet.components.catalog import catalog, node_capacity
from gpufleet.components.catalog.sources import MotoSnapshot

CAT = catalog.load()
FACTS = CAT.facts
KUBELET = FACTS.eks.kubelet
MIB = 2**20


@pytest.mark.parametrize("instance_type, expected", [("m6i.large", 29), ("g5.xlarge", 58), ("p5.48xlarge", 100), ("trn1.32xlarge", 247)])
def test_max_pods_are_nodeadms(instance_type, expected):
    """Expected: eni-max-pods values (nodeadm instance-info.jsonl defaultMaxENIs x (IPv4 per ENI - 1) + 2)."""
    assert node_capacity.max_pods(CAT.get(instance_type), KUBELET) == expected


def test_max_pods_use_the_default_cards_enis_not_all_cards():
    record = MotoSnapshot().instance_types()["p5.48xlarge"]["NetworkInfo"]
    assert record["MaximumNetworkInterfaces"] > CAT.get("p5.48xlarge").default_card_interfaces  # 64 over 32 cards, 2 on card 0


def test_kube_reserved_matches_nodeadms_e2e_expectation():
    # nodeadm test/e2e/cases/kubelet-config-new-instance-type: a 2-core node with maxPods 110 reserves
    # cpu 70m and memory 1465Mi.
    assert node_capacity.kube_reserved_cpu(2000, KUBELET) == 70
    assert KUBELET.kube_reserved_memory_mib.per_pod * 110 + KUBELET.kube_reserved_memory_mib.base == 1465


@pytest.mark.parametrize("millicores, expected", [(1000, 60), (4000, 80), (96000, 310), (500, 30)])
def test_kube_reserved_cpu_bands(millicores, expected):
    # 6 % of the first core, 1 % of the second, 0.5 % of the next two, 0.25 % above four.
    assert node_capacity.kube_reserved_cpu(millicores, KUBELET) == expected


def test_ecs_registers_the_documented_example_and_an_estimate_below_it():
    m4 = CAT.get("m4.large")
    at_most, estimate = node_capacity.os_memory_mib(m4, FACTS.memory_overhead)
    assert at_most == 7985  # the ECS developer guide's m4.large
    assert estimate == int(8192 * 0.925)
    registered = node_capacity.ecs_registered(CAT.get("g5.12xlarge"), FACTS.memory_overhead)
    assert registered["cpu"] == 48 * 1024 and registered["memory"] < CAT.get("g5.12xlarge").memory_mib


def test_an_accelerated_node_gives_pods_its_devices_and_keeps_reservations():
    p5 = CAT.get("p5.48xlarge")
    shape = node_capacity.eks_node_shape(
        p5, group="p5", ami_type="AL2023_x86_64_NVIDIA", labels={"nvidia.com/gpu.present": "true"},
        taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}], sizes=(0, 2, 2), capacity_type="CAPACITY_BLOCK",
        zones=["us-east-1a"], efa_interfaces=32, gpu_sharing=None, facts=FACTS,
    )
    at_most, _ = node_capacity.os_memory_mib(p5, FACTS.memory_overhead)
    hugepages = 5128 * 2 * MIB
    assert shape.allocatable["memory"] == at_most * MIB - (11 * 100 + 255 + 100) * MIB - hugepages
    assert shape.allocatable["hugepages-2Mi"] == hugepages
    assert shape.allocatable["nvidia.com/gpu"] == p5.gpu.count and shape.allocatable["vpc.amazonaws.com/efa"] == 32
    assert shape.allocatable["pods"] == 100 and shape.allocatable["cpu"] == 192000 - node_capacity.kube_reserved_cpu(192000, KUBELET)
    assert shape.labels["node.kubernetes.io/instance-type"] == "p5.48xlarge" and shape.labels["kubernetes.io/arch"] == "amd64"
    assert shape.labels["eks.amazonaws.com/capacityType"] == "CAPACITY_BLOCK" and shape.labels["topology.kubernetes.io/zone"] == "us-east-1a"
    assert shape.labels["nvidia.com/gpu.present"] == "true" and not shape.assumptions


def test_time_slicing_and_mig_change_what_the_gpu_advertises():
    g5 = CAT.get("g5.2xlarge")

    def shape(sharing):
        return node_capacity.eks_node_shape(
            g5, group="g5", ami_type="AL2023_x86_64_NVIDIA", labels={}, taints=[], sizes=(1, 1, 1), capacity_type="SPOT",
            zones=["a", "b"], efa_interfaces=0, gpu_sharing=sharing, facts=FACTS,
        )

    sliced = shape({"resource": "nvidia.com/gpu", "replicas": 4, "failRequestsGreaterThanOne": True})
    assert sliced.allocatable["nvidia.com/gpu"] == 4 * g5.gpu.count and sliced.single_unit_resources == {"nvidia.com/gpu"}
    assert "topology.kubernetes.io/zone" in sliced.uncertain_labels  # two zones
    assert "nvidia.com/gpu" in shape({"migStrategy": "single"}).unknown_resources


def test_a_standard_ami_has_no_hugepages_and_bottlerocket_is_an_assumption():
    m6i = CAT.get("m6i.large")
    common = dict(labels={}, taints=[], sizes=(2, 2, 3), capacity_type="ON_DEMAND", zones=[], efa_interfaces=0, gpu_sharing=None, facts=FACTS)
    standard = node_capacity.eks_node_shape(m6i, group="system", ami_type="AL2023_x86_64_STANDARD", **common)
    assert "hugepages-2Mi" not in standard.allocatable and not standard.assumptions
    g5 = CAT.get("g5.xlarge")
    bottlerocket = node_capacity.eks_node_shape(g5, group="g5", ami_type="BOTTLEROCKET_x86_64_NVIDIA", **common)
    assert "not sourced" in bottlerocket.assumptions[0]
