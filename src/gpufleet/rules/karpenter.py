"""Rules on Karpenter NodePools: plain functions over what a pool admits and declares, called by
the pack (src/gpufleet/policies/karpenter.py) on any program's NodePools and by the stack spec on gpufleet's own.

Each returns None when the rule holds, else the problem in words."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from gpufleet.apis import karpenter as karpenter_api
from gpufleet.apis.quantity import OutOfRange, QuantityError, quantity
from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.facts import EksFacts, Karpenter
from gpufleet.rules import eks as eks_rules
from gpufleet.rules import offerings
from gpufleet.rules.k8s import k8s_effect


def admits_no_type(admitted: int, unjudged: Sequence[str]) -> str | None:
    """A pool whose requirements admit no instance type never launches a node; where some of them
    could not be judged, the verdict is not this rule's to give."""
    if admitted or unjudged:
        return None
    return "its requirements admit no instance type: Karpenter never launches a node for it, and its pods stay Pending"


def offered_nowhere(types: Sequence[InstanceType], region: str, zones: Sequence[str] | None) -> str | None:
    """A pool whose admitted types are offered in none of its zones (any zone of the region where
    it names none) never gets a node: Karpenter finds no offering to launch."""
    every_zone: Sequence[str | None] = zones or [None]  # None: any zone of the region
    if not types or any(offerings.offered_in(it, region, zone) is None for it in types for zone in every_zone):
        return None
    where = f"{region} ({', '.join(zones)})" if zones else region
    return f"none of the {len(types)} instance types its requirements admit is offered in {where}: Karpenter finds no offering, and its pods stay Pending"


def ami_family_runs(family: str | None, instance_type: str) -> str | None:
    """Karpenter marks every offering of an a1 type unavailable under an AL2023 node class: AL2023
    does not run on A1 (karpenter-provider-aws pkg/providers/instancetype/compatibility/compatibility.go
    @bde00654 L65-L71, citing docs.aws.amazon.com/linux/al2023/ug/system-requirements.html;
    offering/base_resolver.go L72, L135)."""
    if family == "al2023" and instance_type.startswith("a1."):
        return f"{instance_type} cannot run the AL2023 AMI family of its EC2NodeClass"
    return None


def accelerator_kind(types: Sequence[InstanceType]) -> str | None:
    """The accelerator every type a pool admits carries (nvidia | neuron), or None when not all carry one."""
    kinds = {eks_rules.accelerator(it) for it in types}
    return next(iter(kinds)) if len(kinds) == 1 and None not in kinds else None


def untainted_accelerator_pool(kind: str | None, taints: Sequence[Mapping], eks: EksFacts) -> str | None:
    """An accelerator pool carries its accelerator's taint, so pods that do not ask for the devices
    do not land on (and keep alive) nodes that cost ten times more."""
    convention = eks.accelerator_taints.of(kind)
    if convention is None:
        return None
    if any(t.get("key") == convention["key"] and k8s_effect(t.get("effect"), eks) in ("NoSchedule", "NoExecute") for t in taints):
        return None
    return (
        f"every type it admits has {kind} accelerators but it has no {convention['key']}:{convention['effect']} taint: "
        "any Pending pod may make Karpenter launch one of them"
    )


def unlimited_accelerator_pool(kind: str | None, limits: Mapping[str, int], eks: EksFacts) -> str | None:
    """An accelerator pool has limits: without them a burst of Pending pods (or a runaway
    replica count) launches accelerated nodes until the account's quota stops it."""
    if kind is None or limits:
        return None
    resource = getattr(eks.accelerator_resources, kind)
    return (
        f"every type it admits has {kind} accelerators but it sets no limits: set spec.limits ({resource}, cpu) to bound what it may launch"
    )


def reserved_without_reservations(capacity_types: frozenset[str] | None, node_class: Mapping | None, karpenter: Karpenter) -> str | None:
    """A pool that allows only reserved capacity launches only into reservations its EC2NodeClass
    selects: with none selected it never launches. `capacity_types` None: the pool leaves them open;
    `node_class` None: not known here (the caller says so)."""
    reserved = karpenter.reserved_capacity
    if not capacity_types or capacity_types - {reserved.capacity_type} or node_class is None:
        return None
    if node_class.get(reserved.selector):
        return None
    return (
        f"it allows only {reserved.capacity_type} capacity, and its EC2NodeClass selects no capacity reservation "
        f"({reserved.selector}): Karpenter has no offering to launch, and its pods stay Pending"
    )


def no_ami_for_accelerators(family: str, karpenter: Karpenter) -> str:
    """Every type a pool admits has an accelerator its EC2NodeClass's alias family has no AMI
    variant for: Karpenter finds no AMI for them, and launches none."""
    return (
        f"its EC2NodeClass's AMI alias family {family} has no AMI variant for the accelerators of the types it admits: "
        "Karpenter finds no AMI for them and launches none; use an alias family with the accelerator's variant (al2023 or bottlerocket)"
    )


def batch_pod_consolidated(kind: str, annotations: Mapping[str, str], consolidation: str, karpenter: Karpenter) -> str | None:
    """A batch pod (a Job's, an MPIJob's) on a pool that consolidates nodes that are not empty is
    moved, and loses its work, unless it carries karpenter.sh/do-not-disrupt."""
    facts = karpenter.consolidation
    key, value = facts.do_not_disrupt["key"], facts.do_not_disrupt["value"]
    if kind not in facts.batch_kinds or consolidation not in facts.moves_running_pods or annotations.get(key) == value:
        return None
    return (
        f"its pods run on a pool that consolidates with {consolidation}, which moves pods off underutilized nodes: "
        f'annotate the pod template {key}: "{value}" so a run is not restarted, or give the pool consolidationPolicy WhenEmpty'
    )


# Go's time.ParseDuration (golang/go src/time/format.go @08d2403576737c5735d0c1d356490e03a774dff6,
# ParseDuration with leadingInt, leadingFraction and unitMap), which Karpenter's NillableDuration
# (kubernetes-sigs/karpenter pkg/apis/v1/duration.go @v1.14.1 L49-L65) and metav1.Duration call on
# every duration of a NodePool: the units in nanoseconds, and the bound of an int64 of them.
_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}
_SEGMENT = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]+)")
_LIMIT = 1 << 63
NEVER = "Never"


def _segment(body: str, at: int) -> tuple[int, int] | None:
    """One number-and-unit of a duration from `at`: (nanoseconds, where it ends); None where Go errs."""
    found = _SEGMENT.match(body, at)
    if not found or not (found.group(1) or found.group(2)) or found.group(3) not in _UNITS:
        return None
    whole, fraction, unit = found.group(1).lstrip("0"), found.group(2) or "", _UNITS[found.group(3)]
    if len(whole) > 19 or int(whole or 0) > _LIMIT // unit:  # leadingInt's and the unit's overflow
        return None
    kept = fraction[:18]  # leadingFraction stops gaining precision before 2^63; Go adds it as a float64
    return int(whole or 0) * unit + (int(int(kept) * (unit / 10 ** len(kept))) if kept else 0), found.end()


def go_duration(text: str) -> int | None:
    """time.ParseDuration's nanoseconds, or None where it returns an error."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if body in ("0", ""):
        return 0 if body else None
    total, at = 0, 0
    while at < len(body):
        segment = _segment(body, at)
        if segment is None:
            return None
        total, at = total + segment[0], segment[1]
        if total > _LIMIT:
            return None
    return -total if text.startswith("-") else (total if total < _LIMIT else None)


def duration_problem(value: object) -> str | None:
    """Karpenter parses every duration of a NodePool with Go's time.ParseDuration into an int64 of
    nanoseconds (at most 2562047h47m16.854775807s): a longer one fits the CRD's pattern, and then
    Karpenter cannot read the NodePool. NillableDuration takes Never first (duration.go L55)."""
    if not isinstance(value, str) or value == NEVER or go_duration(value) is not None:
        return None
    return (
        f"{value!r} is no duration Go's time.ParseDuration reads (at most 2562047h47m16.854775807s, an int64 of "
        "nanoseconds): Karpenter cannot read the NodePool"
    )


def quantity_problem(resource: str, value: object) -> str | None:
    """A quantity beyond the int64 Kubernetes counts it in (apis/quantity.py); one that is no
    quantity at all is the CRD's pattern's to refuse."""
    if isinstance(value, str) and value.endswith("%"):
        return None  # evictionHard's percentage
    try:
        quantity(resource, value)
    except OutOfRange as err:
        return str(err)
    except QuantityError:
        return None
    return None


def out_of_range(type_token: str, obj: Mapping) -> list[tuple[str, object, str]]:
    """(path, value, reason) for each duration or quantity of a Karpenter object that fits its
    CRD's pattern but not the int64 its controller reads it into."""
    found = []
    for path, key, kind, value in karpenter_api.typed_values(type_token, obj):
        reason = duration_problem(value) if kind == "duration" else quantity_problem(key, value)
        if reason:
            found.append((path, value, reason))
    return found
