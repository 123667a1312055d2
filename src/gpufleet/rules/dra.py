"""Rules on Dynamic Resource Allocation: plain functions over what the placement found, called by
the pack (src/gpufleet/policies/dra.py) on any program's plan and by the stack spec on gpufleet's own.

Each returns None when the rule holds, else a Verdict: the problem in words, and whether the plan
decides it (mandatory) or a gap it names leaves it open (advisory)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# kube-scheduler's DynamicResources plugin: its Filter's words, and its PreFilter's for a class
# the cluster lacks (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, read
# in the research for issue 57 §3: statusUnschedulable "cannot allocate all claims", "resourceclaim
# not available on the node", "request %s: device class %s does not exist").
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
NO_CLASS = "device class {cls} does not exist"
_WORDS = (CANNOT_ALLOCATE, NOT_AVAILABLE, NO_CLASS.split("{cls}")[-1])


@dataclass(frozen=True)
class Verdict:
    message: str
    mandatory: bool


def claims_unsatisfied(owner: str, has_claims: bool, pending: int, message: str, unknowns: Sequence[str]) -> Verdict | None:
    """A pod whose resourceClaims no node of the plan satisfies: Pending in the DynamicResources
    plugin's words. Mandatory only where nothing is unknown (`unknowns`: the plan's gaps and the
    pod's notes, such as a Karpenter or Auto Mode pool that could launch a node for it, or a
    device whose attributes only the node gives); else advisory, naming them."""
    if not has_claims or not pending or not any(w in message for w in _WORDS):
        return None
    said = f"{owner}: {pending} pod(s) stay Pending: a resource claim no node of the plan satisfies: {message}"
    if unknowns:
        return Verdict(f"{said}; not certain: {'; '.join(unknowns)}", False)
    return Verdict(said, True)
