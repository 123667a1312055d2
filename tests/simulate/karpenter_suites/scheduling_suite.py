"""kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/suite_test.go @6e7eab7a
(tests/fixtures/karpenter/scheduling_suite_test.go.txt): each `It` that a plan can hold, as a row
run through gpufleet's simulator; the rest left out by reason (the census at the end).

Stand-ins: suite.py (the fake default types). The fake's `integer` label is its CPU count:
karpenter.k8s.aws/instance-cpu. Where a quantity is tied to a fake's size, the row scales it to the
stand-in and says so."""

from __future__ import annotations

import re

from tests.simulate.karpenter_suites.suite import (
    ANY,
    ARCH,
    ARM,
    CAPACITY,
    CAPACITY_TYPES,
    CPUS,
    DEFAULT,
    GPU_A,
    GPU_B,
    GPUS,
    HOSTNAME,
    LABEL_NOT_CHECKED,
    OFFER,
    OS,
    SCALED,
    SMALL,
    TYPE,
    WINDOWS,
    ZONE,
    LeftOut,
    Row,
    fallback,
    fixture_path,
    one,
    pods,
    req,
    spec,
)
from tests.simulate.karpenter_suites.suite import pool as _pool

FIXTURE = "scheduling_suite_test.go.txt"


def pool(*requirements: dict, types=OFFER, **kw) -> dict:
    return _pool(*requirements, types=types, **kw)


# The suite's NodePool (L134-L151): every capacity type; a case that sets requirements replaces it.
NODE_POOL = pool(req(CAPACITY, "In", *CAPACITY_TYPES))
LABELLED = pool(req(CAPACITY, "In", *CAPACITY_TYPES), labels={"test-key": "test-value"})
TEST_KEY = pool(req("test-key", "In", "test-value"))
ZONES_123 = ("test-zone-1", "test-zone-2", "test-zone-3")


OPEN_ZONES = "offerings/zones: a pool that leaves the zone open admits any zone; Karpenter keeps only zones its types are offered in"

CUSTOM_CONSTRAINTS = [
    # NodePool with Labels
    Row(155, **one(LABELLED), note=LABEL_NOT_CHECKED),
    Row(163, **one(LABELLED, spec(selector={"test-key": "different-value"}), None)),
    Row(172, **one(NODE_POOL, spec(selector={"test-key": "test-value"}), None)),
    Row(180, **one(LABELLED, spec(required=[req("test-key", "In", "test-value", "another-value")])), note=LABEL_NOT_CHECKED),
    Row(192, **one(LABELLED, spec(required=[req("test-key", "In", "another-value")]), None)),
    # Well Known Labels
    Row(205, **one(pool(req(ZONE, "In", "test-zone-2"))), note=LABEL_NOT_CHECKED),
    Row(214, **one(pool(req(ZONE, "In", "test-zone-1", "test-zone-2")), spec(selector={ZONE: "test-zone-2"})), note=LABEL_NOT_CHECKED),
    Row(225, **one(NODE_POOL, spec(selector={HOSTNAME: "red-node"}), None)),
    Row(233, **one(pool(req(ZONE, "In", "test-zone-1")), spec(selector={ZONE: "unknown"}), None)),
    Row(243, **one(pool(req(ZONE, "In", "test-zone-1")), spec(selector={ZONE: "test-zone-2"}), None)),
    Row(253, **one(NODE_POOL, spec(required=[req(ZONE, "In", "test-zone-3")])), note=LABEL_NOT_CHECKED),
    # The `integer` label (the fake's CPUs) Gt 8: only arm-instance-type (16).
    Row(264, **one(pool(req(CPUS, "Gt", "8")), expect=ARM)),
    Row(273, **one(pool(req(CPUS, "Lt", "8")), expect=SMALL)),
    Row(282, **one(pool(req(CPUS, "Gte", "16")), expect=ARM)),
    Row(291, **one(pool(req(CPUS, "Lte", "2")), expect=SMALL)),
    Row(
        300,
        **one(NODE_POOL, spec(required=[req(ZONE, "In", "unknown")]), None),
        gap=OPEN_ZONES,
    ),
    Row(310, **one(NODE_POOL, spec(required=[req(ZONE, "NotIn", "test-zone-1", "test-zone-2", "unknown")])), note=LABEL_NOT_CHECKED),
    Row(
        321,
        **one(NODE_POOL, spec(required=[req(ZONE, "NotIn", *ZONES_123, "unknown")]), None),
        gap="offerings/zones: excluding every offered zone leaves any other zone open in gpufleet",
    ),
    Row(
        332,
        **one(
            NODE_POOL, spec(required=[req(ZONE, "In", *ZONES_123, "unknown")], preferred=[(1, [req(ZONE, "In", "test-zone-2", "unknown")])])
        ),
        note=LABEL_NOT_CHECKED,
    ),
    Row(346, **one(NODE_POOL, spec(required=[req(ZONE, "In", *ZONES_123, "unknown")], preferred=[(1, [req(ZONE, "In", "unknown")])]))),
    Row(
        359,
        **one(
            NODE_POOL,
            spec(required=[req(ZONE, "In", *ZONES_123, "unknown")], preferred=[(1, [req(ZONE, "NotIn", "test-zone-1", "test-zone-3")])]),
        ),
        note=LABEL_NOT_CHECKED,
    ),
    Row(373, **one(NODE_POOL, spec(required=[req(ZONE, "In", *ZONES_123, "unknown")], preferred=[(1, [req(ZONE, "NotIn", *ZONES_123)])]))),
    Row(
        386,
        **one(
            NODE_POOL,
            spec(selector={ZONE: "test-zone-3"}, required=[req(ZONE, "In", *ZONES_123)], preferred=[(1, [req(ZONE, "In", *ZONES_123)])]),
        ),
        note=LABEL_NOT_CHECKED,
    ),
    Row(
        401,
        **one(
            NODE_POOL,
            spec(
                selector={ZONE: "test-zone-3", TYPE: ARM},
                required=[req(ZONE, "In", "test-zone-1", "test-zone-3"), req(TYPE, "In", DEFAULT, ARM)],
                preferred=[(1, [req(ZONE, "NotIn", "unknown"), req(TYPE, "NotIn", "unknown")])],
            ),
            ARM,
        ),
    ),
    # Constraints Validation: v1.RestrictedLabels is kubernetes.io/hostname, RestrictedLabelDomains
    # karpenter.sh (pkg/apis/v1/labels.go @6e7eab7a L69-L71, L115-L117).
    Row(426, **one(NODE_POOL, spec(required=[req(HOSTNAME, "In", "test")]), None)),
    Row(442, **one(NODE_POOL, spec(required=[req("karpenter.sh/test", "In", "test")]), None)),
    Row(
        453,
        pools=(pool(req("kubernetes.io/test", "In", "test-value"), req("k8s.io/test", "In", "test-value")),),
        pods=pods(2, spec()),
        expect=(ANY, ANY),
        note=LABEL_NOT_CHECKED,
    ),
    Row(
        467,
        pools=(pool(req("subdomain.kubernetes.io/test", "In", "test-value"), req("subdomain.k8s.io/test", "In", "test-value")),),
        pods=pods(2, spec()),
        expect=(ANY, ANY),
        note=LABEL_NOT_CHECKED,
    ),
    Row(
        481,
        pools=(NODE_POOL,),
        pods=tuple(
            p
            for i, selector in enumerate(({ZONE: "test-zone-1"}, {TYPE: DEFAULT}, {ARCH: "arm64"}, {OS: "linux"}, {CAPACITY: "spot"}))
            for p in pods(1, spec(selector=selector), prefix=f"p{i}-")
        ),
        expect=(ANY, DEFAULT, ARM, ANY, ANY),
    ),
    # Scheduling Logic
    Row(509, **one(NODE_POOL, spec(required=[req("test-key", "In", "test-value")]), None)),
    Row(518, **one(NODE_POOL, spec(required=[req("test-key", "NotIn", "test-value")]))),
    Row(528, **one(NODE_POOL, spec(required=[req("test-key", "Exists")]), None)),
    Row(537, **one(NODE_POOL, spec(required=[req("test-key", "DoesNotExist")]))),
    Row(547, **one(TEST_KEY), note=LABEL_NOT_CHECKED),
    Row(556, **one(TEST_KEY, spec(required=[req("test-key", "In", "test-value")]))),
    Row(568, **one(TEST_KEY, spec(required=[req("test-key", "NotIn", "test-value")]), None)),
    Row(579, **one(TEST_KEY, spec(required=[req("test-key", "Exists")]))),
    Row(591, **one(TEST_KEY, spec(required=[req("test-key", "DoesNotExist")]), None)),
    Row(603, **one(TEST_KEY, spec(required=[req("test-key", "In", "another-value")]), None)),
    Row(614, **one(TEST_KEY, spec(required=[req("test-key", "NotIn", "another-value")])), note=LABEL_NOT_CHECKED),
    Row(
        626,
        pools=(pool(req("test-key", "In", "test-value", "another-value")),),
        pods=pods(1, spec(required=[req("test-key", "In", "test-value")]), "a")
        + pods(1, spec(required=[req("test-key", "NotIn", "another-value")]), "b"),
        expect=(ANY, ANY),
        nodes=1,
    ),
    Row(
        646,
        pools=(pool(req("test-key", "In", "test-value", "another-value")),),
        pods=pods(1, spec(required=[req("test-key", "In", "test-value")]), "a")
        + pods(1, spec(required=[req("test-key", "In", "another-value")]), "b"),
        expect=(ANY, ANY),
        nodes=2,
    ),
    Row(666, **one(NODE_POOL, spec(required=[req(ZONE, "In", "non-existent-zone"), req(ZONE, "Exists")]), None), gap=OPEN_ZONES),
]

_TITLE = re.compile(r'^[ \t]*It\("(.*)", func', re.M)


def _titles() -> dict[int, str]:
    text = fixture_path(FIXTURE).read_text()
    return {text.count("\n", 0, m.start()) + 1: m.group(1).replace(" the kubernetes", " kubernetes") for m in _TITLE.finditer(text)}


def _twins() -> list[Row]:
    """L678-L1124 repeat the cases of L204-L677 (the same titles, context by context, with fewer
    Gte/Lte and metric cases): each runs as its twin's row."""
    titles = _titles()
    blocks = ((678, 880, 204, 424), (881, 951, 425, 500), (952, 1124, 501, 677))
    rows = {r.line: r for r in CUSTOM_CONSTRAINTS}
    twins = []
    for first, last, was_first, was_last in blocks:
        earlier = {t: n for n, t in titles.items() if was_first <= n <= was_last}
        for line, title in titles.items():
            if first <= line <= last:
                twin = rows[earlier[title]]
                twins.append(
                    Row(line, twin.pools, twin.pods, twin.expect, twin.nodes, twin.extra, f"as L{twin.line}. {twin.note}", twin.gap)
                )
    return twins


FALLBACK = [
    *fallback(
        (1128, 1144, 1168, 1187),
        pool(req(ZONE, "In", "test-zone-1"), req(TYPE, "In", DEFAULT)),
        NODE_POOL,
        pool(req(ZONE, "In", "test-zone-1", "test-zone-2")),
    ),
    Row(
        1214,
        **one(NODE_POOL, spec(preferred=[(1, [req(ZONE, "NotIn", "test-zone-3")])], required=[req(ZONE, "In", "test-zone-3")])),
        note=LABEL_NOT_CHECKED,
    ),
    Row(1235, **one(NODE_POOL, spec(preferred=[(1, [req(ZONE, "In", "invalid"), req(ZONE, "NotIn", "invalid")])]))),
]

BOTH_ARCHS = pool(req(ARCH, "In", "arm64", "amd64"))
AMD64 = pool(req(ARCH, "In", "amd64"))
# fake.InstanceTypes(5) with a fake device on its first and second types (L1418-L1422): g4dn.xlarge
# (one NVIDIA GPU) and inf2.xlarge (one Neuron device) stand in, each the only type with its device.
DEVICES = (GPU_A, GPU_B, DEFAULT)
# fake.InstanceTypes(5) (fake-it-N: N+1 CPUs, 2(N+1)Gi): its `size` label is "large" on fake-it-4
# alone, "small" on the rest; EC2's size label has both values: c5.large and t3.small.
SIZES = (SMALL, "c5.large")
SIZE = "karpenter.k8s.aws/instance-size"

COMPATIBILITY = [
    Row(1248, **one(NODE_POOL, spec({"cpu": "512"}), None)),
    Row(
        1259,
        pools=(BOTH_ARCHS,),
        pods=pods(1, spec(selector={ARCH: "amd64"}), "a") + pods(1, spec(selector={ARCH: "arm64"}), "b"),
        expect=(ANY, ARM),
        nodes=2,
    ),
    Row(1284, **one(AMD64, spec(required=[req(TYPE, "In", ARM)]), None)),
    Row(1305, **one(AMD64, spec(required=[req(OS, "In", "ios")]), None)),
    Row(1327, **one(AMD64, spec(limits={"cpu": "14"}), None)),
    Row(
        1342,
        pools=(BOTH_ARCHS,),
        pods=pods(1, spec(selector={OS: "linux"}), "a") + pods(1, spec(selector={OS: "windows"}), "b"),
        expect=(ANY, ANY),
        nodes=2,
        gap=WINDOWS,
    ),
    Row(
        1367,
        pools=(BOTH_ARCHS,),
        pods=pods(1, spec(selector={"beta.kubernetes.io/instance-type": SMALL}), "a") + pods(1, spec(selector={TYPE: DEFAULT}), "b"),
        expect=(SMALL, DEFAULT),
        nodes=2,
    ),
    Row(
        1392,
        pools=(BOTH_ARCHS,),
        pods=pods(1, spec(selector={ZONE: "test-zone-1"}), "a") + pods(1, spec(selector={ZONE: "test-zone-2"}), "b"),
        expect=(ANY, ANY),
        nodes=2,
    ),
    Row(
        1417,
        pools=(pool(req(CAPACITY, "In", *CAPACITY_TYPES), types=DEVICES),),
        pods=pods(1, spec(limits={"nvidia.com/gpu": "1"}), "a") + pods(1, spec(limits={"aws.amazon.com/neuron": "1"}), "b"),
        expect=("g4dn.xlarge", "inf2.xlarge"),
        nodes=2,
    ),
    Row(1446, **one(pool(types=DEVICES), spec(limits={"nvidia.com/gpu": "1", "aws.amazon.com/neuron": "1"}), None)),
    Row(
        1465,
        pools=(pool(types=SIZES),),
        pods=pods(1, spec(selector={SIZE: "large"}), "a") + pods(1, spec(selector={SIZE: "small"}), "b"),
        expect=("c5.large", SMALL),
    ),
    Row(
        1478,
        pools=(pool(types=SIZES),),
        pods=pods(1, spec(selector={SIZE: "large", TYPE: SMALL}), "a") + pods(1, spec(selector={SIZE: "small", TYPE: "c5.large"}), "b"),
        expect=(None, None),
    ),
    # The fake's optional `special` label: a GPU count, which only g4dn.xlarge of these has.
    Row(
        1495,
        **one(pool(types=(SMALL, DEFAULT, "g4dn.xlarge")), spec(required=[req(GPUS, "Exists")]), "g4dn.xlarge"),
    ),
    Row(
        1507,
        **one(pool(types=(SMALL, DEFAULT, "g4dn.xlarge")), spec(required=[req(GPUS, "DoesNotExist")])),
        note="upstream asserts only that the label is absent",
    ),
]

RUNTIME_CLASS = {
    "urn": "urn:pulumi:s::p::kubernetes:node.k8s.io/v1:RuntimeClass::my-runtime-class",
    "type": "kubernetes:node.k8s.io/v1:RuntimeClass",
    "name": "my-runtime-class",
    "inputs": {"metadata": {"name": "my-runtime-class"}, "handler": "default", "overhead": {"podFixed": {"cpu": "2"}}},
}

BINPACKING = [
    Row(1522, **one(NODE_POOL, spec({"memory": "100M"}), SMALL)),
    # 2000M of the fake's 2Gi: t3.small leaves 1,486,880,768 bytes to pods in Karpenter's estimate.
    Row(1534, **one(NODE_POOL, spec({"memory": "1400M"}), SMALL), note=SCALED),
    Row(
        1546,
        **one(NODE_POOL, spec({"cpu": "1"}, extra={"runtimeClassName": "my-runtime-class"}), DEFAULT),
        extra=(RUNTIME_CLASS,),
    ),
    Row(1574, pools=(NODE_POOL,), pods=pods(5, spec({"memory": "10M"})), expect=(SMALL,) * 5, nodes=1),
    # Two 1.8G pods fill the fake's 4Gi; two 3G pods fill c5.xlarge's 6,903,824,384 bytes.
    Row(
        1593,
        pools=(NODE_POOL,),
        pods=pods(40, spec({"memory": "3G"}, selector={ARCH: "amd64"})),
        expect=(DEFAULT,) * 40,
        nodes=20,
        note=SCALED,
    ),
    Row(
        1613,
        pools=(NODE_POOL,),
        pods=pods(40, spec({"memory": "3G"}, selector={ARCH: "amd64"}), "l")
        + pods(20, spec({"memory": "600M"}, selector={ARCH: "amd64"}), "s"),
        expect=(DEFAULT,) * 60,
        nodes=20,
        note=SCALED + ": one small pod fits beside two large",
    ),
    # fake.InstanceTypes(5): 4.5 CPUs fill the largest (5); 7 CPUs nearly fill c5.2xlarge (7,910m).
    Row(
        1645,
        pools=(pool(types=(SMALL, DEFAULT, "c5.2xlarge")),),
        pods=pods(1, spec({"cpu": "7"}), "a") + pods(1, spec({"cpu": "1"}), "b"),
        expect=("c5.2xlarge", SMALL),
        nodes=2,
        note=SCALED + "; upstream asserts only that the two types differ",
    ),
    Row(1671, **one(NODE_POOL, spec({"foo.com/weird-resources": "0"}, limits={"foo.com/weird-resources": "0"}))),
    Row(1683, **one(NODE_POOL, spec({"memory": "2Ti"}), None)),
    # Every fake holds 5 pods; of the stand-ins t3.small holds 11 (its ENIs), so the pool offers it alone.
    Row(
        1694,
        pools=(pool(types=(SMALL,)),),
        pods=pods(55, spec({"memory": "1m", "cpu": "1m"}, selector={ARCH: "amd64"})),
        expect=(SMALL,) * 55,
        nodes=5,
        note=SCALED,
    ),
    Row(1716, **one(NODE_POOL, spec({"memory": "1Gi", "cpu": "1"}, init=[{"memory": "1Gi", "cpu": "2"}]), DEFAULT)),
    Row(1741, **one(NODE_POOL, spec({"memory": "1Gi", "cpu": "1"}, init=[{"memory": "1Ti", "cpu": "2"}]), None)),
]

# L2593, inside In-Flight Nodes, needs no node in flight.
HOST_PORTS = [Row(2593, pools=(NODE_POOL,), pods=pods(2, spec(host_ports=[8080])), expect=(ANY, ANY), nodes=2)]

FILTERED = [
    # The first half (a pod scheduled before the pool changes) is cluster state; the second is the case.
    Row(
        5197,
        **one(
            pool(req(TYPE, "In", "non-existent-instance-type")),
            spec({"cpu": "32", "memory": "256Gi"}, limits={"cpu": "32", "memory": "256Gi"}),
            None,
        ),
    ),
    Row(5242, pools=(pool(req(ARCH, "In", "non-existent-arch")),), pods=pods(3, spec()), expect=(None,) * 3),
    Row(5273, **one(pool(req(ARCH, "In", "amd64"), req(ARCH, "In", "arm64")), expect=None)),
    Row(
        5302,
        **one(pool(req(ZONE, "In", "non-existent-zone-1", "non-existent-zone-2")), expect=None),
        gap="offerings/zones: a zone no type is offered in is not refused",
    ),
]

ROWS = [*CUSTOM_CONSTRAINTS, *_twins(), *FALLBACK, *COMPATIBILITY, *BINPACKING, *HOST_PORTS, *FILTERED]

STATE = "cluster state: in-flight, existing or deleting nodes"
LEFT_OUT = [
    LeftOut(502, 502, "NodePool status: a pool not Ready"),
    LeftOut(1763, 1763, "fake prices: cheapest-first over prices that invert size, which EC2's do not"),
    LeftOut(1830, 2592, STATE),
    LeftOut(2606, 2786, STATE),
    LeftOut(2788, 2890, "controller mechanics: binding, kubelet zeroing, pod state"),
    LeftOut(2891, 4059, "volumes: PVCs, StorageClasses, CSI limits (gpufleet reads no volumes)"),
    LeftOut(4060, 4316, STATE),
    LeftOut(4317, 4675, "metrics"),
    LeftOut(4676, 5195, "capacity reservations: offerings of reserved capacity and their counts"),
    LeftOut(5328, 5522, "DRA: ResourceClaims and ResourceSlices"),
    LeftOut(5523, 5745, "offering overrides: per-offering capacity"),
]
