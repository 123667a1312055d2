"""The plan view: a plan's raw entries (their `inputs`, `propertyDependencies`, and `pulumi preview
--json`'s `steps` and `newState`) are read in the plan's doors only; everything else reads the typed
resources `plans.index.from_plan` (or, in the pack, `policies.inputs.typed`) makes of them. A new
module reading raw entries fails this test."""

from __future__ import annotations

import ast

from gpufleet.plans.index import from_plan
from tests.conftest import ROOT

SRC = ROOT / "src" / "gpufleet"
RAW_KEYS = {"inputs", "propertyDependencies", "newState", "steps"}

# The plan's doors: a plan file or `pulumi preview --json` read into the plan's shape, that shape
# into typed resources, and the inputs a pack's remediations rewrote back into the plan's entries.
DOORS = {"cli/plan_file.py", "plans/index.py"}
# `inputs` that is no plan's: an --answers file's recorded provider calls.
NOT_A_PLAN = {"engine/answers.py"}


def raw_readers(source: str) -> set[str]:
    """The raw plan keys a module reads: `x["inputs"]` or `x.get("inputs")`."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value in RAW_KEYS:
            found.add(node.slice.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in RAW_KEYS
        ):
            found.add(node.args[0].value)
    return found


def test_only_the_plan_view_reads_raw_plan_entries():
    readers = {str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if raw_readers(p.read_text())}
    assert readers == DOORS | NOT_A_PLAN


def test_a_raw_read_planted_in_a_typed_reader_is_caught():
    source = (SRC / "plans" / "groups.py").read_text()
    assert raw_readers(source) == set()
    assert raw_readers(source + '\nx = {}.get("propertyDependencies")\n') == {"propertyDependencies"}
    assert raw_readers(source + '\ny = r["inputs"]\n') == {"inputs"}


def test_the_typed_resource_carries_what_the_diff_and_its_picture_read():
    """Beside inputs and property dependencies: every dependency (the picture's cluster of a group),
    the parent, and the options the replacement rules read; absent, each is empty."""
    urn = "urn:pulumi:dev::fleet::aws:ec2/subnet:Subnet::private-a"
    entry = {
        "urn": urn,
        "type": "aws:ec2/subnet:Subnet",
        "parent": "urn:pulumi:dev::fleet::awsx:ec2:Vpc::vpc",
        "dependencies": ["urn:pulumi:dev::fleet::aws:ec2/vpc:Vpc::vpc"],
        "replaceOnChanges": ["cidrBlock"],
        "deleteBeforeReplace": True,
    }
    [r] = from_plan({"resources": [entry]})
    assert (r.name, r.dependencies, r.parent, r.replace_on_changes, r.delete_before_replace) == (
        "private-a",
        ("urn:pulumi:dev::fleet::aws:ec2/vpc:Vpc::vpc",),
        "urn:pulumi:dev::fleet::awsx:ec2:Vpc::vpc",
        ("cidrBlock",),
        True,
    )
    [bare] = from_plan({"resources": [{"urn": urn, "type": "aws:ec2/subnet:Subnet", "parent": None}]})
    assert (bare.dependencies, bare.parent, bare.replace_on_changes, bare.delete_before_replace) == ((), None, (), False)


def test_the_view_carries_a_resource_s_links_and_takes_remediated_inputs_back():
    """What the analyzer client sends beyond inputs (parent, dependencies) is read at the door, and
    the inputs a pack rewrote go back through it into the entries (the last of a URN listed twice,
    the one read by URN)."""
    from gpufleet.plans.index import Resource, from_plan, write_remediated

    urn = "urn:pulumi:s::p::aws:ec2/launchTemplate:LaunchTemplate::lt"
    entry = {
        "urn": urn,
        "type": "aws:ec2/launchTemplate:LaunchTemplate",
        "parent": "urn:p",
        "dependencies": ["urn:a", "urn:b"],
        "inputs": {"x": 1},
    }
    bare = {"urn": "urn:pulumi:s::p::t:m:T::bare", "type": "t:m:T", "parent": None}
    [typed, plain] = from_plan({"resources": [entry, bare]})
    assert (typed.parent, typed.dependencies, typed.name) == ("urn:p", ("urn:a", "urn:b"), "lt")
    assert (plain.parent, plain.dependencies) == (None, ())
    assert Resource(urn, entry["type"], "lt", {}).dependencies == ()  # constructors that predate the links keep working
    again = dict(entry, inputs={"x": 1})
    entries = [entry, bare, again]
    write_remediated(entries, {urn: {"x": 2}, "urn:pulumi:s::p::t:m:T::gone": {"y": 1}})
    assert [e.get("inputs") for e in entries] == [{"x": 1}, None, {"x": 2}]
