"""What an instance offers pods and tasks, against the numbers of the sources: nodeadm's own tests
and eni-max-pods values, and the ECS guide's m4.large example."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog
from gpufleet.simulate import node_capacity
from gpufleet.catalog.generate.sources import MotoSnapshot
from tests.conftest import ROOT

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


# --- each cloud's node shape, field by field -------------------------------------------------------

def test_the_os_figures_are_whole_mib():
    for name in ("m4.large", "g5.12xlarge", "p5.48xlarge"):
        at_most, estimate = node_capacity.os_memory_mib(CAT.get(name), FACTS.memory_overhead)
        assert isinstance(at_most, int) and isinstance(estimate, int) and estimate <= at_most


def test_kube_reserved_cpu_is_whole_millicores():
    # 6 % of 1000 (60) and 1 % of 234 (2.34, rounded down as nodeadm's integer arithmetic does).
    assert node_capacity.kube_reserved_cpu(1234, KUBELET) == 62
    # 60 + 10 + 10, and 0.25 % of 9999 (24.9975) rounded down.
    assert node_capacity.kube_reserved_cpu(13999, KUBELET) == 104


def test_max_pods_fall_back_without_interface_data():
    import dataclasses

    # A type nodeadm's data lacks takes the EC2 record's counts, and the fallback without them.
    g5 = dataclasses.replace(CAT.get("g5.xlarge"), name="g5.future")
    assert node_capacity.max_pods(g5, KUBELET) == 58
    for missing in ({"ipv4_per_interface": 0}, {"default_card_interfaces": 0}):
        assert node_capacity.max_pods(dataclasses.replace(g5, **missing), KUBELET) == KUBELET.max_pods.fallback


def _eni_max_pods() -> dict[str, int]:
    lines = (ROOT / "tests" / "fixtures" / "amazon-eks-ami" / "eni-max-pods.txt").read_text().splitlines()
    return {name: int(pods) for name, pods in (line.split() for line in lines if line.strip() and not line.startswith("#"))}


def test_max_pods_are_aws_own_for_every_type_aws_lists():
    """AWS's eni-max-pods.txt (tests/fixtures/amazon-eks-ami): every type of the catalog it lists."""
    table = _eni_max_pods()
    judged = {name: node_capacity.max_pods(CAT.get(name), KUBELET) for name in table if name in CAT.types}
    assert len(judged) > 900
    assert {name: pods for name, pods in judged.items() if pods != table[name]} == {}


@pytest.mark.parametrize("instance_type, moto_enis, pods", [("i7ie.48xlarge", 8, 737), ("i8ge.48xlarge", 12, 1178), ("i8ge.metal-48xl", 12, 1178)])
def test_where_the_ec2_snapshot_differs_the_node_follows_nodeadms_data(instance_type, moto_enis, pods):
    # moto's snapshot gives the default card fewer ENIs than the data nodeadm reads on the node.
    assert CAT.get(instance_type).default_card_interfaces == moto_enis
    assert node_capacity.max_pods(CAT.get(instance_type), KUBELET) == pods


def _eks_shape(name: str, ami_type: str, **kw):
    args = dict(group="g", ami_type=ami_type, labels={}, taints=[], sizes=(1, 2, 3), capacity_type="ON_DEMAND", zones=["z1"],
                efa_interfaces=0, gpu_sharing=None, facts=FACTS)
    args.update(kw)
    return node_capacity.eks_node_shape(CAT.get(name), **args)


def test_an_eks_groups_sizes_and_estimate():
    shape = _eks_shape("g5.xlarge", "AL2023_x86_64_NVIDIA")
    assert (shape.min_nodes, shape.nodes, shape.max_nodes) == (1, 2, 3)
    at_most, estimate = node_capacity.os_memory_mib(CAT.get("g5.xlarge"), FACTS.memory_overhead)
    gap = shape.allocatable["memory"] - shape.memory_estimate
    assert gap == (at_most - estimate) * MIB and shape.memory_estimate > 0


def test_neuron_devices_and_cores_on_the_neuron_ami():
    inf2 = CAT.get("inf2.8xlarge")
    shape = _eks_shape("inf2.8xlarge", "AL2023_x86_64_NEURON")
    eks = FACTS.eks
    assert shape.allocatable[eks.accelerator_resources.neuron] == inf2.neuron.count
    assert shape.allocatable[eks.neuron_core_resource] == inf2.neuron.count * inf2.neuron.cores_per_device != inf2.neuron.count
    assert shape.plugin_resources == {eks.accelerator_resources.neuron, eks.neuron_core_resource}  # never cpu, memory, pods or hugepages
    assert eks.neuron_core_resource not in _eks_shape("inf2.8xlarge", "AL2023_x86_64_STANDARD").allocatable


def test_only_whole_nvidia_gpus_on_an_accelerated_ami_are_advertised():
    nvidia = FACTS.eks.accelerator_resources.nvidia
    assert _eks_shape("g5.xlarge", "AL2023_x86_64_NVIDIA").allocatable[nvidia] == CAT.get("g5.xlarge").gpu.count
    assert nvidia not in _eks_shape("g5.xlarge", "AL2023_x86_64_STANDARD").allocatable
    # Every GPU of the EC2 data is NVIDIA's today; another maker's GPUs (g4ad's AMD) get no nvidia.com/gpu.
    import dataclasses

    g5 = CAT.get("g5.xlarge")
    amd = dataclasses.replace(g5, gpu=dataclasses.replace(g5.gpu, manufacturer="AMD"))
    args = dict(group="g", ami_type="AL2023_x86_64_NVIDIA", labels={}, taints=[], sizes=(1, 2, 3), capacity_type="ON_DEMAND",
                zones=["z1"], efa_interfaces=0, gpu_sharing=None, facts=FACTS)
    assert nvidia not in node_capacity.eks_node_shape(amd, **args).allocatable
    fractional = next(n for n, it in sorted(CAT.types.items()) if it.gpu is not None and it.gpu.fractional)
    assert nvidia not in _eks_shape(fractional, "AL2023_x86_64_NVIDIA").allocatable


def test_the_arch_label_uses_kubernetes_names():
    arm = next(n for n, it in sorted(CAT.types.items()) if it.architectures == ("arm64",) and not it.incomplete)
    labels, _ = node_capacity.well_known_labels(CAT.get(arm), "g", "SPOT", ["z1", "z1"], FACTS.eks)
    names = FACTS.eks.well_known_labels
    assert labels[names.arch] == names.architectures["arm64"] and labels[names.zone] == "z1"  # one zone named twice
    labels, uncertain = node_capacity.well_known_labels(CAT.get("m6i.large"), "g", "SPOT", [], FACTS.eks)
    assert labels[names.arch] == names.architectures["x86_64"] and names.zone not in labels and names.zone in uncertain
    both = next(n for n, it in sorted(CAT.types.items()) if it.architectures == ("i386", "x86_64"))
    labels, _ = node_capacity.well_known_labels(CAT.get(both), "g", "SPOT", ["z1"], FACTS.eks)
    assert labels[names.arch] == names.architectures["x86_64"]  # the x86_64 AMI runs, not an i386 one


def test_an_eks_node_carries_the_kubelet_s_and_the_cloud_s_labels_in_both_spellings():
    """Kubernetes 1.35's kubelet sets os and arch, and AWS's cloud controller (k8s.io/cloud-provider's
    node controller) instance type, zone and region, each under its GA name and its deprecated one: a
    pod written against beta.kubernetes.io/instance-type (Pulumi's node-group migration example)
    lands. The hostname (each node's own) and the region (no shape holds it) are left off as
    uncertain, in both spellings, as is the zone of a group in several zones."""
    names = FACTS.eks.well_known_labels
    labels, uncertain = node_capacity.well_known_labels(CAT.get("t3.2xlarge"), "g", "ON_DEMAND", ["us-west-2a"], FACTS.eks)
    assert {k: labels[k] for k in ("beta.kubernetes.io/instance-type", "beta.kubernetes.io/os", "beta.kubernetes.io/arch")} == {
        "beta.kubernetes.io/instance-type": "t3.2xlarge",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
    }
    assert labels["failure-domain.beta.kubernetes.io/zone"] == labels[names.zone] == "us-west-2a"
    assert uncertain == {names.hostname, names.region, "failure-domain.beta.kubernetes.io/region"}
    assert names.hostname not in labels and names.region not in labels
    _, uncertain = node_capacity.well_known_labels(CAT.get("t3.2xlarge"), "g", "ON_DEMAND", ["us-west-2a", "us-west-2b"], FACTS.eks)
    assert {names.zone, "failure-domain.beta.kubernetes.io/zone"} <= uncertain


def test_aks_nodes_carry_the_cloud_s_labels_under_their_ga_names_only():
    """AKS's cloud-node-manager sets the instance type, zone and region under their GA names only
    (aks.deprecatedNodeLabels); the kubelet's deprecated os and arch it keeps."""
    from gpufleet.rules import aks as aks_rules

    names = FACTS.eks.well_known_labels
    node = aks_rules.gpus("Standard_NC24ads_A100_v4", FACTS.aks)
    shape = node_capacity.aks_node_shape("gpu", node, None, {}, [], (1, 1, 1), "nvidia.com/gpu", FACTS.aks, well_known=names)
    assert shape.labels[names.instance_type] == "Standard_NC24ads_A100_v4" and shape.labels["beta.kubernetes.io/os"] == "linux"
    assert "beta.kubernetes.io/instance-type" not in shape.labels and "beta.kubernetes.io/instance-type" not in shape.uncertain_labels
    # The VM size's architecture is not in the catalog: a pod selecting it is judged advisory.
    assert {names.arch, "beta.kubernetes.io/arch", names.zone} <= shape.uncertain_labels


def _ack_shape(types, labels, sizes=(1, 2, 3)):
    return node_capacity.ack_node_shape("pool", types, labels, [], sizes, FACTS.ack)


def test_an_ack_pools_devices_per_gpu_and_its_sizes():
    from gpufleet.rules import ack as ack_rules

    ack = FACTS.ack
    four = next(n for n in ack.gpu_instance_types if ack_rules.gpu_type(n, ack).gpus > 1)
    gpus, gib = ack_rules.gpu_type(four, ack).gpus, ack_rules.gpu_type(four, ack).shared_gib
    memory_only = _ack_shape([four], {ack.schedule_label: "cgpu"})
    assert memory_only.allocatable == {ack.memory_resource: gib * gpus} and len(memory_only.devices) == gpus
    assert (memory_only.min_nodes, memory_only.nodes, memory_only.max_nodes) == (1, 2, 3)
    assert memory_only.unknown_resources == {"cpu", "memory", "pods"}
    both = _ack_shape([four], {ack.schedule_label: "core_mem"})
    assert both.allocatable == {ack.memory_resource: gib * gpus, ack.compute_resource: ack.compute_percentage.maximum * gpus}
    assert both.devices[0] == {ack.memory_resource: gib, ack.compute_resource: ack.compute_percentage.maximum}
    assert _ack_shape(["ecs.g7.xlarge"], {}) is None  # no sourced GPU facts


def test_a_gke_pools_labels_resources_and_sizes():
    from gpufleet.rules import gke as gke_rules

    gke = FACTS.gke
    names = gke.labels
    a100 = gke_rules.gpus("a2-highgpu-2g", None, None, gke)
    well_known = FACTS.eks.well_known_labels
    mig = node_capacity.gke_node_shape(
        "mig", a100, "1g.5gb", None, {"team": "ml"}, [], (1, 2, 3), "nvidia.com/gpu", gke, well_known=well_known, zones=["us-central1-a"]
    )
    kubelet, _ = node_capacity.node_labels(well_known, os="linux", arch=None, instance_type="a2-highgpu-2g", zones=["us-central1-a"])
    assert kubelet["beta.kubernetes.io/instance-type"] == "a2-highgpu-2g" and kubelet["failure-domain.beta.kubernetes.io/zone"] == "us-central1-a"
    assert mig.labels == {
        **kubelet,
        "team": "ml",
        names.node_pool: "mig",
        names.accelerator: a100.accelerator,
        names.partition_size: "1g.5gb",
    }
    assert well_known.arch in mig.uncertain_labels  # the machine type's architecture is not in the catalog
    assert mig.allocatable == {"nvidia.com/gpu": gke_rules.gpu_resources_per_node(a100, "1g.5gb", None, gke)} != {"nvidia.com/gpu": a100.count}
    assert (mig.min_nodes, mig.nodes, mig.max_nodes) == (1, 2, 3) and mig.single_unit_resources == frozenset()
    l4 = gke_rules.gpus("g2-standard-8", None, None, gke)
    shared = node_capacity.gke_node_shape("l4", l4, None, ("TIME_SHARING", 4), {}, [], (0, 1, 2), "nvidia.com/gpu", gke, well_known=well_known)
    assert shared.labels[names.sharing_strategy] == gke.sharing_strategies["TIME_SHARING"] and shared.labels[names.max_shared_clients] == "4"
    assert names.partition_size not in shared.labels
    assert shared.allocatable == {"nvidia.com/gpu": l4.count * 4} and shared.single_unit_resources == {"nvidia.com/gpu"}
    taint = gke.gpu_taint
    assert shared.taints == ({"key": taint.key, "value": taint.value, "effect": taint.effect},)
    # A strategy GKE adds later (read from a plan) is labelled as the API spells it.
    assert shared.unknown_resources == mig.unknown_resources == {"cpu", "memory", "pods"}
    assert shared.assumptions and "GKE taints GPU nodes" in shared.assumptions[0]
    later = node_capacity.gke_node_shape("l4", l4, None, ("NEW_STRATEGY", 2), {}, [], (0, 1, 2), "nvidia.com/gpu", gke, well_known=well_known)
    assert "NEW_STRATEGY" not in gke.sharing_strategies and later.labels[names.sharing_strategy] == "NEW_STRATEGY"


def test_an_aks_pools_label_resources_and_sizes():
    from gpufleet.rules import aks as aks_rules

    aks = FACTS.aks
    node = aks_rules.gpus("Standard_NC24ads_A100_v4", aks)
    well_known = FACTS.eks.well_known_labels
    shape = node_capacity.aks_node_shape("gpu", node, None, {"team": "ml"}, [], (1, 2, 3), "nvidia.com/gpu", aks, well_known=well_known)
    kubelet, _ = node_capacity.node_labels(
        well_known, os="linux", arch=None, instance_type="Standard_NC24ads_A100_v4", cloud_deprecated=aks.deprecated_node_labels.supported
    )
    assert shape.labels == {**kubelet, "team": "ml", aks.pool_label: "gpu"}
    assert shape.allocatable == {"nvidia.com/gpu": aks_rules.gpu_resources_per_node(node, None, aks)}
    assert (shape.min_nodes, shape.nodes, shape.max_nodes) == (1, 2, 3)
    assert shape.unknown_resources == {"cpu", "memory", "pods"}  # a VM size's CPU, memory and pod count: not in the catalog


def test_a_pool_of_an_uncatalogued_machine_size_is_judged_by_labels_and_taints_only():
    taint = {"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}
    shape = node_capacity.plain_node_shape(
        "system", "Standard_D4s_v5", {}, [taint], (1, 2, 5), names=FACTS.eks.well_known_labels, cloud_deprecated=False
    )
    assert shape.labels[FACTS.eks.well_known_labels.os] == "linux"
    assert (shape.min_nodes, shape.nodes, shape.max_nodes) == (1, 2, 5)
    assert shape.taints == (taint,) and shape.allocatable == {} and shape.unknown_resources == {"cpu", "memory", "pods"}
    assert shape.unknown_reason == "is not in the catalog for Standard_D4s_v5 nodes: not checked"
