"""The DRA allocator against the upstream allocator's own table (dra_suite), its CEL subset, and
its readers of resource.k8s.io/v1 objects."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpufleet.simulate import dra, dra_cel, dra_cel_parse, dra_objects
from gpufleet.simulate.dra_objects import Device, DraShapeError, read_quantity
from tests.go_tables import assert_census, table_cases
from tests.simulate import dra_suite
from tests.simulate.dra_suite import C0, DRIVER_A, N1, ONE_A, A, claim, device, device_class, request, slice_

FIXTURE = Path(__file__).parents[1] / "fixtures" / "kubernetes-dra" / "allocator_testing.go"
# the testcases map literal of func TestAllocator (v0.35.6): its entries are indented by two tabs
_TABLE = (950, 6054)


def _upstream_cases() -> dict[str, int]:
    return table_cases(FIXTURE, *_TABLE)


def test_census_holds_every_upstream_case_translated_or_left_out_with_a_reason():
    upstream = _upstream_cases()
    assert len(upstream) == 180
    assert_census(upstream, dra_suite.CASES, dra_suite.LEFT_OUT, dra_suite.left_out_reason)


def _selector(raw: dict | None) -> frozenset | None:
    """A node selector compared as gomega's matcher does: terms, requirements and values unordered."""
    if raw is None:
        return None
    return frozenset(
        (kind, r["key"], r["operator"], frozenset(r["values"]))
        for term in raw["nodeSelectorTerms"]
        for kind in ("matchExpressions", "matchFields")
        for r in term.get(kind, [])
    )


def _shown(selector: dra_objects.NodeSelector | None) -> frozenset | None:
    if selector is None:
        return None
    return frozenset(
        (kind, r.key, r.operator, frozenset(r.values))
        for t in selector.terms
        for kind, rs in (("matchExpressions", t.match_expressions), ("matchFields", t.match_fields))
        for r in rs
    )


def _run(case: dra_suite.Case) -> tuple[dra.ClaimAllocation, ...] | None:
    return dra.allocate(
        None if case.node is None else dra_objects.node(case.node),
        [dra_objects.resource_claim(c) for c in case.claims],
        [dra_objects.device_class(c) for c in case.classes],
        [dra_objects.resource_slice(s) for s in case.slices],
        case.allocated,
        dra.Features(prioritized_list=case.prioritized_list),
    )


def _allocation_key(selector: frozenset | None, results: tuple) -> tuple:
    return (selector, tuple(sorted(results)))


@pytest.mark.parametrize("case", dra_suite.CASES, ids=lambda c: f"{c.name}@L{c.line}")
def test_upstream_case(case: dra_suite.Case):
    if case.error is not None:
        with pytest.raises(dra.AllocationError, match=re.escape(case.error)):
            _run(case)
        return
    got = _run(case)
    if not case.expect:
        # nil and empty results are one for gomega.ConsistOf: no allocation, or nothing to allocate
        assert got is None if case.claims else got == ()
        return
    assert got is not None
    have = sorted(_allocation_key(_shown(a.node_selector), tuple((r.request, r.driver, r.pool, r.device) for r in a.results)) for a in got)
    want = sorted(_allocation_key(_selector(sel), results) for sel, results in case.expect)
    assert have == want


# --- CEL subset --------------------------------------------------------------------------------

GPU = Device(
    "gpu-0",
    attributes={
        "type": dra_objects.Attribute("string", "gpu"),
        "productName": dra_objects.Attribute("string", "NVIDIA A100-SXM4-40GB"),
        "index": dra_objects.Attribute("int", 3),
        "mig": dra_objects.Attribute("bool", False),
        "driverVersion": dra_objects.Attribute("version", "550.54.15"),
        "other.example.com/zone": dra_objects.Attribute("string", "a"),
    },
    capacity={"memory": read_quantity("40Gi")},
)
DRIVER = "gpu.nvidia.com"


def _matches(expression: str, device: Device = GPU) -> bool:
    return dra_cel.compile_selector(expression).matches(device, DRIVER)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.driver == "gpu.nvidia.com"', True),
        ('device.driver != "gpu.nvidia.com"', False),
        ("device.attributes['gpu.nvidia.com'].type == 'gpu' && device.attributes['gpu.nvidia.com'].index >= 3", True),
        ('device.attributes["gpu.nvidia.com"].index < 3 || device.attributes["gpu.nvidia.com"].mig', False),
        ('!device.attributes["gpu.nvidia.com"].mig', True),
        ('device.attributes["gpu.nvidia.com"].index in [1, 2, 3]', True),
        ('"index" in device.attributes["gpu.nvidia.com"]', True),
        ('"nothing" in device.attributes["no.such.domain"]', False),
        ('device.attributes["other.example.com"].zone == "a"', True),
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) == 0', True),
        ('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40G"))', True),
        ('device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("40Gi"))', False),
        ('device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("550.0.0")) > 0', True),
        ('device.attributes["gpu.nvidia.com"].driverVersion.isLessThan(semver("550.54.15-rc.1"))', False),
        ('semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', True),
        ('semver("1.0.0-alpha.2").isLessThan(semver("1.0.0-alpha.10"))', True),
        ('device.attributes["gpu.nvidia.com"].driverVersion.major() == 550', True),
        ('device.attributes["gpu.nvidia.com"].productName.lowerAscii() == "nvidia a100-sxm4-40gb"', True),
        ('device.attributes["gpu.nvidia.com"].index == -3', False),
        # a side that decides wins over an error on the other side (CEL's commutative && and ||)
        ('device.attributes["gpu.nvidia.com"].missing == 1 || device.driver == "gpu.nvidia.com"', True),
        ('device.attributes["gpu.nvidia.com"].missing == 1 && device.driver == "x"', False),
        # ... and over a construct outside the subset
        ('device.driver == "x" && size(device.attributes) > 0', False),
    ],
)
def test_cel_subset(expression, expected):
    assert _matches(expression) is expected


@pytest.mark.parametrize(
    "expression",
    [
        'device.attributes["gpu.nvidia.com"].missing == "x"',
        'quantity("not a quantity").isLessThan(quantity("1"))',
        'semver("1.0").major() == 1',
        "device.attributes['gpu.nvidia.com'].missing == 1 || device.driver == 'x'",
    ],
)
def test_cel_runtime_errors(expression):
    with pytest.raises(dra_cel_parse.CelRuntimeError):
        _matches(expression)


@pytest.mark.parametrize(
    "expression",
    [
        "size(device.attributes) > 0",
        'device.attributes["gpu.nvidia.com"].index + 1 == 4',
        'device.attributes["gpu.nvidia.com"].productName.matches("A100")',
        'device.attributes["gpu.nvidia.com"].index == "3"',
        'device.attributes["gpu.nvidia.com"].type == "gpu" ? true : false',
        'cel.bind(x, device.driver, x == "a")',
        'device.attributes["gpu.nvidia.com"].exists(k, k == "type")',
        "device.allowMultipleAllocations",
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("1n")) > 0',
        'device.driver == "a\\x41"',
        "device.driver == 1.5",
    ],
)
def test_cel_outside_the_subset_is_unknown_never_a_verdict(expression):
    with pytest.raises(dra_cel_parse.CelUnsupported):
        _matches(expression)


def test_cel_undeclared_name_is_a_compile_error():
    with pytest.raises(dra_cel_parse.CelCompileError, match="undeclared reference to 'noSuchVar'"):
        dra_cel.compile_selector('device.driver == "a" || noSuchVar')


def test_an_invalid_version_attribute_is_a_runtime_error_on_any_selector():
    broken = Device("d", attributes={"v": dra_objects.Attribute("version", "01.0.0")})
    with pytest.raises(dra_cel_parse.CelRuntimeError, match="attribute v: parse semantic version"):
        _matches('device.driver == "gpu.nvidia.com"', broken)


# --- the allocator beyond the table ------------------------------------------------------------


def _objects(expression: str) -> dict:
    return {
        "claims": [dra_objects.resource_claim(claim("claim-0", request("req-0", "class-a", 1, {"cel": {"expression": expression}})))],
        "classes": [dra_objects.device_class(A)],
        "slices": [dra_objects.resource_slice(ONE_A)],
    }


def test_a_selector_outside_the_subset_is_a_named_gap():
    with pytest.raises(dra.SelectorGap, match=r"claim claim-0: selector #0 'size\(device.attributes\) > 0'.*not judged"):
        dra.allocate(dra_objects.node(N1), **_objects("size(device.attributes) > 0"))


def test_a_cel_runtime_error_aborts_in_upstream_words():
    with pytest.raises(dra.AllocationError, match="claim claim-0: selector #0: CEL runtime error: no such key: nope"):
        dra.allocate(dra_objects.node(N1), **_objects(f'device.attributes["{DRIVER_A}"].nope == 1'))


def test_a_shared_claim_is_allocated_once_for_many_pods():
    shared = dra_objects.resource_claim(C0)
    own = dra_objects.resource_claim(claim("claim-1", request("req-0", "class-a", 1)))
    two = dra_objects.resource_slice(slice_("slice-1", "node-1", "pool-1", DRIVER_A, device("device-1"), device("device-2")))
    got = dra.allocate_pods(dra_objects.node(N1), [[shared], [shared, own]], [dra_objects.device_class(A)], [two])
    assert got is not None
    assert got[0][0] == got[1][0]
    assert [r.device for r in got[1][1].results] == ["device-2"]
    # without sharing, the third claim finds no device
    third = dra_objects.resource_claim(claim("claim-2", request("req-0", "class-a", 1)))
    assert dra.allocate_pods(dra_objects.node(N1), [[shared], [own], [third]], [dra_objects.device_class(A)], [two]) is None


# --- readers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reader", "raw", "message"),
    [
        (dra_objects.resource_claim, {"metadata": {}}, r"ResourceClaim.metadata.name: required"),
        (
            dra_objects.resource_claim,
            {"metadata": {"name": "c"}, "spec": {"devices": {"requests": {"name": "r"}}}},
            r"ResourceClaim c.spec.devices.requests: .* is not a list",
        ),
        (
            dra_objects.resource_claim,
            {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [{"name": "r"}]}}},
            r"requests\[0\]: one of exactly or firstAvailable",
        ),
        (
            dra_objects.resource_claim,
            {
                "metadata": {"name": "c"},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "a", "count": "2"}}]}},
            },
            r"requests\[0\].exactly.count: '2' is not an integer",
        ),
        (
            dra_objects.resource_claim,
            {
                "metadata": {"name": "c"},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "a", "count": True}}]}},
            },
            r"exactly.count: True is not an integer",
        ),
        (
            dra_objects.resource_slice,
            {
                "metadata": {"name": "s"},
                "spec": {"driver": "d", "pool": {"name": "p"}, "devices": [{"name": "x", "attributes": {"a": {"int": 1, "string": "1"}}}]},
            },
            r"devices\[0\].attributes\[a\]: sets int, string; a DeviceAttribute carries exactly one",
        ),
        (
            dra_objects.resource_slice,
            {
                "metadata": {"name": "s"},
                "spec": {"driver": "d", "pool": {"name": "p"}, "devices": [{"name": "x", "capacity": {"memory": {"value": "lots"}}}]},
            },
            r"devices\[0\].capacity\[memory\].value: 'lots' is not a quantity",
        ),
        (
            dra_objects.resource_slice,
            {"metadata": {"name": "s"}, "spec": {"pool": {"name": "p"}}},
            r"ResourceSlice s.spec.driver: required",
        ),
        (
            dra_objects.device_class,
            {"metadata": {"name": "k"}, "spec": {"selectors": [{"cel": {"expression": 3}}]}},
            r"selectors\[0\].cel.expression: 3 is not a string",
        ),
    ],
)
def test_readers_name_the_bad_field(reader, raw, message):
    with pytest.raises(DraShapeError, match=message):
        reader(raw)


def test_readers_keep_what_the_allocator_refuses_in_upstream_words():
    parsed = dra_objects.resource_claim(claim("c", request("r", "a", 1, {}), constraints=({},)))
    assert parsed.requests[0].exactly is not None and parsed.requests[0].exactly.selectors == (None,)
    assert parsed.constraints[0].match_attribute is None
    assert dra_objects.device_class(device_class("k", "d", "x == 1")).selectors == ("x == 1",)


def _one_claim(*requests: dict, constraints: tuple = ()) -> list:
    return [dra_objects.resource_claim(claim("claim-0", *requests, constraints=constraints))]


def test_a_device_refused_by_a_later_constraint_is_taken_back_from_the_earlier_ones():
    # allocateDevice L1062-L1076: device-1 passes the numa constraint but lacks stringAttribute;
    # the numa constraint must forget it, or device-2 (another numa) would be refused too
    attrs = dra_suite.attr
    s = slice_(
        "slice-1",
        "node-1",
        "pool-1",
        DRIVER_A,
        device("device-1", attributes=attrs(numa=1)),
        device("device-2", attributes=attrs(numa=2, stringAttribute="x")),
    )
    claims = _one_claim(
        request("req-0", "class-a", 1), constraints=({"matchAttribute": dra_suite.INT}, {"matchAttribute": dra_suite.STRING})
    )
    got = dra.allocate(dra_objects.node(N1), claims, [dra_objects.device_class(A)], [dra_objects.resource_slice(s)])
    assert got is not None and [r.device for r in got[0].results] == ["device-2"]


def test_an_all_subrequest_after_the_first_goes_on_with_the_first_subrequests_count():
    # allocator_stable.go L818 continues an All request with deviceIndices{claim, request, device+1}:
    # the subrequest index falls back to 0, so a later All subrequest stops after the first
    # subrequest's count (here 1) of its devices. Reproduced as upstream behaves at v0.35.6.
    two = slice_("slice-1", "node-1", "pool-1", DRIVER_A, device("device-1"), device("device-2"))
    subs = dra_suite.prioritized(
        "req-0", dra_suite.sub_request("subReq-0", "class-b", 1), dra_suite.sub_request("subReq-1", "class-a", 0, mode="All")
    )
    got = dra.allocate(
        dra_objects.node(N1),
        _one_claim(subs),
        [dra_objects.device_class(A), dra_objects.device_class(dra_suite.B)],
        [dra_objects.resource_slice(two)],
        features=dra.Features(prioritized_list=True),
    )
    assert got is not None and [r.device for r in got[0].results] == ["device-1"]


def test_a_class_selector_without_cel_is_refused():
    bare = {"metadata": {"name": "class-a"}, "spec": {"selectors": [{}]}}
    with pytest.raises(dra.AllocationError, match="class class-a: selector #0: CEL expression empty"):
        dra.allocate(
            dra_objects.node(N1), [dra_objects.resource_claim(C0)], [dra_objects.device_class(bare)], [dra_objects.resource_slice(ONE_A)]
        )
