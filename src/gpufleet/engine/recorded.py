"""What a preview records, and the program it runs: the light half of the engine, which imports
no Pulumi SDK. A hosted program's preview (engine/program_host.py) needs only this half before the
program starts; the in-process engine (engine/runtime.py) adds the SDK's mock runtime."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpufleet.catalog import tokens
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.errors import NotJudged

if TYPE_CHECKING:
    from gpufleet.catalog.generate.sources import MotoSnapshot

PROGRAM = Path(__file__).parent.parent / "stack" / "__main__.py"

# Outputs the provider computes, which the program reads (a kubeconfig, a security group id): echoing
# the inputs would make them None (a missing key) where `pulumi preview` shows them unknown.
COMPUTED_OUTPUTS = {
    tokens.EKS_CLUSTER: {
        "endpoint": UNKNOWN,
        "certificateAuthority": {"data": UNKNOWN},
        "vpcConfig": {"clusterSecurityGroupId": UNKNOWN, "vpcId": UNKNOWN},
    },
}


class EngineError(NotJudged):
    """The program could not be previewed offline; the message says why."""


@dataclass
class RecordedResource:
    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    inputs: dict
    # What the engine knows of the data flow: the resources each input was computed from. Policies
    # follow these to join resources whose ids are unknown during preview.
    dependencies: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    provider: str = ""  # the URN of the provider resource, when one was given
    # Options that decide whether an update becomes a replacement (the reviewer's diff reads them).
    replace_on_changes: list[str] = field(default_factory=list)
    delete_before_replace: bool = False


@dataclass
class ProgramRun:
    stack: str
    resources: list[RecordedResource] = field(default_factory=list)
    outputs: dict = field(default_factory=dict)
    gaps: list[str] = field(default_factory=list)  # what the engine could not know (plan placement.gaps)


def record(request, urn: str, inputs: dict, provider: str | None = None) -> RecordedResource:
    """A RegisterResourceRequest as the engine records it, with its inputs decoded (and `provider`,
    the reference the engine resolved: the request's own, or a default provider's)."""
    return RecordedResource(
        urn,
        request.type,
        request.name,
        request.parent,
        bool(request.custom),
        inputs,
        dependencies=sorted(set(request.dependencies)),
        property_dependencies={key: sorted(set(deps.urns)) for key, deps in sorted(request.propertyDependencies.items()) if deps.urns},
        provider=(request.provider if provider is None else provider).rsplit("::", 1)[0],  # a reference is URN::ID
        replace_on_changes=list(request.replaceOnChanges),
        delete_before_replace=bool(request.deleteBeforeReplace),
    )


def preview_outputs(type_: str, inputs: dict) -> dict:
    """A create in preview: the engine echoes the inputs; everything else is unknown until apply."""
    outputs = dict(inputs)
    for key, computed in COMPUTED_OUTPUTS.get(type_, {}).items():
        outputs[key] = {**(outputs.get(key) or {}), **computed} if isinstance(computed, dict) else computed
    return outputs


@functools.cache
def moto_snapshot() -> MotoSnapshot:
    from gpufleet.catalog.generate.sources import MotoSnapshot

    return MotoSnapshot()  # one per process: its snapshots are read once


@dataclass(frozen=True)
class Program:
    """A Pulumi Python program: its entry (a `__main__.py`, or a folder holding one) and project name.
    The CLI runs a program in its project folder; so does the engine."""

    main: Path
    project: str
    workdir: Path | None = None
    runtime: str = "python"  # or nodejs (its own process only: engine/program_host.py)
    typescript: bool = True  # nodejs: compile TypeScript with the program's ts-node, as the CLI does
    runner: Path | None = None  # nodejs: the @pulumi/pulumi program runner its node_modules resolve
    node_args: tuple[str, ...] = ()  # nodejs: runtime.options.nodeargs, split as a shell would
    tsconfig: str | None = None  # nodejs: runtime.options.tsconfig
