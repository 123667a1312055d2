"""The gpufleet Pulumi program: stack config -> FleetSpec -> components.

Runs unchanged under the Pulumi CLI (`pulumi up` / `pulumi preview`) and under the offline engine,
which only swaps the resource monitor. Nothing here knows which one is driving it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws
from pulumi.runtime import config as runtime_config

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.stack.platforms import PLATFORMS
from gpufleet.stack.spec import SpecError, decode_config, load_spec
from gpufleet.stack.summary import SUMMARY_OUTPUT, accelerator_summary

if TYPE_CHECKING:
    from gpufleet.stack.spec import FleetSpec


def stack_config() -> dict[str, object]:
    """All config the runtime was handed: the CLI passes it in PULUMI_CONFIG, mocks set it in-process."""
    merged = dict(runtime_config.get_config_env())
    merged.update(runtime_config.CONFIG.get())
    return merged


# Each platform's components are imported where they are built (its record's `build`): a stack
# loads only its clouds' provider SDKs (pulumi_alicloud, pulumi_gcp and pulumi_azure take about
# 0.3 s to import together).
def build(spec: FleetSpec, cat: Catalog) -> None:
    aws_opts = None
    for platform in PLATFORMS:
        fleet = getattr(spec, platform.key)
        if fleet is None:
            continue
        if platform.aws and aws_opts is None:
            aws_opts = _aws_options(spec.region)
        for name, value in platform.build(fleet, spec.region, aws_opts if platform.aws else None, cat).items():
            pulumi.export(name, value)
    pulumi.export(SUMMARY_OUTPUT, accelerator_summary(spec, cat))


def _aws_options(region: str) -> pulumi.ResourceOptions:
    """One explicit provider per stack region: every AWS resource and look-up goes through it."""
    provider = aws.Provider(
        f"aws-{region}",
        region=region,
        default_tags={"tags": {"managed-by": "gpufleet", "gpufleet-stack": pulumi.get_stack()}},
    )
    return pulumi.ResourceOptions(providers={"aws": provider})


def main() -> None:
    try:
        spec = load_spec(decode_config(stack_config()))
    except SpecError as err:
        # RunError: the CLI prints the message without a Python traceback.
        raise pulumi.RunError(str(err)) from None
    build(spec, catalog.load())
