"""The offline preview of the shipped EKS stack: golden plan, EFA launch templates read against moto's
raw network-card records, node groups in the EKS API's spelling, IAM, and the summary."""

from __future__ import annotations

import json
import os

import pytest

from components.catalog.sources import MotoSnapshot
from infra.engine import UNKNOWN
from tests.conftest import ROOT, preview_plan

GOLDEN = ROOT / "tests" / "golden" / "eks-efa.plan.json"
RAW = MotoSnapshot().instance_types()


@pytest.fixture(scope="module")
def plan() -> dict:
    return preview_plan("eks-efa")


def by_type(plan: dict, type_token: str) -> dict[str, dict]:
    return {r["name"]: r for r in plan["resources"] if r["type"] == type_token}


def test_plan_matches_golden(plan):
    """Regenerate with GPUFLEET_UPDATE_GOLDEN=1 after an intended change, then read the diff."""
    text = json.dumps(plan, indent=2, sort_keys=True) + "\n"
    if os.environ.get("GPUFLEET_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


@pytest.mark.parametrize("group, instance_type, secondary", [("p5-train", "p5.48xlarge", "efa-only"), ("trn1-train", "trn1.32xlarge", "efa")])
def test_efa_interfaces_come_card_by_card_from_ec2(plan, group, instance_type, secondary):
    template = by_type(plan, "aws:ec2/launchTemplate:LaunchTemplate")[f"ml-train-{group}"]["inputs"]
    interfaces = template["networkInterfaces"]
    assert len(interfaces) == RAW[instance_type]["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"]
    assert interfaces[0]["deviceIndex"] == 0 and interfaces[0]["networkCardIndex"] == 0 and interfaces[0]["interfaceType"] == "efa"
    assert [i["networkCardIndex"] for i in interfaces[1:]] == list(range(1, len(interfaces)))
    assert {(i["deviceIndex"], i["interfaceType"]) for i in interfaces[1:]} == {(1, secondary)}
    # Security groups on every interface (the EFA group and the cluster's), none on the template.
    assert all(len(i["securityGroups"]) == 2 for i in interfaces) and "vpcSecurityGroupIds" not in template
    assert template["placement"] == {"groupName": UNKNOWN}
    assert template["metadataOptions"]["httpTokens"] == "required" and template["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert template["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"
    assert "userData" not in template and "imageId" not in template  # EKS supplies the AMI and its bootstrap


def test_efa_security_group_allows_all_traffic_from_and_to_itself(plan):
    group = by_type(plan, "aws:ec2/securityGroup:SecurityGroup")["ml-train-p5-train-efa"]["inputs"]
    assert {"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True, "description": "EFA from the group"} in group["ingress"]
    assert any(rule.get("self") and rule["protocol"] == "-1" for rule in group["egress"])
    assert not any("0.0.0.0/0" in rule.get("cidrBlocks", []) for rule in group["ingress"])


def test_efa_groups_sit_in_one_zone_and_others_span_the_cluster(plan):
    groups = by_type(plan, "aws:eks/nodeGroup:NodeGroup")
    assert len(groups["ml-train-p5-train"]["inputs"]["subnetIds"]) == 1
    assert len(groups["ml-train-l40s-infer"]["inputs"]["subnetIds"]) == 2
    placement = by_type(plan, "aws:ec2/placementGroup:PlacementGroup")
    assert set(placement) == {"ml-train-p5-train", "ml-train-trn1-train"} and placement["ml-train-p5-train"]["inputs"]["strategy"] == "cluster"


def test_node_groups_speak_the_eks_api(plan):
    groups = {r["inputs"]["nodeGroupName"]: r["inputs"] for r in by_type(plan, "aws:eks/nodeGroup:NodeGroup").values()}
    assert groups["p5-train"]["amiType"] == "AL2023_x86_64_NVIDIA" and groups["trn1-train"]["amiType"] == "AL2023_x86_64_NEURON"
    assert groups["p5-train"]["taints"] == [{"key": "nvidia.com/gpu", "effect": "NO_SCHEDULE"}]
    assert groups["trn1-train"]["taints"] == [{"key": "aws.amazon.com/neuron", "effect": "NO_SCHEDULE"}]
    assert groups["l40s-infer"]["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]  # converted
    assert groups["p5-train"]["labels"] == {"nvidia.com/gpu.present": "true"}
    assert groups["l40s-infer"]["labels"] == {"nvidia.com/gpu.present": "true", "workload": "inference"}
    assert groups["l40s-infer"]["capacityType"] == "SPOT"


def test_roles_carry_exactly_the_policies_nodes_and_cluster_need(plan):
    attached = sorted(r["inputs"]["policyArn"] for r in by_type(plan, "aws:iam/rolePolicyAttachment:RolePolicyAttachment").values())
    assert attached == [
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
        "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    ]
    [cluster] = by_type(plan, "aws:eks/cluster:Cluster").values()
    assert cluster["inputs"]["version"] == "1.33" and cluster["inputs"]["accessConfig"]["authenticationMode"] == "API"


def test_summary_counts_gpus_chips_and_efa_interfaces(plan):
    groups = {g["group"]: g for g in plan["summary"]["groups"]}
    p5 = groups["p5-train"]
    assert p5["perInstance"] == RAW["p5.48xlarge"]["GpuInfo"]["Gpus"][0]["Count"]
    assert p5["efaInterfaces"] == {"min": 0, "desired": 64, "max": 128}
    trn1 = groups["trn1-train"]
    assert trn1["efaInterfacesPerInstance"] == RAW["trn1.32xlarge"]["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"]
    assert "efaInterfaces" not in groups["l40s-infer"]
    assert plan["policy"]["violations"] == []


def _release(plan: dict, suffix: str) -> dict:
    return by_type(plan, "kubernetes:helm.sh/v3:Release")[f"ml-train-device-plugins-{suffix}"]["inputs"]


def test_device_plugins_are_pinned_and_tolerate_the_groups_they_serve(plan):
    nvidia, efa, neuron = _release(plan, "nvidia"), _release(plan, "efa"), _release(plan, "neuron")
    assert (nvidia["chart"], nvidia["version"], nvidia["repositoryOpts"]["repo"]) == ("nvidia-device-plugin", "0.20.0", "https://nvidia.github.io/k8s-device-plugin")
    assert nvidia["namespace"] != "default"  # the chart refuses the default namespace
    assert (efa["chart"], efa["version"]) == ("aws-efa-k8s-device-plugin", "v0.5.30")
    assert (neuron["chart"], neuron["version"]) == ("oci://public.ecr.aws/neuron/neuron-helm-chart", "1.9.0")
    # The EFA chart tolerates nothing by default: the GPU and the Neuron EFA groups' taints are added.
    assert {(t["key"], t["effect"]) for t in efa["values"]["tolerations"]} == {("nvidia.com/gpu", "NoSchedule"), ("aws.amazon.com/neuron", "NoSchedule")}
    # Helm replaces lists: the NVIDIA chart's defaults are kept.
    assert {"key": "CriticalAddonsOnly", "operator": "Exists"} in nvidia["values"]["tolerations"]
    assert neuron["values"]["npd"] == {"enabled": False}
    assert "config" not in nvidia["values"] and "migStrategy" not in nvidia["values"]


def test_nccl_job_is_sized_from_the_node_group(plan):
    [job] = [r["inputs"] for r in plan["resources"] if r["type"] == "kubernetes:kubeflow.org/v2beta1:MPIJob"]
    gpus = RAW["p5.48xlarge"]["GpuInfo"]["Gpus"][0]["Count"]
    efa = RAW["p5.48xlarge"]["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"]
    spec = job["spec"]
    worker = spec["mpiReplicaSpecs"]["Worker"]
    assert spec["slotsPerWorker"] == gpus and worker["replicas"] == 2  # the group's desired nodes
    [container] = worker["template"]["spec"]["containers"]
    assert container["resources"]["requests"] == container["resources"]["limits"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == gpus and container["resources"]["limits"]["vpc.amazonaws.com/efa"] == efa
    assert container["resources"]["limits"]["hugepages-2Mi"] == "5120Mi"
    assert {"name": "shm", "mountPath": "/dev/shm"} in container["volumeMounts"]
    assert worker["template"]["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    command = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
    assert command[command.index("-np") + 1] == str(2 * gpus) and command[command.index("-N") + 1] == str(gpus)
    [operator] = [r["inputs"] for r in plan["resources"] if r["type"] == "kubernetes:yaml/v2:ConfigFile"]
    assert operator["file"].endswith("/kubeflow/mpi-operator/v0.8.2/deploy/v2beta1/mpi-operator.yaml")


def test_time_slicing_writes_the_plugin_config(stack_variant):
    from ruamel.yaml import YAML

    from tests.conftest import run_cli

    path = stack_variant(lambda c: c["gpufleet:eks"]["kubernetes"].__setitem__("nvidiaDevicePlugin", {"timeSlicingReplicas": 4}), "eks-efa")
    code, out, err = run_cli("preview", "--config-file", str(path), "--json")
    assert code == 0, err
    values = _release(json.loads(out), "nvidia")["values"]
    assert values["config"]["default"] == "default"
    config = YAML(typ="safe").load(values["config"]["map"]["default"])
    assert config["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    assert config["version"] == "v1"
