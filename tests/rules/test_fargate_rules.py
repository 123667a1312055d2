"""Fargate's rules at their edges (curated `fargate`, the ECS and EKS guides' table), and which
clusters run EKS Auto Mode: an aws.eks Cluster by its compute configuration, a pulumi-eks Cluster
by its autoMode input, as its provider sets that configuration."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.rules import eks as eks_rules
from gpufleet.rules import fargate as rules

FACTS = catalog.load().facts
FARGATE = FACTS.fargate
GIB = 2**30


@pytest.mark.parametrize(
    "cpu, memory, units, mib",
    [(256, 512, 256, 512), ("1024", "2048", 1024, 2048), ("1 vCPU", "1GB", 1024, 1024), ("0.25 vcpu", "0.5 GB", 256, 512), (2048.0, " 4 gb ", 2048, 4096)],
)
def test_a_task_s_cpu_and_memory_read_as_ecs_registers_them(cpu, memory, units, mib):
    assert (rules.task_cpu_units(cpu), rules.task_memory_mib(memory)) == (units, mib)


@pytest.mark.parametrize("value", [None, True, 0, -256, "lots", "1 core", "256.5", {}, UNKNOWN])
def test_what_does_not_read_as_a_size_is_none(value):
    assert rules.task_cpu_units(value) is None and rules.task_memory_mib(value) is None


def test_every_pair_of_the_table_runs_and_its_neighbours_do_not():
    for size in FARGATE.sizes:
        memories = size.memories()
        for memory in memories:
            assert rules.task_size_problem(size.cpu, memory, FARGATE) is None, (size.cpu, memory)
        assert rules.task_size_problem(size.cpu, memories[0] - 512, FARGATE) is not None
        assert rules.task_size_problem(size.cpu, memories[-1] + 1024, FARGATE) is not None
        assert rules.task_size_problem(size.cpu + 1, memories[0], FARGATE) is not None
    # The guide's rows, spot-checked: two vCPU take 4 to 16 GB by the GB, eight take 16 to 60 by 4 GB.
    assert rules.task_size_problem(2048, 5120, FARGATE) is None and rules.task_size_problem(8192, 20480, FARGATE) is None
    assert rules.task_size_problem(8192, 17408, FARGATE) is not None


def test_pods_are_rounded_up_to_the_smallest_size_that_holds_them_and_fargate_s_share():
    """EKS's own example: 1 vCPU and 8 GB plus 256 MB is 2 vCPU and 9 GB; nothing requested is the
    smallest; 256 MiB of requests fill 0.25 vCPU's 512 MiB exactly with Fargate's 256, one byte more does not."""
    assert rules.pod_size({"cpu": 1000, "memory": 8 * GIB}, FARGATE) == (2048, 9216)
    assert rules.pod_size({}, FARGATE) == (256, 512)
    assert rules.pod_size({"memory": 256 * 2**20}, FARGATE) == (256, 512)
    assert rules.pod_size({"memory": 256 * 2**20 + 1}, FARGATE) == (256, 1024)
    assert rules.pod_size({"cpu": 251}, FARGATE) == (512, 1024)  # 251 millicores are more than 256/1024 of a vCPU
    assert rules.pod_size({"cpu": 16000, "memory": 120 * GIB}, FARGATE) is None
    assert rules.show_size(256, 512) == "0.25vCPU 0.5GB"


@pytest.mark.parametrize(
    "selector, namespace, labels, selected",
    [
        ({"namespace": "default"}, "default", None, True),
        ({"namespace": "prod*"}, "prod-metrics", {}, True),
        ({"namespace": "*dev"}, "team-dev", {}, True),
        ({"namespace": "value?"}, "valuea", {}, True),
        ({"namespace": "value?"}, "value-a", {}, False),
        ({"namespace": "a.b"}, "axb", {}, False),  # only * and ? are patterns
        ({"namespace": "apps", "labels": {"infrastructure": "fargate"}}, "apps", {"infrastructure": "fargate", "x": "y"}, True),
        ({"namespace": "apps", "labels": {"infrastructure": "fargate"}}, "apps", {"x": "y"}, False),
        ({"namespace": "apps", "labels": {"key?": "value?"}}, "apps", {"keya": "valueb"}, True),
        ({"namespace": "apps", "labels": {"infrastructure": "fargate"}}, "apps", None, None),  # labels not in the plan
        ({"namespace": UNKNOWN}, "apps", {}, None),
        ({"namespace": "apps"}, UNKNOWN, {}, None),
    ],
)
def test_a_profile_s_selector_matches_namespace_and_labels_with_its_wildcards(selector, namespace, labels, selected):
    assert rules.selects(selector, namespace, labels) is selected


def test_pods_fargate_cannot_run():
    assert rules.pod_problem({"nvidia.com/gpu": 1}, "nvidia.com/gpu", FARGATE) == "it requests nvidia.com/gpu, and Fargate offers no GPUs"
    assert rules.pod_problem({"cpu": 17000}, "nvidia.com/gpu", FARGATE).startswith("it requests 17 vCPU and 0 MiB, 256 MiB with what Fargate adds: more than")
    assert rules.pod_problem({"cpu": 16000, "memory": 100 * GIB}, "nvidia.com/gpu", FARGATE) is None


def test_auto_mode_of_either_cluster():
    eks, library = FACTS.eks, FACTS.libraries.pulumi_eks
    on = {"computeConfig": {"enabled": True, "nodePools": ["system"]}}
    assert eks_rules.auto_mode_pools("aws:eks/cluster:Cluster", on, eks, library) == ["system"]
    assert eks_rules.auto_mode_pools("aws:eks/cluster:Cluster", {"computeConfig": {"enabled": True}}, eks, library) == []
    assert eks_rules.auto_mode_pools("aws:eks/cluster:Cluster", {}, eks, library) is None
    assert eks_rules.auto_mode_pools("eks:index:Cluster", {"autoMode": {"enabled": True}}, eks, library) == library.auto_mode.node_pools
    given = {"autoMode": {"enabled": "true", "computeConfig": {"nodePools": ["general-purpose"]}}}
    assert eks_rules.auto_mode_pools("eks:index:Cluster", given, eks, library) == ["general-purpose"]
    for off in ({}, {"autoMode": {"enabled": False}}, {"autoMode": {"enabled": True, "computeConfig": {"enabled": False}}}, {"autoMode": {"enabled": UNKNOWN}}):
        assert eks_rules.auto_mode_pools("eks:index:Cluster", off, eks, library) is None, off
    assert eks_rules.auto_mode_pools("aws:eks/nodeGroup:NodeGroup", on, eks, library) is None
