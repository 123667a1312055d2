"""What `gpufleet verify` found: one finding per thing compared, each citing the plan's resource, and
the plan's ledger: every group and placed workload of the plan, judged and matched, judged and
mismatched, or left unjudged with the reason. The exit follows the ledger, so nothing judged is never
a match."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.errors import InputError

MATCH, MISMATCH, NOT_JUDGED = "match", "mismatch", "not-judged"
# The verdict's outcome (design.md, exit codes of `verify`: 0, 1, 5).
PROVEN, DIFFERS, NOT_PROVEN = "match", "mismatch", "not-proven"
NOTHING_COMPARED = "no comparison reached it: nothing in the fleet was held against it"


class BadInput(InputError):
    """A recording, kubeconfig, region or log gpufleet cannot read: one message naming the file or
    flag and what was expected (exit 2)."""


@dataclass(frozen=True)
class Finding:
    check: str  # nodes | allocatable | device-plugins | pods | simulator | dra-devices | dra-claims | ecs-instances | ecs-tasks | ecs-attributes | nccl
    verdict: str  # match | mismatch | not-judged
    subject: str  # what was compared, in the plan's words ("node group p5", "node ip-10-0-1-2")
    message: str
    urn: str | None = None  # the plan's resource it is about
    commands: tuple[str, ...] = ()  # printed for a person to run, never run by gpufleet
    expected: object = None
    observed: object = None
    item: str | None = None  # the plan's group or workload it judges (a PlanItem's subject); None: none of the plan's

    def as_dict(self) -> dict:
        found: dict[str, object] = {"check": self.check, "verdict": self.verdict, "subject": self.subject, "message": self.message}
        for key in ("urn", "expected", "observed", "item"):
            if getattr(self, key) is not None:
                found[key] = getattr(self, key)
        if self.commands:
            found["commands"] = list(self.commands)
        return found


@dataclass(frozen=True)
class PlanItem:
    """One thing the plan holds that verify must judge: a group (node group, NodePool, capacity
    provider), a placed workload (a pod template's owner, an ECS service, the NCCL job), or a gap of
    the plan itself."""

    kind: str  # group | workload | gap
    subject: str  # as the findings about it name it ("node group p5", "Deployment kube-system/coredns")
    urn: str | None = None


@dataclass(frozen=True)
class Judged:
    """A plan item's state once every finding about it is read."""

    item: PlanItem
    state: str  # match | mismatch | not-judged
    reason: str = ""  # why it was not judged, or what differs

    def as_dict(self) -> dict:
        found: dict[str, object] = {"kind": self.item.kind, "subject": self.item.subject}
        if self.item.urn is not None:
            found["urn"] = self.item.urn
        found |= {"judged": self.state != NOT_JUDGED, "matched": self.state == MATCH, "state": self.state}
        if self.reason:
            found["reason"] = self.reason
        return found


def _judged(item: PlanItem, findings: list[Finding]) -> Judged:
    about = [f for f in findings if f.item == item.subject]
    differs = [f.message for f in about if f.verdict == MISMATCH]
    if differs:
        return Judged(item, MISMATCH, "; ".join(differs))
    unjudged = [f.message for f in about if f.verdict == NOT_JUDGED]
    if unjudged or not about:
        return Judged(item, NOT_JUDGED, "; ".join(dict.fromkeys(unjudged)) or NOTHING_COMPARED)
    return Judged(item, MATCH)


@dataclass
class Verdict:
    source: str  # "kubeconfig context X", "recorded DIR", "ECS cluster C in R"
    findings: list[Finding] = field(default_factory=list)
    items: list[PlanItem] = field(default_factory=list)  # what the plan holds, to be judged

    def ledger(self) -> list[Judged]:
        return [_judged(item, self.findings) for item in self.items]

    @property
    def outcome(self) -> str:
        """mismatch when anything differs (the fabric gate included); match only when every item
        of the plan was judged and matched; otherwise not proven, never a match."""
        if any(f.verdict == MISMATCH for f in self.findings):
            return DIFFERS
        ledger = self.ledger()
        return PROVEN if ledger and all(j.state == MATCH for j in ledger) else NOT_PROVEN

    @property
    def matches(self) -> bool:
        return self.outcome == PROVEN

    def unjudged(self) -> list[Judged]:
        ledger = self.ledger()
        if not ledger:
            return [Judged(PlanItem("gap", "the plan"), NOT_JUDGED, "the plan holds no group or workload verify judges")]
        return [j for j in ledger if j.state == NOT_JUDGED]

    def as_dict(self) -> dict:
        counts = {v: sum(1 for f in self.findings if f.verdict == v) for v in (MATCH, MISMATCH, NOT_JUDGED)}
        return {
            "source": self.source,
            "outcome": self.outcome,
            "matches": self.matches,
            "counts": counts,
            "plan": [j.as_dict() for j in self.ledger()],
            "unjudged": [j.as_dict() for j in self.unjudged()],
            "findings": [f.as_dict() for f in self.findings],
        }
