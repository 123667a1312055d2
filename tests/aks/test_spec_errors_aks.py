"""Bad AKS input: exit 2 naming the field, the value and the rule, before any resource exists. The
same predicates judge the pack's AKS rules (tests/policies/test_policies_aks.py)."""

from __future__ import annotations

from gpufleet.catalog import catalog
from tests.ecs.test_spec_errors import _errors
from tests.conftest import at, refused_cases

AKS = catalog.load().facts.aks

MIG = "aks-a100-mig"
OPERATOR = "aks-gpu-operator"


# Each row: (stack, the field set, its value, what the error says).
test_refused = refused_cases({
    "an_unknown_vm_size": (MIG, "gpufleet:aks.nodePools[0].vmSize", "Standard_D8s_v5", ["gpufleet:aks.nodePools[0].vmSize = 'Standard_D8s_v5': not a GPU VM size of the curated table", "[rule: aks-vm-size]"]),
    "mig_on_a_gpu_without_it": (MIG, "gpufleet:aks.nodePools[0].vmSize", "Standard_NC4as_T4_v3", ["gpufleet:aks.nodePools[0].migProfile = 'MIG1g': Standard_NC4as_T4_v3's NVIDIA T4 does not support multi-instance GPUs", "[rule: aks-mig-profile]"]),
    "a_mig_profile_outside_the_enum": (MIG, "gpufleet:aks.nodePools[0].migProfile", "MIG5g", ["gpufleet:aks.nodePools[0].migProfile = 'MIG5g': Input should be 'MIG1g', 'MIG2g', 'MIG3g', 'MIG4g' or 'MIG7g'"]),
    "time_sharing_is_refused_on_aks": (OPERATOR, "gpufleet:aks.gpuOperator.timeSlicingReplicas", 4, ["gpufleet:aks.gpuOperator.timeSlicingReplicas = 4: AKS does not support GPU time-sharing", "[rule: aks-time-sharing]"]),
    "dra_until_aks_documents_it": (MIG, "gpufleet:aks.nodePools[0].allocation", "dra", ["gpufleet:aks.nodePools[0].allocation = 'dra': AKS does not document DRA for GPU node pools yet", "github.com/Azure/AKS/issues/5962", "[rule: aks-dra]"]),
    "more_mig_instances_than_a_node_advertises": (MIG, "gpufleet:aks.workloads[0].gpus", 8, ["gpufleet:aks.workloads[0].gpus = 8: a node of pool a100mig advertises 7 nvidia.com/gpu: the pods never schedule [rule: aks-gpus-fit-node]"]),
})


def test_one_driver_per_node(refused):
    err = refused(MIG, "gpufleet:aks.nodePools[0].driver", "None")
    assert "gpufleet:aks.nodePools[0].driver = 'None': driver None leaves the nodes without a GPU driver and no GPU Operator installs one" in err
    err = refused(OPERATOR, "gpufleet:aks.nodePools[0].driver", "Install")
    assert "AKS installs the driver (driver Install) and so does the GPU Operator: two drivers; turn one of them off [rule: aks-gpu-driver]" in err
    err = refused(OPERATOR, "gpufleet:aks.gpuOperator.driver", False)
    assert "driver None leaves the nodes without a GPU driver" in err


def test_names_and_access(refused, stack_variant):
    err = refused(MIG, "gpufleet:aks.nodePools[0].name", "a100-mig-pool")
    assert "gpufleet:aks.nodePools[0].name = 'a100-mig-pool': String should match pattern" in err
    err = _errors(stack_variant(lambda c: at(c, "gpufleet:aks").pop("kubernetes"), MIG))
    assert "gpufleet:aks.kubernetes = null: AKS installs the driver but not the NVIDIA device plugin (003): give kubernetes.context" in err


def test_one_pool_whose_driver_aks_installs_needs_the_device_plugin(stack_variant):
    """Any pool, not only when every pool takes AKS's driver: a second pool without one is beside the point."""

    def edit(c):
        aks = at(c, "gpufleet:aks")
        aks.pop("kubernetes")
        aks["nodePools"].insert(0, {**aks["nodePools"][0], "name": "nodriver", "driver": "None", "migProfile": None})
        aks["nodePools"][0].pop("migProfile")

    err = _errors(stack_variant(edit, MIG))
    assert "gpufleet:aks.kubernetes = null: AKS installs the driver but not the NVIDIA device plugin (003)" in err


def test_one_cluster_and_access_through_it(refused, stack_variant):
    err = _errors(stack_variant(lambda c: at(c, "gpufleet:aks").pop("createCluster"), OPERATOR))
    assert "give exactly one of clusterId (an existing cluster) and createCluster [rule: aks-cluster]" in err
    err = refused(OPERATOR, "gpufleet:aks.kubernetes", {"context": "inference"})
    assert "gpufleet:aks.kubernetes.context = 'inference': a cluster gpufleet creates is reached through its own kubeconfig: drop kubernetes [rule: kubernetes-access]" in err


def test_more_replicas_than_the_pool_holds_at_its_maximum(refused):
    # Six NC24ads A100 v4 at most, 7 MIG1g instances each: 42; 50 leave 8 Pending.
    err = refused(MIG, "gpufleet:aks.workloads[0].replicas", 50)
    assert "gpufleet:aks.workloads[0].replicas = 50: Deployment default/embeddings: 8 of 50 Pending: 0/6 nodes are available: 6 Insufficient nvidia.com/gpu." in err
    assert "[rule: k8s-pods-schedulable]" in err


def test_a_workload_may_take_every_gpu_a_node_advertises(refused):
    # Every MIG1g instance of a node is the most a pod can ask; twelve such pods need twelve nodes.
    size = AKS.vm_sizes["Standard_NC24ads_A100_v4"]
    per_node = size.count * AKS.mig_profiles[size.gpu]["MIG1g"]
    err = refused(MIG, "gpufleet:aks.workloads[0].gpus", per_node)
    assert "[rule: aks-gpus-fit-node]" not in err
    assert "gpufleet:aks.workloads[0].replicas = 12: Deployment default/embeddings: 6 of 12 Pending" in err


def test_the_gpu_operator_on_an_existing_cluster_needs_a_context(stack_variant):
    def edit(c):
        at(c, "gpufleet:aks").pop("kubernetes")
        at(c, "gpufleet:aks.nodePools[0]")["driver"] = "None"
        at(c, "gpufleet:aks")["gpuOperator"] = {"driver": True, "toolkit": True}

    err = _errors(stack_variant(edit, MIG))
    assert "gpufleet:aks.kubernetes = null: the GPU Operator is installed through the cluster: give kubernetes.context [rule: kubernetes-access]" in err


def test_a_whole_gpu_pool_advertises_its_gpus(refused):
    # Standard_NC16as_T4_v3, without MIG: one nvidia.com/gpu per GPU of the node.
    gpus = AKS.vm_sizes["Standard_NC16as_T4_v3"].count
    err = refused(OPERATOR, "gpufleet:aks.workloads[0].gpus", gpus + 1)
    assert f"gpufleet:aks.workloads[0].gpus = {gpus + 1}: a node of pool t4op advertises {gpus} nvidia.com/gpu: the pods never schedule [rule: aks-gpus-fit-node]" in err
