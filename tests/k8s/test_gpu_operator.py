"""The NVIDIA GPU Operator option (GKE and AKS in their own tests; EKS here): the pinned chart's
values that matter, one driver per node in both doors, no second NVIDIA device plugin, and the
operator's device plugin in the placement (time-slicing counted)."""

from __future__ import annotations

import json

from gpufleet.catalog import catalog, tokens
from gpufleet.k8s.args import GpuOperatorArgs
from gpufleet.k8s.gpu_operator import operator_values
from tests.conftest import run_cli
from tests.policy_helpers import findings, resource
from tests.ecs.test_spec_errors import _errors

EKS = "eks-g5-timeslice"


def _operator_instead_of_plugin(c, **operator):
    k8s = c["gpufleet:eks"]["kubernetes"]
    del k8s["nvidiaDevicePlugin"]
    k8s["gpuOperator"] = {"timeSlicingReplicas": 4, **operator}


def test_values_tolerate_every_pool_taint_and_discover_only_gpu_nodes():
    values = operator_values(GpuOperatorArgs(driver=True, toolkit=False, time_slicing_replicas=3), [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}], {"nvidia.com/gpu.present": "true"}, catalog.load())
    assert values["driver"] == {"enabled": True} and values["toolkit"] == {"enabled": False} and values["mig"] == {"strategy": "single"}
    # The chart's own toleration first, then the pool's; node feature discovery's workers likewise.
    assert values["daemonsets"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "sku", "operator": "Exists", "effect": "NoSchedule"},
    ]
    worker = values["node-feature-discovery"]["worker"]
    assert worker["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert {"key": "sku", "operator": "Exists", "effect": "NoSchedule"} in worker["tolerations"]
    config = values["devicePlugin"]["config"]
    assert config["create"] is True and "replicas: 3" in config["data"][config["default"]]


def test_on_eks_the_operator_replaces_the_nvidia_plugin_and_leaves_the_ami_s_driver(stack_variant):
    code, out, err = run_cli("preview", "--config-file", str(stack_variant(_operator_instead_of_plugin, EKS)), "--json")
    assert code == 0, err
    plan = json.loads(out)
    charts = [r["inputs"]["chart"] for r in plan["resources"] if r["type"] == tokens.HELM_RELEASE]
    assert charts == ["gpu-operator"]
    [release] = [r["inputs"] for r in plan["resources"] if r["type"] == tokens.HELM_RELEASE]
    assert release["values"]["driver"] == {"enabled": False}
    # The node group's taint (EKS spelling in the group, Kubernetes' in the toleration).
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in release["values"]["daemonsets"]["tolerations"]
    # The operator's time-slicing is what the placement counts: 4 per A10G.
    assert {g["nodeGroup"]: g["allocatable"].get("nvidia.com/gpu") for g in plan["placement"]["nodeGroups"]}["g5"] == "4"
    # Its controller and node feature discovery's master and garbage collector: on the system group.
    controllers = [p for p in plan["placement"]["pods"] if p["pod"].startswith("Deployment gpu-operator/")]
    assert [(p["status"], list(p["nodeGroups"]), p["nodeGroups"]["system-*"]["placed"]) for p in controllers] == [("scheduled", ["system-*"], 1)] * 3
    assert plan["policy"]["violations"] == []


def test_on_eks_the_operator_s_driver_is_a_second_driver(stack_variant):
    err = _errors(stack_variant(lambda c: _operator_instead_of_plugin(c, driver=True), EKS))
    assert "gpufleet:eks.kubernetes.gpuOperator.driver = true: node group g5: the EKS AMI type AL2023_x86_64_NVIDIA installs the driver" in err
    assert "[rule: eks-gpu-driver]" in err


def test_the_operator_and_the_nvidia_plugin_s_settings_are_not_mixed(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"]["kubernetes"].__setitem__("gpuOperator", {}), EKS))
    assert "the GPU Operator brings its own device plugin" in err and "[rule: nvidia-one-plugin]" in err


def test_the_pack_judges_eks_groups_against_the_operator_s_driver(judge):
    group = resource(tokens.EKS_NODE_GROUP, "g5", {"instanceTypes": ["g5.xlarge"], "amiType": "AL2023_x86_64_NVIDIA"})
    on = resource(tokens.HELM_RELEASE, "gpu-operator", {"chart": "gpu-operator", "values": {"driver": {"enabled": True}}})
    off = resource(tokens.HELM_RELEASE, "gpu-operator", {"chart": "gpu-operator", "values": {"driver": {"enabled": False}}})
    assert "the EKS AMI type AL2023_x86_64_NVIDIA installs the driver" in findings(judge([group, on]), "eks-gpu-driver", "g5")[0]
    assert findings(judge([group, off]), "eks-gpu-driver") == []
    # Without an operator the AMI's driver is the one driver: nothing to judge.
    assert findings(judge([group]), "eks-gpu-driver") == []


def test_on_eks_the_spec_counts_the_gpus_the_operator_advertises(stack_variant):
    """g5: 2 nodes (8 at most) of one A10G, which the operator time-slices 4 ways: 32 pods after a
    scale-up, not 33."""

    def replicas(n):
        def edit(c):
            _operator_instead_of_plugin(c)
            c["gpufleet:eks"]["workloads"][0]["replicas"] = n

        return edit

    code, _, err = run_cli("preview", "--config-file", str(stack_variant(replicas(32), EKS)), "--json")
    assert code == 0, err
    err = _errors(stack_variant(replicas(33), EKS))
    assert "gpufleet:eks.workloads[0].replicas = 33: Deployment default/llm-serve: 1 of 33 Pending" in err
