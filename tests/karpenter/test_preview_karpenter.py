"""The offline preview of the shipped Karpenter stack: its golden plan; NodePools and EC2NodeClasses
held against the pinned CRDs; Karpenter's AWS side read against its getting-started template (read
here as raw text, not through the reader under test); EFA interfaces against moto's raw record; the
reservations; and where every pod lands."""

from __future__ import annotations

import json
import re

import pytest

from gpufleet.apis import karpenter as karpenter_api
from gpufleet.catalog import tokens
from gpufleet.catalog.generate.sources import MotoSnapshot
from tests.conftest import ROOT, check_golden, plans_of, preview_plan, run_cli

STACK = "eks-karpenter-gpu"
TEMPLATE = (ROOT / "src" / "gpufleet" / "catalog" / "data" / "karpenter" / "cloudformation.yaml").read_text()
plans = plans_of((STACK,))


def _of(plan: dict, token: str) -> dict[str, dict]:
    return {r["name"]: r["inputs"] for r in plan["resources"] if r["type"] == token}


def test_plan_matches_golden(plans):
    """Regenerate with GPUFLEET_UPDATE_GOLDEN=1 after an intended change, then read the diff."""
    check_golden(plans[STACK], STACK)
    assert plans[STACK]["policy"]["violations"] == []


def test_every_pod_is_scheduled_or_provisioned(plans):
    pods = plans[STACK]["placement"]["pods"]
    assert {p["status"] for p in pods} <= {"scheduled", "daemon", "provisioned"}
    provisioned = {p["pod"]: p["provisioned"] for p in pods if p["status"] == "provisioned"}
    assert {p: [(x["nodePool"], x["instanceType"], x["nodes"]) for x in v] for p, v in provisioned.items()} == {
        "Job default/finetune": [("train", "p5.48xlarge", 2)],
        "Deployment default/llm-serve": [("inference", "g5.xlarge", 3)],
    }
    controller = next(p for p in pods if p["pod"].startswith("Deployment kube-system/karpenter"))
    assert controller["status"] == "scheduled" and controller["nodeGroups"] == {"system-*": {"perNode": 1, "placed": 2}}
    assert plans[STACK]["placement"]["gaps"] == []
    assert controller["source"].endswith("not simulated: its topology spread over zones (maxSkew 1, DoNotSchedule)")


@pytest.mark.parametrize("token", [tokens.KARPENTER_NODE_POOL, tokens.KARPENTER_EC2_NODE_CLASS])
def test_custom_resources_validate_against_the_pinned_crds(plans, token):
    objects = _of(plans[STACK], token)
    assert len(objects) == 2
    for name, obj in objects.items():
        found = karpenter_api.check(token, obj)
        assert found.problems == (), name


def test_pools_derive_requirements_taint_limits_and_disruption(plans):
    pools = {r["metadata"]["name"]: r["spec"] for r in _of(plans[STACK], tokens.KARPENTER_NODE_POOL).values()}
    train, inference = pools["train"], pools["inference"]
    requirements = {r["key"]: r["values"] for r in train["template"]["spec"]["requirements"]}
    assert requirements["karpenter.k8s.aws/instance-gpu-name"] == ["h100"]
    assert requirements["karpenter.sh/capacity-type"] == ["reserved"]
    assert requirements["topology.kubernetes.io/zone"] == ["us-east-1a"]
    assert train["template"]["spec"]["taints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    gpus = MotoSnapshot().instance_types()["p5.48xlarge"]["GpuInfo"]["Gpus"][0]["Count"]
    assert train["limits"] == {"nvidia.com/gpu": str(2 * gpus), "cpu": str(2 * 192)}
    assert train["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert inference["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    assert inference["template"]["metadata"]["labels"] == {"nvidia.com/gpu.present": "true"}


def test_the_efa_pool_lays_out_every_interface_of_the_type(plans):
    classes = {r["metadata"]["name"]: r for r in _of(plans[STACK], tokens.KARPENTER_EC2_NODE_CLASS).values()}
    interfaces = classes["train"]["spec"]["networkInterfaces"]
    efa = MotoSnapshot().instance_types()["p5.48xlarge"]["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"]
    assert sum(i["interfaceType"] == "efa-only" for i in interfaces) == efa
    assert interfaces[0] == {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    # The capacity block carries its own placement: no placement group.
    assert "placementGroupSelector" not in classes["train"]["spec"]
    assert not _of(plans[STACK], "aws:ec2/placementGroup:PlacementGroup")
    assert classes["train"]["spec"]["capacityReservationSelectorTerms"] == [{"id": "cr-0123456789abcdef0"}]
    assert classes["train"]["metadata"]["annotations"] == {"gpufleet.dev/reserved-instances": "2"}
    assert "networkInterfaces" not in classes["inference"]["spec"]
    assert classes["inference"]["spec"]["amiSelectorTerms"] == [{"alias": "al2023@v20260724"}]


def test_karpenter_s_aws_side_is_its_getting_started_template(plans):
    plan = plans[STACK]
    sids = re.findall(r'"Sid": "(\w+)"', TEMPLATE.split("KarpenterInterruptionQueue:")[0])
    made = [s["Sid"] for p in _of(plan, "aws:iam/rolePolicy:RolePolicy").values() for s in json.loads(p["policy"])["Statement"]]
    assert sorted(made) == sorted(sids) and len(sids) == 18
    patterns = sorted(json.loads(r["eventPattern"])["detail-type"][0] for r in _of(plan, "aws:cloudwatch/eventRule:EventRule").values())
    assert patterns == sorted(re.findall(r"detail-type:\n\s+- (.+)", TEMPLATE))
    [queue] = _of(plan, "aws:sqs/queue:Queue").values()
    assert queue["name"] == "karp-gpu" and queue["messageRetentionSeconds"] == 300 and queue["sqsManagedSseEnabled"] is True
    [association] = _of(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation").values()
    assert (association["namespace"], association["serviceAccount"]) == ("kube-system", "karpenter")
    [entry] = _of(plan, "aws:eks/accessEntry:AccessEntry").values()
    assert entry["type"] == "EC2_LINUX"
    release = next(r for r in _of(plan, tokens.HELM_RELEASE).values() if r["chart"].endswith("/karpenter"))
    assert (release["version"], release["namespace"]) == ("1.14.1", "kube-system")
    assert release["values"]["settings"]["clusterName"] == "karp-gpu"
    assert release["values"]["serviceAccount"] == {"name": "karpenter"}


def test_the_private_subnets_carry_the_tag_the_node_classes_select(plans):
    subnets = _of(plans[STACK], "aws:ec2/subnet:Subnet")
    tagged = sorted(n for n, s in subnets.items() if s["tags"].get("karpenter.sh/discovery") == "karp-gpu")
    assert tagged == ["karp-gpu-private-us-east-1a", "karp-gpu-private-us-east-1b"]
    for node_class in _of(plans[STACK], tokens.KARPENTER_EC2_NODE_CLASS).values():
        assert node_class["spec"]["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "karp-gpu"}}]


def test_a_job_on_a_pool_is_not_disrupted(plans):
    [job] = _of(plans[STACK], tokens.K8S_JOB).values()
    assert job["spec"]["template"]["metadata"]["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}
    [deployment] = _of(plans[STACK], tokens.K8S_DEPLOYMENT).values()
    assert "annotations" not in deployment["spec"]["template"]["metadata"]


def test_a_bottlerocket_pool_sizes_its_data_volume_beside_its_control_volume(stack_variant):
    """An EC2NodeClass's blockDeviceMappings replace the family's defaults: Bottlerocket keeps its OS
    on the control volume (Karpenter's 4Gi) and images and pods' data on /dev/xvdb, which takes the size."""
    def bottlerocket(c):
        c["gpufleet:eks"]["nodePools"][0]["amiFamily"] = "bottlerocket"
        c["gpufleet:eks"]["nodePools"][0]["amiVersion"] = "v1.50.0"

    plan = preview_plan("--config-file", str(stack_variant(bottlerocket, STACK)))
    classes = {r["metadata"]["name"]: r["spec"] for r in _of(plan, tokens.KARPENTER_EC2_NODE_CLASS).values()}
    assert classes["inference"]["amiSelectorTerms"] == [{"alias": "bottlerocket@v1.50.0"}]
    assert [(v["deviceName"], v["ebs"]["volumeSize"], v["ebs"]["encrypted"]) for v in classes["inference"]["blockDeviceMappings"]] == [
        ("/dev/xvda", "4Gi", True), ("/dev/xvdb", "200Gi", True)]
    assert [(v["deviceName"], v["ebs"]["volumeSize"], v.get("rootVolume")) for v in classes["train"]["blockDeviceMappings"]] == [("/dev/xvda", "500Gi", True)]
    assert karpenter_api.check(tokens.KARPENTER_EC2_NODE_CLASS, {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "x"},
                                                                 "spec": classes["inference"]}).problems == ()


def test_the_diff_names_a_pool_s_reach_and_the_nodes_an_ami_change_replaces(plans, stack_variant, tmp_path):
    def bumped(c):
        for pool in c["gpufleet:eks"]["nodePools"]:
            pool["amiVersion"] = "v20260801"
        c["gpufleet:eks"]["nodePools"][0]["maxNodes"] = 5

    head = preview_plan("--config-file", str(stack_variant(bumped, STACK)))
    (tmp_path / "base.json").write_text(json.dumps(plans[STACK]))
    (tmp_path / "head.json").write_text(json.dumps(head))
    code, out, _ = run_cli("diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"))
    assert code == 3
    assert "  - karpenter inference (g6e.16xlarge): max instances 4 -> 5" in out
    for pool in ("inference", "train"):
        assert (f"  - karpenter {pool}: its EC2NodeClass {pool} changed (spec.amiSelectorTerms[0].alias): "
                "Karpenter replaces every node of the pool, within its disruption budgets") in out


def _time_sliced(overlays: bool, jobs: bool = False):
    def edit(c):
        c["gpufleet:eks"]["kubernetes"] = {"nvidiaDevicePlugin": {"timeSlicingReplicas": 4}}
        if not jobs:  # the eight-GPU job: see the next test
            c["gpufleet:eks"]["workloads"].pop(1)
        if overlays:
            c["gpufleet:eks"]["karpenter"] = {"nodeOverlays": True}
    return edit


def test_time_slicing_over_provisions_until_node_overlays_correct_it(stack_variant):
    """Karpenter counts physical GPUs (karpenter-provider-aws#3376): three one-GPU pods on GPUs the
    plugin shares four ways launch three nodes. The NodeOverlays gpufleet writes (one per GPU count of
    the pools' types) give it the shared count: one node, and the Karpenter release turns the gate on."""
    plan = preview_plan("--config-file", str(stack_variant(_time_sliced(False), STACK)))
    [serve] = [p for p in plan["placement"]["pods"] if p["pod"] == "Deployment default/llm-serve"]
    assert serve["provisioned"][0]["nodes"] == 3
    assert any("NodePool inference launches 3 nodes where 1 hold these pods once the device plugin shares each GPU 4 ways" in n for n in serve["notes"])
    assert not _of(plan, tokens.KARPENTER_NODE_OVERLAY)

    corrected = preview_plan("--config-file", str(stack_variant(_time_sliced(True), STACK)))
    [serve] = [p for p in corrected["placement"]["pods"] if p["pod"] == "Deployment default/llm-serve"]
    assert serve["provisioned"][0]["nodes"] == 1 and not serve.get("notes")
    overlays = {o["metadata"]["name"]: o for o in _of(corrected, tokens.KARPENTER_NODE_OVERLAY).values()}
    p5 = sum(g["Count"] for g in MotoSnapshot().instance_types()["p5.48xlarge"]["GpuInfo"]["Gpus"])
    # The inference pool admits one-GPU types only, the training pool p5.48xlarge.
    assert sorted(overlays) == sorted(f"nvidia-time-slicing-{n}-gpu" for n in (1, p5))
    assert overlays["nvidia-time-slicing-8-gpu"]["spec"]["capacity"] == {"nvidia.com/gpu": "32"}
    for overlay in overlays.values():
        assert karpenter_api.check(tokens.KARPENTER_NODE_OVERLAY, overlay).problems == ()
    release = next(r for r in _of(corrected, tokens.HELM_RELEASE).values() if r["chart"].endswith("/karpenter"))
    assert release["values"]["settings"]["featureGates"] == {"nodeOverlay": True}


def test_a_time_sliced_cluster_refuses_a_pod_more_than_one_gpu_on_the_nodes_karpenter_launches(stack_variant):
    """The device plugin's time-slicing config (failRequestsGreaterThanOne) is the cluster's: the
    kubelet of a node Karpenter launches rejects the training job's eight-GPU request too."""
    from tests.conftest import spec_errors

    err = spec_errors(stack_variant(_time_sliced(False, jobs=True), STACK))
    assert "Job default/finetune: 2 of 2 Pending" in err
    assert "time-slice nvidia.com/gpu with failRequestsGreaterThanOne: the kubelet rejects a request of 8 (UnexpectedAdmissionError)" in err


def test_node_overlays_need_time_slicing(stack_variant):
    from tests.conftest import spec_errors

    err = spec_errors(stack_variant(lambda c: c["gpufleet:eks"].__setitem__("karpenter", {"nodeOverlays": True}), STACK))
    assert "gpufleet:eks.karpenter.nodeOverlays = true: NodeOverlays correct what Karpenter sees of time-sliced GPUs" in err
