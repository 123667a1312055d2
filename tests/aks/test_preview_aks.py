"""The offline previews of the shipped AKS stacks: golden plans, node pools in pulumi-azure's input
shape whose requests azure-mgmt-containerservice's models accept, the GPU taint and labels, the
NVIDIA device plugin (AKS installs the driver, not the plugin) or the GPU Operator with its values,
the placement of MIG instances and the summary."""

from __future__ import annotations

import inspect

import pulumi_azure as azure
import pytest
from pydantic.alias_generators import to_snake

from gpufleet.apis import aks as aks_api
from gpufleet.catalog import tokens
from tests.conftest import check_golden, inputs_by_name, plans_of

STACKS = ("aks-a100-mig", "aks-gpu-operator")


plans = plans_of(STACKS)


@pytest.mark.parametrize("stack", STACKS)
def test_golden_plan(plans, stack):
    check_golden(plans[stack], stack)


@pytest.mark.parametrize("stack", STACKS)
def test_node_pools_use_only_inputs_pulumi_azure_takes_and_the_api_accepts(plans, stack):
    params = set(inspect.signature(azure.containerservice.KubernetesClusterNodePoolArgs.__init__).parameters)
    for name, inputs in inputs_by_name(plans[stack], tokens.AKS_NODE_POOL).items():
        assert {to_snake(k) for k in inputs} <= params, name
        body, unmapped = aks_api.to_api(inputs)
        assert unmapped == [] and aks_api.problems(body) == [], (name, body)


def test_the_mig_pool(plans):
    [pool] = inputs_by_name(plans["aks-a100-mig"], tokens.AKS_NODE_POOL).values()
    assert (pool["vmSize"], pool["gpuInstance"], pool["gpuDriver"], pool["mode"]) == ("Standard_NC24ads_A100_v4", "MIG1g", "Install", "User")
    assert pool["nodeTaints"] == ["sku=gpu:NoSchedule"] and pool["nodeLabels"] == {"nvidia.com/gpu.present": "true"}
    assert (pool["autoScalingEnabled"], pool["minCount"], pool["maxCount"]) == (True, 2, 6) and "nodeCount" not in pool
    # A VM size or zone change rotates through a temporary pool, which AKS needs named beforehand.
    assert pool["temporaryNameForRotation"] == "a100migtmp"
    [resource] = [r for r in plans["aks-a100-mig"]["resources"] if r["type"] == tokens.AKS_NODE_POOL]
    assert resource.get("deleteBeforeReplace") is True


def test_aks_installs_the_driver_so_gpufleet_installs_the_device_plugin(plans):
    [release] = inputs_by_name(plans["aks-a100-mig"], tokens.HELM_RELEASE).values()
    assert release["chart"] == "nvidia-device-plugin" and release["values"]["migStrategy"] == "single"
    assert {"key": "sku", "operator": "Exists", "effect": "NoSchedule"} in release["values"]["tolerations"]
    pod = next(r["inputs"] for r in plans["aks-a100-mig"]["resources"] if r["type"] == "kubernetes:apps/v1:Deployment")["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.azure.com/agentpool": "a100mig"}
    assert pod["tolerations"] == [{"key": "sku", "operator": "Exists", "effect": "NoSchedule"}]


def test_the_operator_installs_the_driver_on_pools_without_one(plans):
    plan = plans["aks-gpu-operator"]
    [pool] = inputs_by_name(plan, tokens.AKS_NODE_POOL).values()
    assert pool["gpuDriver"] == "None"
    [release] = inputs_by_name(plan, tokens.HELM_RELEASE).values()
    assert (release["chart"], release["version"], release["repositoryOpts"]) == ("gpu-operator", "v26.7.0", {"repo": "https://helm.ngc.nvidia.com/nvidia"})
    values = release["values"]
    assert values["driver"] == {"enabled": True} and values["toolkit"] == {"enabled": True} and values["mig"] == {"strategy": "single"}
    # The chart's own toleration, then the pool's taint; node feature discovery only on GPU nodes.
    assert values["daemonsets"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "sku", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert values["node-feature-discovery"]["worker"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    # No standalone device plugin next to the operator's.
    assert [r for r in plan["resources"] if r["inputs"].get("chart") == "nvidia-device-plugin"] == []


def test_placement_counts_mig_instances_and_the_operator_s_plugin(plans):
    pods = {p["pod"]: p for p in plans["aks-a100-mig"]["placement"]["pods"]}
    assert pods["Deployment default/embeddings"]["nodeGroups"] == {"a100mig": {"perNode": 7, "placed": 12}}
    operator = {p["pod"]: p for p in plans["aks-gpu-operator"]["placement"]["pods"]}
    daemon = next(p for name, p in operator.items() if name.startswith("DaemonSet gpu-operator/"))
    assert daemon["status"] == "daemon"
    assert operator["Deployment default/whisper"]["status"] == "scheduled" and "notes" not in operator["Deployment default/whisper"]


def test_summary(plans):
    [group] = plans["aks-a100-mig"]["summary"]["groups"]
    assert (group["platform"], group["model"], group["perInstance"], group["partitionSize"], group["gpuResourcesPerInstance"]) == ("aks", "A100 80GB", 1, "MIG1g", 7)
    assert group["gpuResources"] == {"min": 14, "desired": 14, "max": 42}


def test_the_report_says_who_installs_each_pool_s_driver(plans):
    import io

    from rich.console import Console

    from gpufleet.cli.report import render_summary

    said = {}
    for stack in ("aks-a100-mig", "aks-gpu-operator"):
        [group] = plans[stack]["summary"]["groups"]
        out = io.StringIO()
        render_summary(plans[stack]["summary"], Console(file=out, width=200))
        said[stack] = (group["driver"], group["driverInstalledBy"], f"aks, ON_DEMAND, {'driver: AKS' if stack == 'aks-a100-mig' else 'no cloud driver'}" in out.getvalue())
    assert said == {"aks-a100-mig": ("Install", "aks", True), "aks-gpu-operator": ("None", "none", True)}


def test_a_created_cluster_has_an_untainted_system_pool_and_the_subscription_named(plans):
    plan = plans["aks-gpu-operator"]
    [cluster] = inputs_by_name(plan, tokens.AKS_CLUSTER).values()
    assert (cluster["name"], cluster["location"], cluster["resourceGroupName"], cluster["dnsPrefix"]) == ("inference", "eastus", "ml-prod", "inference")
    assert cluster["defaultNodePool"] == {"name": "system", "vmSize": "Standard_D4s_v5", "nodeCount": 2, "temporaryNameForRotation": "systemtmp"}
    assert cluster["identity"] == {"type": "SystemAssigned"}
    [provider] = [r["inputs"] for r in plan["resources"] if r["type"] == "pulumi:providers:azure"]
    assert provider["subscriptionId"] == "00000000-0000-0000-0000-000000000000"
    # The pool joins the new cluster; no existing cluster's pools are missing from the placement.
    [pool] = [r for r in plan["resources"] if r["type"] == tokens.AKS_NODE_POOL]
    assert [u for u in pool.get("propertyDependencies", {}).get("kubernetesClusterId", [])][0].endswith("::aks")
    assert plan["placement"]["gaps"] == []
