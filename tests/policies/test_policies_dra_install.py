"""src/gpufleet/policies/dra.py (dra-api-version, dra-one-allocator) on edits of the shipped DRA stack's
golden plan (eks-p4d-mig-dra), judged over gRPC."""

from __future__ import annotations

from tests.plan_edits import edited, golden
from tests.policy_helpers import findings, one_finding

STACK = "eks-p4d-mig-dra"
POLICIES = ("dra-api-version", "dra-one-allocator")


def test_the_shipped_stack_passes(judge):
    result = judge(golden(STACK)["resources"])
    assert [f for f in result.findings if f.policy in POLICIES or "dra-" in f.message] == []


def test_a_cluster_older_than_1_34_does_not_serve_v1(judge):
    head = edited(STACK, "p4d-mig-dra", "cluster:Cluster", lambda r: r["inputs"].update(version="1.33"))
    result = judge(head["resources"])
    said = findings(result, "dra-api-version")
    # The two ResourceClaimTemplates and the driver's release write resource.k8s.io/v1.
    assert len(said) == 3 and all("Kubernetes 1.33 does not serve resource.k8s.io/v1: it needs 1.34 or later" in m for m in said)
    assert {f.level for f in result.findings if f.policy == "dra-api-version"} == {"mandatory"}


def _plugin_back_on(r):
    r["inputs"]["labels"] = {k: v for k, v in r["inputs"]["labels"].items() if k != "nvidia.com/gpu.deploy.device-plugin"}


def test_a_dra_group_the_device_plugin_reaches_is_refused(judge):
    """Without the label the GPU Operator's device plugin runs on the group, and so does a driver with no nodeSelector."""
    head = edited(STACK, "p4d-mig-dra-p4d", "nodeGroup:NodeGroup", _plugin_back_on)
    release = next(r for r in head["resources"] if r["name"] == "p4d-mig-dra-dra-driver" and r["type"].endswith("Release"))
    release["inputs"]["values"]["kubeletPlugin"].pop("nodeSelector")
    message = one_finding(judge(head["resources"]), "dra-one-allocator", "p4d-mig-dra-p4d")
    assert ("node group 'p4d': both the NVIDIA device plugin and the DRA driver would allocate its GPUs") in message


def test_a_driver_off_the_group_leaves_one_allocator(judge):
    """The label gone, the driver's nodeSelector no longer takes the group: only the plugin serves it."""
    head = edited(STACK, "p4d-mig-dra-p4d", "nodeGroup:NodeGroup", _plugin_back_on)
    assert findings(judge(head["resources"]), "dra-one-allocator") == []


def test_claims_without_their_cluster_are_named_not_judged(judge):
    """A program whose claims go to a cluster the plan does not hold (a version gpufleet never guesses)."""
    plan = golden(STACK)
    resources = [r for r in plan["resources"] if not r["type"].endswith("cluster:Cluster")]
    result = judge(resources)
    assert findings(result, "dra-api-version") == []
    unjudged = [m for m in findings(result, "rules-not-judged") if "dra-api-version" in m]
    assert unjudged and "no EKS or GKE cluster in the plan has a Kubernetes version known before apply to judge it by" in unjudged[0]


def _gb200(r):
    r["inputs"]["instanceTypes"] = ["p6e-gb200.36xlarge"]


def test_a_gb200_group_without_a_compute_domain_is_refused(judge):
    head = edited(STACK, "p4d-mig-dra-p4d", "nodeGroup:NodeGroup", _gb200)
    message = one_finding(judge(head["resources"]), "dra-gb200-compute-domain", "p4d-mig-dra-p4d")
    assert "needs a DRA ComputeDomain (resource.nvidia.com/v1beta1)" in message and "ml-eks-nvidia-ultraserver" in message


def test_a_gb200_group_with_a_compute_domain_passes(judge):
    from tests.policy_helpers import resource

    head = edited(STACK, "p4d-mig-dra-p4d", "nodeGroup:NodeGroup", _gb200)
    domain = resource(
        "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain",
        "imex",
        {"metadata": {"name": "imex"}, "spec": {"channel": {"resourceClaimTemplate": {"name": "imex-channel"}}}},
    )
    assert findings(judge([*head["resources"], domain]), "dra-gb200-compute-domain") == []


def test_a_gb200_type_named_in_the_launch_template_counts(judge):
    """A capacity block names its type in the launch template only (EKS's rule), which the reader follows."""
    plan = golden(STACK)
    [template] = [r for r in plan["resources"] if r["name"] == "p4d-mig-dra-p4d" and r["type"].endswith("LaunchTemplate")]
    [group] = [r for r in plan["resources"] if r["name"] == "p4d-mig-dra-p4d" and r["type"] == "aws:eks/nodeGroup:NodeGroup"]
    template["inputs"]["instanceType"] = "p6e-gb200.36xlarge"
    group["inputs"].pop("instanceTypes", None)
    assert len(findings(judge(plan["resources"]), "dra-gb200-compute-domain", "p4d-mig-dra-p4d")) == 1
