"""Karpenter objects against their CRDs at 1.14.1 (src/gpufleet/apis/karpenter.py): the schema's rules
as the API server applies them, values known only after apply left out, CEL rules counted."""

from __future__ import annotations

import pytest

from gpufleet.apis import karpenter
from gpufleet.catalog import tokens
from tests.conftest import fresh_python

POOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "gpu"},
    "spec": {
        "template": {
            "spec": {
                "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}],
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            }
        }
    },
}


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
        (
            ["spec", "template", "spec", "requirements", 0, "minValues"],
            51,
            "spec.template.spec.requirements[0].minValues: 51 is greater than the maximum of 50",
        ),
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
    # 20 in the NodePool CRD, of which the 8 on label keys are evaluated (key_rules).
    assert karpenter.check(tokens.KARPENTER_NODE_POOL, POOL).cel_rules == 12
    assert len(karpenter.cel_rules(karpenter._schema(tokens.KARPENTER_NODE_POOL)[0])) == 20
    assert karpenter.check(tokens.KARPENTER_EC2_NODE_CLASS, {"spec": {}}).cel_rules == 54
    rules = dict(karpenter.cel_rules(karpenter._schema(tokens.KARPENTER_NODE_POOL)[0]))
    assert any("nodeClassRef" in path for path in rules)


def test_the_cel_rules_on_label_keys_are_read_from_the_crd_and_evaluated():
    """karpenter.sh_nodepools.yaml @bde00654 L223-L231 (labels) and L292-L300 (requirement keys): each
    rule translated from the CRD's text, so a new restricted label in a later CRD needs no code."""
    rules = karpenter.key_rules()
    assert {r.path for r in rules} == {karpenter.LABELS, karpenter.REQUIREMENT_KEY} and len(rules) == 8
    refused = {
        "karpenter.sh/nodepool": 'label "karpenter.sh/nodepool" is restricted',
        "kubernetes.io/hostname": 'label "kubernetes.io/hostname" is restricted',
        "karpenter.sh/team": 'label domain "karpenter.sh" is restricted',
        "ml.karpenter.sh/team": 'label domain "karpenter.sh" is restricted',  # CEL's endsWith: any subdomain
        "karpenter.k8s.aws/gpu": 'label domain "karpenter.k8s.aws" is restricted',
    }
    for key, message in refused.items():
        for path in (karpenter.LABELS, karpenter.REQUIREMENT_KEY):
            assert (karpenter.restricted_key_problem(key, path) or "").startswith(message + ": the API server refuses"), (key, path)
    for key in ("karpenter.sh/capacity-type", "karpenter.k8s.aws/instance-family", "team", "example.com/team", "kubernetes.io/arch"):
        assert karpenter.restricted_key_problem(key, karpenter.LABELS) is None, key


def test_a_cel_rule_of_another_form_on_label_keys_fails_the_load():
    with pytest.raises(ValueError, match="a form gpufleet does not translate"):
        karpenter._key_rule(karpenter.LABELS, {"rule": "self.all(x, x.startsWith('a'))", "message": "m"})


def test_the_schema_library_loads_only_when_an_object_is_checked():
    # Every policy pack imports this module; jsonschema's own import is about 65 ms of the pack's start.
    script = (
        "import sys\n"
        "from gpufleet.apis import karpenter\n"
        "from gpufleet.catalog import tokens\n"
        "before = 'jsonschema' in sys.modules\n"
        "karpenter.check(tokens.KARPENTER_NODE_POOL, {})\n"
        "print(before, 'jsonschema' in sys.modules)\n"
    )
    assert fresh_python(script).stdout.split() == ["False", "True"]
