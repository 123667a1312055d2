"""A pod spec's required inter-pod terms and hard topology spread constraints, read as
kube-scheduler 1.35 reads them (k8s_topology judges them): metav1.LabelSelectorAsSelector,
GetNamespacesFromPodAffinityTerm and podtopologyspread/common.go filterTopologySpreadConstraints.
What only apply can tell (a selector known after apply, namespaces chosen by their labels, keys
of labels the plan does not give) makes the term `unknown`, said why."""

from __future__ import annotations

from collections.abc import Mapping

from gpufleet.catalog.tokens import UNKNOWN as UNKNOWN_VALUE
from gpufleet.simulate.k8s_shapes import LabelSelector, PodTerm, Spread
from gpufleet.simulate.k8s_topology import OPERATORS
from gpufleet.simulate.loose import mapping


def _selector(raw: object) -> tuple[LabelSelector, str]:
    """LabelSelectorAsSelector: nil matches nothing, {} everything; and why it cannot be judged."""
    if raw is None:
        return LabelSelector(nothing=True), ""
    labels = mapping(raw).get("matchLabels") or {}
    if not isinstance(raw, Mapping) or not isinstance(labels, Mapping) or UNKNOWN_VALUE in str(raw):
        return LabelSelector(nothing=True), "its labelSelector is known only after apply"
    expressions = tuple(e for e in raw.get("matchExpressions") or [] if isinstance(e, Mapping))
    bad = [str(e.get("operator")) for e in expressions if e.get("operator") not in OPERATORS]
    reason = f"operator {', '.join(bad)} is not a label selector's (the API server refuses the pod)" if bad else ""
    return LabelSelector({str(k): str(v) for k, v in labels.items()}, expressions), reason


def _merged(selector: LabelSelector, raw: Mapping, labels: Mapping[str, str] | None) -> tuple[LabelSelector, str]:
    """matchLabelKeys (key in (the pod's value)) and mismatchLabelKeys (key notin (value)) merged
    into the selector; a key the pod's labels lack is left out (k8s.io/api core/v1 types.go, the
    PodAffinityTerm and TopologySpreadConstraint field docs; filterTopologySpreadConstraints)."""
    match, mismatch = list(raw.get("matchLabelKeys") or []), list(raw.get("mismatchLabelKeys") or [])
    if not match and not mismatch:
        return selector, ""
    if labels is None:
        return selector, "matchLabelKeys need the pod's labels, which the plan does not give"
    merged = {**selector.match_labels, **{k: labels[k] for k in match if k in labels}}
    extra = tuple({"key": k, "operator": "NotIn", "values": [labels[k]]} for k in mismatch if k in labels)
    return LabelSelector(merged, selector.expressions + extra, selector.nothing), ""


def _term(raw: Mapping, namespace: str, labels: Mapping[str, str] | None) -> PodTerm:
    """GetNamespacesFromPodAffinityTerm: no namespaces and no namespaceSelector mean the pod's own;
    an empty namespaceSelector every namespace; one over namespaces' labels is not judged."""
    selector, unknown = _selector(raw.get("labelSelector"))
    selector, merged = _merged(selector, raw, labels)
    names = frozenset(str(n) for n in raw.get("namespaces") or [])
    chooser = raw.get("namespaceSelector")
    if chooser is None and not names:
        names = frozenset({namespace})
    if isinstance(chooser, Mapping) and (chooser.get("matchLabels") or chooser.get("matchExpressions")):
        unknown = unknown or "its namespaceSelector selects namespaces by their labels, which the plan does not give"
    return PodTerm(
        selector,
        str(raw.get("topologyKey", "")),
        names,
        isinstance(chooser, Mapping) and not chooser.get("matchLabels") and not chooser.get("matchExpressions"),
        unknown or merged,
    )


def _spread(raw: Mapping, labels: Mapping[str, str] | None) -> Spread | None:
    """filterTopologySpreadConstraints: DoNotSchedule ones only; minDomains 1, nodeAffinityPolicy
    Honor and nodeTaintsPolicy Ignore unless given."""
    when = raw.get("whenUnsatisfiable")
    if when != "DoNotSchedule" and when != UNKNOWN_VALUE:
        return None
    selector, unknown = _selector(raw.get("labelSelector"))
    if when == UNKNOWN_VALUE:
        unknown = "its whenUnsatisfiable is known only after apply"
    selector, merged = _merged(selector, raw, labels)
    skew, least = raw.get("maxSkew"), raw.get("minDomains")
    if not isinstance(skew, (int, float)) or isinstance(skew, bool) or skew < 1:
        return Spread(1, str(raw.get("topologyKey", "")), selector, unknown=f"maxSkew {skew!r} is not known")
    return Spread(
        int(skew),
        str(raw.get("topologyKey", "")),
        selector,
        int(least) if isinstance(least, (int, float)) and not isinstance(least, bool) else 1,
        raw.get("nodeAffinityPolicy", "Honor") == "Honor",
        raw.get("nodeTaintsPolicy", "Ignore") == "Honor",
        unknown or merged,
    )


def pod_rules(spec: Mapping, namespace: str, labels: Mapping[str, str] | None) -> dict:
    """A pod spec's required inter-pod terms and hard spread constraints, as PodTemplate fields."""

    def required(kind: str) -> tuple[PodTerm, ...]:
        terms = mapping(mapping(spec.get("affinity")).get(kind)).get("requiredDuringSchedulingIgnoredDuringExecution") or []
        return tuple(_term(t, namespace, labels) for t in terms if isinstance(t, Mapping)) if isinstance(terms, list) else ()

    raw = spec.get("topologySpreadConstraints") or []
    spread = [_spread(c, labels) for c in raw if isinstance(c, Mapping)] if isinstance(raw, list) else []
    return {
        "pod_affinity": required("podAffinity"),
        "pod_anti_affinity": required("podAntiAffinity"),
        "spread": tuple(c for c in spread if c is not None),
    }
