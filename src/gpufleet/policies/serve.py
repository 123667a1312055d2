"""The gpufleet-guard policy pack: its rule groups and the process that serves them (the pack's
shell, policies/__main__.py in the repository and `pack/` in an installed gpufleet, calls `serve`)."""

import gc

from gpufleet.policies import profile

profile.start()  # before the pack's imports, which are most of its start (behind its switch)

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from gpufleet.catalog import catalog  # noqa: E402
from gpufleet.engine.patches import PACK, applied  # noqa: E402
from gpufleet.policies import (  # noqa: E402
    ack,
    aks,
    api,
    budget,
    coverage,
    dra,
    ecs,
    ecs_managed,
    ecs_sharing,
    eks,
    gke,
    k8s,
    karpenter,
    lifecycle,
    neuron,
    placement,
    security,
    updates,
)

# The pack's rule groups, in the order its policies are listed: one module each, with its POLICIES.
GROUPS = (
    ecs,
    ecs_sharing,
    ecs_managed,
    neuron,
    eks,
    k8s,
    karpenter,
    ack,
    gke,
    aks,
    placement,
    dra,
    api,
    lifecycle,
    security,
    updates,
    budget,
    coverage,
)


def serve() -> None:
    """Serve the pack over the analyzer protocol until the CLI stops it."""
    catalog.trust_shipped()
    # The catalog (every instance type, every ECS GPU AMI id) is loaded once and never freed: keep it
    # out of the collector's full passes, which otherwise walk it again for every batch of resources.
    catalog.load()
    catalog.ecs_amis()
    gc.freeze()
    # A preview's requests leave almost no cyclic garbage, but every resource adds long-lived objects
    # (the servicer memo keeps each one's converted properties for AnalyzeStack), so the default
    # thresholds collect hundreds of times a preview, walking all of them: collect a hundred times
    # less often. The pack lives for one preview, or for a worker's under `--all`, which forgets each
    # stack's state when told the next (gpufleet.engine.patches.stack_config.per_stack).
    gc.set_threshold(100_000, 20, 100)
    gc.enable()  # the pack's shell turns it off while the pack imports (policies/__main__.py)

    # pulumi_policy's servicer, mended and spared repeated work where its version is the one the
    # patches were written for (gpufleet.engine.patches); PolicyPack serves until the CLI stops it.
    with profile.written(), applied(PACK):
        PolicyPack(
            name="gpufleet-guard",
            description="GPU and Neuron infrastructure rules (ECS GPU, ECS Neuron, EKS, Kubernetes, Alibaba ACK GPU sharing, Google GKE and Azure AKS GPU pools, security) over the gpufleet catalog of EC2 facts.",
            enforcement_level=EnforcementLevel.ADVISORY,
            policies=[policy for group in GROUPS for policy in group.POLICIES],
        )
