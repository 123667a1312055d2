"""A plan's placement block is read from its resources alone (so `gpufleet check` of a `pulumi
preview --json` places the same pods and tasks): each shipped stack's golden plan, read back, gives
the placement its preview wrote: node groups and pools with what they advertise, every pod and task,
and the gaps. Milliseconds per stack; the placement doors and the pack's policies are tested apart."""

from __future__ import annotations

import copy
import json

import pytest

from gpufleet.catalog import catalog
from gpufleet.plans import placement as plan_placement
from tests.conftest import ROOT, ecs_registered
from tests.plan_edits import golden

STACKS = sorted(p.name.removesuffix(".plan.json") for p in (ROOT / "tests" / "golden").glob("*.plan.json"))


@pytest.mark.parametrize("stack", STACKS)
def test_a_plans_resources_read_back_to_its_placement(stack):
    plan = golden(stack)
    assert plan_placement.placement(plan_placement.from_plan({"resources": plan["resources"]})).as_dict() == plan["placement"]


def test_every_cloud_is_read_back():
    kinds = {stack.split("-", 1)[0] for stack in STACKS}
    assert kinds == {"ack", "aks", "ecs", "eks", "gke"}


def _placed(plan: dict) -> dict:
    return plan_placement.placement(plan_placement.from_plan({"resources": plan["resources"]})).as_dict()


def _nodes(plan: dict, group: str) -> dict:
    return next(g for g in _placed(plan)["nodeGroups"] if g["nodeGroup"] == group)


def _edit(stack: str, name: str, type_suffix: str, edit) -> dict:
    from tests.plan_edits import edited

    return edited(stack, name, type_suffix, edit)


def _pop(*path):
    def edit(r):
        target = r["inputs"]
        for key in path[:-1]:
            target = target[key]
        target.pop(path[-1])

    return edit


def _gke_fixed(**counts):
    def edit(r):
        r["inputs"].pop("autoscaling")
        r["inputs"].update(counts)

    return edit


def _aks_fixed(r):
    r["inputs"]["autoScalingEnabled"] = False
    r["inputs"].pop("nodeCount", None)


GKE = ("gke-l4-timeshare", "inference-l4-shared", "container/nodePool:NodePool", "l4-shared")
AKS = ("aks-a100-mig", "aks-a100mig", "KubernetesClusterNodePool", "a100mig")
ACK = ("ack-shared-gpu", "ack-v100-core-mem", "cs/nodePool:NodePool", "v100-core-mem")
EKS = ("eks-g5-timeslice", "inference-g5", "nodeGroup:NodeGroup", "g5")


# A foreign plan may leave sizes out: what the API defaults them to. (GKE counts per zone: 2 zones.)
@pytest.mark.parametrize(
    "where, edit, nodes",
    [
        (GKE, _pop("autoscaling", "maxNodeCount"), {"min": 2, "desired": 2, "max": 2}),
        (GKE, _gke_fixed(), {"min": 2, "desired": 2, "max": 2}),  # no nodeCount, no initialNodeCount: 1 per zone
        (GKE, _gke_fixed(initialNodeCount=3), {"min": 6, "desired": 6, "max": 6}),
        (GKE, _pop("nodeLocations"), {"min": 1, "desired": 1, "max": 4}),  # the pool's own count, one zone at least
        (AKS, _pop("maxCount"), {"min": 2, "desired": 2, "max": 1}),
        (AKS, _aks_fixed, {"min": 1, "desired": 1, "max": 1}),
        (ACK, _pop("scalingConfig", "maxSize"), {"min": 1, "desired": 1, "max": 1}),
        (EKS, _pop("scalingConfig", "maxSize"), {"min": 1, "desired": 2, "max": 1}),
    ],
    ids=["gke-max", "gke-fixed", "gke-initial", "gke-zones", "aks-max", "aks-fixed", "ack-max", "eks-max"],
)
def test_sizes_a_plan_leaves_out(where, edit, nodes):
    stack, name, suffix, group = where
    assert _nodes(_edit(stack, name, suffix, edit), group)["nodes"] == nodes


def test_a_gke_sharing_config_without_clients_shares_nothing():
    plan = _edit(*GKE[:3], _pop("nodeConfig", "guestAccelerators", 0, "gpuSharingConfig", "maxSharedClientsPerGpu"))
    assert _nodes(plan, "l4-shared")["allocatable"] == {"nvidia.com/gpu": "1"}
    # One client per GPU, as the node's label says: a workload that selects it is placed (its replicas
    # on more nodes than the shared GPUs needed).
    for r in plan["resources"]:
        if r["name"] == "inference-llm-serve" and r["type"].endswith("Deployment"):
            r["inputs"]["spec"]["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-max-shared-clients-per-gpu"] = "1"
    assert _pod(plan, "Deployment default/llm-serve")["status"] == "after-scale-up"


def test_a_gke_machine_type_with_bundled_gpus_needs_no_accelerator_block():
    plan = _edit("gke-a100-mig", "training-a100-mig", "container/nodePool:NodePool", lambda r: r["inputs"]["nodeConfig"].pop("guestAccelerators"))
    assert _nodes(plan, "a100-mig")["instanceType"] == "a2-highgpu-2g"


def test_a_group_of_an_unknown_type_is_a_gap_and_the_others_are_placed():
    plan = _edit("eks-p5-efa", "p5-train-p5", "launchTemplate:LaunchTemplate", lambda r: r["inputs"].update(instanceType="p5.99xlarge"))
    placed = _placed(plan)
    assert [g["nodeGroup"] for g in placed["nodeGroups"]] == ["system-*"]
    assert placed["gaps"] == ["node group 'p5-train-p5': its instance type is not one known type"]


def _with_addon(plan: dict, name: str, values) -> dict:
    cluster = next(r for r in plan["resources"] if r["type"] == "aws:eks/cluster:Cluster")
    addon = {**cluster, "urn": cluster["urn"].replace("aws:eks/cluster:Cluster::", "aws:eks/addon:Addon::") + f"-{name}",
             "type": "aws:eks/addon:Addon", "name": f"{cluster['name']}-{name}",
             "inputs": {"addonName": name, "clusterName": cluster["name"], **({"configurationValues": values} if values is not None else {})}}
    plan["resources"].append(addon)
    return plan


def _coredns(plan: dict) -> dict:
    return next(p for p in _placed(plan)["pods"] if p["pod"] == "Deployment kube-system/coredns")


@pytest.mark.parametrize("values, replicas", [('{"replicaCount": 3}', 3), ("not json", 2), ('["a list"]', 2), (None, 2)])
def test_an_eks_addon_resource_configures_its_pods(values, replicas):
    assert _coredns(_with_addon(golden("eks-p5-efa"), "coredns", values))["replicas"] == replicas


def test_a_cluster_without_its_bootstrapped_addons_has_no_coredns():
    plan = golden("eks-p5-efa")
    next(r for r in plan["resources"] if r["type"] == "aws:eks/cluster:Cluster")["inputs"]["bootstrapSelfManagedAddons"] = False
    assert not any(p["pod"] == "Deployment kube-system/coredns" for p in _placed(plan)["pods"])
    assert _coredns(golden("eks-p5-efa"))["status"] == "scheduled"


def test_two_clusters_are_a_gap():
    plan = golden("eks-p5-efa")
    cluster = next(r for r in plan["resources"] if r["type"] == "aws:eks/cluster:Cluster")
    plan["resources"].append({**cluster, "urn": cluster["urn"] + "-second", "name": "second"})
    assert "the plan has several clusters: pods are judged against every node group" in _placed(plan)["gaps"]


def test_an_n1_pool_counts_the_gpus_it_attaches():
    def n1(r):
        r["inputs"]["nodeConfig"]["machineType"] = "n1-standard-16"
        accelerator = r["inputs"]["nodeConfig"]["guestAccelerators"][0]
        accelerator.update(type="nvidia-tesla-t4", count=2)

    clients = golden_inputs_clients()
    assert _nodes(_edit(*GKE[:3], n1), "l4-shared")["allocatable"] == {"nvidia.com/gpu": str(2 * clients)}


def golden_inputs_clients() -> int:
    pool = next(r for r in golden(GKE[0])["resources"] if r["name"] == GKE[1] and r["type"].endswith(GKE[2]))
    return pool["inputs"]["nodeConfig"]["guestAccelerators"][0]["gpuSharingConfig"]["maxSharedClientsPerGpu"]


def _pod(plan: dict, name: str) -> dict:
    return next(p for p in _placed(plan)["pods"] if p["pod"] == name)


def test_a_pools_own_taints_and_labels_are_what_pods_meet():
    # AKS: a taint the workload does not tolerate leaves it Pending.
    plan = _edit(*AKS[:3], lambda r: r["inputs"]["nodeTaints"].append("team=ml:NoSchedule"))
    assert _pod(plan, "Deployment default/embeddings")["status"] == "pending"
    # GKE: a workload that selects a label of the pool's config is scheduled there, and only there.
    plan = _edit(*GKE[:3], lambda r: r["inputs"]["nodeConfig"].update(labels={"team": "ml"}))
    for r in plan["resources"]:
        if r["name"] == "inference-llm-serve" and r["type"].endswith("Deployment"):
            r["inputs"]["spec"]["template"]["spec"]["nodeSelector"]["team"] = "ml"
    assert _pod(plan, "Deployment default/llm-serve")["status"] == "scheduled"
    plan = _edit(*GKE[:3], lambda r: r["inputs"]["nodeConfig"].update(labels={"team": "other"}))
    for r in plan["resources"]:
        if r["name"] == "inference-llm-serve" and r["type"].endswith("Deployment"):
            r["inputs"]["spec"]["template"]["spec"]["nodeSelector"]["team"] = "ml"
    assert _pod(plan, "Deployment default/llm-serve")["status"] == "pending"


def _task(plan: dict, name: str) -> dict:
    return next(t for t in _placed(plan)["tasks"] if t["task"] == name)


def _serve_ports(mappings: list[dict], network: str | None = None):
    def edit(r):
        containers = json.loads(r["inputs"]["containerDefinitions"])
        containers[0]["portMappings"] = mappings
        r["inputs"]["containerDefinitions"] = json.dumps(containers)
        if network is not None:
            r["inputs"]["networkMode"] = network

    return _edit("ecs-gpu", "ml-gpu-llm-serve", "taskDefinition:TaskDefinition", edit)


@pytest.mark.parametrize(
    "mappings, network, per_instance",
    [
        ([], None, 4),  # 1 GPU each on 4: four per instance
        ([{"containerPort": 8000, "hostPort": 8000}], None, 1),  # a fixed host port: one per instance
        ([{"containerPort": 8000}], None, 4),  # bridge: a dynamic host port
        ([{"containerPort": 8000}], "host", 1),  # host networking: the container port is the host's
        ([{"containerPort": 8000, "hostPort": 8000, "protocol": "udp"}, {"containerPort": 8000, "hostPort": 8000}], None, 1),
        ([{"containerPort": 8000, "hostPort": 8000}], "awsvpc", 4),  # each task its own interface
    ],
)
def test_host_ports_hold_one_task_per_instance(mappings, network, per_instance):
    assert _task(_serve_ports(mappings, network), "llm-serve")["perInstance"] == per_instance



def test_a_resource_without_a_name_is_named_by_its_urn():
    plan = golden("ecs-gpu")
    for r in plan["resources"]:
        if r["name"] == "ml-gpu-llm-serve" and r["type"].endswith("taskDefinition:TaskDefinition"):
            del r["name"]
            del r["inputs"]["family"]
    assert _task(plan, "ml-gpu-llm-serve")["status"] == "placed"


# ECS: what a task definition and its service say, read from a plan gpufleet did not write.


def _containers(edit):
    """A task definition edit of its container definitions (JSON text, as the provider takes them)."""

    def apply(r):
        containers = json.loads(r["inputs"]["containerDefinitions"])
        edit(containers[0])
        r["inputs"]["containerDefinitions"] = json.dumps(containers)

    return apply


def _inputs(**values):
    return lambda r: r["inputs"].update(values)


def _find(plan: dict, name: str, type_suffix: str) -> dict:
    [r] = [r for r in plan["resources"] if r["name"] == name and r["type"].endswith(type_suffix)]
    return r


def test_a_mapped_neuron_device_holds_one_task_per_instance():
    # llm-serve-chip0 maps /dev/neuron0 alone: without its service's distinctInstance, the chip
    # still allows one task per instance (the same chip again would be busy).
    plan = _edit("ecs-neuron", "ml-neuron-llm-serve-chip0", "service:Service", _inputs(placementConstraints=[]))
    assert _task(plan, "llm-serve-chip0")["perInstance"] == 1
    # Without the device, the instance's CPU and memory bound it: several per instance.
    definition = _find(plan, "ml-neuron-llm-serve-chip0", "TaskDefinition")
    _containers(lambda c: c["linuxParameters"].pop("devices"))(definition)
    [container] = json.loads(definition["inputs"]["containerDefinitions"])
    registered = ecs_registered("inf2.24xlarge")
    fits = min(registered["cpu"] // container["cpu"], registered["memory"] // container["memory"])
    assert fits > 1 and _task(plan, "llm-serve-chip0")["perInstance"] == fits


def test_a_neuron_device_requirement_takes_every_chip_from_the_first():
    # Two services on ml-neuron-inference (maxSize 4) then map /dev/neuron0: 2 + 3 tasks. The one
    # marked waiting is one that maps the chip (not the provider's last service, chip5).
    plan = _edit("ecs-neuron", "ml-neuron-llm-serve-chip1", "taskDefinition:TaskDefinition", _containers(
        lambda c: (c["linuxParameters"].pop("devices"), c.update(resourceRequirements=[{"type": "NeuronDevice", "value": "ALL"}]))
    ))
    _find(plan, "ml-neuron-llm-serve-chip1", "service:Service")["inputs"]["desiredCount"] = 3
    task = _task(plan, "llm-serve-chip1")
    assert task["status"] == "pending"
    assert task["reason"] == "5 tasks on ml-neuron-inference map /dev/neuron0; 4 instances have one each"


@pytest.mark.parametrize(
    "constraints, per_instance",
    [
        ([{"type": "distinctInstance"}], 1),
        ([{"type": "memberOf", "expression": "attribute:ecs.instance-type == g5.12xlarge"}], 4),  # not distinct
        ([], 4),
    ],
)
def test_a_services_distinct_instance_constraint_holds_one_task_per_instance(constraints, per_instance):
    plan = _edit("ecs-gpu", "ml-gpu-llm-serve", "service:Service", _inputs(placementConstraints=constraints))
    assert _task(plan, "llm-serve")["perInstance"] == per_instance


def test_a_task_definitions_member_of_constraints_all_hold():
    both = [
        {"type": "memberOf", "expression": "attribute:ecs.instance-type == inf2.24xlarge"},
        {"type": "memberOf", "expression": "attribute:ecs.instance-type == trn1.32xlarge"},
    ]
    task = _task(_edit("ecs-neuron", "ml-neuron-embed-batch", "taskDefinition:TaskDefinition", _inputs(placementConstraints=both)), "embed-batch")
    assert task["status"] == "pending"
    assert task["notes"] == ["no capacity provider of this plan runs a type its memberOf admits"]
    # A memberOf whose expression the plan does not give (or another type's expression) admits every type.
    for constraints in ([{"type": "memberOf"}], [{"type": "distinctInstance", "expression": "attribute:ecs.instance-type == inf2.24xlarge"}]):
        task = _task(_edit("ecs-neuron", "ml-neuron-train", "taskDefinition:TaskDefinition", _inputs(placementConstraints=constraints)), "train")
        assert (task["status"], task["capacityProvider"]) == ("placed", "ml-neuron-training")


def test_a_task_definition_alone_is_placed_on_the_admitted_type_that_holds_the_most():
    # embed-batch unconstrained and small, without chips: trn1.32xlarge holds more than inf2.24xlarge.
    def small(r):
        r["inputs"]["placementConstraints"] = []
        _containers(lambda c: (c["linuxParameters"].pop("devices"), c.update(cpu=1024, memory=1024)))(r)

    task = _task(_edit("ecs-neuron", "ml-neuron-embed-batch", "taskDefinition:TaskDefinition", small), "embed-batch")
    per_instance = ecs_registered("trn1.32xlarge")["cpu"] // 1024  # CPU binds first: 1024 units a task
    assert (task["status"], task["capacityProvider"], task["perInstance"]) == ("placed", "ml-neuron-training", per_instance)


def test_a_task_asks_for_what_its_instances_lack():
    # A GPU on a Neuron type, a Neuron chip on a GPU type.
    gpu = _containers(lambda c: c.update(resourceRequirements=[{"type": "GPU", "value": "1"}]))
    task = _task(_edit("ecs-neuron", "ml-neuron-train", "taskDefinition:TaskDefinition", gpu), "train")
    assert (task["status"], task["reason"]) == ("pending", "1 GPU per task, trn1.32xlarge registers 0")
    chip = _containers(lambda c: c.update(linuxParameters={"devices": [{"hostPath": "/dev/neuron0", "containerPath": "/dev/neuron0"}]}))
    task = _task(_edit("ecs-gpu", "ml-gpu-llm-serve", "taskDefinition:TaskDefinition", chip), "llm-serve")
    assert (task["status"], task["reason"]) == ("pending", "maps /dev/neuron0, g5.12xlarge has 0 chips")
    # On a Managed Instances provider, every candidate lacks it: the reason is the smallest's.
    task = _task(_edit("ecs-managed-gpu", "ml-managed-llm-serve", "taskDefinition:TaskDefinition", chip), "llm-serve")
    assert (task["status"], task["reason"]) == (
        "pending",
        f"16384 MiB of memory per task, g5.xlarge registers at most {ecs_registered('g5.xlarge')['memory']}; maps /dev/neuron0, g5.xlarge has 0 chips",
    )


@pytest.mark.parametrize("desired, status", [(4, "placed"), (5, "pending")])
def test_a_group_without_max_size_is_one_instance(desired, status):
    plan = _edit("ecs-gpu", "ml-gpu-inference", "group:Group", _pop("maxSize"))
    _find(plan, "ml-gpu-llm-serve", "service:Service")["inputs"]["desiredCount"] = desired
    assert _task(plan, "llm-serve")["status"] == status


def test_services_that_together_outgrow_their_provider_wait():
    # llm-serve (1 GPU each, 4 per g5.12xlarge) and a second service of embed-rerank on
    # ml-gpu-inference, maxSize 4: 16 GPUs in all.
    plan = _edit("ecs-gpu", "ml-gpu-llm-serve", "service:Service", _inputs(desiredCount=16))
    service = _find(plan, "ml-gpu-llm-serve", "service:Service")
    twin = copy.deepcopy(service)
    twin["urn"] = service["urn"].replace("::ml-gpu-llm-serve", "::ml-gpu-embed-rerank")
    twin["inputs"].update(name="embed-rerank", desiredCount=1)
    embed = next(r["urn"] for r in plan["resources"] if r["name"] == "ml-gpu-embed-rerank")
    twin["propertyDependencies"] = {**twin["propertyDependencies"], "taskDefinition": [embed]}
    twin["dependencies"] = [u for u in twin["dependencies"] if not u.endswith("::ml-gpu-llm-serve")] + [embed]
    plan["resources"].append(twin)
    tasks = _placed(plan)["tasks"]
    assert [t["status"] for t in tasks if t["task"] == "llm-serve"] == ["placed"]
    [embed_task] = [t for t in tasks if t["task"] == "embed-rerank"]
    assert embed_task["status"] == "pending"
    assert embed_task["reason"].startswith("the services on ml-gpu-inference reserve")


def test_a_provider_of_an_unknown_type_leaves_the_others_placed():
    plan = _edit("ecs-gpu", "ml-gpu-inference", "launchTemplate:LaunchTemplate", _inputs(instanceType="x9.unknown"))
    tasks = {t["task"]: t for t in _placed(plan)["tasks"]}
    assert tasks["train"]["status"] == "placed" and tasks["train"]["capacityProvider"] == "ml-gpu-training"
    assert tasks["llm-serve"]["notes"] == ["its capacity is not in this plan (a launch type or another program's capacity provider)"]
    # Nothing to hold it: none per instance, no instance counted.
    assert (tasks["llm-serve"]["perInstance"], tasks["llm-serve"]["instancesNeeded"], tasks["llm-serve"]["capacityProvider"]) == (0, 0, None)
    # A task that fits no instance of its provider counts no instance either.
    memory = _containers(lambda c: c.update(memory=10_000_000))
    pending = _task(_edit("ecs-gpu", "ml-gpu-llm-serve", "taskDefinition:TaskDefinition", memory), "llm-serve")
    assert (pending["status"], pending["perInstance"], pending["instancesNeeded"]) == ("pending", 0, 0)


def test_a_service_without_its_task_definition_leaves_the_others_placed():
    plan = golden("ecs-neuron")
    for r in plan["resources"]:
        if r["name"] == "ml-neuron-llm-serve-chip0" and r["type"].endswith("service:Service"):
            r["propertyDependencies"].pop("taskDefinition")
            r["dependencies"] = [u for u in r["dependencies"] if "taskDefinition" not in u]
    tasks = _placed(plan)["tasks"]
    # chip0's task definition is placed alone; chip1..chip5 are still served.
    assert {t["task"]: t.get("desiredCount") for t in tasks if t["task"].startswith("llm-serve")} == {
        "llm-serve-chip0": None, **{f"llm-serve-chip{k}": 2 for k in range(1, 6)},
    }


def test_a_strategy_of_several_providers_is_placed_on_the_first():
    plan = golden("ecs-gpu")
    training = next(r["urn"] for r in plan["resources"] if r["name"] == "ml-gpu-training" and r["type"].endswith("capacityProvider:CapacityProvider"))
    for r in plan["resources"]:
        if r["name"] == "ml-gpu-llm-serve" and r["type"].endswith("service:Service"):
            r["propertyDependencies"]["capacityProviderStrategies"].append(training)
            r["dependencies"].append(training)
    assert _task(plan, "llm-serve")["capacityProvider"] == "ml-gpu-inference"


def test_container_definitions_as_a_list_or_not_json():
    as_list = _task(_edit("ecs-gpu", "ml-gpu-llm-serve", "taskDefinition:TaskDefinition",
                          lambda r: r["inputs"].update(containerDefinitions=json.loads(r["inputs"]["containerDefinitions"]))), "llm-serve")
    assert as_list == _task(golden("ecs-gpu"), "llm-serve")
    broken = _task(_edit("ecs-gpu", "ml-gpu-llm-serve", "taskDefinition:TaskDefinition", _inputs(containerDefinitions="[{not json")), "llm-serve")
    assert "containerDefinitions is not JSON" in broken["notes"]


def test_a_managed_instances_provider_is_named_by_its_name_input():
    plan = _edit("ecs-managed-gpu", "ml-managed-gpu", "capacityProvider:CapacityProvider", _inputs(name="gpu-fleet"))
    assert _task(plan, "llm-serve")["capacityProvider"] == "gpu-fleet"


def test_the_gpu_operators_time_slicing_is_what_its_nodes_advertise():
    # An EKS plan (another program's) that installs the GPU Operator instead of the device plugin
    # chart: the operator's devicePlugin.config slices each GPU as the chart's config.map would.
    def operator(r):
        text = r["inputs"]["values"]["config"]["map"]["default"]
        r["inputs"].update(chart="gpu-operator", values={"devicePlugin": {"config": {"name": "slicing", "default": "default", "data": {"default": text}}}})

    plan = _edit("eks-g5-timeslice", "inference-device-plugins-nvidia", "helm.sh/v3:Release", operator)
    assert _nodes(plan, "g5")["allocatable"]["nvidia.com/gpu"] == "4"
    plan = _edit("eks-g5-timeslice", "inference-device-plugins-nvidia", "helm.sh/v3:Release", lambda r: r["inputs"].update(chart="gpu-operator", values={}))
    assert _nodes(plan, "g5")["allocatable"]["nvidia.com/gpu"] == "1"


def test_a_group_of_no_nodes_places_nothing():
    plan = _edit("eks-g5-timeslice", "inference-g5", "eks/nodeGroup:NodeGroup", lambda r: r["inputs"]["scalingConfig"].update(minSize=0, desiredSize=0, maxSize=0))
    pod = _pod(plan, "Deployment default/llm-serve")
    assert (pod["status"], pod["nodeGroups"], pod["pending"]) == ("pending", {"g5": {"perNode": 4, "placed": 0}}, 6)
    # A DaemonSet fits a node of the group, and runs on none (the system group's nodes keep theirs).
    was = _pod(golden("eks-g5-timeslice"), "DaemonSet kube-system/aws-node")["nodeGroups"]
    assert _pod(plan, "DaemonSet kube-system/aws-node")["nodeGroups"] == {"g5": {**was["g5"], "placed": 0}, "system-*": was["system-*"]}


def test_a_managed_instances_task_is_judged_on_the_smallest_candidate_of_those_that_hold_the_most():
    def requirements(types):
        def edit(r):
            r["inputs"]["managedInstancesProvider"]["instanceLaunchTemplate"]["instanceRequirements"] = {
                "allowedInstanceTypes": types, "memoryMib": {"min": 16384}, "vcpuCount": {"min": 4},
            }

        return edit

    chip = _containers(lambda c: c.update(linuxParameters={"devices": [{"hostPath": "/dev/neuron0", "containerPath": "/dev/neuron0"}]}))
    # Equal CPU, 16 and 32 GiB: the smaller one's reason.
    plan = _edit("ecs-managed-gpu", "ml-managed-gpu", "capacityProvider:CapacityProvider", requirements(["g6e.xlarge", "g6.xlarge"]))
    chip(_find(plan, "ml-managed-llm-serve", "TaskDefinition"))
    assert _task(plan, "llm-serve")["reason"].endswith("maps /dev/neuron0, g6.xlarge has 0 chips")
    # A GPU task on the Neuron provider: no candidate has a GPU.
    gpu = _containers(lambda c: c.update(resourceRequirements=[{"type": "GPU", "value": "1"}]))
    task = _task(_edit("ecs-managed-gpu", "ml-managed-neuron-serve", "taskDefinition:TaskDefinition", gpu), "neuron-serve")
    assert (task["status"], task["reason"]) == ("pending", "1 GPU per task, inf2.xlarge registers 0")


def test_a_pool_whose_types_have_no_gpu_facts_is_a_gap_not_a_shape():
    from gpufleet.catalog import tokens

    pool = {"urn": "urn:pulumi:s::p::alicloud:cs/nodePool:NodePool::cpu", "type": tokens.ACK_NODE_POOL, "name": "cpu",
            "inputs": {"nodePoolName": "cpu", "instanceTypes": ["ecs.g7.xlarge"], "desiredSize": 1}}
    found = plan_placement.placement(plan_placement.from_plan({"resources": [pool]})).as_dict()
    assert "ACK node pool 'cpu': none of its instance types has sourced GPU facts" in found["gaps"]
    assert "the ACK node pools join an existing cluster: its other node pools are not in the plan" in found["gaps"]


def test_a_group_that_names_no_instance_type_runs_eks_s_default_marked_derived():
    """EKS runs t3.medium where neither the group nor its launch template names a type (the API's
    own default, from botocore's model); a template outside the plan might name one: a gap."""
    placed = _placed(_edit("eks-p5-efa", "p5-train-system", "nodeGroup:NodeGroup", _pop("instanceTypes")))
    system = next(g for g in placed["nodeGroups"] if g["nodeGroup"].startswith("system"))
    assert system["instanceType"] == catalog.load().facts.eks.node_group_default_instance_type.value
    assert system["derived"].startswith("instance type t3.medium: EKS's default for a group that names none (botocore 1.44.8 github.com/boto/botocore/blob/1.44.8/botocore/data/eks/2017-11-01/service-2.json")
    assert all("derived" not in g for g in _placed(golden("eks-p5-efa"))["nodeGroups"])

    def outside(r):
        r["inputs"].pop("instanceTypes")
        r.pop("propertyDependencies", None)
        r.pop("dependencies", None)

    placed = _placed(_edit("eks-p5-efa", "p5-train-system", "nodeGroup:NodeGroup", outside))
    assert "node group 'p5-train-system': its instance type is not one known type" in placed["gaps"]


def _gke_cluster_plan(**cluster_inputs) -> dict:
    cluster = {"urn": "urn:pulumi:s::p::gcp:container/cluster:Cluster::gke", "type": "gcp:container/cluster:Cluster", "name": "gke", "inputs": cluster_inputs}
    web = {"urn": "urn:pulumi:s::p::kubernetes:apps/v1:Deployment::web", "type": "kubernetes:apps/v1:Deployment", "name": "web",
           "inputs": {"metadata": {"name": "web"}, "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}}
    return {"resources": [cluster, web]}


def test_a_gke_cluster_s_default_pool_holds_its_pods_marked_derived():
    placed = _placed(_gke_cluster_plan(location="us-central1-a", initialNodeCount=2))
    [pool] = placed["nodeGroups"]
    assert pool["nodeGroup"] == "gke default pool" and pool["instanceType"] == catalog.load().facts.gke.default_machine_type.value and pool["nodes"]["desired"] == 2
    assert "machine type e2-medium, GKE's default (container.googleapis.com/$discovery/rest?version=v1" in pool["derived"]
    assert [p["status"] for p in placed["pods"]] == ["scheduled"] and placed["gaps"] == []


def test_a_gke_cluster_without_its_default_pool_has_no_nodes():
    placed = _placed(_gke_cluster_plan(location="us-central1-a", initialNodeCount=1, removeDefaultNodePool=True))
    assert placed["nodeGroups"] == [] and placed["pods"][0]["status"] == "pending"


def test_a_regional_gke_cluster_s_default_pool_is_a_gap():
    placed = _placed(_gke_cluster_plan(location="us-central1", initialNodeCount=1, nodeConfig={"machineType": "n2-standard-4"}))
    [pool] = placed["nodeGroups"]
    assert pool["instanceType"] == "n2-standard-4" and "GKE's default" not in pool["derived"]
    assert placed["gaps"] == ["GKE cluster 'gke' is regional or its location unknown: its default pool has 1 nodes in each of its zones, which the plan does not name"]


def test_a_program_s_own_device_plugin_release_is_read_as_written():
    """Its namespace and chart version, never gpufleet's pins; a pod read from another version's values says so."""
    from gpufleet.catalog import catalog

    chart = catalog.load().facts.charts.nvidia_device_plugin
    release = {"urn": "urn:pulumi:s::p::kubernetes:helm.sh/v3:Release::nvdp", "type": "kubernetes:helm.sh/v3:Release", "name": "nvdp",
               "inputs": {"chart": chart.chart, "version": "0.18.2", "namespace": "kube-system", "name": "nvdp"}}
    [pod] = [p for p in _placed({"resources": [release]})["pods"] if "nvdp" in p["pod"]]
    assert pod["pod"] == f"DaemonSet kube-system/nvdp ({chart.chart.rsplit('/', 1)[-1]} 0.18.2)"
    assert f"the release pins chart version 0.18.2; its pods are read from the values of {chart.version}, the version gpufleet has" in pod["notes"]


def test_a_karpenter_node_pool_whose_spec_is_unknown_is_a_named_gap():
    """(A NodePool the plan spells out is provisioned from: tests/simulate/test_karpenter_provisioning.py.)"""
    for inputs in ({}, {"spec": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"}):
        pool = {"urn": "urn:pulumi:s::p::kubernetes:karpenter.sh/v1:NodePool::gpu", "type": "kubernetes:karpenter.sh/v1:NodePool", "name": "gpu", "inputs": inputs}
        assert "Karpenter NodePool 'gpu': its spec is not known offline: the nodes it would launch are not judged" in _placed({"resources": [pool]})["gaps"]


def test_a_fargate_service_s_task_runs_on_fargate():
    """Fargate is the capacity: a service launched there (its launch type, or a strategy of Fargate's
    providers only) is placed, one task per Fargate VM, its size being one Fargate runs; the plan
    decides that, so nothing is noted. An EC2 launch type with no capacity of the plan stays advisory."""
    td = {"urn": "urn:pulumi:s::p::aws:ecs/taskDefinition:TaskDefinition::app", "type": "aws:ecs/taskDefinition:TaskDefinition", "name": "app",
          "inputs": {"family": "app", "cpu": "256", "memory": "512", "requiresCompatibilities": ["FARGATE"],
                     "containerDefinitions": json.dumps([{"name": "web", "image": "nginx", "memory": 512}])}}
    for strategy, provider in (({"launchType": "FARGATE"}, "FARGATE"), ({"capacityProviderStrategies": [{"capacityProvider": "FARGATE_SPOT", "weight": 1}]}, "FARGATE_SPOT")):
        service = {"urn": "urn:pulumi:s::p::aws:ecs/service:Service::svc", "type": "aws:ecs/service:Service", "name": "svc",
                   "inputs": {"desiredCount": 3, **strategy}, "propertyDependencies": {"taskDefinition": [td["urn"]]}}
        [task] = _placed({"resources": [td, service]})["tasks"]
        assert (task["status"], task["capacityProvider"], task["perInstance"], task["instancesNeeded"]) == ("placed", provider, 1, 3), strategy
        assert "notes" not in task
    service["inputs"] = {"desiredCount": 1, "launchType": "EC2"}
    [task] = _placed({"resources": [td, service]})["tasks"]
    assert task["status"] == "pending" and task["notes"] == ["its capacity is not in this plan (a launch type or another program's capacity provider)"]



def test_azure_native_aks_pools_are_read_as_the_classic_provider_s():
    """A ManagedCluster's agentPoolProfiles and an AgentPool of its own (azure-native's names): the
    System pool by its labels and taints, the GPU pool by its VM size's GPUs; a GPU pod that does not
    tolerate the GPU pool's taint is Pending, judged (the plan creates the cluster)."""
    cluster = {"urn": "urn:pulumi:s::p::azure-native:containerservice:ManagedCluster::aks", "type": "azure-native:containerservice:ManagedCluster", "name": "aks",
               "inputs": {"agentPoolProfiles": [{"name": "system", "mode": "System", "vmSize": "Standard_DS2_v2", "count": 3, "osType": "Linux"}]}}
    pool = {"urn": "urn:pulumi:s::p::azure-native:containerservice:AgentPool::gpu", "type": "azure-native:containerservice:AgentPool", "name": "gpu",
            "inputs": {"agentPoolName": "gpu", "mode": "User", "vmSize": "Standard_NC4as_T4_v3", "count": 1, "enableAutoScaling": True, "minCount": 1, "maxCount": 2,
                       "nodeTaints": ["sku=gpu:NoSchedule"]}}
    pod = {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
    deployment = {"urn": "urn:pulumi:s::p::kubernetes:apps/v1:Deployment::llm", "type": "kubernetes:apps/v1:Deployment", "name": "llm",
                  "inputs": {"metadata": {"name": "llm", "namespace": "default"}, "spec": {"replicas": 1, "template": {"spec": pod}}}}
    placed = _placed({"resources": [cluster, pool, deployment]})
    groups = {g["nodeGroup"]: g for g in placed["nodeGroups"]}
    assert groups["system"]["nodes"] == {"min": 3, "desired": 3, "max": 3} and groups["gpu"]["nodes"] == {"min": 1, "desired": 1, "max": 2}
    assert groups["gpu"]["allocatable"]["nvidia.com/gpu"] == "1"
    [llm] = [p for p in placed["pods"] if p["pod"].endswith("/llm")]
    assert llm["status"] == "pending" and "untolerated taint" in llm["message"] and placed["gaps"] == []


def _with(plan: dict, *resources: dict) -> dict:
    plan["resources"] += list(resources)
    return plan


def _deployment(name: str, selector: dict) -> dict:
    return {"urn": f"urn:pulumi:s::p::kubernetes:apps/v1:Deployment::{name}", "type": "kubernetes:apps/v1:Deployment", "name": name,
            "inputs": {"metadata": {"name": name, "namespace": "default"},
                       "spec": {"replicas": 1, "template": {"spec": {"nodeSelector": selector, "containers": [{"name": name}]}}}}}


def test_a_pod_pinned_by_a_label_s_deprecated_spelling_lands_where_the_ga_one_would():
    """Nodes carry the kubelet's and the cloud controller's labels in both spellings (Pulumi's
    node-group migration example pins nginx by beta.kubernetes.io/instance-type); a label no node
    shape knows the value of (each node's hostname) leaves its pod Pending for the simulation only:
    the verdict is advisory, saying why."""
    plan = _with(
        golden("eks-p5-efa"),
        _deployment("old-names", {"beta.kubernetes.io/instance-type": "m6i.large", "beta.kubernetes.io/arch": "amd64"}),
        _deployment("one-node", {"kubernetes.io/hostname": "ip-10-0-1-7.ec2.internal"}),
    )
    found = plan_placement.placement(plan_placement.from_plan({"resources": plan["resources"]}))
    pods = {p.pod.owner: p for p in found.pods}
    old = pods["Deployment default/old-names"]
    assert (old.status, old.placed, old.notes) == ("scheduled", {"system-*": 1}, [])
    one = pods["Deployment default/one-node"]
    assert one.status == "pending" and not found.certain(one)
    assert "node group system-*: kubernetes.io/hostname differs between its nodes or is unknown" in one.notes


def test_a_release_of_a_chart_gpufleet_does_not_carry_is_a_gap():
    """Its pods, their requests, tolerations and node selectors are not known, and every pod of the
    cluster may depend on them (capacity they take, labels, devices or nodes they add): the plan's
    verdicts are advisory (PlanPlacement.certain), the gap saying which release."""
    release = {"urn": "urn:pulumi:s::p::kubernetes:helm.sh/v3:Release::mon", "type": "kubernetes:helm.sh/v3:Release", "name": "mon",
               "inputs": {"chart": "kube-prometheus-stack", "version": "81.2.1", "name": "monitoring"}}
    unknown = {**release, "urn": release["urn"] + "2", "name": "dra", "inputs": {"chart": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"}}
    assert _placed(golden("eks-p5-efa"))["gaps"] == []
    found = plan_placement.placement(plan_placement.from_plan({"resources": _with(golden("eks-p5-efa"), release, unknown)["resources"]}))
    assert found.gaps == [
        "Helm release 'monitoring' installs chart kube-prometheus-stack 81.2.1, which gpufleet does not carry: "
        "which pods it runs, and on which nodes, is not known",
        "Helm release 'dra': its chart is not known offline: which pods it runs, and on which nodes, is not known",
    ]
    assert not any(found.certain(p) for p in found.pods)


def _release(chart: str, version: str | None) -> dict:
    return {"urn": "urn:pulumi:s::p::kubernetes:helm.sh/v3:Release::r", "type": "kubernetes:helm.sh/v3:Release", "name": "r",
            "inputs": {"chart": chart, **({"version": version} if version is not None else {})}}


def _carried():
    facts = catalog.load().facts
    return [*facts.charts.plugins().values(), facts.charts.gpu_operator, facts.karpenter.chart]


@pytest.mark.parametrize("chart", _carried(), ids=lambda c: c.chart.rsplit("/", 1)[-1])
def test_every_chart_gpufleet_carries_is_judged_at_the_release_s_version_or_says_it_is_not(chart):
    """One rule for every chart: gpufleet holds one version's values (its own), so a release pinning
    it (with or without Helm's optional leading v) is judged as written, and each pod of a release
    pinning another version, or none (Helm installs the repository's newest), is named at the
    release's version and says it is read from gpufleet's: its verdict is advisory."""
    def pods(version):
        placed = _placed({"resources": [_release(chart.chart, version)]})["pods"]
        return [p for p in placed if f"({chart.chart.rsplit('/', 1)[-1]} " in p["pod"] or f"({chart.chart} " in p["pod"]]

    other = "0.0.1"
    mine, spelled, older, unpinned = pods(chart.version), pods(chart.version.removeprefix("v")), pods(other), pods(None)
    assert mine and all("notes" not in p for p in mine + spelled)
    assert len(older) == len(mine) and all(p["pod"].endswith(f" {other})") for p in older)
    said = f"the release pins chart version {other}; its pods are read from the values of {chart.version}, the version gpufleet has"
    assert all(said in p["notes"] for p in older)
    assert all(
        "the release pins no chart version (Helm installs the repository's newest); its pods are read from the values of "
        f"{chart.version}, the version gpufleet has" in p["notes"]
        for p in unpinned
    ) and len(unpinned) == len(mine)
    from gpufleet.catalog.tokens import UNKNOWN

    assert all(f"the release's chart version is not known offline; its pods are read from the values of {chart.version}" in p["notes"][0] for p in pods(UNKNOWN))
