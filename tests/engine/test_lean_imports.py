"""The offline engine loads the provider SDK's service packages lean (src/gpufleet/engine/patches/lean_imports.py):
every public name of each package a shipped stack uses must be the very object the package's own
`__init__` binds, and a preview must not load the package's other modules."""

from __future__ import annotations

import json

from tests.conftest import fresh_python

# A script's head that puts the lean finder first, as the engine's gate does.
LEAN = "import sys\nfrom gpufleet.engine.patches import lean_imports\nsys.meta_path.insert(0, lean_imports._FINDER)\n"

# The service packages gpufleet's components use, and a few they do not (one of enums alone,
# without an outputs module).
PACKAGES = [
    *(f"pulumi_aws.{p}" for p in ("ec2", "iam", "ecs", "autoscaling", "ssm", "eks", "s3", "lambda_", "applicationloadbalancing")),
    "pulumi_gcp.container", "pulumi_gcp.compute", "pulumi_azure.containerservice", "pulumi_azure.core", "pulumi_alicloud.cs", "pulumi_alicloud.vpc",
    "pulumi_kubernetes.core.v1", "pulumi_kubernetes.apps.v1", "pulumi_kubernetes.batch.v1", "pulumi_kubernetes.helm.v3", "pulumi_kubernetes.yaml.v2",
]

_NAMES = """
import importlib, json, sys
names = {}
for name in %r:
    package = importlib.import_module(name)
    package._utilities  # the SDK's lazy module loads on an attribute's access (dir() alone does not)
    names[name] = sorted(n for n in dir(package) if not n.startswith("_") and n != "typing")
sys.stdout.write(json.dumps(names))
"""

_CHECK = """
import json, sys
from gpufleet.engine.patches import lean_imports
sys.meta_path.insert(0, lean_imports._FINDER)
import importlib
names = json.loads(sys.stdin.read())
found = {}
for name, public in names.items():
    package = importlib.import_module(name)
    # Every name asked first, as a program asks (before anything ran the package's __init__) ...
    lean = {n: getattr(package, n) for n in public}
    # ... then the package's own __init__, run apart, binds the truth.
    init = package.__spec__.origin
    truth = {"__name__": package.__name__, "__package__": package.__name__, "__path__": package.__path__, "__file__": init}
    exec(compile(open(init).read(), init, "exec"), truth)
    # A submodule's name is bound to the package by the import system, not by __init__'s code.
    found[name] = [n for n in public if lean[n] is not truth.get(n, sys.modules.get(f"{package.__name__}.{n}"))]
# No public name needed the whole package: each was found in the module the convention names.
found["whole"] = sorted(lean_imports.WHOLE)
sys.stdout.write(json.dumps(found))
"""


def _run(script: str, stdin: str = "") -> dict:
    run = fresh_python(script, stdin=stdin)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_every_name_of_a_lean_package_is_the_packages_own():
    names = _run(_NAMES % PACKAGES)
    assert all(names[p] for p in PACKAGES)
    # Only helm.v3 has names off the convention (its hand-written Chart overlay, helm.py): asking
    # for each of its names loads it whole.
    assert _run(_CHECK, json.dumps(names)) == {**{p: [] for p in PACKAGES}, "whole": ["pulumi_kubernetes.helm.v3"]}


def test_a_function_imported_by_its_module_path_is_still_the_function():
    script = (
        LEAN
        + "import pulumi_aws, pulumi_aws.ec2.get_ami_ids\n"
        "sys.stdout.write(repr([callable(pulumi_aws.ec2.get_ami_ids), type(pulumi_aws.ec2.get_ami_ids).__name__]))\n"
    )
    run = fresh_python(script)
    assert run.stdout == "[True, 'function']", run.stderr


def test_a_name_off_the_convention_loads_the_whole_package():
    script = (
        LEAN
        + "import pulumi_aws\n"
        "pulumi_aws.ec2.LaunchTemplate\n"
        "before = len([m for m in sys.modules if m.startswith('pulumi_aws.ec2.')])\n"
        "star = {}\n"
        "exec('from pulumi_aws.ec2 import *', star)\n"  # __all__ is no module's name: the package's own __init__ runs
        "after = len([m for m in sys.modules if m.startswith('pulumi_aws.ec2.')])\n"
        "sys.stdout.write(repr([before, after, 'VpnConnection' in star, sorted(lean_imports.WHOLE)]))\n"
    )
    run = fresh_python(script)
    before, after, star, whole = eval(run.stdout)
    assert before < 10 < 150 < after and star and whole == ["pulumi_aws.ec2"], run.stderr


def test_a_name_the_package_does_not_have_is_missing_as_it_would_be():
    # An output type (the package imports `outputs` without its names), a name a module imports
    # (_enums' Enum, typing's Mapping), and a name of nothing: missing from the lean package as from the package itself.
    def found(lean: bool) -> str:
        script = (
            "import sys\n"
            + (LEAN if lean else "")
            + "import pulumi_aws\n"
            "ec2 = pulumi_aws.ec2\n"
            "found = [hasattr(ec2, n) for n in ('LaunchTemplateNetworkInterface', 'Enum', 'Mapping', 'NoSuchThing')]\n"
            "sys.stdout.write(repr([found, ec2.outputs.LaunchTemplateNetworkInterface.__name__]))\n"
        )
        run = fresh_python(script)
        return run.stdout + run.stderr

    assert found(lean=True) == found(lean=False) == "[[False, False, False, False], 'LaunchTemplateNetworkInterface']"


def test_an_sdk_imported_before_the_gate_still_loads_its_services_lean_within():
    """Importing pulumi_aws registers its services for a lazy load with the loader found then (the
    spec's validation imports it before a preview starts): within the gate they load lean, and a
    service still unread when the gate closes is left as the SDK registered it."""
    script = (
        "import sys\n"
        "import pulumi_aws\n"
        "from gpufleet.engine.patches import lean_imports\n"
        "with lean_imports.lean_imports():\n"
        "    pulumi_aws.ec2.LaunchTemplate\n"
        "ec2 = len([m for m in sys.modules if m.startswith('pulumi_aws.ec2.')])\n"
        "pulumi_aws.iam.Role\n"
        "iam = len([m for m in sys.modules if m.startswith('pulumi_aws.iam.')])\n"
        "sys.stdout.write(repr([ec2 < 10, iam > 50, type(pulumi_aws.iam).__name__]))\n"
    )
    run = fresh_python(script)
    assert run.stdout == "[True, True, 'module']", run.stderr
