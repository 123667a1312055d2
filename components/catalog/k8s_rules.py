"""Kubernetes rule predicates: taints and tolerations, extended resources, MIG.

Plain functions returning None when the rule holds, else a reason; the stack spec, the components
and the policy pack call them.
"""

from __future__ import annotations

from components.catalog.catalog import InstanceType
from components.catalog.k8s_scheduler import toleration_matches

def extended(resource: str, eks_facts: dict) -> bool:
    """Is `resource` one a device plugin advertises (nvidia.com/gpu[.shared], aws.amazon.com/neuron*,
    vpc.amazonaws.com/efa)? Such integer resources cannot be overcommitted."""
    names = (*eks_facts["acceleratorResources"].values(), eks_facts["efaResource"])
    return resource.startswith(names)


def k8s_effect(effect: str | None, eks_facts: dict) -> str | None:
    """A taint effect in Kubernetes' spelling (NO_SCHEDULE -> NoSchedule)."""
    back = {v: k for k, v in eks_facts["taintEffects"].items() if k != "source"}
    return back.get(effect, effect)


def tolerates(tolerations: list[dict], taint: dict, eks_facts: dict) -> bool:
    """Does any toleration match the taint (Kubernetes semantics; effects in either spelling)?"""
    return any(toleration_matches(t, taint) for t in tolerations)


def toleration_for(taint: dict, eks_facts: dict) -> dict:
    """The toleration of a taint (any value), in Kubernetes' spelling."""
    return {"key": taint["key"], "operator": "Exists", "effect": k8s_effect(taint["effect"], eks_facts)}


def untolerated(tolerations: list[dict], taints: list[dict], eks_facts: dict) -> list[dict]:
    """The taints no toleration matches."""
    return [t for t in taints if not tolerates(tolerations, t, eks_facts)]


def describe_taint(taint: dict) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key')}{value}:{taint.get('effect')}"


def quantity(value: object) -> str:
    """A resource quantity as text: 1, 1.0 (the wire's doubles) and "1" are the same count."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def requests_equal_limits(container: str, resources: dict, eks_facts: dict) -> list[str]:
    """Extended resources whose request differs from the limit (they cannot be overcommitted)."""
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    problems = []
    for name in sorted(set(requests) | set(limits)):
        if not extended(name, eks_facts):
            continue
        if name not in limits:
            problems.append(
                f"container {container!r} requests {name} {quantity(requests[name])} without a limit; extended resources need limits"
            )
        elif name in requests and quantity(requests[name]) != quantity(limits[name]):
            problems.append(
                f"container {container!r}: {name} request {quantity(requests[name])} != limit {quantity(limits[name])} (no overcommit)"
            )
    return problems


def mig_supported(it: InstanceType, mig_models: list[str]) -> str | None:
    """Can the type's GPUs be partitioned with MIG?"""
    if it.gpu is None:
        return f"{it.name} has no GPU"
    if it.gpu.model not in mig_models:
        return f"{it.name} has {it.gpu.manufacturer} {it.gpu.model} GPUs, which do not support MIG (MIG: {', '.join(mig_models)})"
    return None
