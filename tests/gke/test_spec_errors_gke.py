"""Bad GKE input: exit 2 naming the field, the value and the rule, before any resource exists. The
same predicates judge the pack's GKE rules (tests/policies/test_policies_gke.py)."""

from __future__ import annotations

from tests.ecs.test_spec_errors import _errors
from tests.conftest import at, refused_cases, spec_errors

MIG = "gke-a100-mig"
SHARED = "gke-l4-timeshare"


def _slices_per_node() -> int:
    """nvidia.com/gpu one node of the MIG stack's pool advertises, from the curated GKE facts (the
    machine type's GPUs, times the partitions of its size per GPU), not typed here."""
    from gpufleet.catalog import catalog
    from gpufleet.rules import gke as gke_rules

    gke = catalog.load().facts.gke
    node = gke_rules.gpus("a2-highgpu-2g", None, None, gke)
    return gke_rules.gpu_resources_per_node(node, "1g.5gb", None, gke)


SLICES = _slices_per_node()


# Each row: (stack, the field set, its value, what the error says).
test_refused = refused_cases({
    "a_machine_type_that_is_not_a_gpu_type": (MIG, "gpufleet:gke.nodePools[0].machineType", "n2-standard-8", ["gpufleet:gke.nodePools[0].machineType = 'n2-standard-8': n2-standard-8: not a GPU machine type of the curated table", "[rule: gke-accelerator]"]),
    "a_bundled_type_with_another_count": (MIG, "gpufleet:gke.nodePools[0].accelerator", {"count": 4}, ['gpufleet:gke.nodePools[0].accelerator = {"count": 4}: a2-highgpu-2g: a2-highgpu-2g comes with 2 GPU(s); accelerator count 4 is not accepted']),
    "a_partition_size_of_another_gpu": (MIG, "gpufleet:gke.nodePools[0].partitionSize", "1g.10gb", ["gpufleet:gke.nodePools[0].partitionSize = '1g.10gb': 1g.10gb is not a partition size of nvidia-tesla-a100 (partition sizes: 1g.5gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb", "[rule: gke-mig-partition]"]),
    "mig_on_a_gpu_without_it": (SHARED, "gpufleet:gke.nodePools[0].partitionSize", "1g.5gb", ["nvidia-l4 does not support multi-instance GPUs", "[rule: gke-mig-partition]"]),
    "no_driver": (SHARED, "gpufleet:gke.nodePools[0].driver", "INSTALLATION_DISABLED", ["gpufleet:gke.nodePools[0].driver = 'INSTALLATION_DISABLED': INSTALLATION_DISABLED leaves the nodes without a GPU driver", "[rule: gke-gpu-driver]"]),
    "an_unknown_sharing_strategy_is_refused_by_its_enum": (SHARED, "gpufleet:gke.nodePools[0].sharing.strategy", "TIME_SLICING", ["gpufleet:gke.nodePools[0].sharing.strategy = 'TIME_SLICING': Input should be 'TIME_SHARING' or 'MPS'"]),
    "two_shared_gpus_per_container": (SHARED, "gpufleet:gke.workloads[0].gpus", 2, ["gpufleet:gke.workloads[0].gpus = 2: asks for 2 nvidia.com/gpu on nodes that share GPUs (TIME_SHARING)", "[rule: gke-shared-gpu-request]"]),
    "an_accelerator_refused_is_named_as_written": (MIG, "gpufleet:gke.nodePools[0].accelerator", {"type": "nvidia-l4"}, ['gpufleet:gke.nodePools[0].accelerator = {"type": "nvidia-l4"}: a2-highgpu-2g: ', "[rule: gke-accelerator]"]),
})


def test_an_n1_type_with_a_count_the_gpu_does_not_attach_in(stack_variant):
    def edit(c):
        pool = at(c, "gpufleet:gke.nodePools[0]")
        pool.update(machineType="n1-standard-8", accelerator={"type": "nvidia-tesla-t4", "count": 3})
        del pool["partitionSize"]

    err = _errors(stack_variant(edit, MIG))
    assert "nvidia-tesla-t4 attaches to N1 in counts of 1, 2, 4, not 3 [rule: gke-accelerator]" in err


def test_a_zone_that_does_not_offer_the_machine_series(refused):
    # a2-highgpu in us-central1: a, b, c, f (not d).
    err = refused(MIG, "gpufleet:gke.nodePools[0].zones", ["us-central1-a", "us-central1-d"])
    assert "gpufleet:gke.nodePools[0].zones[1] = 'us-central1-d': us-central1-d does not offer a2-highgpu (zones of us-central1 that do: us-central1-a, us-central1-b, us-central1-c, us-central1-f) [rule: gke-zone]" in err


def test_a_zone_of_another_region_and_an_uncurated_region(refused, stack_variant):
    err = refused(MIG, "gpufleet:gke.nodePools[0].zones", ["europe-west4-a"])
    assert "europe-west4-a is not a zone of the cluster's region us-central1 [rule: gke-zone]" in err

    def elsewhere(c):
        c["gpufleet:gke"]["region"] = "asia-northeast1"
        at(c, "gpufleet:gke.nodePools[0]")["zones"] = ["asia-northeast1-a"]

    err = _errors(stack_variant(elsewhere, MIG))
    assert "the zones of asia-northeast1 that offer a2-highgpu are not curated" in err


def test_more_partitions_than_a_node_advertises(refused):
    err = refused(MIG, "gpufleet:gke.workloads[1].gpus", SLICES + 1)
    assert (
        f"gpufleet:gke.workloads[1].gpus = {SLICES + 1}: a node of pool a100-mig advertises {SLICES} nvidia.com/gpu: "
        "the pods never schedule [rule: gke-gpus-fit-node]"
    ) in err


def test_pool_size_and_cluster_access(stack_variant):
    def edit(c):
        at(c, "gpufleet:gke.nodePools[0]")["autoscaling"] = {"minNodeCount": 0, "maxNodeCount": 2}
        del c["gpufleet:gke"]["kubernetes"]

    err = _errors(stack_variant(edit, MIG))
    assert "give exactly one of nodeCount (a fixed pool) and autoscaling" in err and "[rule: gke-pool-size]" in err
    err = _errors(stack_variant(lambda c: c["gpufleet:gke"].pop("kubernetes"), MIG))
    assert "gpufleet:gke.kubernetes = null: workloads, the GPU Operator and a DRA pool's drivers on an existing cluster are installed through its kubeconfig: give kubernetes.context [rule: kubernetes-access]" in err


def test_more_replicas_than_the_pool_holds(refused):
    # Two a2-highgpu-2g nodes (one per zone) hold 2 x SLICES 1g.5gb slices: two notebooks more
    # stay Pending, and the eval job's 2-slice pods find no node with 2 free.
    replicas = 2 * SLICES + 2
    err = refused(MIG, "gpufleet:gke.workloads[0].replicas", replicas)
    assert (
        f"gpufleet:gke.workloads[0].replicas = {replicas}: Deployment default/notebooks: 2 of {replicas} Pending: "
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    ) in err
    assert "[rule: k8s-pods-schedulable]" in err


def test_a_workload_without_the_pool_s_capacity_fits_after_scale_up(stack_variant):
    # 8 shares at the minimum (2 nodes x 4); 20 fit the maximum of 8 nodes: no refusal.
    from tests.conftest import run_cli

    code, _, err = run_cli("preview", "--config-file", str(stack_variant(lambda c: at(c, "gpufleet:gke.workloads[0]").__setitem__("replicas", 20), SHARED)), "--json")
    assert code == 0, err


def test_a_workload_may_take_every_slice_a_node_advertises(refused):
    err = refused(MIG, "gpufleet:gke.workloads[1].gpus", SLICES)
    assert "[rule: gke-gpus-fit-node]" not in err
    assert "gpufleet:gke.workloads[1].replicas = 4: Job default/eval: " in err and "[rule: k8s-pods-schedulable]" in err


def test_every_workload_and_zone_is_judged_past_a_problem(stack_variant):
    def edit(c):
        at(c, "gpufleet:gke.workloads[0]")["nodePool"] = "missing"
        at(c, "gpufleet:gke.workloads[1]")["gpus"] = SLICES + 1
        at(c, "gpufleet:gke.nodePools[0]")["zones"] = ["us-central1-a", "us-central1-a", "us-central1-d"]

    err = _errors(stack_variant(edit, MIG))
    assert "gpufleet:gke.workloads[0].nodePool = 'missing': no node pool of that name (pools: a100-mig) [rule: node-pool-exists]" in err
    assert f"gpufleet:gke.workloads[1].gpus = {SLICES + 1}: a node of pool a100-mig advertises {SLICES} nvidia.com/gpu" in err
    assert "gpufleet:gke.nodePools[0].zones[1] = 'us-central1-a': each zone is named once [rule: names-unique]" in err
    assert "gpufleet:gke.nodePools[0].zones[2] = 'us-central1-d': us-central1-d does not offer a2-highgpu" in err
    # An existing cluster is reached through the context the stack gives: no access problem.
    assert "kubernetes-access" not in err


def test_a_created_cluster_needs_no_context(stack_variant):
    for kubernetes in (None, {}):
        def edit(c):
            at(c, "gpufleet:gke.workloads[0]")["nodePool"] = "missing"
            if kubernetes is not None:
                c["gpufleet:gke"]["kubernetes"] = kubernetes

        err = _errors(stack_variant(edit, SHARED))
        assert "[rule: node-pool-exists]" in err and "kubernetes-access" not in err


def test_a_cluster_name_too_long_for_the_gpu_operator_s_release(stack_variant):
    """The provider names the release "<cluster>-gpu-operator-<8 random hex>": Helm takes 53 characters."""

    def edit(c):
        c["gpufleet:gke"]["cluster"]["name"] = "c" * 32
        c["gpufleet:gke"]["gpuOperator"] = {}

    err = spec_errors(stack_variant(edit, SHARED))
    assert f"gpufleet:gke.cluster.name = '{'c' * 32}': the Helm release '{'c' * 32}-gpu-operator-<8 random hex>' of chart gpu-operator" in err
    assert "of chart gpu-operator: its name is 54 characters; Helm takes at most 53; a name of at most 31 characters fits" in err
    assert "[rule: helm-names-fit]" in err


DRA = "gke-l4-dra"

# GKE's DRA pools (docs/dra.md "GKE and AKS"): each refusal with the source it cites.
test_refused_on_a_dra_pool = refused_cases({
    "a_cluster_older_than_the_dra_api": (DRA, "gpufleet:gke.cluster.create.version", "1.33", ["gpufleet:gke.cluster.create.version = '1.33': node pool l4-dra: Kubernetes 1.33 does not serve resource.k8s.io/v1: it needs 1.34 or later", "[rule: dra-api-version]"]),
    "a_cluster_version_left_to_the_channel": (DRA, "gpufleet:gke.cluster.create.version", None, ["gpufleet:gke.cluster.create.version = null: node pool l4-dra: the cluster's Kubernetes version is not known", "[rule: dra-api-version]"]),
    "gke_installing_the_driver": (DRA, "gpufleet:gke.nodePools[0].driver", "LATEST", ["gpufleet:gke.nodePools[0].driver = 'LATEST': GKE installs the driver with LATEST, which GKE does not support with DRA: use INSTALLATION_DISABLED", "set-up-dra", "[rule: gke-gpu-driver]"]),
    "gke_time_sharing": (DRA, "gpufleet:gke.nodePools[0].sharing", {"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": 2}, ["gpufleet:gke.nodePools[0].sharing = 'TIME_SHARING': sharing TIME_SHARING on a pool with allocation: dra: GKE's DRA guide lists time-sharing GPUs", "[rule: gke-dra-sharing]"]),
    "a_mig_claim": (DRA, "gpufleet:gke.workloads[0].migProfile", "1g.5gb", ["gpufleet:gke.workloads[0].migProfile = '1g.5gb': migProfile 1g.5gb on a pool with allocation: dra", "multi-instance GPUs", "[rule: gke-dra-sharing]"]),
    "gke_s_device_plugin_back_on": (DRA, "gpufleet:gke.nodePools[0].labels", {"gke-no-default-nvidia-gpu-device-plugin": "false"}, ["gpufleet:gke.nodePools[0].labels.gke-no-default-nvidia-gpu-device-plugin = 'false': a DRA pool's nodes carry gke-no-default-nvidia-gpu-device-plugin=true: both the NVIDIA device plugin and the DRA driver would allocate its GPUs", "[rule: dra-one-allocator]"]),
    "a_shared_claim_on_a_device_plugin_pool": (SHARED, "gpufleet:gke.workloads[0].sharedGpu", True, ["gpufleet:gke.workloads[0].sharedGpu = true: node pool l4-shared serves nvidia.com/gpu: claims need its allocation: dra [rule: dra-claims]"]),
})


def test_a_dra_pool_with_mig_partitions(stack_variant):
    def edit(c):
        at(c, "gpufleet:gke.nodePools[0]").update(machineType="a2-highgpu-2g", zones=["us-central1-a"], partitionSize="1g.5gb")

    err = _errors(stack_variant(edit, DRA))
    assert "gpufleet:gke.nodePools[0].partitionSize = '1g.5gb': partitionSize 1g.5gb on a pool with allocation: dra" in err
    assert "[rule: gke-dra-sharing]" in err


def test_the_gpu_operator_s_driver_beside_gke_s_installer(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:gke"].update(gpuOperator={"driver": True}), DRA))
    assert "the GPU Operator would install a second driver on the pool, where GKE's DRA guide has GKE's NVIDIA driver installer install it" in err
    assert "[rule: gke-gpu-driver]" in err


def test_a_dra_pool_of_an_existing_cluster_needs_access_and_its_version(stack_variant):
    def edit(c):
        c["gpufleet:gke"]["cluster"].pop("create")
        c["gpufleet:gke"]["workloads"] = []

    err = _errors(stack_variant(edit, DRA))
    assert "gpufleet:gke.kubernetes = null: workloads, the GPU Operator and a DRA pool's drivers on an existing cluster" in err
    assert "gpufleet:gke.nodePools[0].allocation = 'dra': node pool l4-dra: the cluster's Kubernetes version is not known" in err
