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
