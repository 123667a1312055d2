"""kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/instance_selection_test.go
@6e7eab7a (tests/fixtures/karpenter/scheduling_instance_selection_test.go.txt): each `It` a plan can
hold, as a row run through gpufleet's simulator; the rest left out by reason (the census).

The suite's NodePool (L48-L68) allows spot and on-demand, arm64 and amd64; its types are
fake.InstanceTypesAssorted (fake/instancetype.go @6e7eab7a L369-L403): every CPU count of 1-64 with
every memory of 1-128Gi, per arch, OS, zone and capacity type, each priced by PriceFromResources
(L426-L439), which grows with CPU and memory. Its cheapest type of any arch is the 1 CPU, 1Gi one.
Stand-ins: ASSORTED, EC2 types in two arch ladders whose smallest, t3.micro and t4g.micro (2 vCPU,
1 GiB each), are the smallest in CPU and memory of their arch: the cheapest by the fake's price
function, and the type gpufleet names (its smallest; it has no prices). Where the arch is left
open, either is Karpenter's cheapest (NOT_CHEAPEST names any other).

MinValues (L620-L1488): the fakes are 1, 2 or 4 CPUs (1, 2 or 4Gi) and two pods of 0.9 CPU and
0.9Gi fill the 2 and 4 CPU ones, not the 1 CPU one. Stand-ins hold two such pods or one as their
fake does (Karpenter's estimate: t2.small, t3.small and t4g.small leave under 1.8Gi to pods,
t2.medium, t3.medium and t4g.medium over it); the fake's `karpenter/numerical-value` label is EC2's
instance-generation, whose values (t2: 2, t3: 3, c4: 4, c5: 5) are the fakes'."""

from __future__ import annotations

from tests.simulate.karpenter_suites.suite import (
    ANY,
    ARCH,
    CAPACITY,
    OS,
    REGION,
    TYPE,
    WINDOWS,
    ZONE,
    Row,
    deployment,
    one,
    pods,
    req,
    spec,
)
from tests.simulate.karpenter_suites.suite import pool as _pool

FIXTURE = "scheduling_instance_selection_test.go.txt"
GENERATION = "karpenter.k8s.aws/instance-generation"  # the fake's karpenter/numerical-value

AMD64 = ("t3.micro", "t3.small", "c5.large", "c5.xlarge", "m5.4xlarge", "m5.16xlarge")
ARM64 = ("t4g.micro", "t4g.small", "c6g.large", "c6g.xlarge", "m6g.4xlarge", "m6g.16xlarge")
ASSORTED = AMD64 + ARM64
NOT_CHEAPEST = r"^(?!t3\.micro$|t4g\.micro$)"
OPTIONS_NOT_CHECKED = (
    "its assertion on every type the NodeClaim offers the cloud provider is not checked (gpufleet gives the type launched)"
)


def pool(*requirements: dict, types=ASSORTED, **kw) -> dict:
    return _pool(*requirements, types=types, **kw)


def suite_pool(types=ASSORTED, **kw) -> dict:
    """The suite's NodePool over `types` (the case's filtered fakes)."""
    return pool(req(CAPACITY, "In", "spot", "on-demand"), req(ARCH, "In", "arm64", "amd64"), types=types, **kw)


NODE_POOL = suite_pool()


def cheapest(pool_: dict, *required: dict, expect: str = ANY) -> dict:
    """A case of one pod (with `required` node requirements) asserting the cheapest type of all."""
    return one(pool_, spec(required=list(required)) if required else None, expect, avoid=NOT_CHEAPEST, note=OPTIONS_NOT_CHECKED)


CHEAPEST = [
    Row(82, **one(NODE_POOL, expect=ANY, avoid=NOT_CHEAPEST)),
    Row(89, **cheapest(NODE_POOL, req(ARCH, "In", "amd64"), expect="t3.micro")),
    Row(103, **cheapest(NODE_POOL, req(ARCH, "In", "arm64"), expect="t4g.micro")),
    Row(116, **cheapest(pool(req(ARCH, "In", "amd64")), expect="t3.micro")),
    Row(131, **cheapest(pool(req(ARCH, "In", "arm64")), expect="t4g.micro")),
    Row(146, **cheapest(pool(req(OS, "In", "windows"))), gap=WINDOWS),
    Row(161, **cheapest(NODE_POOL, req(OS, "In", "windows")), gap=WINDOWS),
    Row(174, **cheapest(pool(req(OS, "In", "windows"))), gap=WINDOWS),
    Row(189, **cheapest(NODE_POOL, req(OS, "In", "linux"))),
    Row(202, **cheapest(NODE_POOL, req(OS, "In", "linux"))),
    Row(215, **cheapest(pool(req(ZONE, "In", "test-zone-2")))),
    Row(230, **cheapest(NODE_POOL, req(ZONE, "In", "test-zone-2"))),
    Row(243, **cheapest(pool(req(CAPACITY, "In", "spot")))),
    Row(258, **cheapest(NODE_POOL, req(CAPACITY, "In", "spot"))),
    Row(271, **cheapest(pool(req(CAPACITY, "In", "on-demand"), req(ZONE, "In", "test-zone-1")))),
    Row(291, **cheapest(NODE_POOL, req(CAPACITY, "In", "spot"), req(ZONE, "In", "test-zone-1"))),
    Row(310, **cheapest(pool(req(CAPACITY, "In", "spot")), req(ZONE, "In", "test-zone-2"))),
    Row(
        330,
        **cheapest(
            pool(req(ARCH, "In", "arm64"), req(OS, "In", "windows"), req(CAPACITY, "In", "on-demand"), req(ZONE, "In", "test-zone-1"))
        ),
        gap=WINDOWS,
    ),
    Row(
        362,
        **cheapest(
            pool(req(ARCH, "In", "amd64"), req(OS, "In", "linux")),
            req(CAPACITY, "In", "spot"),
            req(ZONE, "In", "test-zone-2"),
            expect="t3.micro",
        ),
    ),
    Row(
        396,
        **cheapest(
            NODE_POOL,
            req(ARCH, "In", "amd64"),
            req(OS, "In", "linux"),
            req(CAPACITY, "In", "spot"),
            req(ZONE, "In", "test-zone-2"),
            expect="t3.micro",
        ),
    ),
]

# L448/L477 remove the arm64 types offered in test-zone-2 (us-west-2b). Every arm64 type the catalog
# knows the offerings of is offered there; of amd64 types p5en.48xlarge is not (us-west-2a, c and d:
# moto 5.2.5 ec2/resources/instance_type_offerings/availability-zone/us-west-2.json.gz, the
# catalog's source), so the cases run with the archs swapped: amd64 offered outside us-west-2b
# only, arm64 anywhere. The plan names its region (its AWS provider's), so the types' zones are judged.
SWAPPED = "the archs swapped: the fake's arm64 types without test-zone-2 are amd64's p5en.48xlarge here"
OUTSIDE_ZONE_2 = ("p5en.48xlarge", *ARM64)

NO_MATCH = [
    Row(428, **one(suite_pool(AMD64), spec(required=[req(ARCH, "In", "arm64")]), None)),
    Row(
        448,
        **one(suite_pool(OUTSIDE_ZONE_2), spec(required=[req(ARCH, "In", "amd64"), req(ZONE, "In", "test-zone-2")]), None),
        extra=(REGION,),
        note=SWAPPED,
    ),
    Row(
        477,
        **one(pool(req(ARCH, "In", "amd64"), types=OUTSIDE_ZONE_2), spec(required=[req(ZONE, "In", "test-zone-2")]), None),
        extra=(REGION,),
        note=SWAPPED,
    ),
]

# L509: 49 rounds (a CPU and a memory request each, the cluster reset between them), three pods
# each, which must land on one node. Each round is its own NodePool here, labelled, and its three
# pods select it: one node per round is 49 nodes in all.
ROUNDS = [(cpu, mem) for cpu in (0.1, 1.0, 2, 2.5, 4, 8, 16) for mem in (0.1, 1.0, 2, 4, 8, 16, 32)]
ENOUGH = Row(
    509,
    pools=tuple(suite_pool(name=f"round{i}", labels={"round": str(i)}) for i in range(len(ROUNDS))),
    pods=tuple(
        deployment(f"round{i}", 3, spec({"cpu": f"{cpu:0.1f}", "memory": f"{mem:0.1f}Gi"}, selector={"round": str(i)}))
        for i, (cpu, mem) in enumerate(ROUNDS)
    ),
    expect=(ANY,) * len(ROUNDS),
    nodes=len(ROUNDS),
    note="its assertions on every type the NodeClaim offers (room for the pods and overhead) and on the types' maps left unchanged are not checked",
)


def generations(pool_: dict, pod_spec: dict | None = None, expect: str | None = ANY, nodes: int | None = 2) -> dict:
    """Two pods of 0.9 CPU and 0.9Gi (each its own Pod): on two nodes where minValues keeps a type
    holding one, else on none."""
    return dict(pools=(pool_,), pods=pods(2, pod_spec or spec(PAIR)), expect=(expect, expect), nodes=nodes if expect else None)


PAIR = {"cpu": "0.9", "memory": "0.9Gi"}
ONE_OR_TWO = ("t4g.small", "c6g.xlarge")  # the fakes' arm64 instance-type-1 (holds one) and -2 (holds two)
MIN_VALUES = [
    Row(621, **generations(pool(req(TYPE, "In", *ONE_OR_TWO, min_values=2), types=ONE_OR_TWO)), note=OPTIONS_NOT_CHECKED),
    Row(
        693,
        **generations(pool(req(GENERATION, "Gt", "2", min_values=2), types=("t2.small", "t3.small", "c4.xlarge"))),
        note=OPTIONS_NOT_CHECKED,
    ),
    Row(
        784,
        **generations(
            pool(req(GENERATION, "Exists", min_values=2), types=("t2.small", "t3.xlarge")),
            spec(PAIR, required=[req(GENERATION, "Gt", "2")]),
            None,
        ),
        note="upstream also asserts the error names the label (gpufleet's reason names it too: not compared)",
    ),
    Row(
        870,
        **generations(pool(req(GENERATION, "Lt", "4", min_values=2), types=("t2.small", "t3.medium", "c4.xlarge"))),
        note=OPTIONS_NOT_CHECKED,
    ),
    Row(961, **generations(pool(req(GENERATION, "Lt", "4", min_values=2), types=("t2.medium", "c4.xlarge")), expect=None)),
    Row(
        1029,
        **generations(
            pool(
                req(TYPE, "In", "t4g.small", "t4g.medium", "c6g.xlarge", min_values=1),
                req(TYPE, "NotIn", "c6g.xlarge", min_values=2),
                types=("t4g.small", "t4g.medium", "c6g.xlarge"),
            )
        ),
        note=OPTIONS_NOT_CHECKED,
    ),
    Row(
        1121,
        **generations(
            pool(
                req(GENERATION, "Gt", "2", min_values=1),
                req(GENERATION, "Lt", "5", min_values=2),
                types=("t2.small", "t3.small", "c4.xlarge", "c5.xlarge"),
            )
        ),
        note=OPTIONS_NOT_CHECKED,
    ),
    # The first ten of the shuffled fakes: ten types, whichever they are.
    Row(1234, **one(pool(req(TYPE, "Exists", min_values=11), types=ASSORTED[:10]), expect=None)),
    Row(
        1331,
        **generations(pool(req(TYPE, "Exists", min_values=1), req(TYPE, "In", *ONE_OR_TWO, min_values=2), types=ONE_OR_TWO)),
        note=OPTIONS_NOT_CHECKED,
    ),
    Row(
        1410,
        **generations(
            pool(
                req(ARCH, "Exists", min_values=2), req(TYPE, "In", "t4g.small", "c5.xlarge", min_values=1), types=("t4g.small", "c5.xlarge")
            )
        ),
        note="instance-type-2 is amd64 (c5.xlarge) and instance-type-1 arm64 (t4g.small). " + OPTIONS_NOT_CHECKED,
    ),
]

ROWS = [*CHEAPEST, *NO_MATCH, ENOUGH, *MIN_VALUES]
