"""kubernetes-sigs/karpenter pkg/controllers/provisioning/suite_test.go @6e7eab7a
(tests/fixtures/karpenter/provisioning_suite_test.go.txt): each `It` and `Entry` a plan can hold, as
a row run through gpufleet's simulator; the rest left out by reason (the census).

The suite's NodePool is test.NodePool() (pkg/test/nodepool.go @6e7eab7a): no requirements, a CPU
limit of 2000. Stand-ins: suite.py (the fake default types). The fake's `size` label ("large" where
CPU > 4 and memory > 8Gi, else "small", fake/instancetype.go) reads as EC2's instance-size:
"small" as t3.small's and c5.xlarge's (small, xlarge), "large" as r6g.4xlarge's (4xlarge)."""

from __future__ import annotations

from tests.simulate.karpenter_suites.suite import (
    ANY,
    ARCH,
    CAPACITY,
    DEFAULT,
    GPU_A,
    GPU_B,
    HOSTNAME,
    INVALID_PREFERENCES,
    LABEL_NOT_CHECKED,
    OFFER,
    OS,
    PARTIAL,
    SCALED,
    SMALL,
    TYPE,
    ZONE,
    Row,
    anti_affinity,
    daemonset,
    deployment,
    fallback,
    one,
    pods,
    req,
    spec,
)
from tests.simulate.karpenter_suites.suite import pool as _pool

FIXTURE = "provisioning_suite_test.go.txt"
SIZE = "karpenter.k8s.aws/instance-size"
FAKE_SMALL, FAKE_LARGE = ("small", "xlarge"), ("4xlarge",)
NODEPOOL = "karpenter.sh/nodepool"


def pool(*requirements: dict, types=OFFER, limits=None, **kw) -> dict:
    return _pool(*requirements, types=types, limits={"cpu": "2000"} if limits is None else limits, **kw)


NODE_POOL = pool()
ONE_AND_ONE = {"cpu": "1", "memory": "1Gi"}
TWO_AND_TWO = {"cpu": "2", "memory": "2Gi"}


def with_daemon(daemon_spec: dict, pod_spec: dict | None = None, expect: str | None = DEFAULT, pool_: dict = NODE_POOL, **kw) -> dict:
    """A DaemonSet beside one pod: upstream asserts the node's capacity, 4 CPU/4Gi (the default type)
    or 2 CPU/2Gi (the small one)."""
    return dict(pools=(pool_,), pods=pods(1, pod_spec or spec(ONE_AND_ONE)), expect=(expect,), extra=(daemonset("ds", daemon_spec),), **kw)


def selecting(*selectors: dict) -> tuple[dict, ...]:
    return tuple(p for i, s in enumerate(selectors) for p in pods(1, spec(selector=s), prefix=f"p{i}-"))


def requiring(*expressions: dict) -> tuple[dict, ...]:
    return tuple(p for i, e in enumerate(expressions) for p in pods(1, spec(required=[e]), prefix=f"p{i}-"))


# L336/L376: five pods the pool admits, then seven it does not (each its own pod).
_ADMITTED = ((NODEPOOL, "default"), (ZONE, "test-zone-1"), (TYPE, DEFAULT), (ARCH, "arm64"), (OS, "linux"))
_REFUSED = (
    (NODEPOOL, "unknown"),
    (ZONE, "unknown"),
    (TYPE, "unknown"),
    (ARCH, "unknown"),
    (OS, "unknown"),
    (CAPACITY, "unknown"),
    ("foo", "bar"),
)
_SUPPORTED = (
    "offerings/zones, capacity type: a zone or a capacity type no type is offered in is admitted where the pool leaves it "
    "open (the pods selecting zone `unknown` and capacity-type `unknown`)"
)

# L532-L685 (sidecars, pod-level resources): the fakes are 10, 11 and 12 CPUs and the pod needs
# 10.9 (11 its node's capacity); c5.2xlarge, c5.4xlarge and c5.9xlarge stand in (7,910m, 15,890m and
# 35,8xx m to pods) with every CPU quantity times 1.45: 10.9 CPUs become 15.805, the middle type.
LADDER = ("c5.2xlarge", "c5.4xlarge", "c5.9xlarge")


def cpus(amount: float) -> str:
    return f"{round(amount * 1450)}m"


def sidecar_pod(main: float, *init: tuple[float, bool]) -> dict:
    """A pod of one container and init containers in order, (CPUs, is a sidecar) each."""
    found = spec({"cpu": cpus(main)})
    found["initContainers"] = [
        {"name": f"i{i}", "image": "x", "resources": {"requests": {"cpu": cpus(c)}}, **({"restartPolicy": "Always"} if sidecar else {})}
        for i, (c, sidecar) in enumerate(init)
    ]
    return found


POD_LEVEL = sidecar_pod(5, (6, False), (4, True))
POD_LEVEL["resources"] = {"requests": {"cpu": cpus(9.9)}, "limits": {"cpu": cpus(10)}}

ANTI = anti_affinity({"app": "foo"}, HOSTNAME)

PROVISIONING = [
    Row(225, **one(NODE_POOL), nodes=1),
    Row(236, pools=(NODE_POOL,), pods=pods(100, spec()), expect=(ANY,) * 100),
    Row(
        336,
        pools=(NODE_POOL,),
        pods=selecting(*({k: v} for k, v in _ADMITTED + _REFUSED)),
        expect=(ANY, ANY, DEFAULT, "r6g.4xlarge", ANY) + (None,) * 7,
        gap=_SUPPORTED,
    ),
    Row(
        376,
        pools=(NODE_POOL,),
        pods=requiring(*(req(k, "In", v) for k, v in _ADMITTED + _REFUSED)),
        expect=(ANY, ANY, DEFAULT, "r6g.4xlarge", ANY) + (None,) * 7,
        gap=_SUPPORTED,
    ),
    Row(
        416,
        pools=(pool(types=(*OFFER, GPU_A, GPU_B)),),
        pods=pods(1, spec(limits={"nvidia.com/gpu": "1"}), "a") + pods(1, spec(limits={"aws.amazon.com/neuron": "1"}), "b"),
        expect=(GPU_A, GPU_B),
    ),
    # single-pod-instance-type holds one pod; t3.micro, four in Karpenter's estimate (its ENIs).
    Row(431, **dict(one(pool(types=("t3.micro",))), pods=pods(12, spec()), expect=("t3.micro",) * 12), nodes=3, note=SCALED),
    Row(532, **one(pool(types=LADDER), sidecar_pod(6, (10, False), (4.9, True)), "c5.4xlarge"), note=SCALED),
    Row(583, **one(pool(types=LADDER), sidecar_pod(6, (4.9, True), (5, False)), "c5.4xlarge"), note=SCALED),
    Row(634, **one(pool(types=LADDER), sidecar_pod(5, (4.9, True), (6, False)), "c5.4xlarge"), note=SCALED),
    Row(685, **one(pool(types=LADDER), POD_LEVEL, "c5.4xlarge"), note=SCALED),
]


def _apart(replicas: int, limits: dict) -> dict:
    """The Row fields of the limit cases' Deployment "foo": 1.5 vCPU pods kept apart by hostname
    anti-affinity, under a pool with `limits`; some of them launch."""
    return dict(
        pools=(pool(limits=limits),),
        pods=(deployment("foo", replicas, {**spec({"cpu": "1.5"}), **ANTI}, {"app": "foo"}),),
        expect=(PARTIAL,),
    )


# Resource Limits: a limit keeps only the types whose capacity fits what is left (t3.small's 2 vCPUs).
LIMITS = [
    Row(765, **one(pool(limits={"cpu": "2"}), spec({"cpu": "1.75"}), SMALL)),
    Row(
        782,
        **_apart(2, limits={"cpu": "3"}),
        nodes=1,
        note="the limit keeps a second claim out (a 2-vCPU claim leaves 1 of 3); the anti-affinity keeps the second replica off the first",
    ),
    Row(832, **one(pool(limits={"cpu": "2"}), spec({"cpu": "2.1"}), None)),
    Row(847, **one(pool(limits={"pods": "1"}, types=(*OFFER, GPU_A)), spec(limits={"nvidia.com/gpu": "1"}), None)),
    # Two scheduling rounds upstream; the plan holds both pods at once, so one pass decides both.
    Row(863, pools=(pool(limits={"cpu": "2"}),), pods=(deployment("p", 2, spec({"cpu": "1.75"})),), expect=(PARTIAL,), nodes=1),
    Row(891, **_apart(3, limits={"nodes": "2"}), nodes=2),
]

DAEMONSETS = [
    Row(935, **with_daemon(spec(TWO_AND_TWO))),
    Row(956, **with_daemon(spec(TWO_AND_TWO, host_ports=[8080]), spec(ONE_AND_ONE, host_ports=[8080]), None), nodes=0),
    Row(974, **with_daemon(spec(TWO_AND_TWO), pool_=pool(template={"startupTaints": [{"key": "foo.com/taint", "effect": "NoSchedule"}]}))),
    Row(1004, **with_daemon(spec({"cpu": "10000", "memory": "10000Gi"}), spec(), None)),
    Row(1057, **with_daemon(spec({"cpu": "1"}, limits={"cpu": "10000", "memory": "10000Gi"}), spec(), None)),
    Row(
        1070,
        **with_daemon(
            {
                **spec({"cpu": "1"}, limits={"cpu": "10000", "memory": "1Gi"}),
                "initContainers": [
                    {"name": "i", "image": "x", "resources": {"requests": {"cpu": "3"}, "limits": {"cpu": "10000", "memory": "3Gi"}}}
                ],
            },
            spec(),
        ),
    ),
    Row(
        1098,
        **with_daemon(
            {
                **spec({"cpu": "1"}, limits={"cpu": "10000", "memory": "1Gi"}),
                "initContainers": [
                    {"name": "i", "image": "x", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "10000", "memory": "10000Gi"}}}
                ],
            },
            spec(),
            None,
        ),
    ),
    Row(1119, **with_daemon(spec(init=[{"cpu": "10000", "memory": "10000Gi"}]), spec(), None)),
    Row(1135, **with_daemon(spec(), spec(), ANY)),
    Row(
        1143,
        **with_daemon(
            spec(TWO_AND_TWO),
            spec(ONE_AND_ONE, tolerations=[{"operator": "Exists"}]),
            SMALL,
            pool_=pool(taints=[{"key": "foo", "value": "bar", "effect": "NoSchedule"}]),
        ),
    ),
    Row(1175, **with_daemon(spec(TWO_AND_TWO, selector={"node": "invalid"}), expect=SMALL)),
    Row(1197, **with_daemon(spec(TWO_AND_TWO, required=[req(TYPE, "In", "non-existent-instance-type")]), expect=SMALL)),
    Row(1219, **with_daemon(spec(TWO_AND_TWO, selector={"purpose": "monitoring"}), pool_=pool(labels={"purpose": "monitoring"}))),
    Row(
        1246,
        pools=(NODE_POOL,),
        pods=pods(1, spec(ONE_AND_ONE)),
        expect=(DEFAULT,),
        extra=(
            daemonset("small", spec({"cpu": "1"}, required=[req(SIZE, "In", *FAKE_SMALL)])),
            daemonset("large", spec({"cpu": "10"}, required=[req(SIZE, "In", *FAKE_LARGE)])),
        ),
    ),
    Row(
        1276,
        **with_daemon(
            spec(TWO_AND_TWO, required=[req("foo", "NotIn", "bar")]), spec(ONE_AND_ONE, required=[req(ZONE, "In", "test-zone-2")])
        ),
    ),
    Row(
        1371,
        **with_daemon(spec(TWO_AND_TWO, terms=[[req("foo", "In", "voo")], [req("foo", "In", "bar")]]), pool_=pool(labels={"foo": "bar"})),
    ),
    Row(1431, **with_daemon(spec(TWO_AND_TWO, preferred=[(1, [req("node", "In", "invalid")])]))),
    Row(1459, **with_daemon(spec(TWO_AND_TWO), pool_=pool(taints=[{"key": "test", "effect": "PreferNoSchedule"}]))),
    Row(
        1496,
        pools=(NODE_POOL,),
        pods=pods(1, spec(ONE_AND_ONE, required=[req(SIZE, "In", *FAKE_SMALL)], host_ports=[8080])),
        expect=(DEFAULT,),
        extra=(
            daemonset("large", spec({"cpu": "4", "memory": "4Gi"}, required=[req(SIZE, "In", *FAKE_LARGE)], host_ports=[8080])),
            daemonset("small", spec(TWO_AND_TWO, required=[req(SIZE, "In", *FAKE_SMALL)], host_ports=[8081])),
        ),
    ),
]

_LABELLED = pool(
    req("test-key-2", "In", "test-value-2"),
    req("test-key-3", "NotIn", "test-value-3"),
    req("test-key-4", "Lt", "4"),
    req("test-key-5", "Gt", "5"),
    req("test-key-6", "Exists"),
    req("test-key-7", "DoesNotExist"),
    labels={"test-key-1": "test-value-1"},
)
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
_TOLERATIONS = (
    {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu", "operator": "Exists"},
    {"operator": "Exists"},
)


def _domain_pools(prefix: str) -> tuple[dict, ...]:
    return tuple(pool(name=d, labels={f"{prefix}{d}/test": "test-value"}) for d in ("kubernetes.io", "k8s.io"))


LABELS_AND_TAINTS = [
    Row(1546, **one(_LABELLED), note=LABEL_NOT_CHECKED),
    Row(
        1579,
        pools=_domain_pools(""),
        pods=requiring(*(req(f"{d}/test", "In", "test-value") for d in ("kubernetes.io", "k8s.io"))),
        expect=(ANY, ANY),
        pool_of=("kubernetes.io", "k8s.io"),
    ),
    Row(
        1601,
        pools=_domain_pools("subdomain."),
        pods=requiring(*(req(f"subdomain.{d}/test", "In", "test-value") for d in ("kubernetes.io", "k8s.io"))),
        expect=(ANY, ANY),
        pool_of=("kubernetes.io", "k8s.io"),
    ),
    Row(1623, **one(pool(req("foo", "In", "bar"), req("node.kubernetes.io/windows-build", "NotIn", "test-value"))), note=LABEL_NOT_CHECKED),
    Row(
        1645,
        pools=(pool(taints=[GPU_TAINT]),),
        pods=tuple(p for i, t in enumerate(_TOLERATIONS) for p in pods(1, spec(tolerations=[t]), prefix=f"p{i}-")),
        expect=(ANY,) * 4,
    ),
    # Upstream asserts one NodeClaim of 3 CPUs: the daemon's CPU counted once.
    Row(
        1959,
        pools=(NODE_POOL,),
        pods=pods(2, spec({"cpu": "1", "memory": "1Mi"})),
        expect=(DEFAULT, DEFAULT),
        nodes=1,
        extra=(daemonset("ds", spec({"cpu": "1", "memory": "1Mi"})),),
    ),
]


def _preference_pods(key: str) -> tuple[dict, ...]:
    return pods(1, spec({"cpu": "2"}), "a") + pods(1, spec({"cpu": "1"}, preferred=[(1, [req(key, "In", "value-1")])]), "b")


FALLBACK = [
    *fallback(
        (2389, 2410, 2434, 2453), pool(req(ZONE, "In", "test-zone-1")), NODE_POOL, pool(req(ZONE, "In", "test-zone-1", "test-zone-2"))
    ),
    Row(
        2487,
        **one(
            pool(taints=[{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}]),
            INVALID_PREFERENCES,
        ),
    ),
    Row(2558, pools=(NODE_POOL,), pods=_preference_pods(ZONE), expect=(DEFAULT, DEFAULT), nodes=1),
    Row(2559, pools=(NODE_POOL,), pods=_preference_pods(HOSTNAME), expect=(DEFAULT, DEFAULT), nodes=1),
]

STATIC = "static NodePools: the provisioner leaves a pool with spec.replicas out; its own nodes are not simulated (a note on the pod)"
NODE_POOLS = [
    Row(2773, pools=(pool(name="a"), pool(name="b")), pods=pods(1, spec(selector={NODEPOOL: "a"})), expect=(ANY,), pool_of=("a",)),
    Row(
        2781,
        pools=(pool(name="a", labels={"foo": "bar"}), pool(name="b")),
        pods=pods(1, spec(selector={"foo": "bar"})),
        expect=(ANY,),
        pool_of=("a",),
    ),
    Row(
        2797,
        pools=(pool(name="z", taints=[{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}]), pool(name="a")),
        pods=pods(1, spec()),
        expect=(ANY,),
        pool_of=("a",),
        note="the tainted pool's name sorts first in Karpenter's order (equal weights: by name, in reverse)",
    ),
    Row(
        2815,
        pools=(pool(name="a"), pool(name="b", weight=20), pool(name="c", weight=100)),
        pods=pods(3, spec()),
        expect=(ANY,) * 3,
        pool_of=("c",) * 3,
    ),
    Row(
        2831,
        pools=(pool(name="a"), pool(name="b", weight=20), pool(name="c", weight=100)),
        pods=pods(1, spec(selector={NODEPOOL: "a"})),
        expect=(ANY,),
        pool_of=("a",),
    ),
    Row(2848, **one(pool(replicas=2), expect=None), note=STATIC),
    Row(
        2859,
        pools=(pool(name="a"), pool(name="static", replicas=1, weight=100)),
        pods=pods(1, spec()),
        expect=(ANY,),
        pool_of=("a",),
        note=STATIC,
    ),
]

_TWO_OF_THREE = ("c6g.xlarge", "m6g.xlarge", "instance-type-3")
MIN_VALUES = [
    # Two of three named types exist (c6g.xlarge, m6g.xlarge stand in for the fakes' 4 CPU arm64 ones).
    Row(
        2911,
        **one(pool(req(TYPE, "In", *_TWO_OF_THREE, min_values=3), types=_TWO_OF_THREE), spec({"cpu": "0.9", "memory": "0.9Gi"}), None),
    ),
    Row(
        3216,
        **one(
            pool(req(ZONE, "In", "test-zone-1", "test-zone-2", "non-existent-zone", min_values=3)),
            spec({"cpu": "0.9", "memory": "0.9Gi"}),
            None,
        ),
        note="the fake offers two zones of three; a zone no type is offered in stands for the third",
        gap="minValues/offerings: the suite's plan names no region, so its types' zones are not known and a zone's minValues is not judged",
    ),
]

ROWS = [*PROVISIONING, *LIMITS, *DAEMONSETS, *LABELS_AND_TAINTS, *FALLBACK, *NODE_POOLS, *MIN_VALUES]

CLAIM = "NodeClaim contents: requirements, requests, owner, node class, grace period (not in gpufleet's output)"
SETTINGS = "Karpenter settings: preference policy, minValues policy BestEffort"
