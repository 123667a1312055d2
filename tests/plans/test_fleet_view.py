"""The accelerated groups a reviewer reads in `gpufleet diff --json` (`accelerators.groups`), read
from each shipped stack's golden plan and from small edits of it: what one instance of each group
carries, its sizes, AMI, purchase option and taints. Plans are read, never previewed, so these tests
take milliseconds (the pack's findings are judged by test_diff.py); what one instance carries is read from the EC2 snapshot and the curated facts."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog
from tests.plan_edits import added, diff_json, edited, golden, notes

NONE = {"gpus": 0, "neuronChips": 0, "neuronCores": 0, "efaInterfaces": 0}


def _aws(instance_type: str) -> dict:
    """What one instance carries, from the EC2 snapshot (EFA: every interface the type takes)."""
    it = catalog.load().get(instance_type)
    gpus = it.gpu.count if it.gpu is not None and not it.gpu.fractional else 0
    chips, cores = (it.neuron.count, it.neuron.count * it.neuron.cores_per_device) if it.neuron else (0, 0)
    return {"gpus": gpus, "neuronChips": chips, "neuronCores": cores, "efaInterfaces": 0}


def _efa(instance_type: str) -> dict:
    return {**_aws(instance_type), "efaInterfaces": catalog.load().get(instance_type).max_efa_interfaces}


def _facts_gpus(platform: str, instance_type: str) -> dict:
    facts = catalog.load().facts
    count = {
        "ack": lambda: facts.ack.gpu_instance_types[instance_type],
        "gke": lambda: facts.gke.machine_types[instance_type].count,
        "aks": lambda: facts.aks.vm_sizes[instance_type].count,
    }[platform]()
    return {**NONE, "gpus": count}


# stack -> group -> (platform, instance type, (min, desired, max), AMI, purchase, taints, per instance):
# the sizes, AMIs and taints are the stack files' own.
EXPECTED = {
    "ecs-gpu": {
        "ml-gpu-inference": ("ecs", "g5.12xlarge", (1, 1, 4), "gpu al2023", "ON_DEMAND", [], _aws),
        "ml-gpu-training": ("ecs", "p4d.24xlarge", (0, 0, 2), "gpu al2023", "SPOT", [], _aws),
    },
    "ecs-mps": {
        "ml-shared-gpu-shared": ("ecs", "g6e.12xlarge", (1, 1, 3), "gpu al2023", "ON_DEMAND", [], _aws),
        # a fractional GPU is no whole GPU
        "ml-shared-gpu-slices": ("ecs", "g6f.2xlarge", (0, 1, 4), "gpu al2023", "ON_DEMAND", [], _aws),
    },
    "ecs-neuron": {
        "ml-neuron-inference": ("ecs", "inf2.24xlarge", (1, 2, 4), "neuron al2023", "ON_DEMAND", [], _aws),
        "ml-neuron-training": ("ecs", "trn1.32xlarge", (0, 0, 2), "neuron al2023", "SPOT", [], _aws),
    },
    "eks-p5-efa": {
        "p5": ("eks", "p5.48xlarge", (0, 2, 2), "AL2023_x86_64_NVIDIA", "CAPACITY_BLOCK", ["nvidia.com/gpu:NO_SCHEDULE"], _efa),
        "system-*": ("eks", "m6i.large", (2, 2, 3), "AL2023_x86_64_STANDARD", "ON_DEMAND", [], _aws),
    },
    "eks-trn1": {
        "trn1": ("eks", "trn1.32xlarge", (0, 2, 4), "AL2023_x86_64_NEURON", "ON_DEMAND", ["aws.amazon.com/neuron:NO_SCHEDULE"], _efa),
        "system-*": ("eks", "m6i.large", (2, 2, 3), "AL2023_x86_64_STANDARD", "ON_DEMAND", [], _aws),
    },
    "eks-g5-timeslice": {
        "g5": ("eks", "g5.2xlarge", (1, 2, 8), "AL2023_x86_64_NVIDIA", "SPOT", ["nvidia.com/gpu=true:NO_SCHEDULE"], _aws),
        "system-*": ("eks", "m6i.large", (2, 2, 3), "AL2023_x86_64_STANDARD", "ON_DEMAND", [], _aws),
    },
    "ack-shared-gpu": {
        "t4-mem": ("ack", "ecs.gn6i-c24g1.24xlarge", (2, 2, 2), "cgpu", "PostPaid", [], _facts_gpus),
        # an autoscaled pool has no desired size
        "v100-core-mem": ("ack", "ecs.gn6v-c8g1.8xlarge", (1, None, 4), "core_mem", "PostPaid", ["gpufleet.io/shared-gpu=core-mem:NoSchedule"], _facts_gpus),
    },
    "gke-a100-mig": {"a100-mig": ("gke", "a2-highgpu-2g", (2, 2, 2), "DEFAULT, MIG 1g.5gb", "ON_DEMAND", [], _facts_gpus)},
    "gke-l4-timeshare": {"l4-shared": ("gke", "g2-standard-8", (2, 2, 8), "LATEST, TIME_SHARING x4", "ON_DEMAND", [], _facts_gpus)},
    "aks-a100-mig": {"a100mig": ("aks", "Standard_NC24ads_A100_v4", (2, 2, 6), "driver Install, MIG1g", "Regular", ["sku=gpu:NoSchedule"], _facts_gpus)},
    "aks-gpu-operator": {"t4op": ("aks", "Standard_NC16as_T4_v3", (3, 3, 9), "driver None", "Regular", ["sku=gpu:NoSchedule"], _facts_gpus)},
}


@pytest.mark.parametrize("stack", sorted(EXPECTED))
def test_a_new_stack_shows_each_group_with_what_one_instance_carries(tmp_path, stack):
    groups = added(tmp_path, golden(stack))
    assert sorted(groups) == sorted(EXPECTED[stack])
    for name, (platform, instance_type, (low, desired, high), ami, purchase, taints, carries) in EXPECTED[stack].items():
        g = groups[name]
        per = carries(instance_type) if carries in (_aws, _efa) else carries(platform, instance_type)
        assert (g["platform"], g["instanceType"], g["ami"], g["purchase"], g["taints"]) == (platform, instance_type, ami, purchase, taints), name
        assert g["instances"] == {"min": low, "desired": desired, "max": high}, name
        assert g["perInstance"] == per, name
        assert g["total"] == {k: v * (desired or 0) for k, v in per.items()}, name


def test_the_totals_sum_every_group_times_its_desired_instances(tmp_path):
    plan = golden("ecs-neuron")
    d = diff_json(tmp_path, {**plan, "resources": []}, plan)
    inf2, trn1 = _aws("inf2.24xlarge"), _aws("trn1.32xlarge")  # 2 and 0 desired
    assert d["accelerators"]["totals"] == {
        "before": NONE,
        "after": {k: 2 * inf2[k] + 0 * trn1[k] for k in NONE},
    }


# --- EKS node groups -------------------------------------------------------------------------------


def test_an_eks_group_reads_its_type_from_the_group_before_its_launch_template(tmp_path):
    def both(r):
        r["inputs"]["instanceTypes"] = ["p5e.48xlarge", "p5.48xlarge"]

    head = edited("eks-p5-efa", "p5-train-p5", "nodeGroup:NodeGroup", both)
    found = notes(tmp_path, golden("eks-p5-efa"), head)["p5"]
    # Both types carry the same accelerators, so the group's count stands whichever EKS launches.
    assert found[0] == "instance type p5.48xlarge -> p5e.48xlarge, p5.48xlarge" and not [n for n in found if "GPUs" in n]


def test_an_eks_group_without_a_type_anywhere_runs_eks_s_default_type_said_derived(tmp_path):
    """As the placement reads it: a group and template naming no type get the type EKS launches."""
    default = catalog.load().facts.eks.node_group_default_instance_type.value
    plan = edited("eks-p5-efa", "p5-train-p5", "launchTemplate:LaunchTemplate", lambda r: r["inputs"].pop("instanceType"))
    p5 = added(tmp_path, plan)["p5"]
    assert p5["instanceType"] == default
    assert p5["perInstance"] == {**NONE, "efaInterfaces": _efa("p5.48xlarge")["efaInterfaces"]}


def test_an_eks_group_of_an_unknown_type_carries_nothing(tmp_path):
    plan = edited("eks-g5-timeslice", "inference-g5", "nodeGroup:NodeGroup", lambda r: r["inputs"].update(instanceTypes=["g5.99xlarge"]))
    g5 = added(tmp_path, plan)["g5"]
    assert (g5["instanceType"], g5["perInstance"], g5["total"]) == ("g5.99xlarge", NONE, NONE)


def test_an_eks_group_without_scaling_or_capacity_type(tmp_path):
    def bare(r):
        r["inputs"].pop("scalingConfig")
        r["inputs"].pop("capacityType")

    g5 = added(tmp_path, edited("eks-g5-timeslice", "inference-g5", "nodeGroup:NodeGroup", bare))["g5"]
    assert g5["instances"] == {"min": None, "desired": None, "max": None}
    assert g5["purchase"] == "ON_DEMAND"  # EKS's default capacity type
    assert g5["total"] == NONE


def test_eks_taints_are_listed_sorted(tmp_path):
    def more(r):
        r["inputs"]["taints"] = [{"key": "z.example/b", "effect": "NO_EXECUTE"}, *r["inputs"]["taints"], {"key": "a.example/a", "value": "1", "effect": "PREFER_NO_SCHEDULE"}]

    g5 = added(tmp_path, edited("eks-g5-timeslice", "inference-g5", "nodeGroup:NodeGroup", more))["g5"]
    assert g5["taints"] == ["a.example/a=1:PREFER_NO_SCHEDULE", "nvidia.com/gpu=true:NO_SCHEDULE", "z.example/b:NO_EXECUTE"]


def _interfaces(r):
    return r["inputs"]["networkInterfaces"]


def test_efa_interfaces_count_both_efa_types_and_nothing_else(tmp_path):
    base = golden("eks-p5-efa")
    [template] = [r for r in base["resources"] if r["name"] == "p5-train-p5" and r["type"].endswith("LaunchTemplate")]
    kinds = [i.get("interfaceType") for i in _interfaces(template)]
    # p5's layout: the primary ENA interface, then an EFA-only interface per remaining slot
    assert kinds[0] is None and set(kinds[1:]) == {"efa-only"}
    efa = len(kinds) - 1
    desired = 2

    def one_plain(r):
        _interfaces(r)[1]["interfaceType"] = "interface"

    said = notes(tmp_path, base, edited("eks-p5-efa", "p5-train-p5", "launchTemplate:LaunchTemplate", one_plain))["p5"]
    assert f"EFA interfaces per instance {efa} -> {efa - 1}" in said
    assert f"EFA interfaces (desired) {efa * desired} -> {(efa - 1) * desired}" in said

    def primary_efa(r):
        _interfaces(r)[0]["interfaceType"] = "efa"

    said = notes(tmp_path, base, edited("eks-p5-efa", "p5-train-p5", "launchTemplate:LaunchTemplate", primary_efa))["p5"]
    assert f"EFA interfaces per instance {efa} -> {efa + 1}" in said


def test_a_dependency_of_another_type_is_not_taken_for_the_launch_template(tmp_path):
    def elsewhere(r):
        # the group's launchTemplate dependency names its cluster: not a launch template
        r["propertyDependencies"]["launchTemplate"] = r["propertyDependencies"]["clusterName"]

    p5 = added(tmp_path, edited("eks-p5-efa", "p5-train-p5", "nodeGroup:NodeGroup", elsewhere))["p5"]
    assert p5["instanceType"] == "?" and p5["perInstance"] == NONE


def test_a_changed_eks_launch_template_rolls_the_group_and_an_ecs_one_only_new_instances(tmp_path):
    def user_data(r):
        r["inputs"]["userData"] = "IyEvYmluL2Jhc2gKZWNobyBjaGFuZ2Vk"

    base = golden("eks-p5-efa")
    d = diff_json(tmp_path, base, edited("eks-p5-efa", "p5-train-p5", "launchTemplate:LaunchTemplate", user_data))
    assert [(x["group"], x["reason"]) for x in d["drains"]] == [("p5", "its launch template changed: the node group rolls its nodes to the new version")]

    base = golden("ecs-gpu")
    d = diff_json(tmp_path, base, edited("ecs-gpu", "ml-gpu-inference", "launchTemplate:LaunchTemplate", user_data))
    assert d["drains"] == []
    [group] = d["accelerators"]["groups"]
    assert (group["group"], group["notes"]) == ("ml-gpu-inference", ["launch template changed: new instances use it; running instances are not replaced by this change"])


# --- ECS capacity providers ------------------------------------------------------------------------


def _distribution(**values):
    def edit(r):
        r["inputs"]["mixedInstancesPolicy"]["instancesDistribution"].update(values)

    return edited("ecs-gpu", "ml-gpu-training", "autoscaling/group:Group", edit)


@pytest.mark.parametrize(
    "values, purchase",
    [
        ({}, "SPOT"),  # no On-Demand base, 0 % above it
        ({"onDemandBaseCapacity": 1}, "ON_DEMAND"),
        ({"onDemandPercentageAboveBaseCapacity": 50}, "ON_DEMAND"),
        ({"onDemandPercentageAboveBaseCapacity": 1}, "ON_DEMAND"),
    ],
)
def test_an_ecs_group_is_spot_only_when_its_distribution_buys_no_on_demand(tmp_path, values, purchase):
    assert added(tmp_path, _distribution(**values))["ml-gpu-training"]["purchase"] == purchase


def test_an_ecs_distribution_without_a_percentage_is_on_demand(tmp_path):
    # EC2 Auto Scaling's default OnDemandPercentageAboveBaseCapacity is 100
    plan = edited("ecs-gpu", "ml-gpu-training", "autoscaling/group:Group", lambda r: r["inputs"]["mixedInstancesPolicy"]["instancesDistribution"].pop("onDemandPercentageAboveBaseCapacity"))
    assert added(tmp_path, plan)["ml-gpu-training"]["purchase"] == "ON_DEMAND"


def test_an_ecs_launch_template_market_option_makes_the_group_spot(tmp_path):
    plan = edited("ecs-gpu", "ml-gpu-inference", "launchTemplate:LaunchTemplate", lambda r: r["inputs"].update(instanceMarketOptions={"marketType": "spot"}))
    groups = added(tmp_path, plan)
    assert (groups["ml-gpu-inference"]["purchase"], groups["ml-gpu-training"]["purchase"]) == ("SPOT", "SPOT")
    plan = edited("ecs-gpu", "ml-gpu-inference", "launchTemplate:LaunchTemplate", lambda r: r["inputs"].update(instanceMarketOptions={"marketType": "capacity-block"}))
    assert added(tmp_path, plan)["ml-gpu-inference"]["purchase"] == "ON_DEMAND"


def test_an_ecs_image_that_is_no_ecs_ami_is_shown_by_its_id(tmp_path):
    plan = edited("ecs-gpu", "ml-gpu-inference", "launchTemplate:LaunchTemplate", lambda r: r["inputs"].update(imageId="ami-0123456789abcdef0"))
    assert added(tmp_path, plan)["ml-gpu-inference"]["ami"] == "ami-0123456789abcdef0"


def test_an_ecs_provider_without_a_name_input_is_named_by_its_resource(tmp_path):
    plan = edited("ecs-gpu", "ml-gpu-inference", "capacityProvider:CapacityProvider", lambda r: r["inputs"].pop("name"))
    assert "ml-gpu-inference" in added(tmp_path, plan)


def test_an_ecs_provider_whose_group_or_template_is_gone_is_no_group(tmp_path):
    base = golden("ecs-gpu")
    no_group = edited("ecs-gpu", "ml-gpu-inference", "capacityProvider:CapacityProvider", lambda r: r.pop("propertyDependencies"))
    no_template = edited("ecs-gpu", "ml-gpu-inference", "autoscaling/group:Group", lambda r: r["propertyDependencies"].pop("launchTemplate"))
    d = diff_json(tmp_path, base, no_template)
    assert [(g["group"], g["status"]) for g in d["accelerators"]["groups"]] == [("ml-gpu-inference", "removed")]
    assert d["accelerators"]["totals"]["after"]["gpus"] == 0  # the training group has 0 desired
    # A provider that no longer draws on its Auto Scaling group: the group's instances are still
    # capacity, read as the plain EC2 group they then are (its GPUs still counted).
    d = diff_json(tmp_path, base, no_group)
    assert [(g["group"], g["status"], g["platform"]) for g in d["accelerators"]["groups"]] == [
        ("ml-gpu-inference", "added", "ec2"),
        ("ml-gpu-inference", "removed", "ecs"),
    ]
    assert d["accelerators"]["totals"]["after"]["gpus"] == d["accelerators"]["totals"]["before"]["gpus"]


def test_an_ecs_spot_group_reads_its_template_from_the_mixed_instances_policy(tmp_path):
    plan = edited("ecs-gpu", "ml-gpu-training", "autoscaling/group:Group", lambda r: r["propertyDependencies"].pop("mixedInstancesPolicy"))
    assert sorted(added(tmp_path, plan)) == ["ml-gpu-inference"]


# --- ACK, GKE and AKS node pools -------------------------------------------------------------------


def test_an_ack_pool_of_fixed_size_reads_its_desired_size(tmp_path):
    for value, size in ((3, 3), ("3", 3), ("three", None)):
        plan = edited("ack-shared-gpu", "ack-t4-mem", "cs/nodePool:NodePool", lambda r: r["inputs"].update(desiredSize=value))
        assert added(tmp_path, plan)["t4-mem"]["instances"] == {"min": size, "desired": size, "max": size}, value


def test_an_ack_pool_without_a_sharing_label_or_charge_type(tmp_path):
    plan = edited("ack-shared-gpu", "ack-t4-mem", "cs/nodePool:NodePool", lambda r: r["inputs"].update(labels=[{"key": "team", "value": "ml"}]))
    pool = added(tmp_path, plan)["t4-mem"]
    assert (pool["purchase"], pool["ami"]) == ("PostPaid", None)  # Alibaba's default charge type
    plan = edited("ack-shared-gpu", "ack-t4-mem", "cs/nodePool:NodePool", lambda r: r["inputs"].update(instanceChargeType="PrePaid"))
    assert added(tmp_path, plan)["t4-mem"]["purchase"] == "PrePaid"


def test_an_ack_pool_of_several_types_carries_the_fewest_gpus(tmp_path):
    gpus = catalog.load().facts.ack.gpu_instance_types
    fewer = min(gpus, key=gpus.get)
    assert gpus[fewer] < gpus["ecs.gn6i-c24g1.24xlarge"]
    plan = edited("ack-shared-gpu", "ack-t4-mem", "cs/nodePool:NodePool", lambda r: r["inputs"].update(instanceTypes=["ecs.gn6i-c24g1.24xlarge", fewer]))
    pool = added(tmp_path, plan)["t4-mem"]
    assert (pool["instanceType"], pool["perInstance"]["gpus"]) == (f"ecs.gn6i-c24g1.24xlarge, {fewer}", gpus[fewer])


def test_ack_taints_are_listed_sorted(tmp_path):
    def more(r):
        r["inputs"]["taints"] = [{"key": "z", "value": "1", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"}]

    pool = added(tmp_path, edited("ack-shared-gpu", "ack-v100-core-mem", "cs/nodePool:NodePool", more))["v100-core-mem"]
    assert pool["taints"] == ["a:NoExecute", "z=1:NoSchedule"]


def _gke(edit):
    return edited("gke-l4-timeshare", "inference-l4-shared", "container/nodePool:NodePool", edit)


def test_a_gke_pool_over_several_zones_counts_nodes_in_every_zone(tmp_path):
    pool = added(tmp_path, _gke(lambda r: r["inputs"].update(nodeLocations=["us-central1-a", "us-central1-b", "us-central1-c"])))["l4-shared"]
    base = added(tmp_path, golden("gke-l4-timeshare"))["l4-shared"]["instances"]
    zones = len(golden_inputs("gke-l4-timeshare", "inference-l4-shared").get("nodeLocations") or []) or 1
    assert pool["instances"] == {k: v // zones * 3 for k, v in base.items()}


def golden_inputs(stack: str, name: str) -> dict:
    [r] = [r for r in golden(stack)["resources"] if r["name"] == name and r["type"].endswith("/nodePool:NodePool")]
    return r["inputs"]


@pytest.mark.parametrize("location, zonal", [("us-central1-a", True), ("us-central1", False)])
def test_a_gke_pool_without_node_locations_runs_in_its_clusters_zones(tmp_path, location, zonal):
    def edit(r):
        r["inputs"].pop("nodeLocations")
        r["inputs"]["location"] = location

    pool = added(tmp_path, _gke(edit))["l4-shared"]
    low, high = (golden_inputs("gke-l4-timeshare", "inference-l4-shared")["autoscaling"][k] for k in ("minNodeCount", "maxNodeCount"))
    # a zonal cluster: one zone; a regional one: the pool's inputs do not say how many zones
    assert pool["instances"] == ({"min": low, "desired": low, "max": high} if zonal else {"min": None, "desired": None, "max": None})


def test_a_gke_pool_of_fixed_size(tmp_path):
    def fixed(r):
        r["inputs"].pop("autoscaling")
        r["inputs"]["nodeCount"] = 3

    pool = added(tmp_path, _gke(fixed))["l4-shared"]
    zones = len(golden_inputs("gke-l4-timeshare", "inference-l4-shared").get("nodeLocations") or []) or 1
    assert pool["instances"] == {"min": 3 * zones, "desired": 3 * zones, "max": 3 * zones}
    pool = added(tmp_path, _gke(lambda r: r["inputs"].pop("autoscaling")))["l4-shared"]  # and no nodeCount
    assert pool["instances"] == {"min": None, "desired": None, "max": None}


def test_a_gke_spot_pool_unnamed_and_unshared(tmp_path):
    def edit(r):
        r["inputs"]["nodeConfig"]["spot"] = True
        r["inputs"].pop("name", None)
        r["inputs"]["nodeConfig"]["guestAccelerators"][0].pop("gpuSharingConfig")

    pool = added(tmp_path, _gke(edit))
    assert list(pool) == ["inference-l4-shared"]  # the resource's own name
    assert (pool["inference-l4-shared"]["purchase"], pool["inference-l4-shared"]["ami"]) == ("SPOT", "LATEST")


def test_a_gke_pool_whose_accelerator_does_not_fit_its_machine_is_no_group(tmp_path):
    assert added(tmp_path, _gke(lambda r: r["inputs"]["nodeConfig"]["guestAccelerators"][0].update(count=8))) == {}
    assert added(tmp_path, _gke(lambda r: r["inputs"]["nodeConfig"].update(guestAccelerators=[], machineType="e2-standard-8"))) == {}


def _aks(edit):
    return edited("aks-a100-mig", "aks-a100mig", "KubernetesClusterNodePool", edit)


def test_an_aks_pool_of_fixed_size_spot_and_without_mig(tmp_path):
    def edit(r):
        r["inputs"]["autoScalingEnabled"] = False
        r["inputs"]["nodeCount"] = 4
        r["inputs"]["priority"] = "Spot"
        r["inputs"].pop("gpuInstance")
        r["inputs"].pop("gpuDriver", None)
        r["inputs"]["nodeTaints"] = [*r["inputs"]["nodeTaints"], "a=b:NoSchedule"]

    pool = added(tmp_path, _aks(edit))["a100mig"]
    assert pool["instances"] == {"min": 4, "desired": 4, "max": 4}
    assert (pool["purchase"], pool["ami"]) == ("Spot", "driver Install")
    assert pool["taints"] == ["a=b:NoSchedule", "sku=gpu:NoSchedule"]


def test_an_aks_pool_of_a_size_without_gpus_is_no_group(tmp_path):
    assert added(tmp_path, _aks(lambda r: r["inputs"].update(vmSize="Standard_D4s_v5"))) == {}
