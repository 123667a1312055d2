"""src/gpufleet/cli/diff_render.py: the reviewer's diff as text and Markdown, section by section, from a
PlanDiff built here (the plans behind it are tests/cli/test_diff.py's)."""

from __future__ import annotations

from gpufleet.cli.diff import COUNTS, PlanDiff
from gpufleet.cli.diff_render import render

ZERO = {k: 0 for k, _ in COUNTS}


def _everything() -> PlanDiff:
    return PlanDiff(
        updated=[{"type": "aws:eks/nodeGroup:NodeGroup", "name": "gpu", "summary": ["scalingConfig.desiredSize: 2 -> 3"]}],
        totals={"before": {**ZERO, "gpus": 16}, "after": {**ZERO, "gpus": 24}},
        tolerations=[{"type": "kubernetes:apps/v1:Deployment", "name": "web", "properties": [{"path": "spec.template.spec.tolerations"}]}],
        placement_worse=[{"name": "Deployment default/web", "before": "scheduled", "after": "pending", "why": "0/2 nodes are available"}],
        placement_better=[{"name": "Job default/eval", "before": "pending", "after": "scheduled", "why": "stale reason"}],
        affected=[{"effect": "replaced", "type": "aws:eks/nodeGroup:NodeGroup", "name": "gpu", "because": ["reads the launch template"]}],
        refused=[{"type": "aws:ec2/securityGroup:SecurityGroup", "name": "sg", "how": "delete", "reason": "in use", "fix": "detach it"}],
        new_findings=[{"level": "mandatory", "policy": "eks-efa-single-az", "urn": "urn:pulumi:s::p::aws:eks/nodeGroup:NodeGroup::gpu", "message": "spans zones"}],
        fixed_findings=[{"policy": "k8s-pods-schedulable", "urn": None}],
    )


def test_every_section_in_text():
    text = render(_everything(), "base.json", "head.json", markdown=False)
    assert text.startswith("gpufleet diff: base.json -> head.json\n" + "=" * len("gpufleet diff: base.json -> head.json") + "\n")
    for title in ("Accelerators", "Tolerations changed", "Placement", "Replaced or updated because what they read is replaced or removed",
                  "Deletes the cloud will refuse", "Policy", "Resources"):
        assert f"\n{title}\n{'-' * len(title)}\n" in text, title
    assert "  - GPUs (desired): 16 -> 24" in text
    assert "  - Deployment default/web: scheduled -> pending: 0/2 nodes are available" in text
    assert "  - Job default/eval: pending -> scheduled\n" in text  # a placement made better needs no reason
    assert "  - new (mandatory) eks-efa-single-az on gpu: spans zones" in text
    assert "  - fixed k8s-pods-schedulable on the stack" in text  # a stack policy's finding is on no resource


def test_every_section_in_markdown():
    text = render(_everything(), "base", "head", markdown=True)
    assert text.startswith("## gpufleet diff: base -> head\n")
    for title in ("Accelerators", "Tolerations changed", "Placement", "Replaced or updated because what they read is replaced or removed",
                  "Deletes the cloud will refuse", "Policy", "Resources"):
        assert f"\n### {title}\n" in text, title
    assert "| GPUs (desired) | 16 | 24 |" in text and "`eks-efa-single-az`" in text


def test_a_change_without_accelerators_says_so_and_only_fixed_findings_are_shown():
    d = PlanDiff(added=[{"type": "aws:s3/bucket:Bucket", "name": "logs"}], totals={"before": dict(ZERO), "after": dict(ZERO)},
                 fixed_findings=[{"policy": "p", "urn": "urn:pulumi:s::p::t::res"}])
    text = render(d, "a", "b", markdown=False)
    assert "No accelerated groups on either side." in text and "  - fixed p on res" in text
    some = PlanDiff(added=[{"type": "t", "name": "n"}], totals={"before": dict(ZERO), "after": {**ZERO, "neuronChips": 2}})
    assert "No accelerated groups" not in render(some, "a", "b", markdown=False)
    assert render(PlanDiff(), "a", "b", markdown=False).endswith("No changes.\n")
