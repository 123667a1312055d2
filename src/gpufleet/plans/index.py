"""A plan's resources as everything past the plan's doors reads them (types, inputs, dependencies and
the options the replacement rules read), indexed by URN and type; the resource types the placement
reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gpufleet.catalog import tokens

# Foreign input read whatever its shape: the one statement, below every reader (re-exported here).
from gpufleet.simulate.loose import as_int, mapping, seq, str_or, truthy  # noqa: F401

CONFIG_FILES = (tokens.K8S_CONFIG_FILE, tokens.K8S_CONFIG_FILE_V1)


# The resource types the placement reads (and every Kubernetes object): callers may hand in only these.
READS = frozenset(
    {
        tokens.EKS_NODE_GROUP,
        tokens.AWS_PROVIDER,  # its region: the zones of the types a NodePool launches and what they cost
        tokens.EKS_CLUSTER,
        tokens.EKS_ADDON,
        tokens.EKS_FARGATE_PROFILE,
        tokens.PULUMI_EKS_CLUSTER,
        tokens.PULUMI_EKS_NODE_GROUP,
        tokens.PULUMI_EKS_NODE_GROUP_V2,
        tokens.PULUMI_EKS_MANAGED_NODE_GROUP,
        tokens.AWSX_VPC,
        tokens.AWSX_FARGATE_SERVICE,
        tokens.AWSX_EC2_SERVICE,
        tokens.AWSX_FARGATE_TASK_DEFINITION,
        tokens.AWSX_EC2_TASK_DEFINITION,
        tokens.LAUNCH_TEMPLATE,
        tokens.LAUNCH_CONFIGURATION,
        tokens.EC2_INSTANCE,
        tokens.SUBNET,
        tokens.ECS_TASK_DEFINITION,
        tokens.ECS_SERVICE,
        tokens.ECS_CAPACITY_PROVIDER,
        tokens.ASG,
        tokens.ACK_NODE_POOL,
        tokens.ACK_CLUSTER,
        tokens.GKE_NODE_POOL,
        tokens.GKE_CLUSTER,
        tokens.AKS_NODE_POOL,
        tokens.AKS_CLUSTER,
        tokens.AKS_NATIVE_CLUSTER,
        tokens.AKS_NATIVE_AGENT_POOL,
    }
)


def reads(type_token: str) -> bool:
    return type_token in READS or type_token.startswith("kubernetes:")


@dataclass(frozen=True)
class Resource:
    """A resource as the placement reads it: inputs in the engine's camelCase shape, and for each
    input the URNs of the resources it depends on."""

    urn: str
    type: str
    name: str
    props: Mapping
    deps: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    derived: str | None = None  # not in the plan: what a component library will create, and from what
    provider: str | None = None  # the provider reference (its URN, and in a plan its id after "::")
    dependencies: tuple[str, ...] = ()  # every URN it depends on, through an input or not
    parent: str | None = None
    # The program's options the replacement rules read: inputs whose change replaces it, and whether
    # the old one goes before the new one exists.
    replace_on_changes: tuple[str, ...] = ()
    delete_before_replace: bool = False


class Index:
    def __init__(self, resources: Sequence[Resource]):
        self.resources = list(resources)
        self.by_urn = {r.urn: r for r in resources}

    def of(self, type_: str) -> list[Resource]:
        return [r for r in self.resources if r.type == type_]

    def deps(self, r: Resource, *types: str, prop: str | None = None) -> list[Resource]:
        urns = r.deps.get(prop, ()) if prop else [u for us in r.deps.values() for u in us]
        found = []
        for urn in dict.fromkeys(urns):
            dep = self.by_urn.get(urn)
            if dep is not None and dep.type in types:
                found.append(dep)
        return found


def from_plan(plan: Mapping) -> list[Resource]:
    """A JSON plan's resources (gpufleet's, or `pulumi preview --json` read into that shape) as typed
    resources: the one door from a plan's raw entries to what placement, groups and cost read."""
    return [
        Resource(
            r["urn"],
            r["type"],
            r.get("name") or r["urn"].rsplit("::", 1)[-1],
            r.get("inputs") or {},
            {k: tuple(v) for k, v in (r.get("propertyDependencies") or {}).items()},
            provider=r.get("provider") if isinstance(r.get("provider"), str) else None,
            dependencies=tuple(r.get("dependencies") or ()),
            parent=r.get("parent") or None,
            replace_on_changes=tuple(r.get("replaceOnChanges") or ()),
            delete_before_replace=bool(r.get("deleteBeforeReplace")),
        )
        for r in plan.get("resources", [])
    ]


def write_remediated(entries: Sequence[dict], remediated: Mapping[str, Mapping]) -> None:
    """The way back through the same door: inputs a policy pack's remediations rewrote (URN -> new
    inputs) written into the plan's entries, so the plan shows what will be created. A URN listed
    twice is rewritten in its last entry, the one a plan's reader finds by URN."""
    by_urn = {r["urn"]: r for r in entries}
    for urn, inputs in remediated.items():
        if urn in by_urn:
            by_urn[urn]["inputs"] = inputs
