"""The memberOf expressions the components write and the pack reads: one module, round-tripped."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gpufleet.catalog import catalog
from gpufleet.simulate.ecs_placement import PlacementSyntaxError, admitted_instance_types, member_of

KNOWN = tuple(catalog.load().types)
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("instance_type", ["g5.xlarge", "p4d.24xlarge", "g6e.48xlarge"])
def test_what_the_components_write_the_pack_reads(instance_type):
    assert admitted_instance_types(member_of(instance_type), KNOWN) == {instance_type}


@pytest.mark.parametrize(
    "expression,expected",
    [
        ("attribute:ecs.instance-type in [g5.xlarge, g5.2xlarge]", {"g5.xlarge", "g5.2xlarge"}),
        # Spaces around the expression are not part of it.
        ("  attribute:ecs.instance-type == g5.xlarge  ", {"g5.xlarge"}),
        # A regular expression, as ECS reads it: "p4d.*" is p4d followed by anything, p4de too.
        ("attribute:ecs.instance-type =~ p4d.*", {"p4d.24xlarge", "p4de.24xlarge"}),
        ("attribute:ecs.instance-type =~ p4d\\..*", {"p4d.24xlarge"}),
        ("attribute:ecs.instance-type == g5.xlarge and attribute:ecs.availability-zone in [us-east-1a]", {"g5.xlarge"}),
        ("attribute:ecs.instance-type == g5.xlarge || attribute:ecs.instance-type == g6.xlarge", {"g5.xlarge", "g6.xlarge"}),
        ("(attribute:ecs.instance-type in [g5.xlarge, g6.xlarge]) && attribute:ecs.instance-type == g6.xlarge", {"g6.xlarge"}),
        # What does not name types positively leaves the type open.
        ("attribute:ecs.instance-type != g5.xlarge", None),
        ("attribute:ecs.instance-type !in [g5.xlarge]", None),
        ("attribute:ecs.os-type == linux", None),
        ("attribute:ecs.instance-type == g5.xlarge or attribute:ecs.os-type == linux", None),
        ("not attribute:ecs.instance-type == g5.xlarge", None),
        # Every spelling ECS's cluster query language gives an operator (the slips found some unread).
        ("attribute:ecs.instance-type equals g5.xlarge", {"g5.xlarge"}),
        ("attribute:ecs.instance-type matches p4d\\..*", {"p4d.24xlarge"}),
        ("! attribute:ecs.instance-type == g5.xlarge", None),
        ("attribute:ecs.instance-type not_in [g5.xlarge]", None),
        ("attribute:ecs.instance-type exists and attribute:ecs.instance-type == g5.xlarge", {"g5.xlarge"}),
        ("attribute:ecs.instance-type !exists and attribute:ecs.instance-type == g5.xlarge", {"g5.xlarge"}),
    ],
)
def test_admitted_instance_types(expression, expected):
    assert admitted_instance_types(expression, KNOWN) == (None if expected is None else frozenset(expected))


@pytest.mark.parametrize("expression", ["attribute:ecs.instance-type ==", "(attribute:ecs.instance-type == g5.xlarge", "attribute:ecs.instance-type in g5.xlarge"])
def test_unreadable_expressions_raise(expression):
    with pytest.raises(PlacementSyntaxError):
        admitted_instance_types(expression, KNOWN)


def test_policies_import_the_kernel_never_components_or_infra():
    """design.md: policies -> the five kernel rooms; the pack judges any program, so it cannot lean on ours."""
    for path in (ROOT / "src" / "gpufleet" / "policies").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                # Only the gpufleet namespace (a published pack gets it from requirements.txt), and
                # of it only the kernel's rooms and the pack's own modules.
                assert name.split(".")[0] not in {"src", "policies"}, (path.name, name)
                if name.startswith("gpufleet"):
                    kernel = tuple(f"gpufleet.{room}" for room in ("catalog", "apis", "rules", "simulate", "plans"))
                    assert name.startswith((*kernel, "gpufleet.engine.patches", "gpufleet.policies")), (path.name, name)
                    assert not name.startswith("gpufleet.catalog.generate"), (path.name, name)
