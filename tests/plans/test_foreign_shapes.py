"""A foreign program may give any input any shape (a string where a list belongs, a number for a
map): the plan room reads what it can and never stops. Seeded random plans of the resource types
the newer readers take (Karpenter, awsx, azure-native AKS, pulumi-eks's deprecated NodeGroup) and
Kubernetes workloads, placed: no exception, 300 plans a run."""

from __future__ import annotations

import random

import pytest

from gpufleet.plans import placement as plan_placement

KEYS = ["spec", "template", "requirements", "key", "operator", "values", "limits", "taints", "metadata", "labels", "weight", "capacity",
        "container", "containers", "portMappings", "cpu", "memory", "name", "taskDefinitionArgs", "availabilityZoneNames",
        "numberOfAvailabilityZones", "cidrBlock", "subnetSpecs", "natGateways", "nvidia.com/gpu", "effect", "agentPoolProfiles", "vmSize",
        "mode", "nodeLabels", "nodeTaints", "computeConfig", "nodePools", "enabled"]
LEAVES = [1, -3, "x", None, True, 2.5, "In", "NotIn", "Gt", "karpenter.k8s.aws/instance-family", "g5", "10.0.0.0/16", "System", "system",
          "04da6b54-80e4-46f7-96ec-b56ff0331ba9", "1Gi", "nodes", float("nan"), [], {}]
TYPES = ["kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.sh/v1alpha1:NodeOverlay", "awsx:ec2:Vpc", "awsx:ecs:FargateService",
         "awsx:ecs:EC2Service", "awsx:ecs:EC2TaskDefinition", "azure-native:containerservice:ManagedCluster",
         "azure-native:containerservice:AgentPool", "eks:index:NodeGroup", "kubernetes:apps/v1:Deployment", "aws:eks/cluster:Cluster"]


def _value(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth < 4 and roll < 0.2:
        return {rng.choice(KEYS): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if depth < 4 and roll < 0.35:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return rng.choice(LEAVES)


def _pool(rng: random.Random) -> dict:
    """A NodePool near the right shape, wrong in one place or another."""
    requirement = {"key": rng.choice(["karpenter.k8s.aws/instance-family", "kubernetes.io/arch", "x"]), "operator": rng.choice(["In", "Gt", "Lte", "Bad", None]), "values": _value(rng)}
    return {"metadata": {"name": "p"}, "spec": {"template": {"spec": {"requirements": [requirement], "taints": _value(rng)}},
                                                "limits": _value(rng), "weight": _value(rng), "requirements": _value(rng), "capacity": _value(rng)}}


@pytest.mark.parametrize("seed", range(3))
def test_any_shape_of_input_is_read_without_stopping(seed):
    rng = random.Random(seed)
    for _ in range(100):
        resources = []
        for j in range(rng.randint(1, 4)):
            type_ = rng.choice(TYPES)
            props = _pool(rng) if type_.startswith("kubernetes:karpenter") and rng.random() < 0.7 else _value(rng)
            resources.append({"urn": f"urn:pulumi:s::p::{type_}::r{j}", "type": type_, "name": f"r{j}", "inputs": props if isinstance(props, dict) else {"spec": props}})
        plan_placement.placement(plan_placement.from_plan({"resources": resources})).as_dict()
