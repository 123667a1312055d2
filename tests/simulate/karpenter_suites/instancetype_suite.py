"""aws/karpenter-provider-aws pkg/providers/instancetype/suite_test.go @bde00654
(tests/fixtures/karpenter/instancetype_suite_test.go.txt): each `It` and `Entry` a plan can hold, as
a row run through gpufleet's simulator; the rest left out by reason (the census).

No stand-ins: the provider's fake EC2 answers with real types (pkg/fake/zz_generated.describe_instance_types.go,
kept beside it), read here from gpufleet's catalog; the pool offers those types, as the fake does.
The suite's NodePool allows on-demand only (L154-L166); its EC2NodeClass is al2023@latest."""

from __future__ import annotations

from tests.simulate.karpenter_suites import suite
from tests.simulate.karpenter_suites.suite import (
    ANY,
    CAPACITY,
    TYPE,
    Row,
    node_class,
    pods,
    req,
    spec,
)
from tests.simulate.karpenter_suites.suite import pool as _pool
from tests.simulate.test_karpenter_provisioning import FAKE_TYPES

FIXTURE = "instancetype_suite_test.go.txt"
SIZE = "karpenter.k8s.aws/instance-size"
FLEX = "karpenter.k8s.aws/instance-capability-flex"


def pool(*requirements: dict) -> dict:
    return _pool(req(CAPACITY, "In", "on-demand"), *requirements, types=FAKE_TYPES)


def one(pool_: dict, pod_spec: dict, expect: str | None = ANY, node_class_: dict | None = None, **kw) -> dict:
    """A case of one pod, beside the suite's EC2NodeClass (or the case's)."""
    return suite.one(pool_, pod_spec, expect, extra=(node_class_ or node_class(),), **kw)


CPU = spec({"cpu": "1"}, limits={"cpu": "1"})
POD_ENI = "vpc.amazonaws.com/pod-eni"
PRIVATE_IP = "vpc.amazonaws.com/PrivateIPv4Address"
NOT_ADVERTISED = "extended resources: {} is not a resource gpufleet's Karpenter gives a type (the provider does, from its own limits table)"

ROWS = [
    Row(411, **one(pool(), spec({POD_ENI: "1"}, limits={POD_ENI: "1"}, selector={TYPE: "t3.large"}), None)),
    Row(575, **one(pool(), CPU), avoid="metal"),
    Row(594, **one(pool(), CPU), avoid=r"^g"),
    Row(613, **one(pool(req(TYPE, "Exists")), spec({"cpu": "1"}, selector={SIZE: "metal"}), "m5.metal")),
    Row(632, **one(pool(), spec({POD_ENI: "1"}, limits={POD_ENI: "1"})), gap=NOT_ADVERTISED.format(POD_ENI)),
    Row(
        649,
        **one(pool(), spec(selector={FLEX: "true"}), "m7i-flex.large"),
    ),
    Row(661, **one(pool(req(FLEX, "NotIn", "true")), spec(selector={FLEX: "true"}), None)),
    Row(
        676,
        **one(pool(), spec(selector={FLEX: "false"})),
        avoid="flex",
    ),
    Row(
        688,
        **one(
            pool(),
            spec({PRIVATE_IP: "1"}, limits={PRIVATE_IP: "1"}),
            node_class_=node_class(amiSelectorTerms=[{"alias": "windows2022@latest"}]),
        ),
        gap=NOT_ADVERTISED.format(PRIVATE_IP) + "; nor are Windows nodes",
    ),
    Row(
        941,
        pools=(pool(),),
        pods=pods(1, spec({"amd.com/gpu": "1"}, limits={"amd.com/gpu": "1"}), "a")
        + pods(1, spec({"amd.com/gpu": "2"}, limits={"amd.com/gpu": "2"}), "b")
        + pods(1, spec({"amd.com/gpu": "4"}, limits={"amd.com/gpu": "4"}), "c"),
        expect=("g4ad.16xlarge",) * 3,
        nodes=2,
        extra=(node_class(),),
        gap=NOT_ADVERTISED.format("amd.com/gpu"),
    ),
    Row(974, **one(pool(), spec({"ephemeral-storage": "5000Gi"}), None)),
    Row(
        984,
        **one(pool(), spec({"ephemeral-storage": "5000Gi"}), "m6idn.32xlarge", node_class_=node_class(instanceStorePolicy="RAID0")),
        gap="node class: instanceStorePolicy RAID0 (instance store as ephemeral storage) is not read",
    ),
]
