"""What a DRA node group changes in the cluster's installs: the device plugin's affinity leaves its
nodes, the DRA driver's kubelet plugin selects them, its workloads claim instead of asking nvidia.com/gpu."""

from __future__ import annotations

from gpufleet.catalog import catalog, charts
from gpufleet.eks.args import NodeGroupArgs
from gpufleet.eks.resolved import served_groups
from gpufleet.k8s.args import ClaimedGpuWorkloadArgs, NvidiaDevicePluginArgs
from gpufleet.k8s.device_plugins import ServedGroups, release_values
from gpufleet.k8s.dra_claims import workload_claim
from gpufleet.k8s.dra_driver import driver_values

CAT = catalog.load()
OFF = {"key": "nvidia.com/gpu.deploy.device-plugin", "operator": "NotIn", "values": ["false"]}
TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}


def _group(name: str, allocation: str) -> NodeGroupArgs:
    return NodeGroupArgs.model_validate(
        {"name": name, "instanceType": "p4d.24xlarge", "minSize": 0, "desiredSize": 0, "maxSize": 1, "allocation": allocation}
    )


def test_plugin_serves_only_device_plugin_groups():
    served = served_groups([_group("a", "device-plugin"), _group("b", "dra")], CAT)
    assert served.needs("nvidia") and served.needs("dra")
    only_dra = served_groups([_group("b", "dra")], CAT)
    assert not only_dra.needs("nvidia") and only_dra.dra


def test_plugin_affinity_excludes_dra_nodes():
    """Every term of the chart's affinity (ORed) also excludes the DRA nodes; without a DRA group the chart's own stays."""
    mixed = release_values(ServedGroups([TAINT], [], [], needed=frozenset({"nvidia", "dra"}), dra=[TAINT]), NvidiaDevicePluginArgs(), CAT)
    terms = mixed["nvidiaDevicePlugin"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    chart_terms = charts.defaults(CAT.facts.charts.nvidia_device_plugin)["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert len(terms) == len(chart_terms) == 3
    assert all(
        term["matchExpressions"][-1] == OFF and term["matchExpressions"][:-1] == c["matchExpressions"]
        for term, c in zip(terms, chart_terms)
    )
    plain = release_values(ServedGroups([TAINT], [], [], needed=frozenset({"nvidia"})), NvidiaDevicePluginArgs(), CAT)
    assert "affinity" not in plain["nvidiaDevicePlugin"]


def test_driver_runs_on_dra_nodes_tolerating_their_taints():
    values = driver_values([{"key": "dedicated", "value": "inference", "effect": "NO_SCHEDULE"}], CAT)
    assert values["kubeletPlugin"]["nodeSelector"] == {"nvidia.com/gpu.deploy.device-plugin": "false"}
    assert values["kubeletPlugin"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert values["gpuResourcesEnabledOverride"] is True


def _workload(**given) -> ClaimedGpuWorkloadArgs:
    return ClaimedGpuWorkloadArgs.model_validate({"name": "w", "nodePool": "b", "image": "x:1", **given})


def test_whole_gpus_claim_the_gpu_class():
    claim = workload_claim(_workload(gpus=2), CAT.facts.dra)
    assert claim.kind == "ResourceClaimTemplate" and claim.pod_reference() == {"name": "gpu", "resourceClaimTemplateName": "w-gpu"}
    assert claim.spec["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}
    ]


def test_shared_gpu_is_one_claim_for_all_pods():
    claim = workload_claim(_workload(sharedGpu=True), CAT.facts.dra)
    assert claim.kind == "ResourceClaim" and claim.pod_reference() == {"name": "gpu", "resourceClaimName": "w-shared-gpu"}
    assert claim.spec["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.nvidia.com"
