"""What a pack said: findings at their enforcement level, per pack, as the plan's `policy` block."""

from __future__ import annotations

from dataclasses import dataclass, field

from pulumi.runtime.proto import analyzer_pb2

LEVELS = {
    analyzer_pb2.ADVISORY: "advisory",
    analyzer_pb2.MANDATORY: "mandatory",
    analyzer_pb2.DISABLED: "disabled",
    analyzer_pb2.REMEDIATE: "remediate",
}
LEVEL_CODES = {name: code for code, name in LEVELS.items()}


@dataclass
class Finding:
    policy: str
    level: str  # mandatory | advisory
    urn: str
    message: str
    type: str = ""
    fix: str = ""


@dataclass
class PolicyResult:
    pack: str
    version: str
    findings: list[Finding] = field(default_factory=list)
    not_applicable: dict[str, int] = field(default_factory=dict)  # policy -> resources it skipped
    remediations: list[dict] = field(default_factory=list)  # {policy, urn}: inputs a policy rewrote
    # URN -> the inputs as rewritten: the client reads typed resources, so whoever holds the plan's
    # entries writes these back (plans.index.write_remediated).
    remediated: dict[str, dict] = field(default_factory=dict)

    def as_plan_block(self) -> dict:
        block = {
            "pack": self.pack,
            "version": self.version,
            "violations": [
                {k: v for k, v in vars(f).items() if v != ""} for f in sorted(self.findings, key=lambda f: (f.urn, f.policy, f.message))
            ],
        }
        if self.remediations:
            block["remediations"] = self.remediations
        return block
