"""Plans that claim GPUs through DRA, for the placement and pack tests: the shape of pulumi/examples
aws-ts-eks-gpu-dra (tests/corpus_ts/third_party/aws-ts-eks-gpu-dra, index.ts: a p4d.24xlarge group
labelled nvidia.com/mig.config=all-balanced and tainted nvidia.com/gpu, nvidia-dra-driver-gpu
v25.8.1, MIG ResourceClaimTemplates, pods that claim them)."""

from __future__ import annotations

MIG_SELECTOR = 'device.attributes["gpu.nvidia.com"].type == "mig" && device.attributes["gpu.nvidia.com"].profile == "{}"'


def res(type_: str, name: str, inputs: dict) -> dict:
    return {"urn": f"urn:pulumi:s::p::{type_}::{name}", "type": type_, "name": name, "inputs": inputs}


def template(name: str, profile: str, version: str = "v1", cls: str = "mig.nvidia.com") -> dict:
    request = {"name": "mig", "exactly": {"deviceClassName": cls, "selectors": [{"cel": {"expression": MIG_SELECTOR.format(profile)}}]}}
    return res(
        f"kubernetes:resource.k8s.io/{version}:ResourceClaimTemplate",
        name,
        {
            "apiVersion": f"resource.k8s.io/{version}",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [request]}}},
        },
    )


def pod(name: str, claim: dict, kind: str = "Pod", replicas: int = 1) -> dict:
    spec = {
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "resourceClaims": [{"name": "gpu", **claim}],
        "containers": [{"name": "c", "image": "pytorch", "resources": {"claims": [{"name": "gpu"}]}}],
    }
    if kind == "Pod":
        return res("kubernetes:core/v1:Pod", name, {"metadata": {"name": name, "namespace": "default"}, "spec": spec})
    return res(
        "kubernetes:apps/v1:Deployment",
        name,
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"replicas": replicas, "template": {"spec": spec}}},
    )


def plan(nodes: int = 1, labels: dict | None = None, chart: str = "nvidia-dra-driver-gpu", version: str = "v25.8.1") -> list[dict]:
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/mig.config": "all-balanced"} if labels is None else labels
    return [
        res("aws:eks/cluster:Cluster", "c", {"version": "1.34"}),
        res(
            "aws:eks/nodeGroup:NodeGroup",
            "gpu",
            {
                "nodeGroupName": "gpu",
                "instanceTypes": ["p4d.24xlarge"],
                "amiType": "AL2023_x86_64_NVIDIA",
                "labels": labels,
                "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
                "scalingConfig": {"minSize": nodes, "desiredSize": nodes, "maxSize": nodes},
            },
        ),
        res(
            "kubernetes:helm.sh/v3:Release",
            "dra",
            {
                "name": "nvidia-dra-driver",
                "chart": chart,
                "version": version,
                "values": {
                    "gpuResourcesEnabledOverride": True,
                    "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
                    "kubeletPlugin": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]},
                },
            },
        ),
        template("mig-3g", "3g.20gb"),
        template("mig-1g", "1g.5gb"),
        pod("large", {"resourceClaimTemplateName": "mig-3g"}),
    ]
