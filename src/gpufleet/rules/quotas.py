"""Service quotas of what gpufleet plans (curated `quotas`, each with its guide): a count past a quota
that cannot be raised fails the deploy (mandatory); past an adjustable one's default it fails until
an increase is granted (advisory). The spec and the policy pack call `quota_problem`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpufleet.catalog.facts import Quota

_WHAT = {
    "ecsCapacityProvidersPerCluster": "capacity providers in one ECS cluster",
    "ecsContainersPerTaskDefinition": "containers in one task definition",
    "ecsContainerInstancesPerCluster": "container instances one ECS cluster may reach (the capacity providers' maxSize summed)",
    "eksManagedNodeGroupsPerCluster": "managed node groups in one EKS cluster",
    "eksNodesPerManagedNodeGroup": "nodes one managed node group may reach (maxSize)",
}


@dataclass(frozen=True)
class QuotaProblem:
    quota: str
    mandatory: bool
    message: str


def quota_problem(quota: str, count: int, quotas: Mapping[str, Quota]) -> QuotaProblem | None:
    facts = quotas[quota]
    if count <= facts.value:
        return None
    kind = "an adjustable quota: request an increase before deploying" if facts.adjustable else "a quota that cannot be raised"
    return QuotaProblem(quota, not facts.adjustable, f"{count} {_WHAT[quota]}; AWS allows {facts.value}, {kind} ({facts.source})")
