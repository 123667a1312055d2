"""The gpufleet Pulumi program: stack config -> FleetSpec -> components.

Runs unchanged under the Pulumi CLI (`pulumi up` / `pulumi preview`) and under the offline engine,
which only swaps the resource monitor. Nothing here knows which one is driving it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws
from pulumi.runtime import config as runtime_config

from gpufleet.spec import SpecError, decode_config, load_spec
from gpufleet.summary import SUMMARY_OUTPUT, accelerator_summary

if TYPE_CHECKING:
    from gpufleet.spec import FleetSpec


def stack_config() -> dict[str, object]:
    """All config the runtime was handed: the CLI passes it in PULUMI_CONFIG, mocks set it in-process."""
    merged = dict(runtime_config.get_config_env())
    merged.update(runtime_config.CONFIG.get())
    return merged


# Each fleet's component is imported where it is built: a stack loads only its clouds' provider
# SDKs (pulumi_alicloud, pulumi_gcp and pulumi_azure take about 0.3 s to import together).
def build(spec: FleetSpec) -> None:
    if spec.ecs is not None or spec.eks is not None:
        _build_aws(spec)
    if spec.ack is not None:
        from gpufleet.components.ack.ack_fleet import AckFleet

        fleet = AckFleet("ack", spec.ack)
        pulumi.export("ackNodePools", {name: pool.node_pool.node_pool_id for name, pool in fleet.node_pools.items()})
    if spec.gke is not None:
        from gpufleet.components.gke.gke_fleet import GkeFleet

        gke = GkeFleet(spec.gke.cluster.name, spec.gke)
        pulumi.export("gkeNodePools", {name: pool.node_pool.id for name, pool in gke.node_pools.items()})
    if spec.aks is not None:
        from gpufleet.components.aks.aks_fleet import AksFleet

        aks = AksFleet("aks", spec.aks)
        pulumi.export("aksNodePools", {name: pool.node_pool.id for name, pool in aks.node_pools.items()})
    pulumi.export(SUMMARY_OUTPUT, accelerator_summary(spec))


def _build_aws(spec: FleetSpec) -> None:
    # One explicit provider per stack region: every resource and look-up goes through it.
    provider = aws.Provider(
        f"aws-{spec.region}",
        region=spec.region,
        default_tags={"tags": {"managed-by": "gpufleet", "gpufleet-stack": pulumi.get_stack()}},
    )
    opts = pulumi.ResourceOptions(providers={"aws": provider})
    if spec.ecs is not None:
        from gpufleet.components.ecs.gpu_cluster import GpuCluster

        cluster = GpuCluster(spec.ecs.cluster_name, spec.ecs, spec.region, opts=opts)
        pulumi.export("ecsClusterArn", cluster.cluster.arn)
    if spec.eks is not None:
        from gpufleet.components.eks.eks_fleet import EksFleet

        fleet = EksFleet(spec.eks.cluster.name, spec.eks, spec.region, opts=opts)
        pulumi.export("eksClusterName", fleet.cluster_name)


def main() -> None:
    try:
        spec = load_spec(decode_config(stack_config()))
    except SpecError as err:
        # RunError: the CLI prints the message without a Python traceback.
        raise pulumi.RunError(str(err)) from None
    build(spec)
