"""Bad ACK input: exit 2 naming the field, the value and the rule, before any resource exists. The
same predicates judge the pack's ACK rules (tests/policies/test_policies_ack.py)."""

from __future__ import annotations

import json

from tests.conftest import run_cli
from tests.conftest import at, refused_cases
from tests.ecs.test_spec_errors import _errors

STACK = "ack-shared-gpu"


# Each row: (stack, the field set, its value, what the error says).
test_refused = refused_cases({
    "percentage_33": (STACK, "gpufleet:ack.workloads[0].gpuCorePercentage", 33, ["gpufleet:ack.workloads[0].gpuCorePercentage = 33: gpu-core.percentage 33 is not one of 5..100 in steps of 5", "[rule: ack-gpu-core-percentage]"]),
    "compute_share_on_a_memory_only_pool": (STACK, "gpufleet:ack.workloads[1].gpuCorePercentage", 50, ["gpufleet:ack.workloads[1].nodePool = 't4-mem': a pod requesting aliyun.com/gpu-core.percentage needs a core_mem pool; this pool is cgpu", "[rule: ack-pool-sharing-mode]"]),
    "unknown_gpu_type_is_refused_not_guessed": (STACK, "gpufleet:ack.nodePools[0].instanceTypes", ["ecs.gn9x-c8g1.2xlarge"], ["gpufleet:ack.nodePools[0].instanceTypes[0] = 'ecs.gn9x-c8g1.2xlarge': ecs.gn9x-c8g1.2xlarge is not an ECS GPU type"]),
    "one_size_per_pool": (STACK, "gpufleet:ack.nodePools[1].autoscaling", {"minSize": 1, "maxSize": 3}, ["gpufleet:ack.nodePools[1]", "give exactly one of desiredSize (a fixed pool) and autoscaling"]),
    "a_workload_names_a_pool_of_the_stack": (STACK, "gpufleet:ack.workloads[0].nodePool", "nope", ["gpufleet:ack.workloads[0].nodePool = 'nope': no node pool of that name (pools: v100-core-mem, t4-mem)"]),
    "pool_names_are_unique": (STACK, "gpufleet:ack.nodePools[1].name", "v100-core-mem", ["gpufleet:ack.nodePools[1].name = 'v100-core-mem': node pool names must be unique [rule: names-unique]"]),
    "a_pool_taint_kubernetes_refuses_names_its_key": (STACK, "gpufleet:ack.nodePools[0].taint.key", "Example.COM/gpu", ["gpufleet:ack.nodePools[0].taint.key = 'Example.COM/gpu': 'Example.COM/gpu': the prefix must be a DNS subdomain", "[rule: k8s-node-labels]"]),
})


def test_gpu_mem_larger_than_the_gpu(refused):
    # ecs.gn6v-c8g1.8xlarge: 16,160 MiB per V100, advertised as 15 GiB.
    err = refused(STACK, "gpufleet:ack.workloads[0].gpuMemGib", 16)
    assert "gpufleet:ack.workloads[0].gpuMemGib = 16: gpu-mem 16 GiB does not fit one GPU of ecs.gn6v-c8g1.8xlarge (15 GiB)" in err
    assert "[rule: ack-gpu-mem-fits]" in err


def test_a_pool_of_mixed_types_fits_its_smallest_gpu(stack_variant):
    def edit(c):
        at(c, "gpufleet:ack")["nodePools"][1]["instanceTypes"] = ["ecs.gn6e-c12g1.12xlarge", "ecs.gn6i-c24g1.24xlarge"]
        at(c, "gpufleet:ack.workloads[1]")["gpuMemGib"] = 20

    err = _errors(stack_variant(edit, STACK))
    assert "gpufleet:ack.workloads[1].gpuMemGib = 20: gpu-mem 20 GiB does not fit one GPU of ecs.gn6i-c24g1.24xlarge (14 GiB)" in err


def test_unsupported_region(refused):
    err = refused(STACK, "gpufleet:ack.region", "eu-central-1")
    assert "gpufleet:ack.region = 'eu-central-1': node pool v100-core-mem (core_mem): GPU memory and computing power allocation is not supported in eu-central-1" in err
    assert "[rule: ack-region]" in err
    # The memory-only pool is not judged by the computing power allocation table.
    assert "t4-mem" not in err


def test_an_unsourced_size_of_a_known_family_is_refused(refused):
    # gn6v's V100 memory is sourced, but how many GPUs a 4xlarge has is not: no guess from its name.
    err = refused(STACK, "gpufleet:ack.nodePools[0].instanceTypes", ["ecs.gn6v-c8g1.4xlarge"])
    assert "gpufleet:ack.nodePools[0].instanceTypes[0] = 'ecs.gn6v-c8g1.4xlarge': ecs.gn6v-c8g1.4xlarge is not an ECS GPU type" in err
    assert "[rule: ack-gpu-type-known]" in err
    assert "[rule: ack-gpu-type-known]" in err


def test_prerequisite_versions(stack_variant):
    def edit(c):
        at(c, "gpufleet:ack").update(kubernetesVersion="1.18", cgpuVersion="1.0.4")
        at(c, "gpufleet:ack")["sharingComponent"]["version"] = "1.1.9"

    err = _errors(stack_variant(edit, STACK))
    assert "gpufleet:ack.kubernetesVersion = '1.18': Kubernetes 1.18 is older than 1.20" in err
    assert "gpufleet:ack.cgpuVersion = '1.0.4': cGPU 1.0.4 is older than 1.0.5" in err
    assert "gpufleet:ack.sharingComponent.version = '1.1.9': the GPU sharing chart (ack-ai-installer) 1.1.9 is older than 1.2.0" in err
    assert err.count("[rule: ack-cluster-prerequisites]") == 3


def test_in_cluster_pieces_need_a_context(stack_variant):
    err = _errors(stack_variant(lambda c: at(c, "gpufleet:ack").pop("kubernetes"), STACK))
    assert "gpufleet:ack.kubernetes = null: workloads and the sharing component are installed through the cluster: give kubernetes.context" in err


def test_an_empty_stack_names_all_three_platforms(stack_variant):
    err = _errors(stack_variant(lambda c: c.pop("gpufleet:ack"), STACK))
    assert "add gpufleet:ecs, gpufleet:eks, gpufleet:ack, gpufleet:gke or gpufleet:aks" in err


def test_ecs_without_a_region(stack_variant):
    err = _errors(stack_variant(lambda c: c.pop("gpufleet:region"), "ecs-gpu"))
    assert "gpufleet:region = (missing): ecs and eks need the AWS region of the stack [rule: region-required]" in err


def test_the_sharing_component_alone_needs_a_context(stack_variant):
    def edit(c):
        at(c, "gpufleet:ack").pop("kubernetes")
        at(c, "gpufleet:ack")["workloads"] = []

    err = _errors(stack_variant(edit, STACK))
    assert "gpufleet:ack.kubernetes = null: workloads and the sharing component are installed through the cluster" in err


def test_node_pools_alone_need_no_context(stack_variant):
    def edit(c):
        for key in ("kubernetes", "sharingComponent", "workloads"):
            at(c, "gpufleet:ack").pop(key)

    code, out, err = run_cli("preview", "--config-file", str(stack_variant(edit, STACK)), "--no-policy", "--json")
    assert code == 0, err
    assert {r["type"] for r in json.loads(out)["resources"]} & {"kubernetes:helm.sh/v3:Release", "kubernetes:batch/v1:Job"} == set()
