"""src/gpufleet/rules/ack.py: the 004 rules of ACK shared GPU scheduling (groundwork of issue 7)."""

from __future__ import annotations

import pytest

from gpufleet.rules import ack as ack_rules
from gpufleet.catalog import catalog

ACK = catalog.load().facts.ack


@pytest.mark.parametrize("value", [5, 30, 95, 100])
def test_valid_core_percentages(value):
    assert ack_rules.core_percentage(value, ACK) is None


@pytest.mark.parametrize("value", [0, 4, 33, 101, 105, 2.5, True, "30"])
def test_invalid_core_percentages(value):
    assert ack_rules.core_percentage(value, ACK) is not None


def test_percentage_33_is_refused_with_the_rule():
    assert "5..100 in steps of 5" in ack_rules.core_percentage(33, ACK)


def test_gpu_memory_fits_one_gpu():
    # 004's example node: a V100 reports 15 GiB of aliyun.com/gpu-mem per GPU.
    assert ack_rules.gpu_mem_fits(2, 15, "ecs.gn6v-c8g1.2xlarge") is None
    assert "does not fit one GPU" in ack_rules.gpu_mem_fits(16, 15, "ecs.gn6v-c8g1.2xlarge")


def test_one_sharing_mode_per_node():
    assert ack_rules.sharing_mode_allows("core_mem", True, ACK) is None
    assert ack_rules.sharing_mode_allows("cgpu", False, ACK) is None
    assert "needs a core_mem pool" in ack_rules.sharing_mode_allows("cgpu", True, ACK)
    assert "never both" in ack_rules.sharing_mode_allows("core_mem", False, ACK)
    assert "no GPU sharing mode" in ack_rules.sharing_mode_allows(None, True, ACK)


def test_regions_of_004():
    assert ack_rules.sharing_region("cn-hangzhou", "core_mem", ACK) is None and ack_rules.sharing_region("ap-northeast-1", "core_mem", ACK) is None
    assert "not supported in eu-central-1" in ack_rules.sharing_region("eu-central-1", "core_mem", ACK)
    # The table is of computing power allocation: a memory-only pool is not judged by it.
    assert ack_rules.sharing_region("eu-central-1", "cgpu", ACK) is None


def test_prerequisites_judge_only_known_versions():
    assert ack_rules.cluster_prerequisites("1.28", "1.2.0", "1.0.5", ACK) == {}
    assert ack_rules.cluster_prerequisites(None, None, None, ACK) == {}
    problems = ack_rules.cluster_prerequisites("1.18", "1.1.9", "1.0.4", ACK)
    assert sorted(problems) == ["cgpu", "chart", "kubernetes"] and "Kubernetes 1.18 is older than 1.20" in problems["kubernetes"]


def test_a_pool_of_types_without_sourced_gpus_shows_none_in_the_fleet_view():
    """A plan's ACK pool (a `pulumi preview --json` of any program) of types whose GPUs no source
    gives: the diff and the diagram count 0 GPUs per node, not a guess."""
    from gpufleet.catalog import tokens
    from gpufleet.plans.groups import accelerated_groups
    from gpufleet.plans.index import from_plan

    unsourced = "ecs.g7.xlarge"
    assert ack_rules.gpu_type(unsourced, ACK) is None
    urn = f"urn:pulumi:dev::p::{tokens.ACK_NODE_POOL}::cpu"
    pool = {"urn": urn, "type": tokens.ACK_NODE_POOL, "name": "cpu", "inputs": {"instanceTypes": [unsourced], "desiredSize": 2}}
    group = accelerated_groups(from_plan({"resources": [pool]}))[urn].as_dict()
    assert (group["perInstance"]["gpus"], group["total"]["gpus"]) == (0, 0)


def test_a_pool_of_mixed_types_guarantees_the_fewest_gpus():
    assert ack_rules.pool_gpus(["ecs.gn6i-c24g1.24xlarge", "ecs.gn6i-c24g1.12xlarge"], ACK) == 2
    assert ack_rules.pool_gpus(["ecs.gn6v-c8g1.16xlarge", "unsourced.type"], ACK) == 8
    assert ack_rules.pool_gpus(["unsourced.type"], ACK) == 0
