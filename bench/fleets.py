"""Generated fleets at the sizes AWS allows, as Pulumi config (what a stack file hands the program).
The bench measures them; the scale tests preview the largest and check their plans are complete."""

from __future__ import annotations

import json

REGION = "us-east-1"
# GPU types offered in us-east-1 (load_spec checks them against the catalog on every run).
ECS_TYPES = ["g5.xlarge", "g5.12xlarge", "g6.xlarge", "g4dn.xlarge", "g6e.xlarge", "p4d.24xlarge"]
# NVIDIA types with EFA offered in us-east-1, from 1 to 32 EFA interfaces each (the catalog's EC2 data).
EKS_EFA_TYPES = ["p5.48xlarge", "p4d.24xlarge", "g6e.48xlarge", "p5en.48xlarge", "g5.48xlarge"]

# The largest stacks: ECS allows 20 capacity providers per cluster (not adjustable); a platform
# reaches scale with many services on them. EKS allows 30 managed node groups per cluster (adjustable:
# the system node group makes 31, which the pack reports as an advisory to raise the quota).
ECS_LARGEST = {"providers": 20, "services": 2000}
EKS_LARGEST = {"node_groups": 30, "workloads": 300}


def ecs_fleet(services: int, providers: int = 20) -> dict[str, str]:
    """`services` GPU services spread over at most `providers` capacity providers, each provider
    large enough (maxSize) for its services' GPUs."""
    providers = min(services, providers)
    ecs = {
        "clusterName": "bench",
        "network": {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]},
        "capacityProviders": [
            {
                "name": f"cp{i}",
                "instanceType": ECS_TYPES[i % len(ECS_TYPES)],
                "minSize": 0,
                "desiredSize": 0,
                "maxSize": -(-services // providers),
            }
            for i in range(providers)
        ],
        "workloads": [
            {
                "name": f"wl{i}",
                "capacityProvider": f"cp{i % providers}",
                "containers": [{"name": "main", "image": "public.ecr.aws/example/app:1", "memory": 4096, "gpus": 1}],
                "service": {"desiredCount": 1},
            }
            for i in range(services)
        ],
    }
    return {"gpufleet:region": REGION, "gpufleet:ecs": json.dumps(ecs)}


def eks_fleet(node_groups: int, workloads: int) -> dict[str, str]:
    """A created cluster with `node_groups` EFA node groups (one zone and placement group each) and
    `workloads` one-GPU Deployments spread over them, with the device plugins (NVIDIA and EFA)."""
    eks = {
        "cluster": {"name": "bench", "create": {"version": "1.35"}},
        "network": {"create": {"cidr": "10.60.0.0/16", "zones": ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d"]}},
        "nodeGroups": [
            {
                "name": f"ng{i}",
                "instanceType": EKS_EFA_TYPES[i % len(EKS_EFA_TYPES)],
                "minSize": 0,
                "desiredSize": 2,
                "maxSize": 2,
                "efa": {},
            }
            for i in range(node_groups)
        ],
        "kubernetes": {},
        "workloads": [
            {"name": f"wl{i}", "nodePool": f"ng{i % node_groups}", "image": "public.ecr.aws/example/app:1", "replicas": 1, "gpus": 1}
            for i in range(workloads)
        ],
    }
    return {"gpufleet:region": REGION, "gpufleet:eks": json.dumps(eks)}


def cdk_peer_fleet(groups: int) -> dict[str, str]:
    """The fleet bench/cdk.py builds on both sides: one VPC (the EKS cluster's), an ECS GPU cluster
    on it with `groups` capacity providers and one one-GPU service each, and an EKS GPU cluster with
    `groups` node groups and one one-GPU Deployment each (the NVIDIA device plugin installed).
    bench/cdk_peer/app.js declares the same fleet; a change here changes it there too."""
    eks = {
        "cluster": {"name": "bench", "create": {"version": "1.33"}},
        "network": {"create": {"cidr": "10.60.0.0/16", "zones": ["us-east-1a", "us-east-1b"]}},
        "nodeGroups": [
            {"name": f"ng{i}", "instanceType": ECS_TYPES[i % len(ECS_TYPES)], "minSize": 0, "desiredSize": 1, "maxSize": 2}
            for i in range(groups)
        ],
        "kubernetes": {},
        "workloads": [
            {"name": f"wl{i}", "nodePool": f"ng{i}", "image": "public.ecr.aws/example/app:1", "replicas": 1, "gpus": 1}
            for i in range(groups)
        ],
    }
    return {**ecs_fleet(groups, groups), "gpufleet:eks": json.dumps(eks)}
