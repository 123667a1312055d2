"""Kubernetes rule predicates: taints and tolerations, extended resources, MIG.

Plain functions returning None when the rule holds, else a reason; the stack spec, the components
and the policy pack call them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import TypeVar

from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.facts import EksFacts, KubernetesFacts, TaintEffects
from gpufleet.rules import lifecycle
from gpufleet.rules.versions import version_tuple

_Taint = TypeVar("_Taint", bound=Mapping)  # untolerated() returns the taints it is given, of their own type


def extended(resource: str, eks_facts: EksFacts) -> bool:
    """Is `resource` one a device plugin advertises (nvidia.com/gpu[.shared], aws.amazon.com/neuron*,
    vpc.amazonaws.com/efa)? Such integer resources cannot be overcommitted."""
    names = (*eks_facts.accelerator_resources.by_kind().values(), eks_facts.efa_resource)
    return resource.startswith(names)


# The EKS API's spelling -> Kubernetes', per facts object (the scheduler asks for every taint it
# filters on); the facts are held so that their id is not reused while remembered.
_SPELLINGS: dict[int, tuple[TaintEffects, dict[str, str]]] = {}


def _kubernetes_spelling(effects: TaintEffects) -> dict[str, str]:
    held = _SPELLINGS.get(id(effects))
    if held is None or held[0] is not effects:
        held = _SPELLINGS[id(effects)] = (effects, {v: k for k, v in effects.by_kubernetes_name().items()})
    return held[1]


def k8s_effect(effect: object, eks_facts: EksFacts) -> str:
    """A taint effect in Kubernetes' spelling (NO_SCHEDULE -> NoSchedule): the EKS API's enum and
    Kubernetes spell effects differently, and a plan carries either."""
    return _kubernetes_spelling(eks_facts.taint_effects).get(str(effect), str(effect))


def taint(given: Mapping, eks_facts: EksFacts) -> dict:
    """A taint in Kubernetes' spelling (an EKS API effect converted), with a value only where it has one."""
    found = {"key": given.get("key"), "effect": k8s_effect(given.get("effect"), eks_facts)}
    if given.get("value"):
        found["value"] = given["value"]
    return found


def toleration_matches(toleration: Mapping, taint: Mapping, eks_facts: EksFacts) -> bool:
    """Kubernetes' ToleratesTaint: key (empty key with Exists matches all), value (Equal), effect
    (empty matches all)."""
    operator = toleration.get("operator") or "Equal"
    if toleration.get("effect") and k8s_effect(toleration.get("effect"), eks_facts) != k8s_effect(taint.get("effect"), eks_facts):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    if not toleration.get("key") and operator != "Exists":
        return False
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def tolerates(tolerations: Sequence[Mapping], taint: Mapping, eks_facts: EksFacts) -> bool:
    """Does any toleration match the taint (Kubernetes semantics; effects in either spelling)?"""
    return any(toleration_matches(t, taint, eks_facts) for t in tolerations)


def toleration_for(taint: dict, eks_facts: EksFacts) -> dict:
    """The toleration of a taint (any value), in Kubernetes' spelling."""
    return {"key": taint["key"], "operator": "Exists", "effect": k8s_effect(taint["effect"], eks_facts)}


def untolerated(tolerations: Sequence[Mapping], taints: Sequence[_Taint], eks_facts: EksFacts) -> list[_Taint]:
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


def requests_equal_limits(container: str, resources: dict, eks_facts: EksFacts) -> list[str]:
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


@functools.lru_cache(maxsize=8192)
def _fits(text: str, most: int, pattern: str) -> bool:
    # The simulators ask this of the same few keys and values for every node a pod is tried on.
    return len(text) <= most and re.match(pattern, text) is not None


def qualified_name_problem(key: object, facts: KubernetesFacts) -> str | None:
    """Is `key` a Kubernetes qualified name (a label or taint key): [prefix/]name?"""
    rule = facts.qualified_name
    if not isinstance(key, str) or not key:
        return f"{key!r} is not a label key: it must be a non-empty string"
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        return f"{key!r} has more than one '/': a key is [prefix/]name"
    if not _fits(name, rule.name_max, rule.name_pattern):
        return (
            f"{key!r}: the name part must be at most {rule.name_max} characters of letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    if prefix and (len(prefix) > rule.prefix_max or not re.match(rule.prefix_pattern, prefix)):
        return f"{key!r}: the prefix must be a DNS subdomain (lowercase letters, digits, '-' and '.', at most {rule.prefix_max})"
    return None


def label_value_problem(value: object, facts: KubernetesFacts) -> str | None:
    """Is `value` a Kubernetes label (or taint) value: empty, or a name of at most 63 characters?"""
    if not isinstance(value, str):
        return f"{value!r} is not a label value: it must be a string"
    if value and not _fits(value, facts.label_value_max, facts.qualified_name.name_pattern):
        return (
            f"{value!r} is not a label value: at most {facts.label_value_max} letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return None


def requirement_problem(expression: object, facts: KubernetesFacts) -> str | None:
    """Does a node selector requirement parse, as labels.NewRequirement parses it? A term with one
    that does not matches no node, whatever its operator (component-helpers nodeaffinity; kube-
    scheduler's node_affinity_test.go, "Pod with an invalid value in Affinity term won't be scheduled
    onto the node")."""
    if not isinstance(expression, Mapping):
        return f"{expression!r} is not a requirement (key, operator, values)"
    key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
    reason = qualified_name_problem(key, facts)
    if reason:
        return reason
    if not isinstance(values, list):
        return f"values {values!r} of {key!r} is not a list"
    if operator in ("In", "NotIn"):
        if not values:
            return f"{key!r} {operator} needs at least one value"
        return next((r for r in (label_value_problem(v, facts) for v in values) if r), None)
    if operator in ("Exists", "DoesNotExist"):
        return f"{key!r} {operator} takes no values (given {values!r})" if values else None
    if operator in ("Gt", "Lt"):
        if (
            len(values) != 1
            or not isinstance(values[0], str)
            or not re.fullmatch(r"[+-]?[0-9]+", values[0])
            or not -(2**63) <= int(values[0]) < 2**63
        ):
            return f"{key!r} {operator} needs exactly one integer value (given {values!r})"
        return None
    return f"{operator!r} is not a node selector operator (In, NotIn, Exists, DoesNotExist, Gt, Lt)"


def untolerated_taint_message(taint: Mapping, kubernetes_version: object, facts: KubernetesFacts) -> str:
    """kube-scheduler's TaintToleration reason, as the cluster's own version words it (None: current)."""
    words = facts.untolerated_taint
    version = lifecycle.minor(kubernetes_version)
    if version is not None and (version_tuple(version) or ()) < (version_tuple(words.since) or ()):
        return words.before.format(key=taint.get("key"), value=taint.get("value") or "")
    return words.message


def kubelet_label_problem(key: str, facts: KubernetesFacts) -> str | None:
    """Would the kubelet refuse to set `key` on its own Node (a managed node group's labels reach it
    as --node-labels, and the node then never registers)?"""
    rules = facts.kubelet_labels
    namespace = key.split("/", 1)[0] if "/" in key else ""
    restricted = any(namespace == ns or namespace.endswith("." + ns) for ns in rules.restricted_namespaces)
    allowed = key in rules.allowed_keys or any(namespace == ns or namespace.endswith("." + ns) for ns in rules.allowed_namespaces)
    if restricted and not allowed:
        return (
            f"{key!r} is in the {namespace} namespace, which the kubelet may not set on its Node (only "
            f"{', '.join(rules.allowed_namespaces)} and its own well-known keys): the node would not register"
        )
    return None


def node_label_problems(labels: Mapping, taints: Sequence[Mapping], facts: KubernetesFacts) -> list[tuple[tuple, object, str]]:
    """(field path, value, reason) for every node label and taint the kubelet or the API refuses."""
    found: list[tuple[tuple, object, str]] = []
    for key, value in labels.items():
        reason = qualified_name_problem(key, facts) or kubelet_label_problem(key, facts)
        if reason:
            found.append((("labels", key), key, reason))
        reason = label_value_problem(value, facts)
        if reason:
            found.append((("labels", key), value, reason))
    for i, taint in enumerate(taints):
        reason = qualified_name_problem(taint.get("key"), facts)
        if reason:
            found.append((("taints", i, "key"), taint.get("key"), reason))
        if taint.get("value") is not None:
            reason = label_value_problem(taint.get("value"), facts)
            if reason:
                found.append((("taints", i, "value"), taint.get("value"), reason))
    return found


def one_driver_problem(image_driver: str | None, setting: str, operator_installs_driver: bool) -> str | None:
    """A GPU node gets exactly one driver: its image's or cloud's (`image_driver` names who installs
    it, None for nobody) or the GPU Operator's, never both and never none. `setting` is the pool's
    driver setting as the user wrote it."""
    if image_driver is not None and operator_installs_driver:
        return f"{image_driver} installs the driver ({setting}) and so does the GPU Operator: two drivers; turn one of them off"
    if image_driver is None and not operator_installs_driver:
        return f"{setting} leaves the nodes without a GPU driver and no GPU Operator installs one: pods requesting nvidia.com/gpu never run; let the cloud install it, or turn the GPU Operator's driver on"
    return None
