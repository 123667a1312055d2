"""policies/k8s.py: each rule with a violating and a clean fixture, judged by the pack over gRPC."""

from __future__ import annotations

from tests.policy_helpers import findings, resource

NG = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
RELEASE = "kubernetes:helm.sh/v3:Release"
GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NO_SCHEDULE"}


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
    [message] = findings(result, "k8s-extended-resources-requests-equal-limits", "overcommit")
    assert "nvidia.com/gpu request 1 != limit 2" in message
    [message] = findings(result, "k8s-extended-resources-requests-equal-limits", "no-limit")
    assert "aws.amazon.com/neuroncore 2 without a limit" in message


def test_gpu_pod_tolerates_taint(judge):
    gpu = {"limits": {"nvidia.com/gpu": 1}}
    toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    result = judge(
        [
            *_group("gpus", "g6e.xlarge", [GPU_TAINT]),
            _pod("tolerant", gpu, toleration, kind="kubernetes:batch/v1:Job"),
            _pod("intolerant", gpu, kind="kubernetes:batch/v1:Job"),
            _pod("cpu-only", {"limits": {"cpu": "1"}}),
        ]
    )
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "tolerant") == []
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "cpu-only") == []
    [message] = findings(result, "k8s-gpu-pod-tolerates-taint", "intolerant")
    assert "requests nvidia.com/gpu but tolerates no nvidia node group's taints (e.g. nvidia.com/gpu:NO_SCHEDULE)" in message


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
    [message] = findings(result, "k8s-device-plugin-tolerates-taints", "efa-defaults")
    assert "does not tolerate nvidia.com/gpu:NO_SCHEDULE of node group 'train'" in message
    assert findings(result, "k8s-device-plugin-tolerates-taints", "efa-tolerant") == []
    assert findings(result, "k8s-device-plugin-tolerates-taints", "nvidia-defaults") == []


def test_mig_supported(judge):
    mig = {"chart": "nvidia-device-plugin", "version": "0.20.0", "values": {"migStrategy": "single"}}
    a100 = judge([*_group("a100", "p4d.24xlarge", [GPU_TAINT]), resource(RELEASE, "plugin", mig)])
    assert findings(a100, "eks-mig-supported") == []
    l40s = judge([*_group("l40s", "g6e.xlarge", [GPU_TAINT]), resource(RELEASE, "plugin", mig)])
    [message] = findings(l40s, "eks-mig-supported", "plugin")
    assert "node group 'l40s': g6e.xlarge has NVIDIA L40S GPUs, which do not support MIG" in message


def test_cronjob_and_mpijob_pod_templates_are_judged(judge):
    """A CronJob's pod sits under jobTemplate; an MPIJob has a launcher and workers: each is read
    where it is and named in the finding."""
    overcommit = {"name": "main", "image": "x:1", "resources": {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}}}
    equal = {"name": "main", "image": "x:1", "resources": {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 1}}}
    cron = resource("kubernetes:batch/v1:CronJob", "nightly", {"spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": {"template": {"spec": {"containers": [overcommit]}}}}}})
    roles = {"Launcher": {"template": {"spec": {"containers": [equal]}}}, "Worker": {"template": {"spec": {"containers": [overcommit]}}}}
    mpi = resource("kubernetes:kubeflow.org/v2beta1:MPIJob", "nccl", {"spec": {"mpiReplicaSpecs": roles}})
    launcher_bad = resource("kubernetes:kubeflow.org/v2beta1:MPIJob", "launcher-bad", {"spec": {"mpiReplicaSpecs": {"Launcher": roles["Worker"]}}})
    policy = "k8s-extended-resources-requests-equal-limits"
    result = judge([cron, mpi, launcher_bad])
    [message] = findings(result, policy, "nightly")
    assert message.splitlines()[-1].startswith("spec.jobTemplate.spec.template.spec: ") and "nvidia.com/gpu request 1 != limit 2" in message
    [message] = findings(result, policy, "nccl")
    assert message.splitlines()[-1].startswith("spec.mpiReplicaSpecs.Worker.template.spec: ")
    [message] = findings(result, policy, "launcher-bad")
    assert message.splitlines()[-1].startswith("spec.mpiReplicaSpecs.Launcher.template.spec: ")
