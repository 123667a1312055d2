"""src/gpufleet/policies/k8s.py: each rule with a violating and a clean fixture, judged by the pack over gRPC."""

from __future__ import annotations

from tests.policy_helpers import findings, one_finding, resource

NG = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
RELEASE = "kubernetes:helm.sh/v3:Release"
GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NO_SCHEDULE"}
# A cluster the plan creates: its node groups are all in the plan, so the taint rule is certain.
CLUSTER = resource("aws:eks/cluster:Cluster", "cluster", {"name": "cluster"})


def _pod(name: str, resources: dict, tolerations=None, kind: str = "kubernetes:core/v1:Pod") -> dict:
    spec = {"containers": [{"name": "main", "image": "x:1", "resources": resources}], "tolerations": tolerations or []}
    if kind.endswith(":Pod"):
        return resource(kind, name, {"spec": spec})
    return resource(kind, name, {"spec": {"template": {"spec": spec}}})


def _group(name: str, instance_type: str, taints: list[dict], efa: bool = False) -> list[dict]:
    interfaces = [{"deviceIndex": 0, "networkCardIndex": 0, "interfaceType": "efa" if efa else "interface"}]
    template = resource(LT, f"{name}-lt", {"networkInterfaces": interfaces})
    group = resource(NG, name, {"instanceTypes": [instance_type], "taints": taints}, launchTemplate=[template])
    return [template, group]


def test_requests_equal_limits(judge):
    result = judge(
        [
            _pod("equal", {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 1}}, kind="kubernetes:apps/v1:Deployment"),
            _pod("limits-only", {"limits": {"vpc.amazonaws.com/efa": 4}}, kind="kubernetes:batch/v1:Job"),
            _pod("overcommit", {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}}),
            _pod("no-limit", {"requests": {"aws.amazon.com/neuroncore": 2}}),
        ]
    )
    for clean in ("equal", "limits-only"):
        assert findings(result, "k8s-extended-resources-requests-equal-limits", clean) == []
    assert "nvidia.com/gpu request 1 != limit 2" in one_finding(result, "k8s-extended-resources-requests-equal-limits", "overcommit")
    assert "aws.amazon.com/neuroncore 2 without a limit" in one_finding(result, "k8s-extended-resources-requests-equal-limits", "no-limit")


def test_gpu_pod_tolerates_taint(judge):
    gpu = {"limits": {"nvidia.com/gpu": 1}}
    toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    result = judge(
        [
            CLUSTER,
            *_group("gpus", "g6e.xlarge", [GPU_TAINT]),
            _pod("tolerant", gpu, toleration, kind="kubernetes:batch/v1:Job"),
            _pod("intolerant", gpu, kind="kubernetes:batch/v1:Job"),
            _pod("cpu-only", {"limits": {"cpu": "1"}}),
        ]
    )
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "tolerant") == []
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "cpu-only") == []
    assert "requests nvidia.com/gpu but tolerates no nvidia node group's taints (e.g. nvidia.com/gpu:NO_SCHEDULE)" in one_finding(
        result, "k8s-gpu-pod-tolerates-taint", "intolerant"
    )


def test_device_plugin_tolerates_taints(judge):
    efa_chart = {"chart": "aws-efa-k8s-device-plugin", "version": "v0.5.30"}
    result = judge(
        [
            *_group("train", "p5.48xlarge", [GPU_TAINT], efa=True),
            resource(RELEASE, "efa-defaults", {**efa_chart, "values": {}}),
            resource(RELEASE, "efa-tolerant", {**efa_chart, "values": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}}),
            # The NVIDIA chart's defaults tolerate nvidia.com/gpu: no value needed.
            resource(RELEASE, "nvidia-defaults", {"chart": "nvidia-device-plugin", "version": "0.20.0", "values": {}}),
        ]
    )
    assert "does not tolerate nvidia.com/gpu:NO_SCHEDULE of node group 'train'" in one_finding(
        result, "k8s-device-plugin-tolerates-taints", "efa-defaults"
    )
    assert findings(result, "k8s-device-plugin-tolerates-taints", "efa-tolerant") == []
    assert findings(result, "k8s-device-plugin-tolerates-taints", "nvidia-defaults") == []


def test_mig_supported(judge):
    mig = {"chart": "nvidia-device-plugin", "version": "0.20.0", "values": {"migStrategy": "single"}}
    a100 = judge([*_group("a100", "p4d.24xlarge", [GPU_TAINT]), resource(RELEASE, "plugin", mig)])
    assert findings(a100, "eks-mig-supported") == []
    l40s = judge([*_group("l40s", "g6e.xlarge", [GPU_TAINT]), resource(RELEASE, "plugin", mig)])
    assert "node group 'l40s': g6e.xlarge has NVIDIA L40S GPUs, which do not support MIG" in one_finding(
        l40s, "eks-mig-supported", "plugin"
    )


def test_cronjob_and_mpijob_pod_templates_are_judged(judge):
    """A CronJob's pod sits under jobTemplate; an MPIJob has a launcher and workers: each is read
    where it is and named in the finding."""
    overcommit = {"name": "main", "image": "x:1", "resources": {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}}}
    equal = {"name": "main", "image": "x:1", "resources": {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 1}}}
    cron = resource(
        "kubernetes:batch/v1:CronJob",
        "nightly",
        {"spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": {"template": {"spec": {"containers": [overcommit]}}}}}},
    )
    roles = {"Launcher": {"template": {"spec": {"containers": [equal]}}}, "Worker": {"template": {"spec": {"containers": [overcommit]}}}}
    mpi = resource("kubernetes:kubeflow.org/v2beta1:MPIJob", "nccl", {"spec": {"mpiReplicaSpecs": roles}})
    launcher_bad = resource(
        "kubernetes:kubeflow.org/v2beta1:MPIJob", "launcher-bad", {"spec": {"mpiReplicaSpecs": {"Launcher": roles["Worker"]}}}
    )
    policy = "k8s-extended-resources-requests-equal-limits"
    result = judge([cron, mpi, launcher_bad])
    [message] = findings(result, policy, "nightly")
    assert message.splitlines()[-1].startswith("spec.jobTemplate.spec.template.spec: ") and "nvidia.com/gpu request 1 != limit 2" in message
    [message] = findings(result, policy, "nccl")
    assert message.splitlines()[-1].startswith("spec.mpiReplicaSpecs.Worker.template.spec: ")
    [message] = findings(result, policy, "launcher-bad")
    assert message.splitlines()[-1].startswith("spec.mpiReplicaSpecs.Launcher.template.spec: ")


NEURON_TAINT = {"key": "aws.amazon.com/neuron", "effect": "NO_SCHEDULE"}
GKE_POOL = "gcp:container/nodePool:NodePool"
AKS_POOL = "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool"


def test_a_gpu_pod_is_judged_by_what_it_requests_or_limits_and_each_accelerator_kind(judge):
    nvidia_toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    result = judge(
        [
            CLUSTER,
            *_group("gpus", "g6e.xlarge", [GPU_TAINT]),
            *_group("trn", "trn1.32xlarge", [NEURON_TAINT]),
            _pod("shared-gpu", {"requests": {"nvidia.com/gpu.shared": 1}}),  # a renamed time-sliced GPU
            _pod("cores", {"limits": {"aws.amazon.com/neuroncore": 2}}, nvidia_toleration),
            _pod(
                "both-tolerated",
                {"limits": {"aws.amazon.com/neuron": 1}},
                [*nvidia_toleration, {"key": "aws.amazon.com/neuron", "operator": "Exists"}],
            ),
        ]
    )
    assert "requests nvidia.com/gpu but tolerates no nvidia node group's taints (e.g. nvidia.com/gpu:NO_SCHEDULE)" in one_finding(
        result, "k8s-gpu-pod-tolerates-taint", "shared-gpu"
    )
    # A Neuron pod is held to the Neuron groups' taints, whatever it tolerates of the GPU groups.
    assert (
        "requests aws.amazon.com/neuron but tolerates no neuron node group's taints (e.g. aws.amazon.com/neuron:NO_SCHEDULE)"
        in one_finding(result, "k8s-gpu-pod-tolerates-taint", "cores")
    )
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "both-tolerated") == []


def test_a_pod_that_tolerates_one_gpu_group_schedules_and_the_message_names_the_first(judge):
    dedicated = {"key": "dedicated", "value": "training", "effect": "NO_SCHEDULE"}
    gpu = {"limits": {"nvidia.com/gpu": 1}}
    result = judge(
        [
            CLUSTER,
            *_group("serving", "g6e.xlarge", [GPU_TAINT]),
            *_group("training", "p4d.24xlarge", [GPU_TAINT, dedicated]),
            _pod("serving-only", gpu, [{"key": "nvidia.com/gpu", "operator": "Exists"}]),
            _pod("none", gpu),
        ]
    )
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "serving-only") == []
    [message] = findings(result, "k8s-gpu-pod-tolerates-taint", "none")
    assert "(e.g. nvidia.com/gpu:NO_SCHEDULE)" in message  # the first group's: not dedicated=training


def test_gke_and_aks_gpu_pools_add_their_taints(judge):
    gpu = {"limits": {"nvidia.com/gpu": 1}}
    gke_gpu = {"key": "nvidia.com/gpu", "value": "present", "operator": "Equal", "effect": "NoSchedule"}
    dedicated = {"key": "dedicated", "value": "ml", "effect": "NO_SCHEDULE"}
    # a2 machine types come with their GPUs: no guestAccelerators needed to be a GPU pool
    gke = resource(GKE_POOL, "a100", {"name": "a100", "nodeConfig": {"machineType": "a2-highgpu-1g", "taints": [dedicated]}})
    cpu_pool = resource(
        GKE_POOL,
        "cpu",
        {"name": "cpu", "nodeConfig": {"machineType": "e2-standard-8", "taints": [{"key": "cpu-only", "effect": "NO_SCHEDULE"}]}},
    )
    cpu_tolerant = _pod("cpu-pool-tolerant", gpu, [gke_gpu, {"key": "cpu-only", "operator": "Exists"}])
    result = judge(
        [
            CLUSTER,
            gke,
            cpu_pool,
            _pod("gke-tolerated", gpu, [gke_gpu, {"key": "dedicated", "operator": "Exists"}]),
            _pod("gpu-taint-only", gpu, [gke_gpu]),
            cpu_tolerant,
        ]
    )
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "gke-tolerated") == []
    [message] = findings(result, "k8s-gpu-pod-tolerates-taint", "gpu-taint-only")
    assert "(e.g. dedicated=ml:NO_SCHEDULE)" in message  # the pool's own taint; the CPU pool is no candidate
    assert len(findings(result, "k8s-gpu-pod-tolerates-taint", "cpu-pool-tolerant")) == 1  # tolerating the CPU pool places no GPU pod
    aks = resource(
        AKS_POOL, "t4", {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["sku=gpu:NoSchedule", "team=ml:NoExecute"]}
    )
    aks_cpu = resource(AKS_POOL, "cpu", {"name": "cpu", "vmSize": "Standard_D4s_v5", "nodeTaints": ["cpu=only:NoSchedule"]})
    result = judge(
        [
            CLUSTER,
            aks,
            aks_cpu,
            _pod("sku-only", gpu, [{"key": "sku", "operator": "Exists"}]),
            _pod("both", gpu, [{"key": "sku", "operator": "Exists"}, {"key": "team", "operator": "Exists"}]),
            _pod("cpu-only", gpu, [{"key": "cpu", "operator": "Exists"}]),
        ]
    )
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "both") == []
    assert "team=ml:NoExecute" in findings(result, "k8s-gpu-pod-tolerates-taint", "sku-only")[0]
    assert len(findings(result, "k8s-gpu-pod-tolerates-taint", "cpu-only")) == 1


def test_each_device_plugin_is_held_to_the_groups_it_serves(judge):
    result = judge(
        [
            *_group("trn", "trn1.32xlarge", [NEURON_TAINT]),
            *_group("gpus", "g6e.xlarge", [GPU_TAINT, {"key": "team", "value": "ml", "effect": "NO_SCHEDULE"}]),
            resource(RELEASE, "neuron", {"chart": "oci://public.ecr.aws/neuron/neuron-helm-chart", "version": "1.9.0", "values": {}}),
            resource(RELEASE, "nvidia", {"chart": "nvidia-device-plugin", "version": "0.20.0", "values": {}}),
            # no group has EFA: the EFA plugin tolerating nothing is no problem
            resource(RELEASE, "efa", {"chart": "aws-efa-k8s-device-plugin", "version": "v0.5.30", "values": {}}),
        ]
    )
    [message] = findings(result, "k8s-device-plugin-tolerates-taints", "nvidia")
    assert "does not tolerate team=ml:NO_SCHEDULE of node group 'gpus'" in message and "trn" not in message
    # the Neuron chart's defaults tolerate the Neuron taint and it is not held to the GPU group's
    assert findings(result, "k8s-device-plugin-tolerates-taints", "neuron") == []
    assert findings(result, "k8s-device-plugin-tolerates-taints", "efa") == []


def test_mig_is_judged_only_when_asked_and_only_on_gpu_groups(judge):
    def plugin(strategy):
        values = {} if strategy is None else {"migStrategy": strategy}
        return resource(RELEASE, "plugin", {"chart": "nvidia-device-plugin", "version": "0.20.0", "values": values})

    for strategy in (None, "none"):
        assert findings(judge([*_group("l40s", "g6e.xlarge", [GPU_TAINT]), plugin(strategy)]), "eks-mig-supported") == []
    mixed = judge([*_group("a100", "p4d.24xlarge", [GPU_TAINT]), *_group("trn", "trn1.32xlarge", [NEURON_TAINT]), plugin("mixed")])
    assert findings(mixed, "eks-mig-supported") == []  # the Neuron group is no GPU group to judge
    # Each NVIDIA plugin release is judged, after one without MIG too; another chart's migStrategy is not read.
    operator = resource(RELEASE, "operator", {"chart": "gpu-operator", "values": {"migStrategy": "single"}})
    second = resource(RELEASE, "second", {"chart": "nvidia-device-plugin", "version": "0.20.0", "values": {"migStrategy": "single"}})
    result = judge([*_group("l40s", "g6e.xlarge", [GPU_TAINT]), plugin(None), operator, second])
    assert findings(result, "eks-mig-supported", "operator") == [] and len(findings(result, "eks-mig-supported", "second")) == 1


def test_a_gke_pods_toleration_is_held_to_the_pools_own_taints_and_gkes(judge):
    """GKE adds its GPU taint beside a pool's own: a pod must tolerate both (slips found either
    one unjudged)."""
    from gpufleet.catalog import catalog

    gke_taint = catalog.load().facts.gke.gpu_taint
    own = {"key": "team", "value": "ml", "effect": "NO_SCHEDULE"}
    pool = resource(GKE_POOL, "gpu", {"nodeConfig": {"machineType": "g2-standard-8", "taints": [own]}})
    tolerate_gke = {"key": gke_taint.key, "operator": "Exists"}
    tolerate_own = {"key": "team", "operator": "Exists"}
    gpu = {"limits": {"nvidia.com/gpu": 1}}
    result = judge(
        [
            CLUSTER,
            pool,
            _pod("gke-only", gpu, [tolerate_gke]),
            _pod("own-only", gpu, [tolerate_own]),
            _pod("both", gpu, [tolerate_gke, tolerate_own]),
        ]
    )
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "gke-only") and findings(result, "k8s-gpu-pod-tolerates-taint", "own-only")
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "both") == []


def test_an_efa_plugin_is_not_held_to_a_group_without_a_launch_template(judge):
    plain = resource(NG, "plain", {"instanceTypes": ["g5.xlarge"], "taints": [GPU_TAINT]})
    efa = resource(RELEASE, "efa-defaults", {"chart": "aws-efa-k8s-device-plugin", "version": "v0.5.30", "values": {}})
    assert findings(judge([plain, efa]), "k8s-device-plugin-tolerates-taints", "efa-defaults") == []


def test_with_no_group_in_the_stack_a_gpu_pod_gets_an_advisory_naming_the_gap(judge):
    """The plan holds no node it could run on: the convention's taint is all there is to judge by."""
    result = judge([CLUSTER, _pod("lonely", {"limits": {"nvidia.com/gpu": 1}})])
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "lonely") == []
    assert (
        "spec requests nvidia.com/gpu but does not tolerate nvidia.com/gpu:NoSchedule; not judged for certain: the plan holds no node group with nvidia devices"
        in one_finding(result, "k8s-gpu-pod-tolerates-taint-unseen", "lonely")
    )


def test_a_pulumi_eks_cluster_the_plan_creates_holds_its_node_groups(judge):
    """The pulumi-eks component creates the cluster: the plan's node groups are all of it."""
    eks_cluster = resource("eks:index:Cluster", "ml", {"skipDefaultNodeGroup": True})
    result = judge([eks_cluster, *_group("gpus", "g6e.xlarge", [GPU_TAINT]), _pod("lonely", {"limits": {"nvidia.com/gpu": 1}})])
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "lonely") and not findings(
        result, "k8s-gpu-pod-tolerates-taint-unseen", "lonely"
    )


def test_node_groups_of_an_existing_cluster_give_an_advisory(judge):
    result = judge([*_group("gpus", "g6e.xlarge", [GPU_TAINT]), _pod("lonely", {"limits": {"nvidia.com/gpu": 1}})])
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "lonely") == []
    assert "not judged for certain: the plan joins an existing cluster, whose other node groups it does not hold" in one_finding(
        result, "k8s-gpu-pod-tolerates-taint-unseen", "lonely"
    )


# pulumi-eks examples/efa (tests/corpus_ts/third_party/eks-efa-ts/index.ts L37-L52), as its preview
# sends it: the release keeps the chart's names, and its resource name is short.
PUBLIC_EFA_RELEASE = {
    "version": "0.5.7",
    "chart": "aws-efa-k8s-device-plugin",
    "repositoryOpts": {"repo": "https://aws.github.io/eks-charts"},
    "namespace": "kube-system",
    "atomic": True,
    "values": {"tolerations": [{"key": "efa-enabled", "operator": "Exists", "effect": "NoExecute"}]},
}


def test_helm_release_names_fit(judge):
    long_name = "efa-device-plugin-for-the-performance-study-gpus"  # the public release renamed: the fault
    nvidia = {"chart": "nvidia-device-plugin", "version": "0.20.0", "namespace": "nvidia-device-plugin"}
    result = judge(
        [
            resource(RELEASE, "efa-device-plugin", PUBLIC_EFA_RELEASE),
            resource(RELEASE, long_name, PUBLIC_EFA_RELEASE),
            resource(RELEASE, "n" * 31, nvidia),
            resource(RELEASE, "m" * 32, nvidia),
            resource(RELEASE, "named", {**nvidia, "name": "m" * 32}),
            resource("kubernetes:helm.sh/v4:Chart", "c" * 53, {"chart": "local-ai"}),
            resource("kubernetes:helm.sh/v4:Chart", "chart", {"chart": "local-ai", "name": "c" * 54}),
        ]
    )
    for clean in ("efa-device-plugin", "n" * 31, "named", "c" * 53):
        assert findings(result, "helm-release-names-fit", clean) == []
    assert one_finding(result, "helm-release-names-fit", long_name).endswith(
        f"Helm release '{long_name}-<8 random hex>': its name is 57 characters; Helm takes at most 53"
    )
    assert "2 of its DaemonSets share the name" in one_finding(result, "helm-release-names-fit", "m" * 32)
    assert "is 54 characters; Helm takes at most 53" in one_finding(result, "helm-release-names-fit", "chart")
    assert {f.level for f in result.findings if f.policy == "helm-release-names-fit"} == {"advisory"}
