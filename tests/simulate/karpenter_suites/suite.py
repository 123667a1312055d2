"""Karpenter's own test suites as table rows run through gpufleet's simulator: the plan each `It`
builds (NodePools, pods, DaemonSets) in Pulumi's resource shape, the verdict gpufleet gives it, and
the census of every `It` and `Entry` of an upstream file (translated, or left out with the reason).

The fixtures are Karpenter's files unchanged (tests/fixtures/karpenter/SOURCE.md). Their fake cloud
types have no EC2 twin, so each row runs on real stand-ins, said per suite and per row; a fake's
zone test-zone-N is us-west-2{a,b,c}[N-1]. What a row compares: scheduled or not, the type, the
number of nodes. Node labels are not compared: gpufleet's placement does not give a node's labels
(a row whose upstream assertion is a label says so in its note)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from gpufleet.plans import placement as plan_placement
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "karpenter"

ZONE = "topology.kubernetes.io/zone"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
TYPE = "node.kubernetes.io/instance-type"
CAPACITY = "karpenter.sh/capacity-type"
HOSTNAME = "kubernetes.io/hostname"
# The fake's `integer` label is its type's CPU count (fake/instancetype.go): EC2's own is this one.
CPUS = "karpenter.k8s.aws/instance-cpu"
# The fake's `special` label exists on its large types only; a GPU count exists on GPU types only.
GPUS = "karpenter.k8s.aws/instance-gpu-count"
ZONES = {f"test-zone-{i}": z for i, z in enumerate(("us-west-2a", "us-west-2b", "us-west-2c"), 1)}
CAPACITY_TYPES = ("spot", "on-demand", "reserved")

# Stand-ins for the core fake provider's default types (kubernetes-sigs/karpenter @6e7eab7a
# pkg/cloudprovider/fake/cloudprovider.go GetInstanceTypes, instancetype.go NewInstanceType), from
# EC2's records (the catalog): small-instance-type (2 CPU, 2Gi) is t3.small (2 vCPU, 2 GiB);
# default-instance-type (4 CPU, 4Gi) is c5.xlarge (4 vCPU, 8 GiB); arm-instance-type (arm64, 16 CPU,
# 128Gi) is r6g.4xlarge (arm64, 16 vCPU, 128 GiB). The two fake GPU types (4 CPU, 4Gi, two fake
# devices each) are left out of the default offer: every EC2 GPU type is larger than c5.xlarge and
# would change which type is largest; rows that ask for a device add g4dn.xlarge (one NVIDIA GPU)
# or inf2.xlarge (one Neuron device). single-pod-instance-type (one pod) has no EC2 twin.
SMALL, DEFAULT, ARM = "t3.small", "c5.xlarge", "r6g.4xlarge"
OFFER = (SMALL, DEFAULT, ARM)
GPU_A, GPU_B = "g4dn.xlarge", "inf2.xlarge"  # fake.com/vendor-a and vendor-b: nvidia.com/gpu, aws.amazon.com/neuron
def aws_provider(region: str) -> dict:
    """The plan's default AWS provider in `region`: where its types' zones are judged."""
    return {"urn": "urn:pulumi:s::p::pulumi:providers:aws::default", "type": "pulumi:providers:aws", "name": "default", "inputs": {"region": region}}


# The fakes' zones are us-west-2's (ZONES): a row that judges them names the region by its AWS provider.
REGION = aws_provider("us-west-2")
LABEL_NOT_CHECKED = "its assertion on the node's labels is not checked (not in gpufleet's output)"
SCALED = "quantities scaled to the stand-in"
WINDOWS = (
    "AMI family/OS: gpufleet's nodes are linux only; the fake types offer windows too (on AWS the node class's AMI "
    "family decides, types.go @bde00654 L190 getOS)"
)

ANY = "*"  # scheduled, whatever the type
PARTIAL = "partial"  # a workload some of whose replicas are provisioned, the rest left Pending


def req(key: str, operator: str, *values: str, min_values: int | None = None) -> dict:
    """A node selector requirement; a fake zone's name reads as its stand-in's."""
    found: dict = {"key": key, "operator": operator}
    if values:
        found["values"] = [ZONES.get(v, v) for v in values]
    if min_values is not None:
        found["minValues"] = min_values
    return found


def pool(
    *requirements: dict,
    types: Sequence[str],
    name: str = "default",
    labels: Mapping[str, str] | None = None,
    taints: Sequence[dict] = (),
    weight: int | None = None,
    limits: Mapping[str, str] | None = None,
    template: Mapping | None = None,
    replicas: int | None = None,
) -> dict:
    """A NodePool restricted to `types` (the fake provider's whole offer) with `requirements`;
    `template` adds to its template's spec (startupTaints), `replicas` makes it static."""
    spec: dict = {
        "template": {
            "spec": {
                "requirements": [req(TYPE, "In", *types), *requirements],
                "taints": list(taints),
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                **(template or {}),
            }
        }
    }
    if replicas is not None:
        spec["replicas"] = replicas
    if labels:
        spec["template"]["metadata"] = {"labels": dict(labels)}
    if limits:
        spec["limits"] = dict(limits)
    if weight is not None:
        spec["weight"] = weight
    inputs = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}
    return _resource("karpenter.sh/v1:NodePool", name, inputs)


def _resource(kind: str, name: str, inputs: dict) -> dict:
    return {"urn": f"urn:pulumi:s::p::kubernetes:{kind}::{name}", "type": f"kubernetes:{kind}", "name": name, "inputs": inputs}


def spec(
    requests: Mapping[str, str] | None = None,
    *,
    limits: Mapping[str, str] | None = None,
    selector: Mapping[str, str] | None = None,
    required: Sequence[dict] | None = None,
    terms: Sequence[Sequence[dict]] | None = None,
    preferred: Sequence[tuple[int, Sequence[dict]]] = (),
    tolerations: Sequence[dict] = (),
    init: Sequence[Mapping[str, str]] = (),
    host_ports: Sequence[int] = (),
    extra: Mapping | None = None,
) -> dict:
    """A pod spec as Karpenter's test.PodOptions builds it: `required` is one term's expressions,
    `terms` several terms, `preferred` (weight, expressions) terms."""
    container: dict = {"name": "c", "image": "x", "resources": {}}
    if requests:
        container["resources"]["requests"] = dict(requests)
    if limits:
        container["resources"]["limits"] = dict(limits)
    if host_ports:
        container["ports"] = [{"containerPort": p, "hostPort": p} for p in host_ports]
    found: dict = {"containers": [container]}
    if init:
        found["initContainers"] = [{"name": f"i{i}", "image": "x", "resources": {"requests": dict(r)}} for i, r in enumerate(init)]
    if selector:
        found["nodeSelector"] = {k: ZONES.get(v, v) for k, v in selector.items()}
    affinity: dict = {}
    if required is not None or terms is not None:
        chosen = [list(required or ())] if terms is None else [list(t) for t in terms]
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [{"matchExpressions": t} for t in chosen]}
    if preferred:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": {"matchExpressions": list(t)}} for w, t in preferred
        ]
    if affinity:
        found["affinity"] = {"nodeAffinity": affinity}
    if tolerations:
        found["tolerations"] = list(tolerations)
    found.update(extra or {})
    return found


def pods(count: int, pod_spec: dict, prefix: str = "p") -> tuple[dict, ...]:
    """`count` pods of one spec, each its own Pod (Karpenter's test.Pods)."""
    return tuple(
        _resource("v1:Pod", f"{prefix}{i}", {"metadata": {"name": f"{prefix}{i}", "namespace": "default"}, "spec": pod_spec})
        for i in range(count)
    )


def deployment(name: str, replicas: int, pod_spec: dict, labels: Mapping[str, str] | None = None) -> dict:
    """Replicas of one pod (where Karpenter's case relates its pods to each other by labels)."""
    selected = dict(labels or {"app": name})
    inputs = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selected},
            "template": {"metadata": {"labels": selected}, "spec": pod_spec},
        },
    }
    return _resource("apps/v1:Deployment", name, inputs)


def anti_affinity(labels: Mapping[str, str], topology_key: str) -> dict:
    """A required pod anti-affinity against pods with `labels` (test.PodOptions PodAntiRequirements)."""
    term = {"topologyKey": topology_key, "labelSelector": {"matchLabels": dict(labels)}}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


def node_class(name: str = "default", **node_class_spec) -> dict:
    """An EC2NodeClass; the provider's test.EC2NodeClass defaults to al2023@latest (pkg/test/nodeclass.go @bde00654 L36-L37)."""
    inputs = {"metadata": {"name": name}, "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], **node_class_spec}}
    return {
        "urn": f"urn:pulumi:s::p::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::{name}",
        "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
        "name": name,
        "inputs": inputs,
    }


def daemonset(name: str, pod_spec: dict) -> dict:
    inputs = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}},
    }
    return _resource("apps/v1:DaemonSet", name, inputs)


def terms(*zones: str) -> list[list[dict]]:
    """One required term per zone, ORed."""
    return [[req(ZONE, "In", z)] for z in zones]


# Preferential Fallback, written twice upstream (scheduling L1126-L1245, provisioning L2387-L2561).
NEXT_TERMS = spec(terms=terms("invalid", "invalid", "test-zone-1", "test-zone-2"))
INVALID_PREFERENCES = spec(preferred=[(1, [req(ZONE, "In", "invalid")]), (1, [req(TYPE, "In", "invalid")])])
LIGHTER_WEIGHTS = spec(
    preferred=[(100, [req(TYPE, "In", "test-zone-3")]), (50, [req(ZONE, "In", "test-zone-2")]), (1, [req(ZONE, "In", "test-zone-1")])]
)


def fallback(lines: Sequence[int], final: dict, open_pool: dict, two_zones: dict) -> list[Row]:
    """The four Preferential Fallback cases both core suites hold (`lines` in their order): the final
    required term is not relaxed (`final` allows test-zone-1), multiple terms are, all preferences
    are, lighter weights are tried."""
    return [
        Row(lines[0], **one(final, spec(terms=terms("invalid")), None)),
        Row(
            lines[1],
            **one(open_pool, NEXT_TERMS),
            note="agrees only because gpufleet admits the invalid zone of the first term (scheduling L300): the next term is not exercised",
        ),
        Row(lines[2], **one(open_pool, INVALID_PREFERENCES)),
        Row(lines[3], **one(two_zones, LIGHTER_WEIGHTS), note=LABEL_NOT_CHECKED),
    ]


def one(pool_: dict, pod_spec: dict | None = None, expect: str | None = ANY, **kw) -> dict:
    """The Row fields of a case with one pod."""
    return dict(pools=(pool_,), pods=pods(1, pod_spec or spec()), expect=(expect,), **kw)


@dataclass(frozen=True)
class Row:
    """One upstream `It`: the plan it builds and what Karpenter decides. `expect` holds, per pod in
    order, the stand-in type it lands on (ANY: scheduled) or None (not scheduled); `nodes` the
    NodeClaims launched in all. `gap` says why gpufleet decides otherwise (the row runs as a strict
    xfail, so a fix flips it)."""

    line: int
    pools: tuple[dict, ...]
    pods: tuple[dict, ...]
    expect: tuple[str | None, ...]
    nodes: int | None = None
    extra: tuple[dict, ...] = ()
    note: str = ""
    gap: str | None = None
    pool_of: tuple[str | None, ...] = ()  # per pod, the NodePool it lands in (where the case says)
    avoid: str = ""  # a pattern no type launched for the pods may match (where the case says which not)


@dataclass(frozen=True)
class Verdict:
    types: tuple[str | None, ...]  # per pod: the type launched for it (ANY: several; PARTIAL; None: Pending)
    pools: tuple[str | None, ...]  # per pod: the NodePool (None: Pending or several)
    nodes: int  # NodeClaims launched in all


def _placed(row: Row) -> dict:
    return plan_placement.placement(plan_placement.from_plan({"resources": [*row.pools, *row.extra, *row.pods]})).as_dict()


def _by_name(placed: dict) -> dict[str, dict]:
    return {p["pod"].rsplit("/", 1)[-1]: p for p in placed["pods"]}


def verdict(row: Row) -> Verdict:
    """What gpufleet's simulator decides for the row's plan."""
    placed = _placed(row)
    by_name = _by_name(placed)
    types, pools = [], []
    for resource in row.pods:
        result = by_name[resource["name"]]
        launched = {p["instanceType"] for p in result.get("provisioned", [])}
        used = {p["nodePool"] for p in result.get("provisioned", [])}
        if result["status"] == "provisioned":
            types.append(launched.pop() if len(launched) == 1 else ANY)
        else:
            types.append(PARTIAL if launched else None)
        pools.append(used.pop() if len(used) == 1 else None)
    return Verdict(tuple(types), tuple(pools), sum(n["nodes"] for n in placed.get("provisioned", [])))


def _agree(expected: str | None, found: str | None) -> bool:
    return expected == found or (expected == ANY and found not in (None, PARTIAL))


def agrees(row: Row) -> bool:
    found = verdict(row)
    types_agree = all(_agree(e, f) for e, f in zip(row.expect, found.types, strict=True))
    pools_agree = not row.pool_of or row.pool_of == found.pools
    avoided = not row.avoid or not any(t and re.search(row.avoid, t) for t in found.types)
    return types_agree and pools_agree and avoided and (row.nodes is None or row.nodes == found.nodes)


def unnamed(row: Row) -> list[str]:
    """The row's pods gpufleet decides otherwise than Karpenter whose placement names no gap (no
    note): a definite Pending or a silent "provisioned" where gpufleet does not model the case."""
    notes = {name: p.get("notes") for name, p in _by_name(_placed(row)).items()}
    found = verdict(row)
    return [r["name"] for r, e, f in zip(row.pods, row.expect, found.types, strict=True) if not _agree(e, f) and not notes[r["name"]]]


_CASE = re.compile(r"^[ \t]*(It|Entry)\(", re.M)


def cases(fixture: str) -> list[int]:
    """The lines of every `It(` and `Entry(` of an upstream file."""
    text = (FIXTURES / fixture).read_text()
    return [text.count("\n", 0, m.start()) + 1 for m in _CASE.finditer(text)]


@dataclass(frozen=True)
class LeftOut:
    """The upstream cases from `first` to `last` (lines, inclusive) not translated, and why."""

    first: int
    last: int
    reason: str


def left_out(fixture: str) -> list[LeftOut]:
    """The suite's cases not translated, from left_out.yaml ("first-last" or one line, and why)."""
    rows = yaml.safe_load((Path(__file__).parent / "left_out.yaml").read_text())[fixture]
    found = []
    for row in rows:
        first, _, last = str(row["lines"]).partition("-")
        found.append(LeftOut(int(first), int(last or first), row["reason"]))
    return found


@dataclass(frozen=True)
class Census:
    translated: int
    agreed: int
    disagreed: int
    left_out: Mapping[str, int] = field(default_factory=dict)


def census(fixture: str, rows: Sequence[Row], left_out: Sequence[LeftOut]) -> Census:
    """Every case of the file is translated or left out, exactly once."""
    translated = {r.line for r in rows}
    assert len(translated) == len(rows), "two rows cite one case"
    counted: dict[str, int] = {}
    for line in cases(fixture):
        reasons = [lo.reason for lo in left_out if lo.first <= line <= lo.last]
        assert len(reasons) + (line in translated) == 1, (fixture, line, reasons)
        for reason in reasons:
            counted[reason] = counted.get(reason, 0) + 1
    assert translated <= set(cases(fixture)), sorted(translated - set(cases(fixture)))
    gaps = sum(1 for r in rows if r.gap)
    return Census(len(rows), len(rows) - gaps, gaps, counted)


def fixture_path(name: str) -> Path:
    return FIXTURES / name
