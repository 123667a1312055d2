"""The offline preview of the shipped ACK stack: golden plan, node pools in pulumi-alicloud's input
shape, sharing labels, replacement on relabelling, the sharing component, the workloads' pod
templates (Kubernetes schema) and the summary's fit per GPU and per node."""

from __future__ import annotations

import inspect
import json

import pulumi_alicloud as alicloud
import pytest
from pydantic.alias_generators import to_snake

from gpufleet.catalog import catalog
from tests.conftest import check_golden, inputs_by_name, run_cli, shipped_plan

STACK = "ack-shared-gpu"
POOL = "alicloud:cs/nodePool:NodePool"


@pytest.fixture(scope="module")
def plan() -> dict:
    return shipped_plan(STACK)


def test_golden_plan(plan):
    check_golden(plan, STACK)


def _params(args_class) -> set[str]:
    return set(inspect.signature(args_class.__init__).parameters) - {"__self__", "self"}


def test_node_pools_use_only_inputs_pulumi_alicloud_takes(plan):
    pools = inputs_by_name(plan, POOL)
    assert set(pools) == {"ack-v100-core-mem", "ack-t4-mem"}
    for inputs in pools.values():
        assert {to_snake(k) for k in inputs} <= _params(alicloud.cs.NodePoolArgs), inputs
        for label in inputs["labels"]:
            assert set(label) <= _params(alicloud.cs.NodePoolLabelArgs)
        for taint in inputs.get("taints", []):
            assert {to_snake(k) for k in taint} <= _params(alicloud.cs.NodePoolTaintArgs)
    scaling = pools["ack-v100-core-mem"]["scalingConfig"]
    assert {to_snake(k) for k in scaling} <= _params(alicloud.cs.NodePoolScalingConfigArgs)
    assert scaling == {"enable": True, "minSize": 1, "maxSize": 4} and "desiredSize" not in pools["ack-v100-core-mem"]
    # desired_size is a string in pulumi-alicloud 4.x.
    assert pools["ack-t4-mem"]["desiredSize"] == "2" and "scalingConfig" not in pools["ack-t4-mem"]


def test_pools_are_labelled_for_their_sharing_mode(plan):
    pools = inputs_by_name(plan, POOL)
    labels = {name: {l["key"]: l["value"] for l in p["labels"]} for name, p in pools.items()}
    assert labels["ack-v100-core-mem"] == {
        "ack.node.gpu.schedule": "core_mem", "ack.node.gpu.placement": "binpack", "gpufleet.io/node-pool": "v100-core-mem",
    }
    assert labels["ack-t4-mem"] == {"ack.node.gpu.schedule": "cgpu", "gpufleet.io/node-pool": "t4-mem"}
    assert pools["ack-v100-core-mem"]["taints"] == [{"key": "gpufleet.io/shared-gpu", "value": "core-mem", "effect": "NoSchedule"}]
    assert all(p["clusterId"] == "c0123456789abcdef0123456789abcdef" for p in pools.values())


def test_relabelling_replaces_the_pool(plan):
    """ACK labels a node when it joins (004): a change of labels replaces the pool, old one first."""
    for r in plan["resources"]:
        if r["type"] == POOL:
            assert r["replaceOnChanges"] == ["labels"] and r["deleteBeforeReplace"] is True
        else:
            assert "replaceOnChanges" not in r


def test_sharing_component_is_the_chart_004_names_at_the_stacks_version(plan):
    [release] = inputs_by_name(plan, "kubernetes:helm.sh/v3:Release").values()
    assert release["chart"] == catalog.load().facts.ack.sharing_chart == "ack-ai-installer"
    assert release["version"] == "1.2.0" and release["repositoryOpts"] == {"repo": "https://charts.example.internal/ack"}
    [provider] = inputs_by_name(plan, "pulumi:providers:kubernetes").values()
    assert provider["context"] == "ack-shared-gpu" and "kubeconfig" not in provider


def test_workloads_ask_for_gpu_slices_on_their_pool(plan):
    import kubernetes_validate

    job = inputs_by_name(plan, "kubernetes:batch/v1:Job")["ack-cuda-sample"]
    deployment = inputs_by_name(plan, "kubernetes:apps/v1:Deployment")["ack-embeddings"]
    job_pod, svc_pod = job["spec"]["template"]["spec"], deployment["spec"]["template"]["spec"]
    assert job_pod["containers"][0]["resources"] == {"limits": {"aliyun.com/gpu-mem": "2", "aliyun.com/gpu-core.percentage": "30"}}
    assert job_pod["nodeSelector"] == {"ack.node.gpu.schedule": "core_mem", "gpufleet.io/node-pool": "v100-core-mem"}
    assert job_pod["tolerations"] == [{"key": "gpufleet.io/shared-gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert job["spec"]["parallelism"] == job["spec"]["completions"] == 3 and job_pod["restartPolicy"] == "Never"
    assert svc_pod["containers"][0]["resources"] == {"limits": {"aliyun.com/gpu-mem": "4"}} and "tolerations" not in svc_pod
    assert deployment["spec"]["replicas"] == 6
    for kind, api, inputs in (("Job", "batch/v1", job), ("Deployment", "apps/v1", deployment)):
        kubernetes_validate.validate({"apiVersion": api, "kind": kind, **inputs}, "1.28", strict=True)


def test_summary_fits_pods_per_gpu_and_per_node(plan):
    pools = {p["pool"]: p for p in plan["summary"]["ackPools"]}
    v100, t4 = pools["v100-core-mem"], pools["t4-mem"]
    # 16,160 MiB -> 15 GiB; 2 GiB and 30 %: compute binds (100 // 30 = 3), 4 GPUs per node.
    assert (v100["gpusPerNode"], v100["gpuMemGiBPerGpu"]) == (4, 15)
    assert v100["sizes"] == [{"gpuMemGiB": 2, "gpuCorePercentage": 30, "podsPerGpu": 3, "podsPerNode": 12, "workloads": ["cuda-sample"]}]
    # 15,109 MiB -> 14 GiB; 4 GiB: memory binds (14 // 4 = 3).
    assert (t4["gpusPerNode"], t4["gpuMemGiBPerGpu"]) == (4, 14)
    assert t4["sizes"][0]["podsPerGpu"] == 3 and t4["sizes"][0]["podsPerNode"] == 12
    assert t4["gpus"] == {"min": 8, "desired": 8, "max": 8} and v100["nodes"] == {"min": 1, "max": 4}
    assert "replaces this pool" in v100["replacement"]
    code, out, _ = run_cli("preview", STACK)
    assert code == 0 and "ACK shared-GPU pools" in out and "replaces this pool" in out


def test_an_ack_only_stack_needs_no_aws_region(plan):
    assert not any(r["type"].startswith(("aws:", "pulumi:providers:aws")) for r in plan["resources"])
    [provider] = inputs_by_name(plan, "pulumi:providers:alicloud").values()
    assert provider["region"] == "cn-hangzhou"
    assert plan["policy"]["violations"] == []


def test_json_plan_round_trips_through_check(plan, tmp_path):
    path = tmp_path / "ack.json"
    path.write_text(json.dumps(plan))
    code, out, err = run_cli("check", str(path), "--json")
    assert code == 0, err
    assert json.loads(out)["violations"] == []


def test_one_gib_pods_fill_a_gpu_by_memory(stack_variant):
    # The T4 pool's job at 1 GiB: memory alone binds, one pod per advertised GiB of each GPU.
    ack = catalog.load().facts.ack
    gib = ack.gpu_families["gn6i"].memory_mib // 1024
    gpus = ack.gpu_instance_types["ecs.gn6i-c24g1.24xlarge"]
    path = stack_variant(lambda c: c["gpufleet:ack"]["workloads"][1].__setitem__("gpuMemGib", 1), STACK)
    code, out, err = run_cli("preview", "--config-file", str(path), "--no-policy", "--json")
    assert code == 0, err
    t4 = {p["pool"]: p for p in json.loads(out)["summary"]["ackPools"]}["t4-mem"]
    assert t4["instanceTypes"] == ["ecs.gn6i-c24g1.24xlarge"]
    assert t4["sizes"][0]["gpuMemGiB"] == 1 and (t4["sizes"][0]["podsPerGpu"], t4["sizes"][0]["podsPerNode"]) == (gib, gib * gpus)
