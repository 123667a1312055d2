"""gpufleet's DynamicResources plugin analog (simulate/k8s_dra) against the plugin's own TestPlugin
table (dra_plugin_suite): PreFilter's refusal and each node's Filter verdict, as upstream's test
driver runs them (the fixture's L2361-L2539: PreFilter, then Filter node by node until an error
status aborts the pod)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufleet.simulate import dra, dra_objects, k8s_dra
from gpufleet.simulate.dra_pools import selector_matches
from gpufleet.simulate.k8s_shapes import PodClaim
from tests.go_tables import assert_census, table_cases
from tests.simulate import dra_plugin_suite as suite

FIXTURE = Path(__file__).parents[1] / "fixtures" / "kubernetes-dra-plugin" / "dynamicresources_test.go"
# the testcases map literal of func TestPlugin (L901): its entries are indented by two tabs, and
# the driver's loop over it starts at L2361
_TABLE = (902, 2360)


def _upstream_cases() -> dict[str, int]:
    lines = FIXTURE.read_text().splitlines()
    assert lines[_TABLE[0] - 2].startswith("func TestPlugin(") and lines[_TABLE[1]].startswith("\tfor name, tc := range testcases")
    return table_cases(FIXTURE, *_TABLE)


def test_census_holds_every_upstream_case_translated_or_left_out_with_a_reason():
    upstream = _upstream_cases()
    assert len(upstream) == 61
    assert_census(upstream, suite.CASES, suite.LEFT_OUT, suite.LEFT_OUT.get)


def _world(case: suite.Case) -> k8s_dra.DraWorld:
    claims = [dra_objects.resource_claim(c) for c in case.claims]
    return k8s_dra.DraWorld(
        classes=tuple(dra_objects.device_class(c) for c in case.classes),
        claims={(c.namespace, c.name): c for c in claims},
        features=dra.Features(prioritized_list=case.prioritized_list),
    )


def _held(case: suite.Case, node: dra_objects.Node) -> k8s_dra.Held:
    """What the cluster holds before the pod comes: other claims' devices, and the pod's claims
    allocated already, available on the node where their allocation's node selector matches it."""
    allocated = {(suite.NAMESPACE, name): dra_objects.node_selector(raw, name) for name, raw in case.allocated.items()}
    here = {key for key, selector in allocated.items() if selector is not None and selector_matches(selector, node)}
    return k8s_dra.Held(frozenset(case.held), frozenset(here), set(allocated))


def _filter(case: suite.Case) -> tuple[dict[str, list[str]], k8s_dra.PodClaims, list]:
    """PreFilter, then Filter on each node in order; an error status stops there, as upstream's
    driver does (`if status.Code() == fwk.Error { return }`, L2427-L2430)."""
    world = _world(case)
    pod = [PodClaim(f"my-resource{'-2' * i}", claim=name) for i, name in enumerate(case.pod)]
    claims = k8s_dra.resolve(pod, suite.NAMESPACE, world)
    slices = [dra_objects.resource_slice(s) for s in case.slices]
    nodes = [dra_objects.node(suite.node(n)) for n in case.nodes]
    verdicts: dict[str, list[str]] = {}
    for node in nodes:
        verdicts[node.name] = k8s_dra.reasons(claims, node, slices, world, _held(case, node))
        if claims.errors:
            break
    return verdicts, claims, [(n, slices, world, _held(case, n)) for n in nodes]


@pytest.mark.parametrize("case", suite.CASES, ids=lambda c: f"{c.name}@L{c.line}")
def test_upstream_case(case: suite.Case):
    verdicts, claims, nodes = _filter(case)
    if case.prefilter is not None:
        assert claims.refusal == case.prefilter or sorted(claims.errors) == [case.prefilter]
        assert all(k8s_dra.reasons(claims, *n) == [case.prefilter] for n in nodes)
        return
    expected = {n: [case.filter[n]] if n in case.filter else [] for n in verdicts}
    assert verdicts == expected
    taken = [n[0].name for n in nodes if not k8s_dra.reasons(claims, *n)]
    if case.aborts:
        assert list(verdicts)[-1] in case.filter, "Filter goes on past the error"
        assert taken == [], "an error status aborts the pod's scheduling: no node may take it"
    else:
        assert taken == [n for n in case.nodes if n not in case.filter]


def test_an_allocator_error_keeps_the_pod_off_every_node_whichever_node_meets_it_first():
    # CEL-runtime-error-for-one-of-two-nodes (L1376) with the nodes the other way round: the healthy
    # node passes first, yet the error met on the other aborts the pod (dynamicresources.go Filter)
    case = next(c for c in suite.CASES if c.name == "CEL-runtime-error-for-one-of-two-nodes")
    flipped = suite.Case(case.name, case.line, case.pod, case.claims, case.classes, case.slices, nodes=(suite.NODE_2, suite.NODE))
    verdicts, claims, nodes = _filter(flipped)
    assert verdicts == {suite.NODE_2: [], suite.NODE: [suite.CEL_ERROR]}
    assert [k8s_dra.reasons(claims, *n) for n in nodes] == [[suite.CEL_ERROR]] * 2


def test_a_claim_allocated_already_needs_no_device_class():
    # claim-reference (L963) holds no DeviceClass: PreFilter looks classes up only for the claims
    # still to allocate; the same claim unallocated is refused for the missing class
    case = next(c for c in suite.CASES if c.name == "claim-reference")
    verdicts, _, _ = _filter(case)
    assert verdicts == {suite.NODE: []}
    unallocated = suite.Case(case.name, case.line, case.pod, case.claims)
    verdicts, _, _ = _filter(unallocated)
    assert verdicts == {suite.NODE: ["request req-1: device class my-resource-class does not exist"]}
