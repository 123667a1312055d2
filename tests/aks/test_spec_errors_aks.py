"""Bad AKS input: exit 2 naming the field, the value and the rule, before any resource exists. The
same predicates judge the pack's AKS rules (tests/policies/test_policies_aks.py)."""

from __future__ import annotations

from gpufleet.components.catalog import catalog
from tests.ecs.test_spec_errors import _errors

AKS = catalog.load().facts.aks

MIG = "aks-a100-mig"
OPERATOR = "aks-gpu-operator"


def _aks(c) -> dict:
    return c["gpufleet:aks"]


def _pool(c, i: int = 0) -> dict:
    return _aks(c)["nodePools"][i]


def test_an_unknown_vm_size(stack_variant):
    err = _errors(stack_variant(lambda c: _pool(c).__setitem__("vmSize", "Standard_D8s_v5"), MIG))
    assert "gpufleet:aks.nodePools[0].vmSize = 'Standard_D8s_v5': not a GPU VM size of the curated table" in err and "[rule: aks-vm-size]" in err


def test_mig_on_a_gpu_without_it(stack_variant):
    err = _errors(stack_variant(lambda c: _pool(c).__setitem__("vmSize", "Standard_NC4as_T4_v3"), MIG))
    assert "gpufleet:aks.nodePools[0].migProfile = 'MIG1g': Standard_NC4as_T4_v3's NVIDIA T4 does not support multi-instance GPUs" in err
    assert "[rule: aks-mig-profile]" in err


def test_a_mig_profile_outside_the_enum(stack_variant):
    err = _errors(stack_variant(lambda c: _pool(c).__setitem__("migProfile", "MIG5g"), MIG))
    assert "gpufleet:aks.nodePools[0].migProfile = 'MIG5g': Input should be 'MIG1g', 'MIG2g', 'MIG3g', 'MIG4g' or 'MIG7g'" in err


def test_one_driver_per_node(stack_variant):
    err = _errors(stack_variant(lambda c: _pool(c).__setitem__("driver", "None"), MIG))
    assert "gpufleet:aks.nodePools[0].driver = 'None': driver None leaves the nodes without a GPU driver and no GPU Operator installs one" in err
    err = _errors(stack_variant(lambda c: _pool(c).__setitem__("driver", "Install"), OPERATOR))
    assert "AKS installs the driver (driver Install) and so does the GPU Operator: two drivers; turn one of them off [rule: aks-gpu-driver]" in err
    err = _errors(stack_variant(lambda c: _aks(c)["gpuOperator"].__setitem__("driver", False), OPERATOR))
    assert "driver None leaves the nodes without a GPU driver" in err


def test_time_sharing_is_refused_on_aks(stack_variant):
    err = _errors(stack_variant(lambda c: _aks(c)["gpuOperator"].__setitem__("timeSlicingReplicas", 4), OPERATOR))
    assert "gpufleet:aks.gpuOperator.timeSlicingReplicas = 4: AKS does not support GPU time-sharing" in err and "[rule: aks-time-sharing]" in err


def test_more_mig_instances_than_a_node_advertises(stack_variant):
    err = _errors(stack_variant(lambda c: _aks(c)["workloads"][0].__setitem__("gpus", 8), MIG))
    assert "gpufleet:aks.workloads[0].gpus = 8: a node of pool a100mig advertises 7 nvidia.com/gpu: the pods never schedule [rule: aks-gpus-fit-node]" in err


def test_names_and_access(stack_variant):
    err = _errors(stack_variant(lambda c: _pool(c).__setitem__("name", "a100-mig-pool"), MIG))
    assert "gpufleet:aks.nodePools[0].name = 'a100-mig-pool': String should match pattern" in err
    err = _errors(stack_variant(lambda c: _aks(c).pop("kubernetes"), MIG))
    assert "gpufleet:aks.kubernetes = null: AKS installs the driver but not the NVIDIA device plugin (003): give kubernetes.context" in err


def test_one_cluster_and_access_through_it(stack_variant):
    err = _errors(stack_variant(lambda c: _aks(c).pop("createCluster"), OPERATOR))
    assert "give exactly one of clusterId (an existing cluster) and createCluster [rule: aks-cluster]" in err
    err = _errors(stack_variant(lambda c: _aks(c).__setitem__("kubernetes", {"context": "inference"}), OPERATOR))
    assert "gpufleet:aks.kubernetes.context = 'inference': a cluster gpufleet creates is reached through its own kubeconfig: drop kubernetes [rule: kubernetes-access]" in err


def test_more_replicas_than_the_pool_holds_at_its_maximum(stack_variant):
    # Six NC24ads A100 v4 at most, 7 MIG1g instances each: 42; 50 leave 8 Pending.
    err = _errors(stack_variant(lambda c: _aks(c)["workloads"][0].__setitem__("replicas", 50), MIG))
    assert "gpufleet:aks.workloads[0].replicas = 50: Deployment default/embeddings: 8 of 50 Pending: 0/6 nodes are available: 6 Insufficient nvidia.com/gpu." in err
    assert "[rule: k8s-pods-schedulable]" in err


def test_a_workload_may_take_every_gpu_a_node_advertises(stack_variant):
    # Every MIG1g instance of a node is the most a pod can ask; twelve such pods need twelve nodes.
    size = AKS.vm_sizes["Standard_NC24ads_A100_v4"]
    per_node = size.count * AKS.mig_profiles[size.gpu]["MIG1g"]
    err = _errors(stack_variant(lambda c: _aks(c)["workloads"][0].__setitem__("gpus", per_node), MIG))
    assert "[rule: aks-gpus-fit-node]" not in err
    assert "gpufleet:aks.workloads[0].replicas = 12: Deployment default/embeddings: 6 of 12 Pending" in err


def test_the_gpu_operator_on_an_existing_cluster_needs_a_context(stack_variant):
    def edit(c):
        _aks(c).pop("kubernetes")
        _pool(c)["driver"] = "None"
        _aks(c)["gpuOperator"] = {"driver": True, "toolkit": True}

    err = _errors(stack_variant(edit, MIG))
    assert "gpufleet:aks.kubernetes = null: the GPU Operator is installed through the cluster: give kubernetes.context [rule: kubernetes-access]" in err


def test_a_whole_gpu_pool_advertises_its_gpus(stack_variant):
    # Standard_NC16as_T4_v3, without MIG: one nvidia.com/gpu per GPU of the node.
    gpus = AKS.vm_sizes["Standard_NC16as_T4_v3"].count
    err = _errors(stack_variant(lambda c: _aks(c)["workloads"][0].__setitem__("gpus", gpus + 1), OPERATOR))
    assert f"gpufleet:aks.workloads[0].gpus = {gpus + 1}: a node of pool t4op advertises {gpus} nvidia.com/gpu: the pods never schedule [rule: aks-gpus-fit-node]" in err
