"""src/gpufleet/policies/placement.py over gRPC: a violating and a clean fixture per rule, the advisory verdict
where the plan lacks what a judgement needs, and the levels compliance relies on."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ecs_registered
from tests.policy_helpers import findings, resource

NG = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
CLUSTER = "aws:eks/cluster:Cluster"
RELEASE = "kubernetes:helm.sh/v3:Release"
GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NO_SCHEDULE"}
TOLERATE_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def _group(name, instance_type, taints, *, nodes=2, labels=None, efa=0, capacity_block=False):
    interfaces = [{"deviceIndex": 0 if i == 0 else 1, "networkCardIndex": i, "interfaceType": "efa"} for i in range(efa)]
    template = resource(LT, f"{name}-lt", {"networkInterfaces": interfaces, **({"instanceType": instance_type} if capacity_block else {})})
    inputs = {
        "nodeGroupName": name,
        "amiType": "AL2023_x86_64_NVIDIA" if instance_type.startswith(("p", "g")) else "AL2023_x86_64_STANDARD",
        "taints": taints,
        "labels": labels or {},
        "scalingConfig": {"minSize": nodes, "desiredSize": nodes, "maxSize": nodes},
    }
    if not capacity_block:
        inputs["instanceTypes"] = [instance_type]
    return [template, resource(NG, name, inputs, launchTemplate=[template])]


def _deployment(name, resources, tolerations=(), replicas=1, selector=None):
    spec = {"containers": [{"name": "main", "image": "x:1", "resources": resources}], "tolerations": list(tolerations)}
    if selector:
        spec["nodeSelector"] = selector
    return resource("kubernetes:apps/v1:Deployment", name, {"metadata": {"name": name}, "spec": {"replicas": replicas, "template": {"spec": spec}}})


def test_coredns_on_only_tainted_groups_stays_pending(judge):
    cluster = resource(CLUSTER, "c", {"name": "c", "version": "1.33"})
    result = judge([cluster, *_group("gpu", "g5.xlarge", [GPU_TAINT])])
    [message] = findings(result, "k8s-pods-schedulable", "c")
    assert message.splitlines()[-1] == (
        "Deployment kube-system/coredns: 2 of 2 replicas stay Pending: 0/2 nodes are available: "
        "2 node(s) had untolerated taint(s)."
    )
    clean = judge([cluster, *_group("gpu", "g5.xlarge", [GPU_TAINT]), *_group("system", "m6i.large", [], labels={"gpufleet.io/node-role": "system"})])
    assert findings(clean, "k8s-pods-schedulable") == []


def test_a_plan_without_its_cluster_is_judged_advisory(judge):
    gpu_pod = _deployment("infer", {"limits": {"nvidia.com/gpu": 1}})  # tolerates nothing
    web = _deployment("web", {"limits": {"cpu": "1"}})
    other = judge([*_group("gpu", "g5.xlarge", [GPU_TAINT]), *_group("cpu", "m6i.large", []), web])
    assert findings(other, "placement-unverified", "web") == []  # scheduled, nothing assumed: nothing to say
    result = judge([*_group("gpu", "g5.xlarge", [GPU_TAINT]), gpu_pod])
    assert findings(result, "k8s-pods-schedulable") == []
    [message] = findings(result, "placement-unverified", "infer")
    assert message.splitlines()[-1] == (
        "Deployment default/infer: the pod stays Pending: 0/2 nodes are available: 2 node(s) had untolerated taint(s).; "
        "not certain (the plan joins an existing cluster: its other node groups and running pods are "
        "not in the plan): nvidia.com/gpu: no device plugin in the plan advertises it; assumed installed outside the plan"
    )


def test_requests_beyond_allocatable_are_pending(judge):
    cluster = resource(CLUSTER, "c", {"name": "c"})
    system = _group("system", "m6i.large", [])
    fits = _deployment("fits", {"limits": {"nvidia.com/gpu": 1}}, [TOLERATE_GPU])
    too_many = _deployment("greedy", {"limits": {"nvidia.com/gpu": 2}}, [TOLERATE_GPU])  # g5.xlarge has 1
    plugin = resource(RELEASE, "nvidia", {"chart": "nvidia-device-plugin", "version": "0.20.0", "values": {}})
    gpus = _group("gpu", "g5.xlarge", [GPU_TAINT], labels={"nvidia.com/gpu.present": "true"})
    result = judge([cluster, *system, *gpus, plugin, fits, too_many])
    assert findings(result, "k8s-pods-schedulable", "fits") == []
    [message] = findings(result, "k8s-pods-schedulable", "greedy")
    assert message.endswith("0/4 nodes are available: 4 Insufficient nvidia.com/gpu.")
    # Without the label the chart's affinity needs, the plugin runs nowhere and no GPU is advertised.
    unlabelled = judge([cluster, *system, *_group("gpu", "g5.xlarge", [GPU_TAINT]), plugin, fits])
    [message] = findings(unlabelled, "k8s-pods-schedulable", "fits")
    assert message.endswith("0/4 nodes are available: 4 Insufficient nvidia.com/gpu.")
    # With no plugin in the plan at all, the GPUs are taken on trust and the verdict is advisory.
    assert findings(judge([cluster, *system, *gpus, too_many]), "k8s-pods-schedulable") == []


def test_efa_is_advertised_only_where_the_efa_plugin_runs(judge):
    cluster = resource(CLUSTER, "c", {"name": "c"})
    workers = resource(
        "kubernetes:kubeflow.org/v2beta1:MPIJob",
        "nccl",
        {
            "metadata": {"name": "nccl"},
            "spec": {
                "mpiReplicaSpecs": {
                    "Worker": {
                        "replicas": 2,
                        "template": {"spec": {"tolerations": [TOLERATE_GPU], "containers": [{"name": "w", "resources": {"limits": {"vpc.amazonaws.com/efa": 32}}}]}},
                    }
                }
            },
        },
    )
    group = _group("p5", "p5.48xlarge", [GPU_TAINT], efa=32, capacity_block=True)

    def efa_release(values):
        return resource(RELEASE, "efa", {"chart": "aws-efa-k8s-device-plugin", "version": "v0.5.30", "values": values})

    tolerating = {"tolerations": [TOLERATE_GPU]}
    runs = judge([cluster, *_group("system", "m6i.large", []), *group, efa_release(tolerating), workers])
    assert findings(runs, "k8s-pods-schedulable", "nccl") == []
    elsewhere = {**tolerating, "supportedInstanceLabels": {"keys": ["node.kubernetes.io/instance-type"], "values": ["p4d.24xlarge"]}}
    missing = judge([cluster, *_group("system", "m6i.large", []), *group, efa_release(elsewhere), workers])
    [message] = findings(missing, "k8s-pods-schedulable", "nccl")
    assert "MPIJob default/nccl (Worker): 2 of 2 replicas stay Pending" in message and "4 Insufficient vpc.amazonaws.com/efa" in message
    # The plugin itself is named: it serves the p5 group but runs on none of its nodes.
    [message] = findings(missing, "k8s-pods-schedulable", "efa")
    assert message.splitlines()[-1] == (
        "DaemonSet kube-system/efa (aws-efa-k8s-device-plugin v0.5.30) runs on no node of group p5 (its taints, node "
        "selector or affinity exclude p5.48xlarge): vpc.amazonaws.com/efa is never advertised there"
    )


def _ecs(desired: int, memory: int = 1024) -> list[dict]:
    template = resource(LT, "lt", {"instanceType": "g5.12xlarge"})
    group = resource("aws:autoscaling/group:Group", "asg", {"minSize": 1, "maxSize": 4, "desiredCapacity": 1}, launchTemplate=[template])
    provider = resource(
        "aws:ecs/capacityProvider:CapacityProvider",
        "cp",
        {"name": "gpu", "autoScalingGroupProvider": {"managedScaling": {"status": "ENABLED"}}},
        autoScalingGroupProvider=[group],
    )
    containers = [{"name": "m", "image": "x:1", "memory": memory, "resourceRequirements": [{"type": "GPU", "value": "1"}]}]
    task = resource(
        "aws:ecs/taskDefinition:TaskDefinition",
        "serve",
        {"family": "serve", "containerDefinitions": json.dumps(containers),
         "placementConstraints": [{"type": "memberOf", "expression": "attribute:ecs.instance-type == g5.12xlarge"}]},
    )
    service = resource(
        "aws:ecs/service:Service", "svc", {"desiredCount": desired, "capacityProviderStrategies": [{"capacityProvider": "gpu"}]},
        taskDefinition=[task], capacityProviderStrategies=[provider],
    )
    return [template, group, provider, task, service]


def test_a_service_larger_than_its_capacity_is_never_placed(judge):
    assert findings(judge(_ecs(16)), "ecs-tasks-placeable") == []
    [message] = findings(judge(_ecs(17)), "ecs-tasks-placeable", "serve")
    assert message.splitlines()[-1] == "serve (service of 17 tasks) is never placed: desiredCount 17 needs 5 instances at 4 per instance; gpu has at most 4 (maxSize)"


def test_a_task_asking_for_installed_memory_is_never_placed(judge):
    [message] = findings(judge(_ecs(1, memory=196608)), "ecs-tasks-placeable", "serve")  # g5.12xlarge installs 196608 MiB
    assert "196608 MiB of memory per task, g5.12xlarge registers at most" in message


@pytest.mark.parametrize("policy, level", [("k8s-pods-schedulable", "mandatory"), ("ecs-tasks-placeable", "mandatory"), ("placement-unverified", "advisory")])
def test_levels_are_pinned(judge, policy, level):
    cluster = resource(CLUSTER, "c", {"name": "c"})
    plan = [*_ecs(17), cluster, *_group("gpu", "g5.xlarge", [GPU_TAINT]), _deployment("infer", {"limits": {"nvidia.com/gpu": 1}}, [TOLERATE_GPU], replicas=3)]
    result = judge(plan)
    found = [f for f in result.findings if f.policy == policy]
    assert found and {f.level for f in found} == {level}


def test_sizes_that_are_no_number_count_as_none(judge):
    """A plan may carry any text as a size: the API's model refuses it, and placement reads "lots" or
    "inf" as no node count (int(float("inf")) raised OverflowError, and the pack failed closed)."""
    cluster = resource(CLUSTER, "c", {"name": "c", "version": "1.33"})
    template, system = _group("system", "m6i.large", [], labels={"gpufleet.io/node-role": "system"})
    system["inputs"]["scalingConfig"] = {"minSize": "lots", "desiredSize": "inf", "maxSize": "-inf"}
    result = judge([cluster, *_group("gpu", "g5.xlarge", [GPU_TAINT]), template, system])
    [refused] = findings(result, "aws-api-model", "system")
    assert all(f"scalingConfig.{size}, value: {text}" in refused for size, text in (("minSize", "lots"), ("desiredSize", "inf"), ("maxSize", "-inf")))
    [message] = findings(result, "placement-unverified", "c")
    assert "Deployment kube-system/coredns is placeable only after scale-up" in message


def test_a_task_the_plan_cannot_decide_is_advisory(judge):
    # The service's capacity provider is another program's: it may run, so only advisory.
    template, group, provider, task, service = _ecs(1)
    service["propertyDependencies"]["capacityProviderStrategies"] = []
    service["dependencies"] = [task["urn"]]
    result = judge([task, service])
    assert findings(result, "ecs-tasks-placeable") == []
    [message] = findings(result, "placement-unverified", "serve")
    assert message.splitlines()[-1] == (
        "serve may never be placed: no capacity provider of this plan runs an instance type the task admits; "
        "its capacity is not in this plan (a launch type or another program's capacity provider)"
    )
    # Placed with a note (memory between the estimate and the most g5.12xlarge registers): the note alone.
    registered = ecs_registered("g5.12xlarge")
    result = judge(_ecs(1, memory=(registered["memoryEstimate"] + registered["memory"]) // 2))
    assert findings(result, "ecs-tasks-placeable") == []
    [message] = findings(result, "placement-unverified", "serve")
    assert message.splitlines()[-1].startswith("serve: memory is tight: 1 per instance fit the most g5.12xlarge may register")


def test_the_gpu_operators_controllers_need_an_untainted_aks_system_pool(judge):
    """aks-gpu-operator's plan: the operator's Deployment and node feature discovery's master and
    garbage collector run on the created cluster's default pool. Tainted CriticalAddonsOnly (AKS's
    onlyCriticalAddonsEnabled), that pool takes none of them, nor does the tainted GPU pool."""
    from tests.plan_edits import edited, golden

    def controllers(result):
        return sorted(m.splitlines()[-1].split(" (gpu-operator")[0] for m in findings(result, "k8s-pods-schedulable"))

    assert controllers(judge(golden("aks-gpu-operator")["resources"])) == []
    critical = edited("aks-gpu-operator", "aks", "kubernetesCluster:KubernetesCluster", lambda r: r["inputs"]["defaultNodePool"].update(onlyCriticalAddonsEnabled=True))
    assert controllers(judge(critical["resources"])) == [
        "Deployment gpu-operator/aks-gpu-operator-node-feature-discovery-gc",
        "Deployment gpu-operator/aks-gpu-operator-node-feature-discovery-master",
        "Deployment gpu-operator/gpu-operator",
    ]
    [message, *_] = findings(judge(critical["resources"]), "k8s-pods-schedulable")
    assert "0/5 nodes are available: 5 node(s) had untolerated taint(s)." in message


def test_a_default_pool_of_another_shape_is_refused_by_field(tmp_path):
    """What the placement reads of an AKS cluster's default pool is checked before it is read."""
    from tests.conftest import run_cli
    from tests.plan_edits import edited

    plan = edited("aks-gpu-operator", "aks", "kubernetesCluster:KubernetesCluster", lambda r: r["inputs"]["defaultNodePool"].update(nodeLabels=["a"]))
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    code, _, err = run_cli("check", str(path))
    assert code == 2 and "inputs.defaultNodePool.nodeLabels = [\"a\"]: must be an object" in err and "Traceback" not in err, err


def _fargate_service(cpu: str, memory: str) -> list[dict]:
    containers = [{"name": "w", "image": "x:1"}]
    task = resource(
        "aws:ecs/taskDefinition:TaskDefinition",
        "web",
        {"family": "web", "cpu": cpu, "memory": memory, "requiresCompatibilities": ["FARGATE"], "networkMode": "awsvpc",
         "containerDefinitions": json.dumps(containers)},
    )
    return [task, resource("aws:ecs/service:Service", "svc", {"desiredCount": 2, "launchType": "FARGATE"}, taskDefinition=[task])]


def test_a_fargate_task_is_placed_when_fargate_runs_its_size(judge):
    """Fargate is the capacity: a size of its table is placed, nothing to say; another is never placed,
    the rule named (aws-ts-wordpress-fargate-rds and container-aws-typescript in tests/corpus_ts)."""
    clean = judge(_fargate_service("512", "1024"))
    assert findings(clean, "ecs-tasks-placeable") == [] and findings(clean, "placement-unverified") == []
    [message] = findings(judge(_fargate_service("512", "128")), "ecs-tasks-placeable", "web")
    assert message.splitlines()[-1] == (
        "web (service of 2 tasks) is never placed: 128 MiB with 512 CPU units is not one of Fargate's task sizes "
        "(512 takes 1024, 2048, 3072 or 4096 MiB)"
    )


def test_a_pod_a_fargate_profile_selects_runs_there_unless_fargate_cannot(judge):
    cluster = resource(CLUSTER, "c", {"name": "c", "version": "1.33", "bootstrapSelfManagedAddons": False})
    profile = resource("aws:eks/fargateProfile:FargateProfile", "apps", {"clusterName": "c", "selectors": [{"namespace": "default"}]})
    web = _deployment("web", {"requests": {"cpu": "500m", "memory": "1Gi"}})
    clean = judge([cluster, profile, web])
    assert findings(clean, "k8s-pods-schedulable") == [] and findings(clean, "placement-unverified") == []
    gpu = _deployment("infer", {"limits": {"nvidia.com/gpu": 1}})
    [message] = findings(judge([cluster, profile, gpu]), "k8s-pods-schedulable", "infer")
    assert message.splitlines()[-1] == "Deployment default/infer: the pod stays Pending: Fargate profile apps: it requests nvidia.com/gpu, and Fargate offers no GPUs"
