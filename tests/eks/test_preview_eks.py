"""The offline previews of the shipped EKS stacks: golden plans, EFA launch templates read against
moto's raw network-card records, node groups in the EKS API's spelling, IAM, the device plugins, the
NCCL job (validated against the MPIJob CRD's schema) and the summary."""

from __future__ import annotations

import json
import shlex

import jsonschema
import pytest
from ruamel.yaml import YAML

from gpufleet.catalog.generate.sources import MotoSnapshot
from gpufleet.engine.runtime import UNKNOWN
from tests.conftest import ROOT, check_golden, plans_of, run_cli

STACKS = ("eks-p5-efa", "eks-trn1", "eks-g5-timeslice", "eks-p3dn-efa")
RAW = MotoSnapshot().instance_types()
CRD = ROOT / "tests" / "fixtures" / "schemas" / "mpi-operator-v0.8.2-mpijob-v2beta1-crd-excerpt.yaml"


plans = plans_of(STACKS)


def _p5() -> tuple[int, int]:
    """(GPUs, EFA interfaces) of p5.48xlarge, from moto's raw record."""
    record = RAW["p5.48xlarge"]
    return record["GpuInfo"]["Gpus"][0]["Count"], record["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"]


def by_type(plan: dict, type_token: str) -> dict[str, dict]:
    return {r["name"]: r for r in plan["resources"] if r["type"] == type_token}


def one(plan: dict, type_token: str) -> dict:
    """The one resource of the type that belongs to an accelerated group (the system group's aside)."""
    [found] = [r["inputs"] for r in plan["resources"] if r["type"] == type_token and not r["name"].endswith("-system")]
    return found


@pytest.mark.parametrize("stack", STACKS)
def test_plan_matches_golden(plans, stack):
    """Regenerate with GPUFLEET_UPDATE_GOLDEN=1 after an intended change, then read the diff."""
    check_golden(plans[stack], stack)
    assert plans[stack]["policy"]["violations"] == []


@pytest.mark.parametrize("stack, instance_type", [("eks-p5-efa", "p5.48xlarge"), ("eks-trn1", "trn1.32xlarge")])
def test_efa_interfaces_come_card_by_card_from_ec2(plans, stack, instance_type):
    """AWS's recommended layout: an ENA primary (no interfaceType), efa-only on card 0 at device index
    1, then efa-only at device index 0 on each further card, MaximumEfaInterfaces of them."""
    template = one(plans[stack], "aws:ec2/launchTemplate:LaunchTemplate")
    interfaces = template["networkInterfaces"]
    assert len(interfaces) == RAW[instance_type]["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"] + 1
    assert (interfaces[0]["deviceIndex"], interfaces[0]["networkCardIndex"], interfaces[0].get("interfaceType")) == (0, 0, None)
    assert (interfaces[1]["deviceIndex"], interfaces[1]["networkCardIndex"], interfaces[1]["interfaceType"]) == (1, 0, "efa-only")
    assert [i["networkCardIndex"] for i in interfaces[2:]] == list(range(1, len(interfaces) - 1))
    assert {(i["deviceIndex"], i["interfaceType"]) for i in interfaces[2:]} == {(0, "efa-only")}
    # Security groups on every interface (the EFA group and the cluster's), none on the template.
    assert all(len(i["securityGroups"]) == 2 for i in interfaces) and "vpcSecurityGroupIds" not in template
    assert template["metadataOptions"]["httpTokens"] == "required" and template["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert template["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"
    assert "userData" not in template and "imageId" not in template  # EKS supplies the AMI and its bootstrap


def test_a_capacity_block_gets_no_placement_group_and_its_market(plans):
    plan = plans["eks-p5-efa"]
    template = one(plan, "aws:ec2/launchTemplate:LaunchTemplate")
    assert "placement" not in template and not by_type(plan, "aws:ec2/placementGroup:PlacementGroup")
    assert template["capacityReservationSpecification"] == {"capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}}
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    group = one(plan, "aws:eks/nodeGroup:NodeGroup")
    assert group["capacityType"] == "CAPACITY_BLOCK" and len(group["subnetIds"]) == 1
    # EKS takes a capacity block's type from the launch template, and rejects it in instanceTypes.
    assert template["instanceType"] == "p5.48xlarge" and "instanceTypes" not in group


def test_an_on_demand_group_names_its_type_on_the_group_only(plans):
    assert "instanceType" not in one(plans["eks-trn1"], "aws:ec2/launchTemplate:LaunchTemplate")
    assert one(plans["eks-trn1"], "aws:eks/nodeGroup:NodeGroup")["instanceTypes"] == ["trn1.32xlarge"]


def test_on_demand_efa_gets_a_cluster_placement_group_in_one_zone(plans):
    plan = plans["eks-trn1"]
    assert one(plan, "aws:ec2/placementGroup:PlacementGroup")["strategy"] == "cluster"
    assert one(plan, "aws:ec2/launchTemplate:LaunchTemplate")["placement"] == {"groupName": UNKNOWN}
    assert len(one(plan, "aws:eks/nodeGroup:NodeGroup")["subnetIds"]) == 1


def test_efa_security_group_allows_all_traffic_from_and_to_itself(plans):
    group = one(plans["eks-trn1"], "aws:ec2/securityGroup:SecurityGroup")
    assert any(rule.get("self") and rule["protocol"] == "-1" for rule in group["ingress"])
    assert any(rule.get("self") and rule["protocol"] == "-1" for rule in group["egress"])
    assert not any("0.0.0.0/0" in rule.get("cidrBlocks", []) for rule in group["ingress"])


def test_node_groups_speak_the_eks_api(plans):
    p5 = one(plans["eks-p5-efa"], "aws:eks/nodeGroup:NodeGroup")
    trn1 = one(plans["eks-trn1"], "aws:eks/nodeGroup:NodeGroup")
    g5 = one(plans["eks-g5-timeslice"], "aws:eks/nodeGroup:NodeGroup")
    assert (p5["amiType"], trn1["amiType"], g5["amiType"]) == ("AL2023_x86_64_NVIDIA", "AL2023_x86_64_NEURON", "AL2023_x86_64_NVIDIA")
    assert p5["taints"] == [{"key": "nvidia.com/gpu", "effect": "NO_SCHEDULE"}]
    assert trn1["taints"] == [{"key": "aws.amazon.com/neuron", "effect": "NO_SCHEDULE"}]
    assert g5["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]  # converted
    assert g5["labels"] == {"nvidia.com/gpu.present": "true", "workload": "inference"} and trn1["labels"] == {}
    assert len(g5["subnetIds"]) == 2  # no EFA: the cluster's zones


def test_roles_carry_exactly_the_policies_nodes_and_cluster_need(plans):
    plan = plans["eks-trn1"]
    attached = sorted(r["inputs"]["policyArn"] for r in by_type(plan, "aws:iam/rolePolicyAttachment:RolePolicyAttachment").values())
    assert attached == [
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
        "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    ]
    cluster = one(plan, "aws:eks/cluster:Cluster")
    assert cluster["version"] == "1.35" and cluster["accessConfig"]["authenticationMode"] == "API"


def _releases(plan: dict) -> dict[str, dict]:
    return {r["inputs"]["chart"]: r["inputs"] for r in plan["resources"] if r["type"] == "kubernetes:helm.sh/v3:Release"}


def test_each_stack_gets_the_device_plugins_its_groups_need(plans):
    assert set(_releases(plans["eks-p5-efa"])) == {"nvidia-device-plugin", "aws-efa-k8s-device-plugin"}
    assert set(_releases(plans["eks-trn1"])) == {"oci://public.ecr.aws/neuron/neuron-helm-chart", "aws-efa-k8s-device-plugin"}
    assert set(_releases(plans["eks-g5-timeslice"])) == {"nvidia-device-plugin"}


def test_device_plugins_are_pinned_and_tolerate_the_groups_they_serve(plans):
    nvidia = _releases(plans["eks-p5-efa"])["nvidia-device-plugin"]
    assert (nvidia["version"], nvidia["repositoryOpts"]["repo"]) == ("0.20.0", "https://nvidia.github.io/k8s-device-plugin")
    assert nvidia["namespace"] != "default"  # the chart refuses the default namespace
    assert {"key": "CriticalAddonsOnly", "operator": "Exists"} in nvidia["values"]["tolerations"]  # Helm replaces lists
    efa = _releases(plans["eks-trn1"])["aws-efa-k8s-device-plugin"]
    assert efa["version"] == "v0.5.30"
    # The EFA chart tolerates nothing by default: the Neuron taint is added.
    assert efa["values"]["tolerations"] == [{"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"}]
    neuron = _releases(plans["eks-trn1"])["oci://public.ecr.aws/neuron/neuron-helm-chart"]
    assert neuron["version"] == "1.9.0" and neuron["values"]["npd"] == {"enabled": False}


def test_time_slicing_writes_the_plugin_config(plans):
    values = _releases(plans["eks-g5-timeslice"])["nvidia-device-plugin"]["values"]
    assert values["config"]["default"] == "default"
    config = YAML(typ="safe").load(values["config"]["map"]["default"])
    assert config["version"] == "v1"
    assert config["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    # The g5 taint has a value; the chart's default toleration (Exists) covers it.
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values["tolerations"]


def test_nccl_job_is_sized_from_the_node_group_and_fits_the_crd(plans):
    plan = plans["eks-p5-efa"]
    job = one(plan, "kubernetes:kubeflow.org/v2beta1:MPIJob")
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
    shell = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
    command = shlex.split(shell[2].split(" && exec ", 1)[1])  # the run, after the EFA pre-check
    assert command[command.index("-np") + 1] == str(2 * gpus) and command[command.index("-N") + 1] == str(gpus)
    schema = YAML(typ="safe").load(CRD.read_text())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    jsonschema.validate({"apiVersion": job["apiVersion"], "kind": job["kind"], "metadata": job["metadata"], "spec": spec}, schema)
    for mutate in (lambda s: s.__setitem__("slotsPerWorker", "8"), lambda s: s.pop("mpiReplicaSpecs"), lambda s: s.__setitem__("mpiImplementation", "MVAPICH")):
        broken = json.loads(json.dumps(spec))
        mutate(broken)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"spec": broken}, schema)
    operator = one(plan, "kubernetes:yaml/v2:ConfigFile")
    assert operator["file"].endswith("/kubeflow/mpi-operator/v0.8.2/deploy/v2beta1/mpi-operator.yaml")


def test_summary_counts_gpus_chips_efa_and_the_nccl_world_size(plans):
    [p5] = plans["eks-p5-efa"]["summary"]["groups"]
    assert p5["efaInterfacesPerInstance"] == RAW["p5.48xlarge"]["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"]
    assert p5["efaInterfaces"] == {"min": 0, "desired": 2 * p5["efaInterfacesPerInstance"], "max": 2 * p5["efaInterfacesPerInstance"]}
    gpus, efa = _p5()
    assert plans["eks-p5-efa"]["summary"]["ncclTest"] == {
        "nodeGroup": "p5", "workers": 2, "slotsPerWorker": gpus, "worldSize": 2 * gpus, "efaInterfacesPerWorker": efa,
    }
    [trn1] = plans["eks-trn1"]["summary"]["groups"]
    [device] = RAW["trn1.32xlarge"]["NeuronInfo"]["NeuronDevices"]
    expected = ("neuron", device["Count"], device["Count"] * device["CoreInfo"]["Count"])
    assert (trn1["kind"], trn1["perInstance"], trn1["neuronCoresPerInstance"]) == expected
    [g5] = plans["eks-g5-timeslice"]["summary"]["groups"]
    assert "efaInterfaces" not in g5 and "ncclTest" not in plans["eks-g5-timeslice"]["summary"]


def test_human_preview_states_the_nccl_world_size(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run_cli("preview", "eks-p5-efa")
    assert code == 0, err
    gpus, efa = _p5()
    assert f"NCCL test on p5: 2 workers x {gpus} GPUs = world size {2 * gpus}, {efa} EFA interfaces per worker" in out


def test_nccl_pod_templates_fit_the_kubernetes_schema_of_the_cluster_version(plans):
    """The MPIJob's pod templates against the Kubernetes OpenAPI schema (kubernetes-validate, strict:
    unknown fields fail) of the pinned cluster version."""
    import kubernetes_validate

    plan = plans["eks-p5-efa"]
    version = one(plan, "aws:eks/cluster:Cluster")["version"]
    job = one(plan, "kubernetes:kubeflow.org/v2beta1:MPIJob")
    for role, replica in job["spec"]["mpiReplicaSpecs"].items():
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"nccl-{role.lower()}"}, "spec": replica["template"]["spec"]}
        kubernetes_validate.validate(pod, version, strict=True)
    broken = json.loads(json.dumps(job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]))
    broken["containers"][0]["volumeMount"] = broken["containers"][0].pop("volumeMounts")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": broken}, version, strict=True)


def test_bottlerocket_encrypts_both_of_its_volumes_and_sizes_the_data_one(stack_variant):
    path = stack_variant(lambda c: c["gpufleet:eks"]["nodeGroups"][0].__setitem__("amiType", "BOTTLEROCKET_x86_64_NVIDIA"), "eks-g5-timeslice")
    code, out, err = run_cli("preview", "--config-file", str(path), "--json")
    assert code == 0, err
    plan = json.loads(out)
    assert one(plan, "aws:eks/nodeGroup:NodeGroup")["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA"
    mappings = {m["deviceName"]: m["ebs"] for m in one(plan, "aws:ec2/launchTemplate:LaunchTemplate")["blockDeviceMappings"]}
    assert set(mappings) == {"/dev/xvda", "/dev/xvdb"}
    assert all(ebs["encrypted"] == "true" for ebs in mappings.values())
    assert "volumeSize" not in mappings["/dev/xvda"] and mappings["/dev/xvdb"]["volumeSize"] == 200
    assert plan["policy"]["violations"] == []


def test_a_group_without_gpus_offers_an_nccl_test_no_gpu_slots():
    """A Neuron group's NCCL target (the library's NcclTest can be pointed at any group) counts no GPUs."""
    from gpufleet.catalog import catalog
    from gpufleet.eks.args import NodeGroupArgs
    from gpufleet.eks.resolved import resolve

    target = resolve(NodeGroupArgs(name="trn", instance_type="trn1.32xlarge", min_size=0, desired_size=2, max_size=2), catalog.load()).nccl_target
    assert (target.gpus_per_node, target.nodes) == (0, 2)
