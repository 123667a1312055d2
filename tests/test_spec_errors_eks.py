"""Bad EKS input: exit 2 naming the field, the value and the rule, before any resource exists."""

from __future__ import annotations

from tests.test_spec_errors import _errors


def _group(c, i: int = 0) -> dict:
    return c["gpufleet:eks"]["nodeGroups"][i]


def test_efa_on_a_type_without_efa(stack_variant):
    err = _errors(stack_variant(lambda c: _group(c, 2).__setitem__("efa", {}), "eks-efa"))
    assert "gpufleet:eks.nodeGroups[2].efa" in err and "g6e.xlarge does not support EFA" in err and "[rule: eks-efa-supported]" in err


def test_efa_zone_that_does_not_offer_the_type(stack_variant):
    err = _errors(stack_variant(lambda c: _group(c)["efa"].__setitem__("availabilityZone", "us-east-1e"), "eks-efa"))
    assert "gpufleet:eks.nodeGroups[0].efa.availabilityZone = 'us-east-1e'" in err
    assert "[rule: eks-efa-single-az]" in err


def test_existing_subnets_need_one_subnet_and_its_zone_for_efa(stack_variant):
    def edit(c):
        c["gpufleet:eks"]["network"] = {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]}
        _group(c)["subnetIds"] = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
        _group(c, 1)["subnetIds"] = ["subnet-0123456789abcdef0"]
        _group(c, 1)["efa"] = {"availabilityZone": "us-east-1b"}

    err = _errors(stack_variant(edit, "eks-efa"))
    assert "gpufleet:eks.nodeGroups[0].efa.availabilityZone = null: an EFA group on existing subnets names the zone" in err
    assert "gpufleet:eks.nodeGroups[0].subnetIds" in err and "exactly one subnet" in err
    assert "nodeGroups[1]" not in err  # one subnet, its zone named and offering trn1.32xlarge


def test_capacity_block_needs_its_reservation(stack_variant):
    err = _errors(stack_variant(lambda c: _group(c).__setitem__("capacityType", "CAPACITY_BLOCK"), "eks-efa"))
    assert "capacityType CAPACITY_BLOCK needs capacityReservationId" in err


def test_neuron_ami_type_on_a_gpu_type(stack_variant):
    err = _errors(stack_variant(lambda c: _group(c).__setitem__("amiType", "AL2023_x86_64_NEURON"), "eks-efa"))
    assert "gpufleet:eks.nodeGroups[0].amiType = 'AL2023_x86_64_NEURON'" in err
    assert "AL2023_x86_64_NEURON is for neuron nodes; p5.48xlarge is a nvidia type [rule: eks-ami-type-supported]" in err


def test_bottlerocket_is_refused_until_its_volumes_are_known(stack_variant):
    err = _errors(stack_variant(lambda c: _group(c).__setitem__("amiType", "BOTTLEROCKET_x86_64_NVIDIA"), "eks-efa"))
    assert "its volume layout is not in the reference facts [rule: eks-ami-type-supported]" in err


def test_unknown_taint_effect_spelling(stack_variant):
    err = _errors(stack_variant(lambda c: _group(c, 2)["taints"][0].__setitem__("effect", "NoScheduleX"), "eks-efa"))
    assert "gpufleet:eks.nodeGroups[2].taints[0].effect = 'NoScheduleX'" in err


def test_an_existing_cluster_needs_its_security_group(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"]["cluster"].pop("create"), "eks-efa"))
    assert "an existing cluster needs securityGroupId" in err


def test_one_zone_is_not_enough_for_a_cluster(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"]["network"]["create"].__setitem__("azCount", 1), "eks-efa"))
    assert "gpufleet:eks.network.create.azCount = 1: an EKS cluster needs at least two availability zones [rule: eks-cluster-zones]" in err


def test_mig_on_gpus_without_mig(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"]["kubernetes"].__setitem__("nvidiaDevicePlugin", {"migStrategy": "single"}), "eks-efa"))
    assert "gpufleet:eks.kubernetes.nvidiaDevicePlugin.migStrategy = 'single': node group l40s-infer: g6e.xlarge has NVIDIA L40S GPUs" in err
    assert "[rule: eks-mig-supported]" in err and "p5-train" not in err  # H100 partitions


def test_time_slicing_and_mig_are_exclusive(stack_variant):
    plugin = {"migStrategy": "mixed", "timeSlicingReplicas": 4}
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"]["kubernetes"].__setitem__("nvidiaDevicePlugin", plugin), "eks-efa"))
    assert "choose time-slicing or a MIG strategy, not both" in err


def test_nccl_test_needs_an_nvidia_efa_group(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"]["kubernetes"]["ncclTest"].__setitem__("nodeGroup", "l40s-infer"), "eks-efa"))
    assert "gpufleet:eks.kubernetes.ncclTest.nodeGroup = 'l40s-infer'" in err and "[rule: nccl-test-node-group]" in err


def test_kubernetes_pieces_need_a_cluster_gpufleet_creates(stack_variant):
    def edit(c):
        c["gpufleet:eks"]["cluster"].pop("create")
        c["gpufleet:eks"]["cluster"]["securityGroupId"] = "sg-0123456789abcdef0"

    err = _errors(stack_variant(edit, "eks-efa"))
    assert "[rule: eks-kubernetes-new-cluster]" in err
