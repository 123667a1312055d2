"""Bad EKS input: exit 2 naming the field, the value and the rule, before any resource exists."""

from __future__ import annotations

import pytest

from gpufleet.cli.diff import diff_plans

from gpufleet.catalog.generate.sources import MotoSnapshot
from tests.conftest import refused_cases
from tests.ecs.test_spec_errors import _errors

RAW = MotoSnapshot().instance_types()


def RAW_OFFERED(region: str, instance_type: str) -> set[str]:
    """The zones moto's offerings list for a type (read raw, not through the catalog)."""
    return {row["Location"] for row in MotoSnapshot().az_offerings(region) if row["InstanceType"] == instance_type}


def _group(c) -> dict:
    return c["gpufleet:eks"]["nodeGroups"][0]


def _existing_network(c) -> None:
    """The fleet on two subnets of an existing VPC instead of a VPC of its own."""
    c["gpufleet:eks"]["network"] = {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]}


# Each row: (stack, the field set, its value, what the error says).
test_refused = refused_cases(
    {
        # The NVIDIA chart cuts both its DaemonSets' names to 63 characters (rules/helm.py, docs/stacks.md "Helm names").
        "helm_daemonsets_collide": (
            "eks-p5-efa",
            "gpufleet:eks.cluster.name",
            "performance-study-gpu",
            [
                "gpufleet:eks.cluster.name = 'performance-study-gpu': the Helm release "
                "'performance-study-gpu-device-plugins-nvidia-<8 random hex>' of chart nvidia-device-plugin: 2 of its "
                "DaemonSets share the name 'performance-study-gpu-device-plugins-nvidia-????????-nvidia-dev'",
                "a name of at most 9 characters fits",
                "[rule: helm-names-fit]",
            ],
        ),
        "helm_release_name_too_long": (
            "eks-trn1",
            "gpufleet:eks.cluster.name",
            "t" * 32,
            [
                f"the Helm release '{'t' * 32}-device-plugins-neuron-<8 random hex>' of chart "
                "oci://public.ecr.aws/neuron/neuron-helm-chart: its name is 63 characters; Helm takes at most 53; "
                "a name of at most 22 characters fits",
            ],
        ),
        "time_slicing_replicas_0": (
            "eks-g5-timeslice",
            "gpufleet:eks.kubernetes.nvidiaDevicePlugin.timeSlicingReplicas",
            0,
            ["gpufleet:eks.kubernetes.nvidiaDevicePlugin.timeSlicingReplicas = 0: Input should be greater than or equal to 2"],
        ),
        "mig_on_a10g": (
            "eks-g5-timeslice",
            "gpufleet:eks.kubernetes.nvidiaDevicePlugin",
            {"migStrategy": "single"},
            [
                "gpufleet:eks.kubernetes.nvidiaDevicePlugin.migStrategy = 'single': node group g5: g5.2xlarge has NVIDIA A10G GPUs, which do not support MIG",
                "[rule: eks-mig-supported]",
            ],
        ),
        "efa_zone_that_does_not_offer_the_type": (
            "eks-trn1",
            "gpufleet:eks.nodeGroups[0].efa.availabilityZone",
            "us-west-2a",
            [
                "gpufleet:eks.nodeGroups[0].efa.availabilityZone = 'us-west-2a': trn1.32xlarge is not offered in us-west-2a",
                "[rule: eks-efa-single-az]",
            ],
        ),
        "neuron_ami_type_on_a_gpu_type": (
            "eks-p5-efa",
            "gpufleet:eks.nodeGroups[0].amiType",
            "AL2023_x86_64_NEURON",
            [
                "gpufleet:eks.nodeGroups[0].amiType = 'AL2023_x86_64_NEURON'",
                "AL2023_x86_64_NEURON is for neuron nodes; p5.48xlarge is a nvidia type [rule: eks-ami-type-supported]",
            ],
        ),
        "bottlerocket_only_for_nvidia_x86": (
            "eks-trn1",
            "gpufleet:eks.nodeGroups[0].amiType",
            "BOTTLEROCKET_x86_64_NVIDIA",
            ["BOTTLEROCKET_x86_64_NVIDIA is for nvidia nodes; trn1.32xlarge is a neuron type [rule: eks-ami-type-supported]"],
        ),
        "unknown_taint_effect_spelling": (
            "eks-g5-timeslice",
            "gpufleet:eks.nodeGroups[0].taints[0].effect",
            "NoScheduleX",
            ["gpufleet:eks.nodeGroups[0].taints[0].effect = 'NoScheduleX'"],
        ),
        "the_secondary_type_belongs_to_the_efa_primary_layout": (
            "eks-p5-efa",
            "gpufleet:eks.nodeGroups[0].efa.secondaryInterfaceType",
            "efa-only",
            [
                "gpufleet:eks.nodeGroups[0].efa.secondaryInterfaceType = 'efa-only': the recommended layout makes every EFA interface efa-only",
                "[rule: eks-efa-layout]",
            ],
        ),
        "a_workload_names_a_node_group_that_exists": (
            "eks-g5-timeslice",
            "gpufleet:eks.workloads[0].nodePool",
            "g6",
            ["gpufleet:eks.workloads[0].nodePool = 'g6': no node group or NodePool of that name (have: g5)", "[rule: node-pool-exists]"],
        ),
        "the_nccl_test_names_a_node_group_that_exists": (
            "eks-p5-efa",
            "gpufleet:eks.kubernetes.ncclTest.nodeGroup",
            "nope",
            ["gpufleet:eks.kubernetes.ncclTest.nodeGroup = 'nope': no node group of that name (have: p5) [rule: nccl-test-node-group]"],
        ),
    }
)


def test_efa_on_g6_xlarge(stack_variant):
    assert not RAW["g6.xlarge"]["NetworkInfo"]["EfaSupported"]

    def edit(c):
        _group(c).update(instanceType="g6.xlarge", efa={})

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    assert "gpufleet:eks.nodeGroups[0].efa = {}: g6.xlarge does not support EFA" in err and "[rule: eks-efa-supported]" in err


def test_33_interfaces_on_p5(stack_variant):
    maximum = RAW["p5.48xlarge"]["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"]
    err = _errors(stack_variant(lambda c: _group(c)["efa"].__setitem__("interfaces", maximum + 1), "eks-p5-efa"))
    assert (
        f"gpufleet:eks.nodeGroups[0].efa.interfaces = {maximum + 1}: {maximum + 1} EFA interfaces but p5.48xlarge takes at most {maximum}"
        in err
    )
    assert "[rule: eks-efa-interfaces]" in err


def test_time_slicing_and_mig_are_exclusive(stack_variant):
    plugin = {"migStrategy": "mixed", "timeSlicingReplicas": 4}
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"]["kubernetes"].__setitem__("nvidiaDevicePlugin", plugin), "eks-g5-timeslice"))
    assert "choose time-slicing or a MIG strategy, not both" in err


def test_existing_subnets_need_one_subnet_and_its_zone_for_efa(stack_variant):
    def edit(c):
        _existing_network(c)
        _group(c)["subnetIds"] = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]

    err = _errors(stack_variant(edit, "eks-trn1"))
    assert "gpufleet:eks.nodeGroups[0].efa.availabilityZone = null: an EFA group on existing subnets names the zone" in err
    assert "gpufleet:eks.nodeGroups[0].subnetIds" in err and "exactly one subnet" in err


def test_existing_subnets_with_one_subnet_and_its_zone_are_fine(stack_variant):
    from tests.conftest import run_cli

    def edit(c):
        _existing_network(c)
        _group(c)["subnetIds"] = ["subnet-0123456789abcdef0"]
        _group(c)["efa"] = {"availabilityZone": "us-west-2d"}

    code, out, err = run_cli("preview", "--config-file", str(stack_variant(edit, "eks-trn1")), "--json")
    assert code == 0, err


def test_capacity_block_needs_its_reservation(stack_variant):
    err = _errors(stack_variant(lambda c: _group(c).pop("capacityReservationId"), "eks-p5-efa"))
    assert "capacityType CAPACITY_BLOCK needs capacityReservationId" in err


def test_an_existing_cluster_needs_its_security_group(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"]["cluster"].pop("create"), "eks-trn1"))
    assert "an existing cluster needs securityGroupId" in err


def test_an_existing_clusters_endpoint_is_an_explicit_unanswered_call_offline(stack_variant):
    """The kubeconfig of an existing cluster comes from the EKS API: offline there is no such data,
    and the preview says so (exit 2) instead of inventing an endpoint. In its own process: a program
    that fails mid-run leaves registrations pending in the SDK's loop of the process."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    def edit(c):
        c["gpufleet:eks"]["cluster"].pop("create")
        c["gpufleet:eks"]["cluster"]["securityGroupId"] = "sg-0123456789abcdef0"

    path = stack_variant(edit, "eks-trn1")
    result = subprocess.run(
        [sys.executable, "-m", "gpufleet.cli.main", "preview", "--config-file", str(path)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "aws:eks/getCluster:getCluster has no offline answer" in result.stderr


def test_one_zone_is_not_enough_for_a_cluster(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"]["network"]["create"].__setitem__("zones", ["us-west-2b"]), "eks-trn1"))
    assert (
        'gpufleet:eks.network.create.zones = ["us-west-2b"]: an EKS cluster needs at least two availability zones [rule: eks-cluster-zones]'
        in err
    )


def _zones(c) -> dict:
    return c["gpufleet:eks"]["network"]["create"]


def test_zones_are_named_never_chosen(stack_variant):
    err = _errors(stack_variant(lambda c: _zones(c).pop("zones"), "eks-p5-efa"))
    assert "gpufleet:eks.network.create.zones = null: name the VPC's zones (for example [us-east-1a, us-east-1b]" in err
    assert "[rule: vpc-zones-required]" in err


def test_a_type_the_vpcs_zones_do_not_offer_names_the_additive_fix(stack_variant):
    # p6-b200.48xlarge is not offered in us-east-1a or us-east-1b (EC2 data): the VPC must grow, not move.
    offered = sorted(RAW_OFFERED("us-east-1", "p6-b200.48xlarge"))
    assert offered and not {"us-east-1a", "us-east-1b"} & set(offered)

    def edit(c):
        group = _group(c)
        group["instanceType"] = "p6-b200.48xlarge"
        group["efa"].pop("availabilityZone")
        group["efa"].pop("interfaces")

    err = _errors(stack_variant(edit, "eks-p5-efa"))
    assert "gpufleet:eks.nodeGroups[0].instanceType = 'p6-b200.48xlarge': p6-b200.48xlarge is offered in none of the VPC's zones" in err
    assert f"it is offered in {', '.join(offered)}. Add one of those to network.create.zones (a new subnet: additive" in err
    assert "[rule: vpc-zones-offered]" in err


def test_appending_a_zone_is_additive(stack_variant):
    from tests.conftest import preview_plan

    def subnets(plan):
        return {r["name"]: r["inputs"]["cidrBlock"] for r in plan["resources"] if r["type"] == "aws:ec2/subnet:Subnet"}

    before = preview_plan("--config-file", str(stack_variant(lambda c: None, "eks-g5-timeslice")))
    after = preview_plan("--config-file", str(stack_variant(lambda c: _zones(c)["zones"].append("us-east-1c"), "eks-g5-timeslice")))
    base, grown = subnets(before), subnets(after)
    assert set(base) < set(grown) and all(grown[name] == cidr for name, cidr in base.items())
    assert set(grown) - set(base) == {"inference-private-us-east-1c", "inference-public-us-east-1c"}
    # Nothing replaced or touched but route tables: the g5 group names its zones, the system group
    # keeps its first two, and the cluster's control plane stays in the zones it was created with
    # (EKS accepts later control-plane subnets only there).
    d = diff_plans(before["resources"], after["resources"], [], [])
    assert d.replaced == [] and d.removed == [] and d.affected == [] and d.drains == []
    assert {u["type"] for u in d.updated} <= {"aws:ec2/routeTable:RouteTable"}


def test_appending_a_zone_spreads_a_group_that_names_no_zones(stack_variant):
    from tests.conftest import preview_plan

    def unpinned(c):
        _group(c).pop("zones")

    def grown(c):
        unpinned(c)
        _zones(c)["zones"].append("us-east-1c")

    before = preview_plan("--config-file", str(stack_variant(unpinned, "eks-g5-timeslice")))
    after = preview_plan("--config-file", str(stack_variant(grown, "eks-g5-timeslice")))
    d = diff_plans(before["resources"], after["resources"], [], [])
    assert [(x["group"], x["reason"]) for x in d.drains] == [
        (
            "g5",
            "the node group is replaced (subnetIds[2] cannot change in place); the old one is deleted first, so the group has "
            "no capacity until the new one is up",
        )
    ]


def test_a_group_names_zones_of_the_vpc_that_offer_its_type(stack_variant):
    err = _errors(stack_variant(lambda c: _group(c).__setitem__("zones", ["us-east-1a", "us-east-1c", "us-east-1a"]), "eks-g5-timeslice"))
    assert "gpufleet:eks.nodeGroups[0].zones[1] = 'us-east-1c': not one of the created VPC's zones" in err
    assert "gpufleet:eks.nodeGroups[0].zones[2] = 'us-east-1a': each zone is named once" in err
    err = _errors(stack_variant(lambda c: _group(c).__setitem__("zones", ["us-east-1a"]), "eks-p5-efa"))
    assert 'gpufleet:eks.nodeGroups[0].zones = ["us-east-1a"]: an EFA group runs in one zone: efa.availabilityZone' in err


def test_an_unknown_zone(stack_variant):
    err = _errors(stack_variant(lambda c: _zones(c)["zones"].append("us-east-1z"), "eks-g5-timeslice"))
    assert "gpufleet:eks.network.create.zones[2] = 'us-east-1z': not an availability zone of us-east-1" in err


def test_nccl_test_needs_an_nvidia_efa_group(stack_variant):
    def edit(c):
        c["gpufleet:eks"]["kubernetes"]["ncclTest"] = {"nodeGroup": "g5", "image": "x:1"}

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    assert "gpufleet:eks.kubernetes.ncclTest.nodeGroup = 'g5'" in err and "[rule: nccl-test-node-group]" in err


def test_an_existing_cluster_without_kubernetes_previews_offline(stack_variant):
    from tests.conftest import run_cli

    def edit(c):
        c["gpufleet:eks"]["cluster"] = {"name": "shared", "securityGroupId": "sg-0123456789abcdef0"}
        c["gpufleet:eks"].pop("kubernetes")

    code, out, err = run_cli("preview", "--config-file", str(stack_variant(edit, "eks-trn1")), "--json")
    assert code == 0, err
    plan = __import__("json").loads(out)
    assert not [r for r in plan["resources"] if r["type"] == "aws:eks/cluster:Cluster"]
    [group] = [r["inputs"] for r in plan["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup"]
    assert group["clusterName"] == "shared"
    [template] = [r["inputs"] for r in plan["resources"] if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert all("sg-0123456789abcdef0" in i["securityGroups"] for i in template["networkInterfaces"])


def test_an_efa_group_without_placement_group_or_reservation(stack_variant):
    """The same predicate as the pack's eks-efa-placement: the spec door refuses it first."""
    err = _errors(stack_variant(lambda c: _group(c)["efa"].__setitem__("placementGroup", False), "eks-trn1"))
    assert "gpufleet:eks.nodeGroups[0].efa.placementGroup = false: EFA nodes need a cluster placement group" in err
    assert "[rule: eks-efa-placement]" in err


def _system(c) -> dict:
    return c["gpufleet:eks"].setdefault("systemNodeGroup", {})


def test_turning_the_system_group_off_with_only_tainted_groups(stack_variant):
    path = stack_variant(lambda c: _system(c).__setitem__("enabled", False), "eks-p5-efa")
    err = _errors(path)
    line = 1 + next(i for i, text in enumerate(path.read_text().splitlines()) if "enabled: false" in text)
    assert (
        f"{path}:{line}: gpufleet:eks.systemNodeGroup.enabled = false: Deployment kube-system/coredns: 2 of 2 Pending: "
        "0/2 nodes are available: 2 node(s) had untolerated taint(s). (keep the system node group, or give "
        "one node group taints: []) [rule: k8s-pods-schedulable]"
    ) in err
    # The NCCL test's launcher runs on the system group: that is what to keep.
    assert "gpufleet:eks.systemNodeGroup.enabled = false: MPIJob default/nccl-tests-p5 (Launcher): 1 of 1 Pending" in err
    assert "Deployment mpi-operator/mpi-operator" in err


def test_an_untainted_group_may_replace_the_system_group(stack_variant):
    from tests.conftest import preview_plan

    def edit(c):
        _system(c)["enabled"] = False
        _group(c)["taints"] = []

    plan = preview_plan("--config-file", str(stack_variant(edit, "eks-g5-timeslice")))
    assert not any(r["name"].endswith("-system") for r in plan["resources"])
    [coredns] = [p for p in plan["placement"]["pods"] if p["pod"] == "Deployment kube-system/coredns"]
    assert coredns["status"] == "scheduled" and set(coredns["nodeGroups"]) == {"g5"}


def test_a_system_group_too_small_for_coredns(stack_variant):
    # t3.nano: 512 MiB, 4 pods; after kube-reserved and eviction one CoreDNS (70Mi) fits a node.
    path = stack_variant(lambda c: _system(c).update(instanceType="t3.nano", minSize=1, desiredSize=1, maxSize=1), "eks-p5-efa")
    err = _errors(path)
    assert (
        "gpufleet:eks.systemNodeGroup.instanceType = 't3.nano': Deployment kube-system/coredns: 1 of 2 Pending: 0/3 nodes are available:"
        in err
    )
    assert "1 Insufficient memory" in err and "(a larger type or more nodes) [rule: k8s-pods-schedulable]" in err


def test_the_system_group_takes_general_purpose_types_only(stack_variant):
    err = _errors(stack_variant(lambda c: _system(c).__setitem__("instanceType", "g5.xlarge"), "eks-p5-efa"))
    assert "gpufleet:eks.systemNodeGroup.instanceType = 'g5.xlarge': a system node group uses a general-purpose type of" in err
    assert "[rule: eks-system-node-group]" in err
    err = _errors(stack_variant(lambda c: _system(c).__setitem__("instanceType", "m6i.larg"), "eks-p5-efa"))
    assert "gpufleet:eks.systemNodeGroup.instanceType = 'm6i.larg': unknown instance type" in err and "did you mean m6i.large" in err


def test_system_group_sizes_and_names(stack_variant):
    err = _errors(stack_variant(lambda c: _system(c).update(minSize=3, desiredSize=2), "eks-p5-efa"))
    assert "gpufleet:eks.systemNodeGroup" in err and "minSize <= desiredSize <= maxSize" in err
    err = _errors(stack_variant(lambda c: _group(c).__setitem__("name", "system"), "eks-g5-timeslice"))
    assert "gpufleet:eks.nodeGroups[0].name = 'system': the system node group is named system" in err


def test_a_capacity_block_group_names_no_instance_types(stack_variant):
    from tests.conftest import shipped_plan

    plan = shipped_plan("eks-p5-efa")
    [group] = [r for r in plan["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup" and r["name"] == "p5-train-p5"]
    assert "instanceTypes" not in group["inputs"]


def test_the_efa_primary_layout_and_fewer_interfaces_are_laid_out(stack_variant):
    from tests.conftest import preview_plan

    def edit(c):
        _group(c)["efa"].update(layout="efa-primary", secondaryInterfaceType="efa-only", interfaces=16)

    plan = preview_plan("--config-file", str(stack_variant(edit, "eks-p5-efa")))
    [template] = [
        r["inputs"] for r in plan["resources"] if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate" and r["name"] == "p5-train-p5"
    ]
    interfaces = template["networkInterfaces"]
    assert (interfaces[0]["deviceIndex"], interfaces[0]["interfaceType"]) == (0, "efa") and len(interfaces) == 16
    assert {(i["deviceIndex"], i["interfaceType"]) for i in interfaces[1:]} == {(1, "efa-only")}
    # The NCCL workers ask for what the group has, and the pack notes the unused bandwidth.
    [job] = [r["inputs"] for r in plan["resources"] if r["type"].endswith(":MPIJob")]
    assert (
        job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"] == 16
    )
    assert [v["policy"] for v in plan["policy"]["violations"]] == ["eks-efa-bandwidth"]


def test_a_type_offered_in_one_of_the_vpcs_zones_stays_in_it(stack_variant):
    """p5 -> p5en: p5en is offered in us-east-1a (one of the VPC's zones): the EFA group moves to no
    new zone and the VPC's subnets do not change."""
    from tests.conftest import preview_plan, shipped_plan

    assert "us-east-1a" in RAW_OFFERED("us-east-1", "p5en.48xlarge")

    def edit(c):
        group = _group(c)
        group["instanceType"] = "p5en.48xlarge"
        group["efa"].pop("interfaces")

    plan = preview_plan("--config-file", str(stack_variant(edit, "eks-p5-efa")))
    base = shipped_plan("eks-p5-efa")

    def subnets(p):
        return {r["name"]: r["inputs"] for r in p["resources"] if r["type"] == "aws:ec2/subnet:Subnet"}

    assert subnets(plan) == subnets(base)


# --- GPU workloads on node groups ----------------------------------------------------------------


def _workloads(c) -> list:
    return c["gpufleet:eks"]["workloads"]


def test_workloads_need_the_kubernetes_block(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"].pop("kubernetes"), "eks-g5-timeslice"))
    assert "gpufleet:eks.kubernetes = null: workloads are installed through the cluster: give kubernetes" in err
    assert "[rule: kubernetes-access]" in err


def test_a_workload_asks_nvidia_gpus_of_an_nvidia_group(stack_variant):
    def edit(c):
        c["gpufleet:eks"]["workloads"] = [{"name": "w", "nodePool": "trn1", "image": "x:1"}]

    err = _errors(stack_variant(edit, "eks-trn1"))
    assert (
        "gpufleet:eks.workloads[0].nodePool = 'trn1': a workload asks for nvidia.com/gpu: node group trn1 (trn1.32xlarge) has no NVIDIA GPUs"
        in err
    )


def test_workload_names_are_unique(stack_variant):
    err = _errors(stack_variant(lambda c: _workloads(c).append(dict(_workloads(c)[0])), "eks-g5-timeslice"))
    assert "gpufleet:eks.workloads[1].name = 'llm-serve'" in err and "[rule: names-unique]" in err


def test_replicas_past_the_groups_maximum_stay_pending(stack_variant):
    # 8 nodes at maxSize, each A10G advertised as 4 time-sliced nvidia.com/gpu: 32 replicas fit, 33 do not.
    err = _errors(stack_variant(lambda c: _workloads(c)[0].__setitem__("replicas", 33), "eks-g5-timeslice"))
    assert "gpufleet:eks.workloads[0].replicas = 33: Deployment default/llm-serve: 1 of 33 Pending" in err
    assert "Insufficient nvidia.com/gpu" in err and "[rule: k8s-pods-schedulable]" in err


def _eks(c) -> dict:
    return c["gpufleet:eks"]


def test_spot_on_a_type_sold_on_demand_only(stack_variant):
    classes = RAW["hpc7a.12xlarge"]["SupportedUsageClasses"]
    assert "spot" not in classes
    err = _errors(stack_variant(lambda c: _group(c).update(instanceType="hpc7a.12xlarge"), "eks-g5-timeslice"))
    assert (
        f"gpufleet:eks.nodeGroups[0].capacityType = 'SPOT': hpc7a.12xlarge is not offered as Spot (usage classes: {', '.join(classes)}) [rule: spot-supported]"
        in err
    )


def test_an_unknown_type_is_named_and_the_other_groups_still_judged(stack_variant):
    def edit(c):
        _group(c)["instanceType"] = "g9.xlarge"
        # A taint without a value is one Kubernetes and EKS take.
        _group(c)["taints"][0].pop("value")
        _eks(c)["nodeGroups"].append({**dict(_group(c)), "name": "second", "instanceType": "g5.2xlarge", "labels": {"team": ""}})

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    assert (
        "gpufleet:eks.nodeGroups[0].instanceType = 'g9.xlarge': unknown instance type 'g9.xlarge'" in err
        and "[rule: instance-type-known]" in err
    )
    assert "gpufleet:eks.nodeGroups[1].labels.team = '': label value: at least 1 character" in err
    assert "taints" not in err
    assert "invalid stack config (2 problems)" in err


def test_a_system_group_of_a_family_whose_zones_are_not_kept(stack_variant):
    from gpufleet.catalog import catalog

    families = catalog.load().facts.eks.system_node_families.values
    assert "c5" not in families
    err = _errors(stack_variant(lambda c: _eks(c).__setitem__("systemNodeGroup", {"instanceType": "c5.large"}), "eks-g5-timeslice"))
    assert (
        f"gpufleet:eks.systemNodeGroup.instanceType = 'c5.large': a system node group uses a general-purpose type of "
        f"{', '.join(families)} (the families whose zones the catalog keeps) [rule: eks-system-node-group]"
    ) in err


def test_efa_refused_names_the_block_as_written(stack_variant):
    def edit(c):
        _group(c).update(instanceType="g6.xlarge", efa={"availabilityZone": "us-east-1a"})
        _group(c).pop("zones")

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    assert 'gpufleet:eks.nodeGroups[0].efa = {"availabilityZone": "us-east-1a"}: g6.xlarge does not support EFA' in err


def test_an_existing_cluster_keeps_its_own_system_group_and_needs_two_subnets(stack_variant):
    def edit(subnets: int):
        def apply(c):
            _eks(c)["cluster"] = {"name": "inference", "securityGroupId": "sg-0123456789abcdef0"}
            _eks(c)["network"] = {"vpcId": "vpc-0123456789abcdef0", "subnetIds": [f"subnet-0123456789abcdef{i}" for i in range(subnets)]}
            _eks(c)["systemNodeGroup"] = {"instanceType": "m5.large"}
            _group(c).pop("zones")

        return apply

    err = _errors(stack_variant(edit(1), "eks-g5-timeslice"))
    assert (
        'gpufleet:eks.systemNodeGroup = {"instanceType": "m5.large"}: gpufleet adds a system node group only to a cluster it creates; '
        "an existing cluster keeps its own [rule: eks-system-node-group]"
    ) in err
    assert (
        'gpufleet:eks.network.subnetIds = ["subnet-0123456789abcdef0"]: an EKS cluster needs subnets in at least two availability zones [rule: eks-cluster-zones]'
        in err
    )
    err = _errors(stack_variant(edit(2), "eks-g5-timeslice"))
    assert "[rule: eks-system-node-group]" in err and "eks-cluster-zones" not in err


def test_zones_with_existing_subnets(stack_variant):
    def edit(c):
        _existing_network(c)
        _group(c)["zones"] = ["us-west-2a"]

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    assert 'gpufleet:eks.nodeGroups[0].zones = ["us-west-2a"]: zones place a group in a created VPC; ' in err
    assert "with existing subnets give subnetIds [rule: node-group-zones]" in err


def test_a_taint_key_kubernetes_takes_and_the_eks_api_does_not(stack_variant):
    """Kubernetes takes a 60-character name under a prefix; CreateNodegroup's Taint.key stops at 63
    characters in all (botocore's model, the one place the bound is written)."""
    from gpufleet.apis.aws import member_shape

    limit = member_shape("eks", "Taint", "key").metadata["max"]
    key = "example.com/" + "k" * (limit - len("example.com/") + 1)  # the name part is within Kubernetes' 63

    def edit(c):
        _group(c)["taints"] = [{"key": "gpu", "effect": "NoSchedule"}, {"key": key, "effect": "NoSchedule"}]

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    assert (
        f"gpufleet:eks.nodeGroups[0].taints[1].key = '{key}': at most {limit} characters (eks API, Taint.key) [rule: aws-api-model]" in err
    )
    assert "k8s-node-labels" not in err


def test_the_gpu_operators_driver_beside_the_nvidia_ami(stack_variant):
    def edit(c):
        k8s = c["gpufleet:eks"]["kubernetes"]
        k8s.pop("nvidiaDevicePlugin", None)
        k8s["gpuOperator"] = {"driver": True}

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    assert (
        "gpufleet:eks.kubernetes.gpuOperator.driver = true: node group g5: the EKS AMI type AL2023_x86_64_NVIDIA installs the driver "
        "(amiType AL2023_x86_64_NVIDIA) and so does the GPU Operator: two drivers; turn one of them off [rule: eks-gpu-driver]"
    ) in err


def test_an_efa_group_in_a_created_vpc_takes_no_subnets(stack_variant):
    err = _errors(stack_variant(lambda c: _group(c).__setitem__("subnetIds", ["subnet-0123456789abcdef0"]), "eks-p5-efa"))
    assert (
        'gpufleet:eks.nodeGroups[0].subnetIds = ["subnet-0123456789abcdef0"]: with a created VPC, the group uses the VPC\'s subnet of its zone '
        "[rule: eks-efa-single-az]"
    ) in err


def test_a_layout_the_types_cards_cannot_hold(stack_variant):
    """hpc6id's card 0 takes one interface: the recommended layout reaches one of its two EFA interfaces."""

    def edit(c):
        _group(c).update(instanceType="hpc6id.32xlarge", efa={"layout": "recommended"}, capacityType="ON_DEMAND")
        _group(c).pop("capacityReservationId")

    err = _errors(stack_variant(edit, "eks-p5-efa"))
    maximum = RAW["hpc6id.32xlarge"]["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"]
    assert (
        f"gpufleet:eks.nodeGroups[0].efa.layout = 'recommended': hpc6id.32xlarge: the recommended layout reaches 1 of {maximum} EFA interfaces "
        "on its network cards [rule: eks-efa-layout]"
    ) in err


def _offered(instance_type: str, region: str) -> set[str]:
    from gpufleet.catalog import catalog

    return set(catalog.load().get(instance_type).offerings.get(region, ()))


def _two_zones(region: str, offering: str, lacking: str) -> list[str]:
    """Two zones of the region (EC2 offerings) that offer one type and not another."""
    zones = sorted(_offered(offering, region) - _offered(lacking, region))
    assert len(zones) >= 2, (region, offering, lacking)
    return zones[:2]


def test_the_zones_suggested_offer_the_system_groups_type_too(stack_variant):
    from gpufleet.network import zones as network_zones
    from gpufleet.catalog import catalog

    region = "il-central-1"
    system = "c7i.large"
    gpu_only = network_zones.suggested_zones([catalog.load().get("g5.2xlarge")], region, 2)
    assert not set(gpu_only) <= _offered(system, region)  # zones chosen for the GPU type alone would leave the system group out

    def edit(c):
        c["gpufleet:region"] = region
        del c["gpufleet:eks"]["network"]["create"]["zones"]
        del _group(c)["zones"]
        _system(c)["instanceType"] = system

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    line = next(l for l in err.splitlines() if "[rule: vpc-zones-required]" in l)
    suggested = line.split("for example [", 1)[1].split("]", 1)[0].split(", ")
    assert len(suggested) == 2 and all(z in _offered(system, region) and z in _offered("g5.2xlarge", region) for z in suggested)


@pytest.mark.parametrize("g5_names_a_zone", [False, True])
def test_a_missing_zone_names_the_groups_a_new_zone_would_spread(stack_variant, g5_names_a_zone):
    """g6e.xlarge is offered in none of the VPC's zones. The g5 group, offered where g6e.xlarge is, is
    named when it names no zones (a new zone spreads, so replaces, it), and not when it names its own."""
    region = "ap-northeast-2"
    zones = _two_zones(region, "m6i.large", "g6e.xlarge")
    assert _offered("g5.2xlarge", region) & _offered("g6e.xlarge", region)
    g5_zone = next(z for z in zones if z in _offered("g5.2xlarge", region))

    def edit(c):
        c["gpufleet:region"] = region
        c["gpufleet:eks"]["network"]["create"]["zones"] = zones
        g5 = _group(c)
        del g5["zones"]
        c["gpufleet:eks"]["nodeGroups"].append({**g5, "name": "l40s", "instanceType": "g6e.xlarge"})
        if g5_names_a_zone:
            g5["zones"] = [g5_zone]

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    line = next(l for l in err.splitlines() if "gpufleet:eks.nodeGroups[1].instanceType = 'g6e.xlarge'" in l)
    assert "is offered in none of the VPC's zones" in line
    assert ("node groups g5 name no zones and are offered there too" in line) is not g5_names_a_zone


def test_zones_and_ami_of_the_groups_gpufleet_places(stack_variant):
    """With an EFA group that names no zone and an arm64 system group: the EFA group takes the first
    VPC zone (in the stack's order) that offers its type, the system group the first two that offer
    its type, on the AL2023 standard AMI of its architecture."""
    from gpufleet.catalog import catalog
    from tests.conftest import preview_plan

    region, system = "us-east-1", "m7g.large"
    vpc = ["us-east-1e", "us-east-1b", "us-east-1a", "us-east-1c"]
    assert "us-east-1e" in _offered("p5.48xlarge", region) and "us-east-1e" not in _offered(system, region)
    assert {"us-east-1b", "us-east-1a", "us-east-1c"} <= _offered(system, region)

    def edit(c):
        c["gpufleet:eks"]["network"]["create"]["zones"] = vpc
        del _group(c)["efa"]["availabilityZone"]
        _system(c)["instanceType"] = system

    plan = preview_plan("--config-file", str(stack_variant(edit, "eks-p5-efa")))
    groups = {r["name"]: r for r in plan["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup"}
    subnets = {name: sorted(u.rsplit("-private-", 1)[1] for u in r["propertyDependencies"]["subnetIds"]) for name, r in groups.items()}
    assert subnets == {"p5-train-p5": ["us-east-1e"], "p5-train-system": ["us-east-1a", "us-east-1b"]}
    arm = next(name for name, f in catalog.load().facts.eks.standard_ami_types.items() if "arm64" in f.architectures)
    assert (groups["p5-train-system"]["inputs"]["amiType"], groups["p5-train-system"]["inputs"]["instanceTypes"]) == (arm, [system])
    [coredns] = [p for p in plan["placement"]["pods"] if p["pod"] == "Deployment kube-system/coredns"]
    assert coredns["status"] == "scheduled"


def test_an_arm64_gpu_group_runs_the_arm_nvidia_ami_and_refuses_an_x86_one(stack_variant):
    from gpufleet.catalog import catalog
    from tests.conftest import preview_plan

    types = catalog.load().facts.eks.accelerated_ami_types
    arm = next(n for n, f in types.items() if f.default and f.accelerator == "nvidia" and "arm64" in f.architectures)
    x86 = next(n for n, f in types.items() if f.default and f.accelerator == "nvidia" and "x86_64" in f.architectures)

    def arm_group(c):
        _group(c)["instanceType"] = "g5g.2xlarge"

    plan = preview_plan("--config-file", str(stack_variant(arm_group, "eks-g5-timeslice")))
    [group] = [r for r in plan["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup" and r["name"] == "inference-g5"]
    assert group["inputs"]["amiType"] == arm  # no amiType given: the AL2023 NVIDIA AMI of the type's architecture

    def x86_ami(c):
        arm_group(c)
        _group(c)["amiType"] = x86

    err = _errors(stack_variant(x86_ami, "eks-g5-timeslice"))
    assert f"gpufleet:eks.nodeGroups[0].amiType = '{x86}': g5g.2xlarge is arm64; {x86} is x86_64 [rule: eks-ami-type-supported]" in err
