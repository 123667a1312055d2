"""What `gpufleet verify` found: one finding per thing compared, each citing the plan's resource."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.errors import InputError

MATCH, MISMATCH, NOT_JUDGED = "match", "mismatch", "not-judged"


class BadInput(InputError):
    """A recording, kubeconfig, region or log gpufleet cannot read: one message naming the file or
    flag and what was expected (exit 2)."""


@dataclass(frozen=True)
class Finding:
    check: str  # nodes | allocatable | device-plugins | pods | simulator | ecs-instances | ecs-tasks | ecs-attributes | nccl
    verdict: str  # match | mismatch | not-judged
    subject: str  # what was compared, in the plan's words ("node group p5", "node ip-10-0-1-2")
    message: str
    urn: str | None = None  # the plan's resource it is about
    commands: tuple[str, ...] = ()  # printed for a person to run, never run by gpufleet
    expected: object = None
    observed: object = None

    def as_dict(self) -> dict:
        found: dict[str, object] = {"check": self.check, "verdict": self.verdict, "subject": self.subject, "message": self.message}
        for key in ("urn", "expected", "observed"):
            if getattr(self, key) is not None:
                found[key] = getattr(self, key)
        if self.commands:
            found["commands"] = list(self.commands)
        return found


@dataclass
class Verdict:
    source: str  # "kubeconfig context X", "recorded DIR", "ECS cluster C in R"
    findings: list[Finding] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        return not any(f.verdict == MISMATCH for f in self.findings)

    def as_dict(self) -> dict:
        counts = {v: sum(1 for f in self.findings if f.verdict == v) for v in (MATCH, MISMATCH, NOT_JUDGED)}
        return {"source": self.source, "matches": self.matches, "counts": counts, "findings": [f.as_dict() for f in self.findings]}
