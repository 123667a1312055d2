"""Fargate as capacity (curated `fargate`: the ECS and EKS guides' table): an ECS task launched on
Fargate is placed when its task-level CPU and memory are a pair Fargate runs, Pending naming the rule
when not; an EKS pod a Fargate profile of the plan selects runs on a Fargate node of its own, at the
size EKS rounds its requests up to. What the plan cannot tell stays advisory."""

from __future__ import annotations

import json

import pytest

from gpufleet.catalog import catalog
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.plans import placement as plan_placement
from gpufleet.plans.cost import plan_cost
from gpufleet.plans.index import from_plan

FARGATE = catalog.load().facts.fargate
TD = "aws:ecs/taskDefinition:TaskDefinition"
SERVICE = "aws:ecs/service:Service"
PROFILE = "aws:eks/fargateProfile:FargateProfile"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def _resource(type_: str, name: str, inputs: dict, deps: dict | None = None) -> dict:
    return {"urn": f"urn:pulumi:s::p::{type_}::{name}", "type": type_, "name": name, "inputs": inputs, "propertyDependencies": deps or {}}


def _placed(*resources: dict) -> dict:
    return plan_placement.placement(plan_placement.from_plan({"resources": list(resources)})).as_dict()


def _service(cpu: object, memory: object, desired: int = 2, **service: object) -> tuple[dict, dict]:
    inputs = {"family": "app", "requiresCompatibilities": ["FARGATE"], "networkMode": "awsvpc",
              "containerDefinitions": json.dumps([{"name": "web", "image": "nginx"}])}
    inputs |= {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    td = _resource(TD, "app", inputs)
    return td, _resource(SERVICE, "svc", {"desiredCount": desired, "launchType": "FARGATE", **service}, {"taskDefinition": [td["urn"]]})


@pytest.mark.parametrize("cpu, memory", [("256", "512"), (1024, 8192), ("1 vCPU", "2GB"), (".5 vcpu", "4 GB"), ("16384", "122880")])
def test_a_task_of_a_size_fargate_runs_is_placed_there(cpu, memory):
    """The task's own cpu and memory, in units and MiB or in text as ECS converts it (botocore's
    RegisterTaskDefinition): one task per Fargate VM, as many as the service asks."""
    [task] = _placed(*_service(cpu, memory, desired=3))["tasks"]
    assert (task["status"], task["capacityProvider"], task["perInstance"], task["instancesNeeded"]) == ("placed", "FARGATE", 1, 3)
    assert "notes" not in task and "reason" not in task


@pytest.mark.parametrize(
    "cpu, memory, reason",
    [
        ("256", "128", "128 MiB with 256 CPU units is not one of Fargate's task sizes (256 takes 512, 1024 or 2048 MiB)"),
        ("8192", "21504", "21504 MiB with 8192 CPU units is not one of Fargate's task sizes (8192 takes 16384 to 61440 MiB in steps of 4096)"),
        ("3072", "8192", "3072 CPU units is not one of Fargate's task sizes (its CPU units: 256, 512, 1024, 2048, 4096, 8192, 16384)"),
        (None, "512", "Fargate needs the task's cpu and memory at task level; the task definition gives no cpu"),
    ],
)
def test_a_task_of_another_size_stays_pending_naming_fargate_s_sizes(cpu, memory, reason):
    [task] = _placed(*_service(cpu, memory))["tasks"]
    assert (task["status"], task["capacityProvider"], task["instancesNeeded"], task["reason"]) == ("pending", "FARGATE", 0, reason)
    assert "notes" not in task  # decided by the plan: the pack's ecs-tasks-placeable reports it


def test_what_fargate_runs_depends_on_the_os_and_the_platform_version():
    """A quarter vCPU is Linux's only; 8 and 16 vCPU need Linux platform version 1.4.0 (LATEST is newer)."""
    td, service = _service("256", "512")
    td["inputs"]["runtimePlatform"] = {"operatingSystemFamily": "WINDOWS_SERVER_2022_CORE"}
    [task] = _placed(td, service)["tasks"]
    assert task["reason"] == "Fargate runs 256 CPU units on Linux only, not Windows"
    for version, status in (("1.3.0", "pending"), ("1.4.0", "placed"), ("LATEST", "placed")):
        [task] = _placed(*_service("8192", "16384", platformVersion=version))["tasks"]
        assert task["status"] == status, version
    assert task["status"] == "placed"
    [task] = _placed(*_service("8192", "16384", platformVersion="1.3.0"))["tasks"]
    assert task["reason"] == "Fargate runs 8192 CPU units from Linux platform version 1.4.0; the service asks for 1.3.0"


def test_a_task_asking_for_gpus_or_devices_is_pending_on_fargate():
    td, service = _service("4096", "8192")
    td["inputs"]["containerDefinitions"] = json.dumps([{"name": "m", "image": "x", "resourceRequirements": [{"type": "GPU", "value": "1"}]}])
    [task] = _placed(td, service)["tasks"]
    assert task["reason"] == "the task asks for GPUs, which Fargate does not take (gpu is not valid in a Fargate task definition)"
    td["inputs"]["containerDefinitions"] = json.dumps([{"name": "m", "image": "x", "linuxParameters": {"devices": [{"hostPath": "/dev/neuron0"}]}}])
    [task] = _placed(td, service)["tasks"]
    assert task["reason"] == "the task maps host devices, which Fargate does not take (linuxParameters.devices)"


def test_a_size_known_only_after_apply_is_advisory():
    [task] = _placed(*_service(UNKNOWN, UNKNOWN))["tasks"]
    assert (task["status"], task["capacityProvider"]) == ("placed", "FARGATE")
    assert task["notes"] == ["its task-level cpu and memory are known only after apply: whether Fargate runs that size is not judged"]


def test_a_strategy_of_fargate_s_providers_is_fargate_and_one_of_instances_is_not():
    td, service = _service("512", "1024")
    del service["inputs"]["launchType"]
    service["inputs"]["capacityProviderStrategies"] = [{"capacityProvider": "FARGATE", "weight": 1}, {"capacityProvider": "FARGATE_SPOT", "weight": 3}]
    [task] = _placed(td, service)["tasks"]
    assert (task["status"], task["capacityProvider"]) == ("placed", "FARGATE, FARGATE_SPOT")
    service["inputs"]["capacityProviderStrategies"] = [{"capacityProvider": "FARGATE", "weight": 1}, {"capacityProvider": "gpu", "weight": 1}]
    [task] = _placed(td, service)["tasks"]
    assert task["status"] == "pending" and task["capacityProvider"] is None


def test_a_fargate_task_definition_no_service_runs_is_judged_on_fargate_advisory():
    td, _ = _service("256", "128")
    [task] = _placed(td)["tasks"]
    assert (task["status"], task["capacityProvider"]) == ("pending", "FARGATE")
    assert task["notes"] == ["no service of the plan runs it: judged as a Fargate task, as its requiresCompatibilities asks"]


def test_the_cost_names_fargate_unpriced():
    """The price snapshot holds EC2's prices: Fargate's tasks and pods are named, not passed over."""
    resources = list(_service("512", "1024", desired=4))
    placement = _placed(*resources)
    cost = plan_cost(from_plan({"resources": resources}), placement)
    [entry] = cost["unpriced"]
    assert (entry["group"], entry["instanceType"]) == ("ECS on FARGATE", "AWS Fargate") and entry["reason"].endswith("(4 tasks)")
    assert cost["complete"] is False


# --- EKS pods a Fargate profile selects -------------------------------------------------------------


CLUSTER = _resource("aws:eks/cluster:Cluster", "c", {"name": "c", "version": "1.33", "bootstrapSelfManagedAddons": False})


def _profile(name: str, *selectors: dict) -> dict:
    return _resource(PROFILE, name, {"clusterName": "c", "fargateProfileName": name, "selectors": list(selectors)})


def _deployment(name: str, namespace: str, requests: dict | None = None, labels: dict | None = None, replicas: int = 2, kind: str = "Deployment") -> dict:
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": requests or {}}}]}
    body = {"template": {"metadata": {"labels": labels or {}}, "spec": spec}}
    if kind == "Deployment":
        body["replicas"] = replicas
    return _resource(f"kubernetes:apps/v1:{kind}", name, {"metadata": {"name": name, "namespace": namespace}, "spec": body})


def _pod(placed: dict, name: str) -> dict:
    return next(p for p in placed["pods"] if p["pod"].endswith(f"/{name}"))


def test_a_pod_a_profile_selects_runs_on_fargate_at_the_size_eks_rounds_it_to():
    """EKS's example (fargate-pod-configuration.adoc): 1 vCPU and 8 GB, plus the 256 MB Fargate adds,
    is provisioned as 2 vCPU and 9 GB; no requests at all give the smallest size. Each replica on a
    Fargate node of its own, never on the plan's nodes."""
    placed = _placed(
        CLUSTER,
        _profile("apps", {"namespace": "apps"}),
        _deployment("big", "apps", {"cpu": "1", "memory": "8Gi"}, replicas=3),
        _deployment("small", "apps"),
    )
    big, small = _pod(placed, "big"), _pod(placed, "small")
    assert (big["status"], big["nodeGroups"]) == ("scheduled", {"Fargate profile apps": {"perNode": 1, "placed": 3}})
    assert big["fargate"] == {"profile": "apps", "capacityProvisioned": "2vCPU 9GB"}
    assert small["fargate"]["capacityProvisioned"] == "0.25vCPU 0.5GB"
    assert placed["gaps"] == [] and "notes" not in big
    [entry] = plan_cost([], placed)["unpriced"]
    assert entry["group"] == "Fargate profile apps" and entry["reason"].endswith("(5 pods)")


def test_a_selector_matches_the_namespace_and_every_label_with_wildcards():
    profile = _profile("web", {"namespace": "prod-*", "labels": {"tier": "web?"}})
    placed = _placed(
        profile,
        _deployment("front", "prod-eu", labels={"tier": "web1", "app": "x"}),
        _deployment("other", "prod-eu", labels={"tier": "web"}),  # ? is exactly one character
        _deployment("elsewhere", "dev", labels={"tier": "web1"}),
    )
    assert _pod(placed, "front")["fargate"]["profile"] == "web"
    for name in ("other", "elsewhere"):  # no node in the plan either: Pending, as the scheduler says
        assert _pod(placed, name)["status"] == "pending" and "fargate" not in _pod(placed, name)


def test_of_several_profiles_the_first_by_name_takes_the_pod_unless_its_label_names_one():
    profiles = [_profile("zeta", {"namespace": "apps"}), _profile("alpha", {"namespace": "apps"})]
    placed = _placed(*profiles, _deployment("a", "apps"), _deployment("b", "apps", labels={FARGATE.pods.profile_label: "zeta"}))
    assert (_pod(placed, "a")["fargate"]["profile"], _pod(placed, "b")["fargate"]["profile"]) == ("alpha", "zeta")


def test_a_pod_fargate_cannot_run_stays_pending_naming_why():
    placed = _placed(
        _profile("ml", {"namespace": "ml"}),
        _deployment("gpu", "ml", {"nvidia.com/gpu": "1"}),
        _deployment("huge", "ml", {"cpu": "16", "memory": "120Gi"}),  # 120 GiB and the 256 MiB: past the largest size
    )
    gpu, huge = _pod(placed, "gpu"), _pod(placed, "huge")
    assert (gpu["status"], gpu["pending"], gpu["message"]) == ("pending", 2, "Fargate profile ml: it requests nvidia.com/gpu, and Fargate offers no GPUs")
    assert huge["message"] == (
        "Fargate profile ml: it requests 16 vCPU and 122880 MiB, 123136 MiB with what Fargate adds: more than Fargate's largest size, 16vCPU 120GB"
    )


def test_daemonsets_and_pods_the_plan_cannot_match_stay_with_the_nodes():
    """DaemonSets do not run on Fargate; a selector asking for labels of a pod whose labels the plan
    does not give (a chart's) leaves it to the nodes, its Pending verdict advisory, saying why."""
    profile = _profile("system", {"namespace": "kube-system"}, {"namespace": "karpenter", "labels": {"app.kubernetes.io/name": "karpenter"}})
    karpenter = _resource("kubernetes:helm.sh/v3:Release", "karpenter", {"chart": "oci://public.ecr.aws/karpenter/karpenter", "namespace": "karpenter", "values": {}})
    placed = _placed(profile, _deployment("agent", "kube-system", kind="DaemonSet"), karpenter)
    assert _pod(placed, "agent")["status"] == "daemon" and "fargate" not in _pod(placed, "agent")
    controller = next(p for p in placed["pods"] if p["pod"].startswith("Deployment karpenter/"))
    assert controller["status"] == "pending"
    assert any(n.startswith("Fargate profiles of the plan select namespace karpenter: system (labels {'app.kubernetes.io/name': 'karpenter'})") for n in controller["notes"])


def test_a_namespace_known_only_after_apply_is_not_matched():
    placed = _placed(_profile("p", {"namespace": UNKNOWN}), _deployment("web", "apps"))
    web = _pod(placed, "web")
    assert web["status"] == "pending" and "fargate" not in web
    assert any("whether they match this one the plan does not tell" in n for n in web["notes"])


def test_labels_known_only_after_apply_leave_the_match_open():
    deployment = _deployment("web", "apps")
    deployment["inputs"]["spec"]["template"]["metadata"]["labels"] = UNKNOWN
    placed = _placed(_profile("p", {"namespace": "apps", "labels": {"tier": "web"}}), deployment)
    web = _pod(placed, "web")
    assert web["status"] == "pending" and "fargate" not in web
    assert any(n.startswith("Fargate profiles of the plan select namespace apps: p (labels {'tier': 'web'})") for n in web["notes"])


def test_the_placement_table_says_fargate_runs_each_task_and_pod_on_its_own():
    from gpufleet.cli.report import _placement_table

    placed = _placed(*_service("512", "1024", desired=3), CLUSTER, _profile("apps", {"namespace": "apps"}), _deployment("web", "apps"))
    lands = {cells[0]: cells[2] for cells, _ in _placement_table(placed["pods"], placed["tasks"]).rows}
    assert lands["task app"] == "FARGATE: one task per Fargate VM, 3 tasks needed"
    assert lands["Deployment apps/web"] == "Fargate profile apps: 1 per node, 2 placed\na Fargate node each, of 0.25vCPU 0.5GB"
