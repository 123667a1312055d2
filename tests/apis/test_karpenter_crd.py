"""Karpenter objects against their CRDs at 1.14.1 (src/gpufleet/apis/karpenter.py): the schema's rules
as the API server applies them, values known only after apply left out, CEL rules counted."""

from __future__ import annotations

from gpufleet.apis import karpenter
from gpufleet.catalog import tokens

POOL = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
        "spec": {"template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}],
                                       "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}}


def _with(path: list, value) -> dict:
    import copy

    obj = copy.deepcopy(POOL)
    at = obj
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    return obj


def test_a_valid_pool_and_each_rule_of_its_schema():
    assert karpenter.check(tokens.KARPENTER_NODE_POOL, POOL).problems == ()
    cases = [
        (["spec", "weight"], 0, "spec.weight: 0 is less than the minimum of 1"),
        (["spec", "template", "spec", "expireAfter"], "30d", "spec.template.spec.expireAfter: '30d' does not match"),
        (["spec", "template", "spec", "requirements", 0, "minValues"], 51, "spec.template.spec.requirements[0].minValues: 51 is greater than the maximum of 50"),
        (["spec", "disruption"], {"consolidationPolicy": "WhenEmpty"}, "spec.disruption: 'consolidateAfter' is a required property"),
    ]
    for path, value, said in cases:
        [problem] = karpenter.check(tokens.KARPENTER_NODE_POOL, _with(path, value)).problems
        assert problem.startswith(said), (path, problem)


def test_a_value_known_only_after_apply_is_not_judged():
    unknown = _with(["spec", "template", "spec", "nodeClassRef", "name"], tokens.UNKNOWN)
    assert karpenter.check(tokens.KARPENTER_NODE_POOL, unknown).problems == ()
    typed = _with(["spec", "template", "spec", "requirements"], tokens.UNKNOWN)  # a list, known later
    assert karpenter.check(tokens.KARPENTER_NODE_POOL, typed).problems == ()
    # ... and the fields beside it are still judged.
    typed["spec"]["weight"] = 0
    assert karpenter.check(tokens.KARPENTER_NODE_POOL, typed).problems == ("spec.weight: 0 is less than the minimum of 1",)


def test_the_cel_rules_it_does_not_evaluate_are_counted():
    """As controller-gen wrote them into the CRDs: what the API server checks and this does not."""
    assert karpenter.check(tokens.KARPENTER_NODE_POOL, POOL).cel_rules == 20
    assert karpenter.check(tokens.KARPENTER_EC2_NODE_CLASS, {"spec": {}}).cel_rules == 54
    rules = dict(karpenter.cel_rules(karpenter._schema(tokens.KARPENTER_NODE_POOL)[0]))
    assert any("nodeClassRef" in path for path in rules)
