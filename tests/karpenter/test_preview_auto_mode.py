"""The shipped EKS Auto Mode stack: its golden plan; the cluster's request as Auto Mode needs it (the
pack's capability rule passes it); the NodePool against the pinned Karpenter CRD and its NodeClass
holding only the fields of Auto Mode's specification; no device plugin or Karpenter of gpufleet's;
and what Auto Mode cannot do, refused with its source."""

from __future__ import annotations

import json

from gpufleet.apis import karpenter as karpenter_api
from gpufleet.catalog import catalog, tokens
from tests.conftest import check_golden, plans_of, refused_cases

STACK = "eks-auto-gpu"
POOL = "gpufleet:eks.nodePools"
plans = plans_of((STACK,))


def _of(plan: dict, token: str) -> list[dict]:
    return [r["inputs"] for r in plan["resources"] if r["type"] == token]


def test_plan_matches_golden(plans):
    """Regenerate with GPUFLEET_UPDATE_GOLDEN=1 after an intended change, then read the diff."""
    check_golden(plans[STACK], STACK)
    assert plans[STACK]["policy"]["violations"] == []


def test_the_cluster_turns_on_auto_mode_s_three_capabilities_together(plans):
    [cluster] = _of(plans[STACK], tokens.EKS_CLUSTER)
    assert cluster["computeConfig"]["enabled"] is True and cluster["computeConfig"]["nodePools"] == ["general-purpose", "system"]
    assert cluster["storageConfig"] == {"blockStorage": {"enabled": True}}
    assert cluster["kubernetesNetworkConfig"]["elasticLoadBalancing"] == {"enabled": True}
    assert cluster["bootstrapSelfManagedAddons"] is False
    roles = {r["description"]: json.loads(r["assumeRolePolicy"]) for r in _of(plans[STACK], "aws:iam/role:Role")}
    assert roles["EKS Auto Mode cluster (gpufleet)"]["Statement"][0]["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    policies = sorted(a["policyArn"].rsplit("/", 1)[-1] for a in _of(plans[STACK], "aws:iam/rolePolicyAttachment:RolePolicyAttachment"))
    build = catalog.load().facts.eks.auto_mode.build
    assert policies == sorted([*build.cluster_policies, *build.node_policies])


def test_gpufleet_installs_no_plugin_karpenter_or_system_group_under_auto_mode(plans):
    charts = [r["chart"] for r in _of(plans[STACK], tokens.HELM_RELEASE)]
    assert charts == []
    assert not _of(plans[STACK], tokens.EKS_NODE_GROUP)


def test_the_pool_is_an_auto_mode_pool_of_the_pinned_crd(plans):
    [pool] = _of(plans[STACK], tokens.KARPENTER_NODE_POOL)
    assert karpenter_api.check(tokens.KARPENTER_NODE_POOL, pool).problems == ()
    assert pool["spec"]["template"]["spec"]["nodeClassRef"] == {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "gpu"}
    keys = {r["key"] for r in pool["spec"]["template"]["spec"]["requirements"]}
    assert "eks.amazonaws.com/instance-gpu-name" in keys and not any(k.startswith("karpenter.k8s.aws/") for k in keys)
    [node_class] = [r["inputs"] for r in plans[STACK]["resources"] if r["type"] == "kubernetes:eks.amazonaws.com/v1:NodeClass"]
    assert set(node_class["spec"]) <= set(catalog.load().facts.eks.auto_mode.build.node_class_fields)


def test_the_pods_are_provisioned_by_the_pool(plans):
    [pod] = [p for p in plans[STACK]["placement"]["pods"] if p["pod"] == "Deployment default/llm-serve"]
    assert pod["status"] == "provisioned" and pod["provisioned"][0]["nodePool"] == "gpu"


test_refused = refused_cases({
    "EFA interfaces": (STACK, f"{POOL}[0].efa", {}, (
        "not with Auto Mode: an EKS Auto Mode NodeClass takes only role, subnetSelectorTerms, securityGroupSelectorTerms, snatPolicy, networkPolicy, "
        "networkPolicyEventLogs, ephemeralStorage, tags (github.com/awsdocs/amazon-eks-user-guide @4d52b4d0, create-node-class.adoc)", "[rule: eks-auto-mode-node-class]")),
    "a reservation": (STACK, f"{POOL}[0]", {"name": "r", "gpu": {}, "maxNodes": 1, "capacityTypes": ["reserved"],
                                            "capacityReservations": [{"id": "cr-0123456789abcdef0", "instances": 1}]},
                      (f"{POOL}[0].capacityReservations", "not with Auto Mode", "[rule: eks-auto-mode-node-class]")),
    "an AMI": (STACK, f"{POOL}[0].amiVersion", "v20260724", (f"{POOL}[0].amiVersion = 'v20260724': not with Auto Mode", "[rule: eks-auto-mode-node-class]")),
    "NodeOverlays": (STACK, "gpufleet:eks.karpenter", {"nodeOverlays": True}, ("Auto Mode reads no NodeOverlay (aws/containers-roadmap#2690)",)),
    "the GPU Operator": (STACK, "gpufleet:eks.kubernetes", {"gpuOperator": {}}, (
        "which brings the accelerators' device plugins itself: one of them is one too many", "[rule: eks-auto-mode-one-device-plugin]")),
    "a managed node group": (STACK, "gpufleet:eks.nodeGroups", [{"name": "g5", "instanceType": "g5.xlarge", "minSize": 0, "desiredSize": 0, "maxSize": 1}], (
        "with Auto Mode, give nodePools", "[rule: eks-auto-mode-capacity]")),
    "Neuron by device name": (STACK, f"{POOL}[0]", {"name": "inf", "neuron": {"names": ["inferentia2"]}, "maxNodes": 1}, (
        "Auto Mode's nodes carry no instance-accelerator-name", "[rule: eks-auto-mode-node-class]")),
})


def test_a_gpu_pool_under_auto_mode_may_leave_its_families_open(stack_variant):
    """Auto Mode's nodes carry the instance-gpu-* labels: a GPU pool needs no families (a Neuron pool does)."""
    from tests.conftest import run_cli

    path = stack_variant(lambda c: c["gpufleet:eks"]["nodePools"][0].pop("instanceFamilies"), STACK)
    code, _, err = run_cli("preview", "--config-file", str(path))
    assert code == 0, err
