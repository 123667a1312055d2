"""The offline engine makes a custom resource's outputs when a program first reads them
(src/gpufleet/engine/patches/lazy_outputs.py): read before the engine answers or after, an output carries what the
SDK's own would; one nobody reads is never made; a plain attribute (no generated getter) is made at
once. The shipped stacks' golden plans (tests/test_preview*.py) hold the whole preview unchanged.
Also the engine's collector policy during a preview (young generations only), which the same
memory target asks for."""

from __future__ import annotations

from pathlib import Path

from gpufleet.engine.runtime import Program, run_program

PROGRAM = '''
import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

sg = aws.ec2.SecurityGroup("sg", name="gpu-nodes", description="GPU nodes", vpc_id="vpc-1")
early = sg.name  # read before the engine has answered the registration
aws.ec2.SecurityGroupRule("early", type="ingress", protocol="-1", from_port=0, to_port=0, self=True,
                          security_group_id=sg.id, description=early)

def later(_):
    # read once the engine has answered: the output is made resolved
    aws.ec2.SecurityGroupRule("later", type="egress", protocol="-1", from_port=0, to_port=0, self=True,
                              security_group_id=sg.id, description=sg.description)
    return _

sg.urn.apply(later)
pulumi.export("description", sg.description)
pulumi.export("arn", sg.arn)  # computed: unknown in a preview
pulumi.export("tags", sg.tags)  # not given: none
job = k8s.apiextensions.CustomResource("job", api_version="kubeflow.org/v2beta1", kind="MPIJob", metadata={"name": "nccl"})
pulumi.export("job", job.metadata["name"])  # a plain attribute, no getter

import sys
sys.modules["__lazy_probe__"] = sg
'''


def _run(tmp_path) -> tuple:
    import sys

    main = Path(tmp_path) / "__main__.py"
    main.write_text(PROGRAM)
    run = run_program({"aws:region": "us-east-1"}, "lazy", program=Program(main, "lazy", Path(tmp_path)))
    return run, sys.modules.pop("__lazy_probe__")


def _recorded(run) -> list:
    # In the order of URNs: the order of registration follows the event loop's scheduling.
    return sorted((r.urn, r.inputs, r.dependencies, r.property_dependencies) for r in run.resources)


def test_outputs_read_before_and_after_the_answer_are_the_sdks(tmp_path, monkeypatch):
    run, sg = _run(tmp_path)
    rules = {r.name: r.inputs for r in run.resources if r.type == "aws:ec2/securityGroupRule:SecurityGroupRule"}
    assert rules["early"]["description"] == "gpu-nodes"
    assert rules["later"]["description"] == "GPU nodes"
    assert run.outputs["description"] == "GPU nodes" and run.outputs["job"] == "nccl"
    # The SDK's own outputs, every one made at registration (the patches off), give the same
    # resources and outputs.
    monkeypatch.setenv("GPUFLEET_SDK_PATCHES", "off")
    sdk, sdk_sg = _run(tmp_path)
    assert _recorded(run) == _recorded(sdk) and run.outputs == sdk.outputs
    # Outputs nobody read were never made: the security group holds only those the program read.
    made, sdk_made = ({k for k in dict.keys(vars(r)) if not k.startswith("_") and k not in ("urn", "id")} for r in (sg, sdk_sg))
    assert made == {"name", "description", "arn", "tags"}
    assert made < sdk_made and len(sdk_made) >= 10  # the SDK makes every one (ingress, egress, owner_id, ...)
    assert sg.ingress is not None and "ingress" in dict.keys(vars(sg))  # made on its first read


GC_PROGRAM = '''
import gc, weakref
import pulumi

full_before = gc.get_stats()[2]["collections"]
class Node:
    pass
node = Node()
node.itself = node  # a cycle that dies young, as the SDK's unknowns checks leave one per Output
dead = weakref.ref(node)
del node
kept = [[] for _ in range(200000)]  # new containers: young collections run, and (held) would trigger a full one
pulumi.export("collectedYoung", dead() is None)
pulumi.export("fullPasses", gc.get_stats()[2]["collections"] - full_before)
'''


def test_a_preview_collects_young_cycles_and_no_full_pass(tmp_path):
    main = Path(tmp_path) / "__main__.py"
    main.write_text(GC_PROGRAM)
    run = run_program({}, "gc", program=Program(main, "gc", Path(tmp_path)))
    assert run.outputs == {"collectedYoung": True, "fullPasses": 0}
