"""One rule, two doors, for NodePools: the stack spec (exit 2 before any resource exists) and the
policy pack (over gRPC, on the NodePool and EC2NodeClass the component renders for the same pool)
give the same verdict, case by case."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog, tokens
from gpufleet.karpenter import manifests
from gpufleet.karpenter.args import NodePoolArgs
from gpufleet.stack.spec import SpecError, load_spec
from tests.policy_helpers import resource

ADMITS, RESERVED, OFFERED = "karpenter-nodepool-admits-a-type", "karpenter-reserved-has-reservations", "karpenter-nodepool-offered"
RULES = (ADMITS, RESERVED, OFFERED)
RESERVATION = [{"id": "cr-0123456789abcdef0", "instances": 1}]
# case -> (the pool's accelerator terms, the rules it breaks); each row crosses one boundary.
CASES = {
    "a10g on g5": ({"gpu": {"names": ["a10g"]}, "instanceFamilies": ["g5"]}, set()),
    "h100 on g5": ({"gpu": {"names": ["h100"]}, "instanceFamilies": ["g5"]}, {ADMITS}),
    "4 GPUs on g5": ({"gpu": {"count": 4}, "instanceFamilies": ["g5"]}, set()),
    "3 GPUs on g5": ({"gpu": {"count": 3}, "instanceFamilies": ["g5"]}, {ADMITS}),
    "8 H100 on p5": ({"gpu": {"names": ["h100"], "count": 8}, "instanceTypes": ["p5.48xlarge"]}, set()),
    "inferentia2 on inf2": ({"neuron": {"names": ["inferentia2"]}, "instanceFamilies": ["inf2"]}, set()),
    "trainium on inf2": ({"neuron": {"names": ["trainium"]}, "instanceFamilies": ["inf2"]}, {ADMITS}),
    "GPUs of a Neuron family": ({"gpu": {}, "instanceFamilies": ["trn1"]}, {ADMITS}),
    "reserved with a reservation": ({"gpu": {}, "instanceFamilies": ["p5"], "capacityTypes": ["reserved"], "capacityReservations": RESERVATION}, set()),
    "reserved without one": ({"gpu": {}, "instanceFamilies": ["p5"], "capacityTypes": ["reserved"]}, {RESERVED}),
    "reserved or on-demand without one": ({"gpu": {}, "instanceFamilies": ["p5"], "capacityTypes": ["reserved", "on-demand"]}, set()),
    # us-east-1e offers no g6e and no g4dn, but p5 (moto's DescribeInstanceTypeOfferings).
    "g6e in us-east-1e": ({"gpu": {}, "instanceFamilies": ["g6e"], "zones": ["us-east-1e"]}, {OFFERED}),
    "g6e or p5 in us-east-1e": ({"gpu": {}, "instanceFamilies": ["g6e", "p5"], "zones": ["us-east-1e"]}, set()),
    "g6e in us-east-1a": ({"gpu": {}, "instanceFamilies": ["g6e"], "zones": ["us-east-1a"]}, set()),
}


def _pool(name: str, terms: dict) -> dict:
    return {"name": name, "maxNodes": 2, "amiVersion": "v20260724", **terms}


def _spec_door(name: str, terms: dict) -> set[str]:
    fleet = {
        "cluster": {"name": "parity", "create": {"version": "1.35"}},
        "network": {"create": {"cidr": "10.0.0.0/16", "zones": ["us-east-1a", "us-east-1b", "us-east-1e"]}},
        "nodePools": [_pool(name, terms)],
        "kubernetes": {},
    }
    try:
        load_spec({"region": "us-east-1", "eks": fleet})
    except SpecError as err:
        return {i.rule for i in err.issues} & set(RULES)
    return set()


@pytest.fixture(scope="module")
def pack_verdicts(judge) -> dict[str, set[str]]:
    """Each case's NodePool and EC2NodeClass as the component renders them, judged in one stack."""
    cat = catalog.load()
    # The stack's region, as a program's AWS provider gives it.
    provider = resource("pulumi:providers:aws", "aws-us-east-1", {"region": "us-east-1"})
    resources = [provider, {**resource("aws:ec2/vpc:Vpc", "vpc", {"cidrBlock": "10.0.0.0/16"}), "provider": provider["urn"]}]
    for i, (terms, _) in enumerate(CASES.values()):
        pool = NodePoolArgs.model_validate(_pool(f"case-{i}", terms))
        spec = manifests.node_pool_spec(pool, cat, manifests.limits(pool, cat))
        node_class = manifests.node_class_spec(pool, "KarpenterNodeRole-parity", [{"tags": {"karpenter.sh/discovery": "parity"}}], [{"id": "sg-0123456789abcdef0"}], cat)
        resources.append(resource(tokens.KARPENTER_NODE_POOL, pool.name, {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": pool.name}, "spec": spec}))
        resources.append(resource(tokens.KARPENTER_EC2_NODE_CLASS, f"{pool.name}-class", {
            "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": manifests.node_class_metadata(pool), "spec": node_class,
        }))
    found: dict[str, set[str]] = {f"case-{i}": set() for i in range(len(CASES))}
    for f in judge(resources).findings:
        name = f.urn.rsplit("::", 1)[-1]
        if f.policy in RULES and name in found:
            found[name].add(f.policy)
    return found


def test_the_table_crosses_each_rule_both_ways():
    for rule in RULES:
        assert any(rule in broken for _, broken in CASES.values()) and any(rule not in broken for _, broken in CASES.values())


@pytest.mark.parametrize("case", CASES)
def test_spec_and_pack_agree(case, pack_verdicts):
    terms, broken = CASES[case]
    i = list(CASES).index(case)
    assert _spec_door(f"case-{i}", terms) == broken
    assert pack_verdicts[f"case-{i}"] == broken
