"""What a remote component's Construct answers in a preview, where offline its provider is not run:
the outputs that are resources the component's code always makes (curated, with their source, under
`libraries` in the catalog) as resource references, every other output unknown. A real preview runs
the Construct, so a program may read such a reference's URN (pulumi-eks's createManagedNodeGroup
aliases the node group to `cluster.eksCluster.urn`); the referenced resource's properties are known
only after apply (engine/builtins.py answers its `getResource` with an empty state)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.plans.wire import RESOURCE_SIG, SIG_KEY

if TYPE_CHECKING:
    from gpufleet.catalog.facts import ComponentResourceOutputs


def resource_outputs(curated: dict[str, ComponentResourceOutputs], type_: str, name: str, child_urn: Callable[[str, str], str]) -> dict:
    """The component's resource outputs as the engine hands them to a program that accepts resource
    references: `{sig, urn, id}`, the id unknown as a preview's is before create (the provider's own
    Node SDK serialises a custom resource so: npm @pulumi/pulumi 3.228.0 runtime/rpc.js
    serializeProperty, L436-L447)."""
    known = curated.get(type_)
    if known is None:
        return {}
    return {
        output: {SIG_KEY: RESOURCE_SIG, "urn": child_urn(child.type, child.name.format(name=name)), "id": UNKNOWN}
        for output, child in known.outputs.items()
    }
