"""Regenerate `data/botocore_inputs.json`: of botocore's service models, the create calls gpufleet
judges plans against (`gpufleet.apis.aws.to_request`) and the shapes their inputs reach, nothing else.

    python -m gpufleet.catalog.generate.botocore_inputs            # from the installed botocore
    python -m gpufleet.catalog.generate.botocore_inputs --check    # exit 1 if the committed file is stale

Source: the botocore package installed beside gpufleet (boto/botocore, `botocore/data/<service>/<API
version>/service-2.json`, the API version botocore's loader picks). Each model is kept as botocore
ships it (metadata, each operation's input, every shape its input reaches, with their members, enums,
patterns and bounds), less its documentation. The policy pack starts once per preview and judged its
first AWS resources only after loading the whole models: EC2's alone (4,421 shapes, 140 reached) is
about 70 ms of CPU, these eleven calls' reached shapes well under a millisecond. The reader uses the
file only where its botocore version is the installed one (gpufleet.apis.aws), so the same requests
are judged by the same shapes.
"""

from __future__ import annotations

import sys

import botocore
from botocore.loaders import create_loader

from gpufleet.catalog.catalog import DATA
from gpufleet.catalog.generate.rendering import check_asked, one_entry_a_line, written

REGENERATE = "python -m gpufleet.catalog.generate.botocore_inputs"
DATA_FILE = DATA / "botocore_inputs.json"
REPOSITORY = "boto/botocore"
# The create calls `to_request` turns a resource into (gpufleet/apis/aws.py), by service. A call
# missing here is still judged, by the whole model.
OPERATIONS = {
    "autoscaling": ("CreateAutoScalingGroup",),
    "ec2": ("CreateLaunchTemplate", "CreateSecurityGroup", "CreateSubnet", "CreateVpc"),
    "ecs": ("CreateCapacityProvider", "CreateService", "RegisterTaskDefinition"),
    "eks": ("CreateCluster", "CreateNodegroup"),
    "iam": ("CreateRole",),
}
# What botocore's model reads beyond validation: its words for people, and what a call answers.
_DROPPED = ("documentation", "output", "errors")


def _lean(definition: dict) -> dict:
    return {key: value for key, value in definition.items() if key not in _DROPPED}


def _reached(shapes: dict, root: str) -> set[str]:
    found: set[str] = set()
    pending = [root]
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found.add(name)
        shape = shapes[name]
        pending += [shape[part]["shape"] for part in ("member", "key", "value") if part in shape]
        pending += [member["shape"] for member in shape.get("members", {}).values()]
    return found


def _shape(definition: dict) -> dict:
    lean = _lean(definition)
    if "members" in lean:  # a member may be named "documentation": only the members' own keys are dropped
        lean["members"] = {name: _lean(member) for name, member in lean["members"].items()}
    return lean


def build(loader, version: str) -> dict:
    services = {}
    paths = {}
    for service, operations in OPERATIONS.items():
        api_version = loader.determine_latest_version(service, "service-2")
        model = loader.load_service_model(service, "service-2", api_version)
        reached = set().union(*(_reached(model["shapes"], model["operations"][op]["input"]["shape"]) for op in operations))
        services[service] = {
            "metadata": model["metadata"],
            "operations": {op: _lean(model["operations"][op]) for op in operations},
            "shapes": {name: _shape(model["shapes"][name]) for name in sorted(reached)},
        }
        paths[service] = f"botocore/data/{service}/{api_version}/service-2.json"
    return {
        "generated": {
            "by": REGENERATE,
            "botocore": version,
            "source": {"package": f"botocore {version} (PyPI)", "repository": REPOSITORY, "tag": version, "paths": paths},
        },
        "services": services,
    }


def render(document: dict) -> str:
    """One service a line, keys sorted, stable across runs."""
    return one_entry_a_line(document, ("services",))


def main(argv: list[str] | None = None) -> int:
    check = check_asked(REGENERATE, __doc__ or "", argv)
    text = render(build(create_loader(), botocore.__version__))
    return written(DATA_FILE, text, check, f"botocore {botocore.__version__}", REGENERATE)


if __name__ == "__main__":
    sys.exit(main())
