"""src/gpufleet/policies/ack.py: each rule with a violating and a clean fixture, judged by the pack over gRPC."""

from __future__ import annotations

from tests.policy_helpers import findings, one_finding, resource

POOL = "alicloud:cs/nodePool:NodePool"
RELEASE = "kubernetes:helm.sh/v3:Release"
SCHEDULE = "ack.node.gpu.schedule"


def _pool(name: str, mode: str | None, instance_type: str = "ecs.gn6v-c8g1.8xlarge", provider: dict | None = None) -> dict:
    labels = [{"key": "pool", "value": name}] + ([{"key": SCHEDULE, "value": mode}] if mode else [])
    pool = resource(POOL, name, {"clusterId": "c1", "instanceTypes": [instance_type], "vswitchIds": ["vsw-1"], "labels": labels})
    return {**pool, "provider": provider["urn"]} if provider else pool


def _provider(region: str) -> dict:
    return resource("pulumi:providers:alicloud", f"alicloud-{region}", {"region": region})


def _workload(name: str, limits: dict, selector: dict | None = None, kind: str = "kubernetes:batch/v1:Job") -> dict:
    spec = {"containers": [{"name": "main", "image": "x:1", "resources": {"limits": limits}}], "nodeSelector": selector or {}}
    return resource(kind, name, {"spec": {"template": {"spec": spec}}})


def test_core_percentage(judge):
    result = judge(
        [
            _workload("thirty", {"aliyun.com/gpu-mem": "2", "aliyun.com/gpu-core.percentage": "30"}),
            _workload(
                "thirty-three", {"aliyun.com/gpu-mem": 2, "aliyun.com/gpu-core.percentage": 33}, kind="kubernetes:apps/v1:Deployment"
            ),
            _workload("over", {"aliyun.com/gpu-core.percentage": "105"}),
        ]
    )
    assert findings(result, "ack-gpu-core-percentage", "thirty") == []
    assert "gpu-core.percentage 33 is not one of 5..100 in steps of 5" in one_finding(result, "ack-gpu-core-percentage", "thirty-three")
    assert findings(result, "ack-gpu-core-percentage", "over")


def test_gpu_mem_fits_one_gpu_of_the_selected_pool(judge):
    # gn6v: NVML reports 16,160 MiB per V100; the plugin advertises 15 GiB (004's example node).
    result = judge(
        [
            _pool("v100", "cgpu"),
            _workload("fits", {"aliyun.com/gpu-mem": "15"}, {"pool": "v100"}),
            _workload("too-big", {"aliyun.com/gpu-mem": "16"}, {"pool": "v100"}),
            _workload("elsewhere", {"aliyun.com/gpu-mem": "64"}, {"pool": "not-in-this-stack"}),
            _workload("one", {"aliyun.com/gpu-mem": "1"}, {"pool": "v100"}),
            _workload("none", {"aliyun.com/gpu-mem": "0"}, {"pool": "v100"}),
        ]
    )
    assert findings(result, "ack-gpu-mem-fits", "fits") == []
    assert findings(result, "ack-gpu-mem-fits", "one") == []
    assert "container 'main' on pool 'v100': gpu-mem 0 GiB: request at least 1 GiB; the pod never schedules" in one_finding(
        result, "ack-gpu-mem-fits", "none"
    )
    assert findings(result, "ack-gpu-mem-fits", "elsewhere") == []
    assert "gpu-mem 16 GiB does not fit one GPU of ecs.gn6v-c8g1.8xlarge (15 GiB)" in one_finding(result, "ack-gpu-mem-fits", "too-big")


def test_pool_sharing_mode(judge):
    compute = {"aliyun.com/gpu-mem": "2", "aliyun.com/gpu-core.percentage": "30"}
    memory = {"aliyun.com/gpu-mem": "2"}
    result = judge(
        [
            _pool("core", "core_mem"),
            _pool("mem", "cgpu"),
            _pool("plain", None),
            _workload("compute-on-core", compute, {"pool": "core"}),
            _workload("memory-on-mem", memory, {"pool": "mem"}),
            _workload("compute-on-mem", compute, {"pool": "mem"}),
            _workload("memory-on-core", memory, {"pool": "core"}),
            _workload("on-unlabelled", memory, {"pool": "plain"}),
            # The selector's own mode label decides when no pool of the stack matches.
            _workload("selector-says-cgpu", compute, {SCHEDULE: "cgpu"}),
        ]
    )
    for clean in ("compute-on-core", "memory-on-mem"):
        assert findings(result, "ack-pool-sharing-mode", clean) == []
    assert "needs a core_mem pool; this pool is cgpu" in one_finding(result, "ack-pool-sharing-mode", "compute-on-mem")
    assert "never both" in one_finding(result, "ack-pool-sharing-mode", "memory-on-core")
    assert "no GPU sharing mode" in one_finding(result, "ack-pool-sharing-mode", "on-unlabelled")
    assert findings(result, "ack-pool-sharing-mode", "selector-says-cgpu")


def test_region_of_core_mem_pools(judge):
    listed, unlisted = _provider("cn-hangzhou"), _provider("eu-central-1")
    result = judge(
        [
            listed,
            unlisted,
            _pool("in-region", "core_mem", provider=listed),
            _pool("out-of-region", "core_mem", provider=unlisted),
            _pool("memory-only", "cgpu", provider=unlisted),
        ]
    )
    assert findings(result, "ack-region", "in-region") == []
    assert findings(result, "ack-region", "memory-only") == []
    assert "not supported in eu-central-1" in one_finding(result, "ack-region", "out-of-region")


def test_cluster_prerequisites(judge):
    result = judge(
        [
            resource(RELEASE, "sharing-new", {"chart": "ack-ai-installer", "version": "1.2.0"}),
            resource(RELEASE, "sharing-old", {"chart": "ack-ai-installer", "version": "1.1.9"}),
            resource(
                "alicloud:cs/managedKubernetes:ManagedKubernetes",
                "old-cluster",
                {"version": "1.18.8-aliyun.1", "clusterSpec": "ack.pro.small"},
            ),
            resource(
                "alicloud:cs/managedKubernetes:ManagedKubernetes",
                "new-cluster",
                {"version": "1.28.3-aliyun.1", "clusterSpec": "ack.pro.small"},
            ),
        ]
    )
    assert findings(result, "ack-cluster-prerequisites", "sharing-new") == []
    assert findings(result, "ack-cluster-prerequisites", "new-cluster") == []
    assert "the GPU sharing chart (ack-ai-installer) 1.1.9 is older than 1.2.0" in one_finding(
        result, "ack-cluster-prerequisites", "sharing-old"
    )
    assert "Kubernetes 1.18.8-aliyun.1 is older than 1.20" in one_finding(result, "ack-cluster-prerequisites", "old-cluster")


def test_a_stack_config_too_large_for_the_environment_reaches_the_pack():
    """Linux bounds one environment string at 128 KiB: a 300 KB config used to stop the pack from
    starting ("Argument list too long"). It now travels in ConfigureStack, and the pack applies it:
    ack-region reads alicloud:region from the config (no provider in this fixture)."""
    from gpufleet.analyzer.client import PolicyPack
    from gpufleet.analyzer.pack_dir import DEFAULT_PACK
    from tests.policy_helpers import STACK, Judge

    config = {"alicloud:region": "eu-central-1", "gpufleet:padding": "x" * 300_000}
    pool = _pool("v100", "core_mem")
    with PolicyPack(DEFAULT_PACK, project="gpufleet", stack=STACK, config=config) as pack:
        result = Judge(pack)([pool])
    assert "eu-central-1" in one_finding(result, "ack-region", "v100")


def _pod_workload(name: str, containers: list[dict], selector: dict) -> dict:
    return resource("kubernetes:batch/v1:Job", name, {"spec": {"template": {"spec": {"containers": containers, "nodeSelector": selector}}}})


def test_a_percentage_given_in_requests_only_is_judged(judge):
    requests_only = _pod_workload(
        "req", [{"name": "c", "image": "x:1", "resources": {"requests": {"aliyun.com/gpu-core.percentage": 33}}}], {}
    )
    assert "requests: gpu-core.percentage 33" in one_finding(judge([requests_only]), "ack-gpu-core-percentage", "req")


def test_a_share_given_in_limits_and_requests_is_judged_once(judge):
    both = {"name": "c", "image": "x:1", "resources": {"limits": {"aliyun.com/gpu-mem": 16}, "requests": {"aliyun.com/gpu-mem": 16}}}
    assert len(findings(judge([_pool("v100", "cgpu"), _pod_workload("both", [both], {"pool": "v100"})]), "ack-gpu-mem-fits", "both")) == 1


def test_every_pool_and_container_is_judged_past_one_that_cannot_be(judge):
    unsourced = _pool("cpu", "cgpu", instance_type="ecs.g7.xlarge")
    unsourced["inputs"]["labels"].append({"key": "tier", "value": "shared"})
    sourced = _pool("v100", "cgpu")
    sourced["inputs"]["labels"].append({"key": "tier", "value": "shared"})
    unreadable = {"name": "first", "image": "x:1", "resources": {"limits": {"aliyun.com/gpu-mem": "lots"}}}
    big = {"name": "second", "image": "x:1", "resources": {"limits": {"aliyun.com/gpu-mem": 16}}}
    assert "container 'second' on pool 'v100': gpu-mem 16 GiB does not fit one GPU" in one_finding(
        judge([unsourced, sourced, _pod_workload("job", [unreadable, big], {"tier": "shared"})]), "ack-gpu-mem-fits", "job"
    )


def test_only_the_sharing_charts_release_is_held_to_its_version(judge):
    other = resource(RELEASE, "other", {"chart": "some-other-chart", "version": "0.1.0"})
    assert findings(judge([other]), "ack-cluster-prerequisites", "other") == []


def test_a_pool_of_no_known_region_is_said_not_judged(judge):
    """No provider, no alicloud:region in the pack's config, no ALICLOUD_REGION in its environment."""
    listed = _provider("cn-hangzhou")
    result = judge([listed, _pool("nowhere", "core_mem"), _pool("somewhere", "core_mem", provider=listed)])
    assert findings(result, "ack-region", "nowhere") == []
    [message] = findings(result, "rules-not-judged", "nowhere")
    assert message.endswith(
        "ack-region was not judged: no region known before apply (its provider's region, alicloud:region or ALICLOUD_REGION)"
    )
    assert findings(result, "rules-not-judged", "somewhere") == []
