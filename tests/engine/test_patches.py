"""The one gate of the SDK patches (src/gpufleet/engine/patches/): nothing patched at import, everything
restored after a preview, a patch outside its versions left out and said so, and the same plans with
every speed patch off."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from pulumi.runtime import rpc

from gpufleet.engine import patches
from gpufleet.engine.patches import lazy_outputs, lean_imports
from tests.conftest import ROOT, fresh_python, stacks_unlike_their_goldens


def test_importing_the_engine_and_the_pack_patches_nothing():
    script = (
        "import sys, pulumi.runtime.rpc as rpc, pulumi.resource, pulumi_policy.policy as policy\n"
        "before = (rpc.transfer_properties, pulumi.resource.register_resource, dict(vars(policy._PolicyAnalyzerServicer)))\n"
        "import gpufleet.engine.preview, gpufleet.engine.runtime, gpufleet.engine.patches\n"
        "import gpufleet.engine.patches.lean_imports, gpufleet.engine.patches.lazy_outputs, gpufleet.engine.patches.servicer_memo\n"
        "import gpufleet.engine.patches.stack_once, gpufleet.engine.patches.stack_config, gpufleet.engine.patches.analyze_once\n"
        "after = (rpc.transfer_properties, pulumi.resource.register_resource, dict(vars(policy._PolicyAnalyzerServicer)))\n"
        "lean = [f for f in sys.meta_path if type(f).__name__ == '_LeanFinder']\n"
        "sys.stdout.write(repr(before == after and not lean))\n"
    )
    run = fresh_python(script)
    assert run.stdout == "True", run.stderr


def test_within_the_gate_the_sdk_is_patched_and_after_it_is_as_it_was(monkeypatch):
    monkeypatch.delenv("GPUFLEET_SDK_PATCHES", raising=False)
    sdk = rpc.transfer_properties
    with patches.applied(patches.ENGINE, monitor_features=[]) as active:
        assert set(active) == {p.name for p in patches.ENGINE}
        assert rpc.transfer_properties is lazy_outputs.transfer_properties
        assert lean_imports._FINDER in sys.meta_path
    assert rpc.transfer_properties is sdk
    assert lean_imports._FINDER not in sys.meta_path


def test_the_off_switch_leaves_the_sdk_as_it_is_but_keeps_the_mends(monkeypatch):
    monkeypatch.setenv("GPUFLEET_SDK_PATCHES", "off")
    sdk = rpc.transfer_properties
    said = []
    with patches.applied(patches.ENGINE, said.append, monitor_features=[]) as active:
        assert active == {} and rpc.transfer_properties is sdk
    with patches.applied(patches.PACK, said.append) as active:
        assert set(active) == {p.name for p in patches.PACK if not p.speed} == {"stack-config"}
    assert said == []


def test_a_patch_outside_the_versions_it_was_written_for_is_left_out_and_said(monkeypatch):
    monkeypatch.delenv("GPUFLEET_SDK_PATCHES", raising=False)
    monkeypatch.setattr(patches, "_SAID", set())
    old = patches.Patch("lazy-outputs", "outputs made when read", {"pulumi": ("3.1", "3.2")}, "lazy_outputs.lazy_outputs")
    said = []
    sdk = rpc.transfer_properties
    with patches.applied((old,), said.append) as active:
        assert active == {} and rpc.transfer_properties is sdk
    with patches.applied((old,), said.append):
        pass
    installed = patches.installed("pulumi")
    assert said == [f"gpufleet: the SDK runs as it is for lazy-outputs (outputs made when read): pulumi {installed} (written for 3.1 to 3.2)\n"]


def test_a_patch_for_a_package_that_is_not_installed_is_left_out():
    patch = patches.Patch("x", "y", {"no-such-distribution": ("1.0", "1.0")}, "lazy_outputs.lazy_outputs")
    assert patch.outside() == "no-such-distribution missing (written for 1.0 to 1.0)"


def test_a_package_a_patch_changes_only_where_installed_may_be_missing_but_not_out_of_range():
    patch = patches.Patch(
        "x", "y", {"pulumi": patches.PULUMI, "no-such-sdk": ("1.0", "1.0")}, "lazy_outputs.lazy_outputs", if_installed=frozenset({"no-such-sdk"})
    )
    assert patch.outside() is None
    old = patches.Patch("x", "y", {"pulumi": ("3.1", "3.2")}, "lazy_outputs.lazy_outputs", if_installed=frozenset({"pulumi"}))
    assert old.outside() == f"pulumi {patches.installed('pulumi')} (written for 3.1 to 3.2)"


def _pins(path) -> dict[str, str]:
    pins = dict(line.split("==") for line in path.read_text().splitlines() if "==" in line and not line.startswith("#"))
    return {name.lower().replace("_", "-"): version for name, version in pins.items()}


def test_each_patch_is_written_for_the_versions_tested():
    """The ranges run from the floors (tests/floors/constraints.txt, which a slow test previews) to
    what constraints.txt pins: a bump of either must re-check the patches."""
    floors, pinned = _pins(ROOT / "tests" / "floors" / "constraints.txt"), _pins(ROOT / "constraints.txt")
    for patch in (*patches.ENGINE, *patches.PACK):
        for dist, (low, high) in patch.written_for.items():
            assert patches._minor(floors[dist]) == patches._minor(low), (patch.name, dist, floors[dist], low)
            assert patches._minor(pinned[dist]) == patches._minor(high), (patch.name, dist, pinned[dist], high)
        assert patch.outside() is None, patch.name


# A package whose __init__ sets what its modules do not export (pulumi_aws.config swaps its module's
# class for one whose properties read the config): a program sees it as the SDK made it.
_ATTRIBUTES = """
import json, sys
if sys.argv[1] == "lean":
    from gpufleet.engine.patches import lean_imports
    sys.meta_path.insert(0, lean_imports._FINDER)
import importlib
import pulumi
pulumi.runtime.set_all_config({"aws:region": "eu-west-1", "gcp:project": "p", "azure:location": "westeurope"})
found = {}
for name in sys.argv[2:]:
    package = importlib.import_module(name)
    public = ["region", "project", "location", "skip_region_validation", "profile", "zone"]
    found[name] = [type(package).__name__ != "_LeanPackage", *(repr(getattr(package, n, "<missing>")) for n in public)]
    found[name].append(sorted(n for n in dir(package) if not n.startswith("_")))
sys.stdout.write(json.dumps(found))
"""
CONFIG_PACKAGES = ["pulumi_aws.config", "pulumi_gcp.config", "pulumi_azure.config", "pulumi_alicloud.config"]


def test_a_package_whose_init_sets_its_own_attributes_reads_as_without_the_engine():
    def found(mode):
        run = fresh_python(_ATTRIBUTES, mode, *CONFIG_PACKAGES)
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout)

    lean, plain = found("lean"), found("plain")
    assert lean == plain
    assert plain["pulumi_aws.config"][1] == "'eu-west-1'"


@pytest.mark.slow
def test_every_shipped_stack_and_example_previews_alike_with_the_patches_off():
    def preview(switch, *argv):
        env = {**os.environ, "GPUFLEET_SDK_PATCHES": switch}
        run = subprocess.run([sys.executable, "-m", "gpufleet.cli.main", "preview", *argv, "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
        return run.stdout

    assert stacks_unlike_their_goldens(preview("off", "--all")) == []  # the goldens are the patched SDK's plans
    for example in sorted(p for p in (ROOT / "examples").iterdir() if (p / "Pulumi.yaml").exists()):
        assert preview("off", "--program", str(example), "--python", sys.executable) == preview("on", "--program", str(example), "--python", sys.executable), example.name
