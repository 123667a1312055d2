"""src/gpufleet/policies/dra.py over gRPC: a claim no node of the plan satisfies is mandatory when
the plan holds every node it could land on, and named under rules-not-judged (advisory) when a
Karpenter pool or a gap could hold it; a satisfied claim says nothing."""

from __future__ import annotations

from tests.dra_plans import plan, pod, res, template
from tests.policy_helpers import findings

POLICY = "dra-claims-satisfiable"
UNSATISFIABLE = [template("mig-7g", "7g.40gb"), pod("invalid", {"resourceClaimTemplateName": "mig-7g"})]


def test_satisfied_claims_say_nothing(judge):
    result = judge(plan())
    assert findings(result, POLICY) == []
    assert not [m for m in findings(result, "rules-not-judged") if POLICY in m]


def test_a_profile_the_layout_lacks_is_mandatory(judge):
    result = judge([*plan(), *UNSATISFIABLE])
    [message] = findings(result, POLICY, "invalid")
    assert message.splitlines()[-1] == (
        "Pod default/invalid: 1 pod(s) stay Pending: a resource claim no node of the plan satisfies: "
        "0/1 nodes are available: 1 cannot allocate all claims."
    )
    assert [f.level for f in result.findings if f.policy == POLICY] == ["mandatory"]


def test_a_karpenter_pool_makes_it_advisory(judge):
    pool = res(
        "kubernetes:karpenter.sh/v1:NodePool",
        "gpu",
        {
            "metadata": {"name": "gpu"},
            "spec": {
                "template": {
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                        "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p4d"]}],
                    }
                }
            },
        },
    )
    result = judge([*plan(), *UNSATISFIABLE, pool])
    assert findings(result, POLICY) == []
    [message] = [m for m in findings(result, "rules-not-judged", "invalid") if POLICY in m]
    assert "cannot allocate all claims" in message and "Karpenter" in message


def _karpenter(version: str) -> dict:
    return res(
        "kubernetes:helm.sh/v3:Release",
        "karpenter",
        {"name": "karpenter", "chart": "oci://public.ecr.aws/karpenter/karpenter", "version": version, "namespace": "kube-system"},
    )


def _gpu_pool(group: str = "karpenter.k8s.aws", kind: str = "EC2NodeClass") -> dict:
    return res(
        "kubernetes:karpenter.sh/v1:NodePool",
        "gpu",
        {
            "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": {"nodeClassRef": {"group": group, "kind": kind, "name": "default"}}}},
        },
    )


def _node_class() -> dict:
    return res(
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
        "default",
        {"metadata": {"name": "default"}, "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}]}},
    )


def test_a_karpenter_release_that_refuses_claims_makes_it_mandatory(judge):
    """The plan pins Karpenter 1.14.1, which refuses pods with resourceClaims (EKS device-management
    guide: 1.15 or later with feature gates): the pool launches nothing for the pod, so the finding
    is certain and cites why."""
    result = judge([*plan(), *UNSATISFIABLE, _gpu_pool(), _node_class(), _karpenter("1.14.1")])
    [message] = findings(result, POLICY, "invalid")
    assert "cannot allocate all claims" in message
    assert "Karpenter 1.14.1 does not provision nodes for DRA claims" in message and "device-management.html" in message
    assert [f.level for f in result.findings if f.policy == POLICY] == ["mandatory"]


def test_a_karpenter_release_that_may_serve_claims_leaves_it_advisory(judge):
    result = judge([*plan(), *UNSATISFIABLE, _gpu_pool(), _karpenter("1.15.0")])
    assert findings(result, POLICY) == []
    [message] = [m for m in findings(result, "rules-not-judged", "invalid") if POLICY in m]
    assert "Karpenter 1.15.0 provisions nodes for DRA claims; gpufleet does not simulate how" in message


def test_an_unknown_karpenter_version_cannot_be_judged(judge):
    result = judge([*plan(), *UNSATISFIABLE, _gpu_pool()])
    [message] = [m for m in findings(result, "rules-not-judged", "invalid") if POLICY in m]
    assert "gpufleet cannot judge whether Karpenter (version not known) provisions nodes for DRA claims" in message


def test_an_auto_mode_pool_on_a_cluster_before_1_36_makes_it_mandatory(judge):
    """A NodePool of EKS Auto Mode (its NodeClass group eks.amazonaws.com) on the plan's Kubernetes
    1.34 cluster: Auto Mode serves DRA claims from 1.36 (EKS device-management guide)."""
    result = judge([*plan(), *UNSATISFIABLE, _gpu_pool("eks.amazonaws.com", "NodeClass")])
    [message] = findings(result, POLICY, "invalid")
    assert "EKS Auto Mode on Kubernetes 1.34 does not provision nodes for DRA claims" in message


def test_a_pod_pending_for_cpu_is_not_this_rules(judge):
    """A pod with claims that no node holds for its CPU request: Pending, but not for its claims
    (the placement's finding, not this rule's: mandatory there, as the driver's own pods are placed
    and the plan has no gap)."""
    hungry = pod("hungry", {"resourceClaimTemplateName": "mig-3g"})
    hungry["inputs"]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "1000"}
    result = judge([*plan(), hungry])
    assert findings(result, POLICY) == []
    assert not [m for m in findings(result, "rules-not-judged") if POLICY in m]
    assert [m for m in findings(result, "k8s-pods-schedulable", "hungry") if "Insufficient cpu" in m]


def test_a_driver_version_whose_device_classes_are_not_read_leaves_it_advisory(judge):
    """The placement is not certain where the plan's driver release is of a version whose
    DeviceClasses gpufleet did not read (a gap): the claim is named, never mandatory."""
    result = judge([*plan(version="v25.3.0"), *UNSATISFIABLE])
    assert findings(result, POLICY) == []
    [message] = [m for m in findings(result, "rules-not-judged", "invalid") if POLICY in m]
    assert "not a version whose DeviceClasses gpufleet read" in message
