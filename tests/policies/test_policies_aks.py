"""src/gpufleet/policies/aks.py: each rule with a violating and a clean fixture, judged by the pack over gRPC."""

from __future__ import annotations

from gpufleet.catalog import tokens
from tests.policy_helpers import findings, resource

CLUSTER = "/subscriptions/0/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c"


def _pool(name: str, vm_size: str, **extra) -> dict:
    inputs = {"name": name, "kubernetesClusterId": CLUSTER, "vmSize": vm_size, "nodeCount": 1, "mode": "User", "nodeTaints": ["sku=gpu:NoSchedule"], **extra}
    return resource(tokens.AKS_NODE_POOL, name, inputs)


def _operator(driver: bool, time_slicing: bool = False) -> dict:
    values: dict = {"driver": {"enabled": driver}}
    if time_slicing:
        values["devicePlugin"] = {"config": {"create": True, "name": "c", "default": "t", "data": {"t": "version: v1\nsharing:\n  timeSlicing:\n    resources: []"}}}
    return resource(tokens.HELM_RELEASE, "gpu-operator", {"chart": "gpu-operator", "values": values})


def test_vm_size_and_mig_profile(judge):
    result = judge(
        [
            _pool("a100", "Standard_NC24ads_A100_v4", gpuInstance="MIG3g"),
            _pool("t4mig", "Standard_NC4as_T4_v3", gpuInstance="MIG1g"),
            _pool("unknown", "Standard_NC6", gpuDriver="Install"),
            _pool("cpu", "Standard_D8s_v5", nodeTaints=[]),
        ]
    )
    assert findings(result, "aks-vm-size", "a100") == [] and findings(result, "aks-mig-profile", "a100") == []
    assert findings(result, "aks-vm-size", "cpu") == []
    assert "not a GPU VM size of the curated table" in findings(result, "aks-vm-size", "unknown")[0]
    assert "NVIDIA T4 does not support multi-instance GPUs" in findings(result, "aks-mig-profile", "t4mig")[0]


def test_exactly_one_driver(judge):
    pools = [_pool("aksdriver", "Standard_NC4as_T4_v3"), _pool("nodriver", "Standard_NC4as_T4_v3", gpuDriver="None")]
    result = judge(pools)
    # Unset means Install (GPUDriver's default).
    assert findings(result, "aks-gpu-driver", "aksdriver") == []
    assert "driver None leaves the nodes without a GPU driver" in findings(result, "aks-gpu-driver", "nodriver")[0]
    result = judge([*pools, _operator(driver=True)])
    assert findings(result, "aks-gpu-driver", "nodriver") == []
    assert "two drivers" in findings(result, "aks-gpu-driver", "aksdriver")[0]
    # The GPU Operator chart installs the driver unless told not to: driver.enabled unset is true.
    unset = resource(tokens.HELM_RELEASE, "gpu-operator", {"chart": "gpu-operator", "values": {}})
    assert "two drivers" in findings(judge([*pools, unset]), "aks-gpu-driver", "aksdriver")[0]
    as_text = resource(tokens.HELM_RELEASE, "gpu-operator", {"chart": "gpu-operator", "values": {"driver": {"enabled": "false"}}})
    assert findings(judge([*pools, as_text]), "aks-gpu-driver", "aksdriver") == []
    # Only the GPU Operator's release installs a driver: another chart's release is no second driver.
    plugin = resource(tokens.HELM_RELEASE, "nvidia-device-plugin", {"chart": "nvidia-device-plugin", "values": {}})
    assert findings(judge([*pools, plugin]), "aks-gpu-driver", "aksdriver") == []


def test_gpu_pools_are_tainted(judge):
    result = judge(
        [
            _pool("tainted", "Standard_NC4as_T4_v3"),
            _pool("open", "Standard_NC4as_T4_v3", nodeTaints=["team=ml:PreferNoSchedule"]),
            # key=value:Effect: a taint without its key or its effect is not one.
            _pool("keyless", "Standard_NC4as_T4_v3", nodeTaints=[":NoSchedule"]),
            _pool("no-effect", "Standard_NC4as_T4_v3", nodeTaints=["sku=gpu"]),
        ]
    )
    assert findings(result, "aks-gpu-pool-tainted", "tainted") == []
    for pool in ("open", "keyless", "no-effect"):
        [message] = findings(result, "aks-gpu-pool-tainted", pool)
        assert f"node pool {pool!r} has GPUs and no NoSchedule taint" in message and "add sku=gpu:NoSchedule" in message


def test_no_time_sharing_on_aks(judge):
    result = judge([_pool("t4", "Standard_NC4as_T4_v3", gpuDriver="None"), _operator(driver=True, time_slicing=True)])
    [message] = findings(result, "aks-time-sharing", "gpu-operator")
    assert "AKS does not support GPU time-sharing" in message
    result = judge([_pool("t4", "Standard_NC4as_T4_v3", gpuDriver="None"), _operator(driver=True)])
    assert findings(result, "aks-time-sharing") == []


def test_the_api_model(judge):
    result = judge(
        [
            _pool("ok", "Standard_NC24ads_A100_v4", gpuInstance="MIG1g", gpuDriver="Install", zones=["1"]),
            _pool("badenum", "Standard_NC24ads_A100_v4", gpuInstance="MIG5g"),
            _pool("badtype", "Standard_NC24ads_A100_v4", nodeCount="2"),
            _pool("unmapped", "Standard_NC24ads_A100_v4", kubeletConfig={"cpuManagerPolicy": "static"}),
        ]
    )
    assert findings(result, "aks-api-model", "ok") == []
    assert "properties.gpuInstanceProfile: 'MIG5g' is not one of MIG1g, MIG2g, MIG3g, MIG4g, MIG7g" in findings(result, "aks-api-model", "badenum")[0]
    assert "properties.count: an integer, not '2'" in findings(result, "aks-api-model", "badtype")[0]
    assert "inputs kubeletConfig have no mapping to the AKS API" in findings(result, "aks-api-model", "unmapped")[0]


def test_gke_and_aks_pods_tolerate_their_pools(judge):
    pod = lambda name, tolerations: resource(
        "kubernetes:apps/v1:Deployment",
        name,
        {"spec": {"template": {"spec": {"containers": [{"name": "m", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}], "tolerations": tolerations}}}},
    )
    sku = [{"key": "sku", "operator": "Exists", "effect": "NoSchedule"}]
    cluster = resource("azure:containerservice/kubernetesCluster:KubernetesCluster", "aks", {"name": "aks"})
    result = judge([cluster, _pool("t4", "Standard_NC4as_T4_v3"), pod("tolerates", sku), pod("untolerated", [])])
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "tolerates") == []
    assert "tolerates no nvidia node group's taints (e.g. sku=gpu:NoSchedule)" in findings(result, "k8s-gpu-pod-tolerates-taint", "untolerated")[0]
    assert findings(result, "k8s-gpu-pod-tolerates-taint-unseen", "untolerated") == []


def test_a_pool_of_an_existing_cluster_gives_an_advisory_naming_the_gap(judge):
    """The cluster's other pools are not in the plan: the pod may tolerate one of them."""
    pod = resource(
        "kubernetes:apps/v1:Deployment", "untolerated",
        {"spec": {"template": {"spec": {"containers": [{"name": "m", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}},
    )
    result = judge([_pool("t4", "Standard_NC4as_T4_v3"), pod])
    assert findings(result, "k8s-gpu-pod-tolerates-taint", "untolerated") == []
    [advisory] = findings(result, "k8s-gpu-pod-tolerates-taint-unseen", "untolerated")
    assert "does not tolerate sku=gpu:NoSchedule; not judged for certain: the plan joins an existing cluster" in advisory


def test_what_makes_a_pool_a_gpu_pool_for_the_vm_size_rule(judge):
    """Any one sign does: a MIG profile, a driver setting, or an NC/ND size; a size none of them names
    is a CPU pool, whatever it is called."""
    result = judge([
        _pool("by-profile", "Standard_X1", gpuInstance="MIG1g", nodeTaints=[]),
        _pool("by-driver", "Standard_X2", gpuDriver="Install", nodeTaints=[]),
        _pool("by-name-nd", "Standard_ND_unknown", nodeTaints=[]),
        _pool("cpu", "Standard_D8s_v5", nodeTaints=[]),
    ])
    for pool in ("by-profile", "by-driver", "by-name-nd"):
        assert "not a GPU VM size of the curated table" in findings(result, "aks-vm-size", pool)[0], pool
    assert findings(result, "aks-vm-size", "cpu") == []


def test_a_mig_profile_on_an_unknown_size_is_the_vm_size_rules(judge):
    result = judge([_pool("unknown", "Standard_NC6", gpuInstance="MIG1g")])
    assert findings(result, "aks-mig-profile", "unknown") == [] and findings(result, "aks-vm-size", "unknown") != []


def test_only_curated_gpu_pools_are_held_to_the_driver_and_taint_rules(judge):
    unknown = _pool("unknown-nc", "Standard_NC6", gpuDriver="None", nodeTaints=[])
    result = judge([unknown, _operator(driver=False)])
    assert findings(result, "aks-gpu-driver", "unknown-nc") == [] and findings(result, "aks-gpu-pool-tainted", "unknown-nc") == []
    other = resource("kubernetes:apps/v1:Deployment", "web", {"vmSize": "Standard_NC4as_T4_v3", "spec": {}})
    assert findings(judge([other]), "aks-gpu-pool-tainted") == []


def test_time_slicing_is_read_from_config_text_only(judge):
    pool = _pool("t4", "Standard_NC4as_T4_v3", gpuDriver="None")
    numbers = _operator(driver=True)
    numbers["inputs"]["values"]["devicePlugin"] = {"config": {"data": {"count": 3, "other": "version: v1"}}}
    assert findings(judge([pool, numbers]), "aks-time-sharing") == []
    other_chart = resource(tokens.HELM_RELEASE, "other", {"chart": "something-else", "values": {}})
    assert findings(judge([pool, other_chart]), "aks-time-sharing") == []


def test_nd_sizes_are_gpu_pools_and_no_execute_taints_keep_pods_off(judge):
    """Slips found unjudged: an ND size is a GPU pool by its name alone, and a NoExecute taint
    keeps other pods off as a NoSchedule one does."""
    result = judge(
        [
            _pool("nd-unknown", "Standard_ND_unlisted_v9"),
            _pool("nc-unknown", "Standard_NC_unlisted_v9"),
            _pool("no-execute", "Standard_NC24ads_A100_v4", nodeTaints=["sku=gpu:NoExecute"]),
        ]
    )
    assert findings(result, "aks-vm-size", "nd-unknown") and findings(result, "aks-vm-size", "nc-unknown")
    assert findings(result, "aks-gpu-pool-tainted", "no-execute") == []
