"""The nodes a component library's provider builds, derived from the component's inputs and the
library's defaults at a pinned version (pulumi-eks 4.3.0: curated libraries.pulumiEks), marked
derived: a pulumi-eks Cluster's default node group holds CoreDNS."""

from __future__ import annotations

from gpufleet.catalog import catalog
from gpufleet.plans import placement as plan_placement

CAT = catalog.load()
DEFAULTS = CAT.facts.libraries.pulumi_eks.default_node_group  # the library's defaults, as curated with their source
G5_GPUS = str(CAT.get("g5.xlarge").gpu.count)  # from EC2's record, not typed here


def _placed(*resources: tuple[str, str, dict]) -> dict:
    plan = {"resources": [{"urn": f"urn:pulumi:s::p::{t}::{n}", "type": t, "name": n, "inputs": i} for t, n, i in resources]}
    return plan_placement.placement(plan_placement.from_plan(plan)).as_dict()


CLUSTER = "eks:index:Cluster"


def _groups(placed: dict) -> dict:
    return {g["nodeGroup"]: g for g in placed["nodeGroups"]}


def test_a_cluster_s_default_node_group_holds_coredns_marked_derived():
    placed = _placed((CLUSTER, "ml", {}))
    group = _groups(placed)["ml default node group"]
    assert group["instanceType"] == DEFAULTS.instance_type
    assert group["nodes"] == {"min": DEFAULTS.min_size, "desired": DEFAULTS.desired_capacity, "max": DEFAULTS.max_size}
    assert group["derived"].startswith("the default node group of pulumi-eks Cluster 'ml', as pulumi-eks 4.3.0 makes it (github.com/pulumi/pulumi-eks nodejs/eks/nodes/nodegroup.ts @0f5a5447")
    coredns = next(p for p in placed["pods"] if p["pod"] == "Deployment kube-system/coredns")
    assert coredns["status"] == "scheduled" and coredns["nodeGroups"]["ml default node group"]["placed"] == 2
    # The program's own pulumi-eks may not be the pinned one: verdicts on these nodes are advisory.
    assert placed["gaps"] == ["node groups 'ml default node group' are derived from pulumi-eks 4.3.0's defaults, not read from the plan: verdicts on their nodes are advisory"]


def test_the_cluster_s_own_node_arguments_or_its_options_set_the_group():
    group = _groups(_placed((CLUSTER, "ml", {"instanceType": "m6i.large", "desiredCapacity": 3, "minSize": 3, "maxSize": 6})))["ml default node group"]
    assert group["instanceType"] == "m6i.large" and group["nodes"] == {"min": 3, "desired": 3, "max": 6}
    options = {"nodeGroupOptions": {"instanceType": "g5.xlarge", "gpu": True, "taints": {"nvidia.com/gpu": {"value": "true", "effect": "NoSchedule"}}}}
    placed = _placed((CLUSTER, "ml", options))
    gpu = _groups(placed)["ml default node group"]
    assert gpu["allocatable"]["nvidia.com/gpu"] == G5_GPUS  # the NVIDIA AMI type: its GPU is advertised
    coredns = next(p for p in placed["pods"] if p["pod"] == "Deployment kube-system/coredns")
    assert coredns["status"] == "pending"  # the group's taint keeps CoreDNS off


def test_a_graviton_type_s_nodes_are_arm64():
    placed = _placed((CLUSTER, "ml", {"instanceType": "m7g.large"}), ("kubernetes:apps/v1:Deployment", "x86", {
        "spec": {"replicas": 1, "template": {"spec": {"nodeSelector": {"kubernetes.io/arch": "amd64"}, "containers": [{"name": "c", "image": "x"}]}}}}))
    assert next(p for p in placed["pods"] if p["pod"].endswith("/x86"))["status"] == "pending"


def test_a_cluster_without_its_default_node_group_brings_no_nodes_and_no_coredns():
    for inputs in ({"skipDefaultNodeGroup": True}, {"fargate": True}, {"autoMode": {"enabled": True}}):
        placed = _placed((CLUSTER, "ml", inputs))
        assert placed["nodeGroups"] == [] and not any(p["pod"] == "Deployment kube-system/coredns" for p in placed["pods"]), inputs
    placed = _placed((CLUSTER, "ml", {"skipDefaultNodeGroup": True, "corednsAddonOptions": {"enabled": True}}))
    assert any(p["pod"] == "Deployment kube-system/coredns" for p in placed["pods"])
    placed = _placed((CLUSTER, "ml", {"corednsAddonOptions": {"enabled": False}}))
    assert placed["nodeGroups"] and not any(p["pod"] == "Deployment kube-system/coredns" for p in placed["pods"])


def test_node_groups_of_their_own():
    placed = _placed(
        ("eks:index:NodeGroupV2", "v2", {"instanceType": "c6i.xlarge", "desiredCapacity": 1, "labels": {"team": "ml"}}),
        ("eks:index:NodeGroup", "v1", {"maxSize": 3}),  # deprecated, the same defaults
        ("eks:index:ManagedNodeGroup", "managed", {"scalingConfig": {"minSize": 0, "desiredSize": 1, "maxSize": 4}, "instanceTypes": ["m6i.large", "m6a.large"]}),
        ("eks:index:ManagedNodeGroup", "plain", {}),
    )
    groups = _groups(placed)
    assert groups["v2"]["instanceType"] == "c6i.xlarge" and groups["v2"]["nodes"] == {"min": 1, "desired": 1, "max": 2}
    assert groups["v1"]["instanceType"] == DEFAULTS.instance_type and groups["v1"]["nodes"] == {"min": DEFAULTS.min_size, "desired": DEFAULTS.desired_capacity, "max": 3}
    assert groups["v1"]["derived"].startswith("pulumi-eks NodeGroup 'v1', as pulumi-eks 4.3.0 makes it")
    assert groups["managed"]["instanceType"] == "m6i.large" and groups["managed"]["nodes"] == {"min": 0, "desired": 1, "max": 4}
    managed = CAT.facts.libraries.pulumi_eks.managed_scaling
    assert groups["plain"]["instanceType"] == CAT.facts.eks.node_group_default_instance_type.value
    assert groups["plain"]["nodes"] == {"min": managed.min_size, "desired": managed.desired_capacity, "max": managed.max_size}
    assert "pulumi-eks ManagedNodeGroup 'managed' runs several instance types: judged as its first, m6i.large" in placed["gaps"]


def test_gpu_alone_picks_no_nvidia_ami_for_a_managed_group():
    """pulumi-eks leaves a ManagedNodeGroup's AMI type to EKS; only amiType asks for the NVIDIA one."""
    groups = _groups(_placed(
        ("eks:index:ManagedNodeGroup", "flag", {"instanceTypes": ["g5.xlarge"], "gpu": True}),
        ("eks:index:ManagedNodeGroup", "typed", {"instanceTypes": ["g5.xlarge"], "amiType": "AL2023_x86_64_NVIDIA"}),
        ("eks:index:NodeGroupV2", "v2", {"instanceType": "g5.xlarge", "gpu": True}),
    ))
    assert "nvidia.com/gpu" not in groups["flag"]["allocatable"]
    assert groups["typed"]["allocatable"]["nvidia.com/gpu"] == G5_GPUS and groups["v2"]["allocatable"]["nvidia.com/gpu"] == G5_GPUS


def test_an_unknown_instance_type_is_a_gap():
    placed = _placed((CLUSTER, "ml", {"instanceType": "t9.huge"}))
    assert placed["nodeGroups"] == [] and "ml default node group: instance type 't9.huge' is not one known type" in placed["gaps"]


def _nginx(replicas: int = 3) -> tuple[str, str, dict]:
    spec = {"containers": [{"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}]}]}
    return ("kubernetes:apps/v1:Deployment", "nginx", {"metadata": {"namespace": "nginx"}, "spec": {"replicas": replicas, "template": {"spec": spec}}})


def test_a_cluster_with_auto_mode_launches_nodes_from_auto_mode_s_built_in_pools():
    """pulumi-eks's Auto Mode example (tests/corpus_ts eks-auto-mode-ts): autoMode.enabled is EKS Auto
    Mode, with the built-in pools pulumi-eks turns on (curated libraries.pulumiEks.autoMode), so
    nginx is launched a node by general-purpose instead of reading "no nodes available"."""
    auto = CAT.facts.libraries.pulumi_eks.auto_mode
    placed = _placed((CLUSTER, "auto", {"autoMode": {"enabled": True}}), _nginx())
    nginx = next(p for p in placed["pods"] if p["pod"].endswith("/nginx"))
    assert nginx["status"] == "provisioned" and nginx["provisioned"][0]["nodePool"] == "general-purpose"
    assert auto.node_pools == ["general-purpose", "system"]
    said = next(g for g in placed["gaps"] if g.startswith("pulumi-eks Cluster 'auto' runs EKS Auto Mode"))
    assert "its built-in pools (general-purpose, system) are read from its autoMode input as pulumi-eks 4.3.0 sets them" in said
    # The program's computeConfig over the library's: the tainted system pool alone leaves nginx Pending.
    placed = _placed((CLUSTER, "auto", {"autoMode": {"enabled": True, "computeConfig": {"nodePools": ["system"]}}}), _nginx())
    nginx = next(p for p in placed["pods"] if p["pod"].endswith("/nginx"))
    assert nginx["status"] == "pending" and "NodePool system" in nginx["message"]
    for off in ({"autoMode": {"enabled": False}, "skipDefaultNodeGroup": True}, {"autoMode": {"enabled": True, "computeConfig": {"enabled": False}}}):
        nginx = next(p for p in _placed((CLUSTER, "auto", off), _nginx())["pods"] if p["pod"].endswith("/nginx"))
        assert nginx["status"] == "pending" and nginx["message"] == "no nodes available to schedule pods", off


def test_auto_mode_s_pools_are_read_once_when_the_library_s_cluster_is_in_the_plan():
    """Under `pulumi preview` the component's aws.eks Cluster is in the plan too: its pools are the
    component's, not a second set."""
    component = {"urn": "urn:pulumi:s::p::eks:index:Cluster::auto", "type": CLUSTER, "name": "auto", "inputs": {"autoMode": {"enabled": True}}}
    compute = {"enabled": True, "nodePools": ["general-purpose", "system"]}
    child = {
        "urn": "urn:pulumi:s::p::eks:index:Cluster$aws:eks/cluster:Cluster::auto-eksCluster",
        "type": "aws:eks/cluster:Cluster",
        "name": "auto-eksCluster",
        "inputs": {"computeConfig": compute, "storageConfig": {"blockStorage": {"enabled": True}},
                   "kubernetesNetworkConfig": {"elasticLoadBalancing": {"enabled": True}}, "bootstrapSelfManagedAddons": False},
    }
    found = plan_placement.placement(plan_placement.from_plan({"resources": [component, child]}))
    assert sorted(p.name for p in found.pools) == ["general-purpose", "system"]
