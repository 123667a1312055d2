"""Karpenter's requirements: one Requirement per label key, as its scheduler holds a NodePool's, a
pod's and a NodeClaim's (kubernetes-sigs/karpenter pkg/scheduling/requirements.go @6e7eab7a,
v1.14.1; "L" below are that file's lines).

Adding a requirement to a key already held keeps their intersection (L133-L140): a NodeClaim that
takes pod after pod narrows so. `compatible` is whether a pod's requirements may be met by a pool's
or a claim's (L181-L197): a key the holder does not define refuses the pod unless the pod's
requirement on it is NotIn or DoesNotExist, or the key is one it may leave undefined (the
well-known labels, for a pool); the keys both define must intersect (L254-L274), where two
exclusions (NotIn or DoesNotExist) always may.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from gpufleet.rules.karpenter_requirement import DOES_NOT_EXIST, EXISTS, IN, NOT_IN, Requirement, Term, requirement

_EXCLUDING = (NOT_IN, DOES_NOT_EXIST)


@dataclass(frozen=True)
class Requirements:
    """Label key -> the values it may take (the map at L36); a key not held may take any (L160-L166)."""

    by_key: Mapping[str, Requirement] = field(default_factory=dict)

    def add(self, *added: Requirement) -> Requirements:
        """These requirements with each added one intersected into its key (L133-L140)."""
        held = dict(self.by_key)
        for r in added:
            held[r.key] = r.intersection(held[r.key]) if r.key in held else r
        return Requirements(held)

    def merged(self, other: Requirements) -> Requirements:
        return self.add(*other.by_key.values())

    def has(self, key: str) -> bool:
        return key in self.by_key

    def get(self, key: str) -> Requirement:
        return self.by_key.get(key) or requirement(key, EXISTS)

    def keys(self) -> frozenset[str]:
        return frozenset(self.by_key)

    def compatible(self, incoming: Requirements, allow_undefined: Iterable[str] = ()) -> str | None:
        """None when `incoming` (a pod's) may be met here, else Karpenter's words (L181-L197). Karpenter
        walks a map and reports the first undefined key it meets; keys are walked sorted here."""
        allowed = frozenset(allow_undefined)
        for key in sorted(incoming.by_key):
            if key in allowed or self.has(key) or incoming.get(key).operator() in _EXCLUDING:
                continue
            return f'label "{key}" does not have known values{_hint(self, key, allowed)}'
        return self.intersects(incoming)

    def intersects(self, incoming: Requirements) -> str | None:
        """None when every key both hold allows a common value, or both exclude (L254-L274); else
        each key that does not, in Karpenter's words (multierr joins them with "; ")."""
        problems = []
        for key in sorted(self.keys() & incoming.keys()):
            existing, wanted = self.by_key[key], incoming.by_key[key]
            if not _meet(existing, wanted):
                problems.append(f"key {key}, {wanted} not in {existing}")
        return "; ".join(problems) or None

    def meets(self, incoming: Requirements) -> bool:
        """`intersects` is None, without its words: the provisioning simulation asks this of every
        type of every pool, where building the messages cost more than the judging."""
        return all(_meet(self.by_key[key], incoming.by_key[key]) for key in self.keys() & incoming.keys())

    def terms(self) -> list[Term]:
        """NodeSelectorRequirements (L120-L130), in key order."""
        return [t for key in sorted(self.by_key) for t in self.by_key[key].terms()]

    def has_min_values(self) -> bool:
        return any(r.min_values is not None for r in self.by_key.values())

    def unmet_min_values(self, types: Iterable[Requirements]) -> dict[str, int]:
        """SatisfiesMinValues (kubernetes-sigs/karpenter pkg/cloudprovider/types.go @v1.14.1
        L399-L433): each key with minValues whose distinct values, over the types' own
        requirements on it, are fewer than its minValues, and how many they are."""
        wanted = {k: r.min_values for k, r in self.by_key.items() if r.min_values is not None}
        seen: dict[str, set[str]] = {k: set() for k in wanted}
        for held in types:
            for key, values in seen.items():
                values |= held.get(key).values
        return {k: len(seen[k]) for k, n in wanted.items() if len(seen[k]) < n}

    def describe(self, restricted: Iterable[str] = ()) -> str:
        """String() (L285-L292): sorted, the restricted labels (kubernetes.io/hostname) left out."""
        hidden = frozenset(restricted)
        return ", ".join(sorted(str(r) for r in self.by_key.values() if r.key not in hidden))


def requirements(*held: Requirement) -> Requirements:
    return Requirements().add(*held)


def from_labels(labels: Mapping[str, str], aliases: Mapping[str, str] | None = None) -> Requirements:
    """NewLabelRequirements (L65-L71): each label In its one value (a nodeSelector, a pool's labels)."""
    return requirements(*(requirement(k, IN, str(v), aliases=aliases) for k, v in labels.items()))


def from_terms(expressions: Sequence[Mapping], aliases: Mapping[str, str] | None = None) -> Requirements:
    """NewNodeSelectorRequirementsWithMinValues (L47-L53): matchExpressions, or a NodePool's
    requirements with their minValues."""
    return requirements(
        *(
            requirement(
                str(e.get("key")),
                str(e.get("operator")),
                *(str(v) for v in e.get("values") or ()),
                min_values=min_values_of(e.get("minValues")),
                aliases=aliases,
            )
            for e in expressions
        )
    )


def of_pod(
    node_selector: Mapping[str, str],
    required_terms: Sequence[Mapping] | None,
    aliases: Mapping[str, str] | None = None,
    preferred: Sequence[Mapping] = (),
) -> Requirements:
    """newPodRequirements (L90-L110): the nodeSelector, the heaviest preferred term's expressions
    (Karpenter treats it as required until it relaxes it), and the first required term's
    expressions (it tries the other terms only after that one fails)."""
    held = from_labels(node_selector, aliases)
    if preferred:
        heaviest = max(preferred, key=lambda p: p.get("weight") or 0)  # Go's sort.Slice is not stable: of equal weights, the first
        held = held.merged(from_terms((heaviest.get("preference") or {}).get("matchExpressions") or (), aliases))
    if required_terms:
        held = held.merged(from_terms(required_terms[0].get("matchExpressions") or (), aliases))
    return held


def min_values_of(given: object) -> int | None:
    """A NodePool requirement's minValues; anything but an integer (a pod's term has none) is none."""
    return given if isinstance(given, int) and not isinstance(given, bool) else None


def _hint(held: Requirements, key: str, well_known: frozenset[str]) -> str:
    """labelHint (L204-L222): a well-known or held key that contains the unknown one, or ends with
    its name; Go walks sets in no order, so the first of them sorted is named."""
    suffix = key.split("/", 1)[-1]
    for candidate in [*sorted(well_known), *sorted(held.by_key)]:
        if key in candidate or candidate.endswith(suffix):
            return f' (typo of "{candidate}"?)'
    return ""


def _meet(existing: Requirement, wanted: Requirement) -> bool:
    """One key of Intersects (L254-L274): a common value, or both exclude."""
    return existing.has_intersection(wanted) or (wanted.operator() in _EXCLUDING and existing.operator() in _EXCLUDING)
