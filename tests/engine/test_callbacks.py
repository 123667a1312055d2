"""Transforms, resource hooks and the engine's own functions, served to a program of one's own as the
Pulumi engine serves them (pulumi/pulumi pkg/resource/deploy/source_eval.go and builtins.go): the
monitor calls back into the program's callback server, records what the transforms return, runs the
hooks a preview runs, and answers `pulumi:pulumi:*` from what the run registered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpufleet.catalog.tokens import UNKNOWN
from tests.engine.test_program_host import _preview, _program


def _plan(folder: Path) -> tuple[dict, str]:
    code, out, err = _preview(folder, "--json")
    assert code == 0, err
    return json.loads(out), err


def _resource(plan: dict, name: str) -> dict:
    [found] = [r for r in plan["resources"] if r["name"] == name]
    return found


TRANSFORMS = """
def trail(step):
    def transform(args):
        return pulumi.ResourceTransformResult({**args.props, "trail": args.props.get("trail", "") + step}, args.opts)
    return transform

def options(args):
    opts = pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(replace_on_changes=["size"], delete_before_replace=True))
    return pulumi.ResourceTransformResult(args.props, opts)

pulumi.runtime.register_stack_transform(trail("stack;"))
box = pulumi.ComponentResource("test:index:Box", "box", opts=pulumi.ResourceOptions(transforms=[trail("parent;")]))
one = pulumi.CustomResource("test:index:Thing", "one", {"size": 2}, opts=pulumi.ResourceOptions(transforms=[trail("own;"), options]))
two = pulumi.CustomResource("test:index:Thing", "two", {"size": one.urn.apply(lambda _: 3)}, opts=pulumi.ResourceOptions(parent=box))
"""


def test_transforms_run_as_the_engine_runs_them_and_their_result_is_the_plan(tmp_path):
    """A resource's own transforms, then its parents', then the stack's (registered before it); the
    properties and options they return are what the plan records."""
    plan, _ = _plan(_program(tmp_path, TRANSFORMS))
    one, two, box = _resource(plan, "one"), _resource(plan, "two"), _resource(plan, "box")
    assert one["inputs"] == {"size": 2, "trail": "own;stack;"}
    assert one["replaceOnChanges"] == ["size"] and one["deleteBeforeReplace"] is True
    assert two["inputs"] == {"size": 3, "trail": "parent;stack;"}
    assert two["dependencies"] == [one["urn"]]  # a child without transforms of its own keeps its dependencies
    assert box["inputs"] == {"trail": "parent;stack;"}


def test_an_invoke_transform_changes_what_the_function_is_asked(tmp_path):
    folder = _program(
        tmp_path,
        """
        def region(args):
            return pulumi.InvokeTransformResult({**args.args, "region": "eu-west-1"}, args.opts)

        pulumi.runtime.register_invoke_transform(region)
        pulumi.export("region", pulumi.runtime.invoke("aws:index/getRegion:getRegion", {}).value["name"])
        """,
    )
    plan, _ = _plan(folder)
    assert plan["outputs"] == {"region": "eu-west-1"}


FAILING = {
    "resource": 'pulumi.CustomResource("test:index:Thing", "one", {}, opts=pulumi.ResourceOptions(transforms=[explode]))\n',
    "stack": 'pulumi.runtime.register_stack_transform(explode)\npulumi.CustomResource("test:index:Thing", "one", {})\n',
    "invoke": 'pulumi.runtime.register_invoke_transform(explode)\npulumi.runtime.invoke("aws:index/getRegion:getRegion", {})\n',
}


@pytest.mark.parametrize("where", FAILING.values(), ids=FAILING.keys())
def test_a_transform_that_raises_is_exit_2_naming_it_and_its_line(tmp_path, where):
    folder = _program(tmp_path, "def explode(args):\n    raise ValueError('no such tag')\n\n" + where)
    code, _, err = _preview(folder)
    assert code == 2 and "Traceback" not in err, err
    what = "an invoke transform of aws:index/getRegion:getRegion" if "invoke" in where else "a transform of test:index:Thing 'one'"
    assert f"{what} failed: no such tag:" in err, err
    assert f'File "{folder / "__main__.py"}", line 3, in explode' in err


HOOKS = """
import sys

def say(args):
    print(f"hook {args.name}: inputs={dict(args.new_inputs or {})} outputs={dict(args.new_outputs or {})}", file=sys.stderr)

def fail(args):
    raise RuntimeError("not in this account")

before = pulumi.ResourceHook("before", say, pulumi.ResourceHookOptions(on_dry_run=True))
after = pulumi.ResourceHook("after", say, pulumi.ResourceHookOptions(on_dry_run=True))
never = pulumi.ResourceHook("never", fail)  # not on dry runs: a preview does not run it
pulumi.CustomResource("test:index:Thing", "one", {"size": 2},
                      opts=pulumi.ResourceOptions(hooks=pulumi.ResourceHookBinding(before_create=[before, never], after_create=[after])))
"""


def test_hooks_registered_for_dry_runs_run_on_the_create_and_no_other_does(tmp_path):
    _, err = _plan(_program(tmp_path, HOOKS))
    assert "hook one: inputs={'size': 2.0} outputs={}\n" in err
    assert "hook one: inputs={'size': 2.0} outputs={'size': 2.0}\n" in err
    assert "not in this account" not in err


def test_a_hook_that_fails_on_a_dry_run_is_exit_2_naming_it(tmp_path):
    body = HOOKS.replace(
        'never = pulumi.ResourceHook("never", fail)',
        'never = pulumi.ResourceHook("never", fail, pulumi.ResourceHookOptions(on_dry_run=True))',
    )
    code, _, err = _preview(_program(tmp_path, body))
    assert code == 2 and "Traceback" not in err
    assert "the before_create hook 'never' of test:index:Thing 'one' failed: not in this account" in err


GET_RESOURCE = """
one = pulumi.CustomResource("test:index:Thing", "one", {"size": 2})
def again(urn):
    return pulumi.CustomResource("test:index:Thing", "again", {"size": None}, opts=pulumi.ResourceOptions(urn=urn)).size
pulumi.export("size", one.urn.apply(again))
pulumi.export("got", one.urn.apply(lambda urn: pulumi.runtime.invoke("pulumi:pulumi:getResource", {"urn": urn}).value))
"""


def test_get_resource_answers_from_what_the_program_registered(tmp_path):
    """pulumi:pulumi:getResource, which the SDK calls to rehydrate a resource from its URN."""
    plan, _ = _plan(_program(tmp_path, GET_RESOURCE))
    urn = "urn:pulumi:dev::hosted::test:index:Thing::one"
    assert plan["outputs"]["size"] == 2
    assert plan["outputs"]["got"]["urn"] == urn and plan["outputs"]["got"]["state"] == {"size": 2}


def test_get_resource_of_a_urn_never_registered_is_the_engines_error(tmp_path):
    body = 'pulumi.runtime.invoke("pulumi:pulumi:getResource", {"urn": "urn:pulumi:dev::hosted::test:index:Thing::ghost"})\n'
    code, _, err = _preview(_program(tmp_path, body))
    assert code == 2 and "Traceback" not in err
    assert (
        "invocation of pulumi:pulumi:getResource returned an error: unknown resource urn:pulumi:dev::hosted::test:index:Thing::ghost" in err
    )


def test_what_offline_cannot_know_of_the_engines_functions_is_unknown_and_named(tmp_path):
    """A resource a component's provider builds, another stack's outputs: unknown, as a preview
    answers before a value exists, and each a named gap."""
    folder = _program(
        tmp_path,
        """
        c = pulumi.ComponentResource("eks:index:Cluster", "c", {}, remote=True)
        urn = "urn:pulumi:dev::hosted::eks:index:Cluster$aws:eks/cluster:Cluster::c-eksCluster"
        got = c.urn.apply(lambda _: pulumi.runtime.invoke("pulumi:pulumi:getResource", {"urn": urn}).value)
        pulumi.export("known", got.apply(lambda g: g["state"]))
        ref = pulumi.StackReference("org/network/prod")
        pulumi.export("vpc", ref.get_output("vpcId"))
        """,
    )
    plan, _ = _plan(folder)
    gaps = plan["placement"]["gaps"]
    assert any("c-eksCluster is built by a component's provider, which the offline engine does not run" in g for g in gaps), gaps
    assert any("stack reference 'org/network/prod': the outputs of stack 'org/network/prod' are in its backend" in g for g in gaps), gaps
    assert plan["outputs"] == {"known": {}, "vpc": UNKNOWN}


def test_a_transform_that_never_returns_is_stopped_at_the_bound_naming_it(tmp_path):
    folder = _program(
        tmp_path,
        """
        import time

        def stuck(args):
            time.sleep(3600)

        pulumi.CustomResource("test:index:Thing", "one", {}, opts=pulumi.ResourceOptions(transforms=[stuck]))
        """,
    )
    code, _, err = _preview(folder, "--timeout", "3")
    assert code == 2 and "Traceback" not in err
    assert "did not finish within 3 s (--timeout)" in err
    assert "the last a transform of test:index:Thing 'one' (a callback into the program)" in err, err
