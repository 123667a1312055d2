"""What has an end, over any program: AL2 AMI types on Kubernetes versions EKS has no AMI for, EKS
versions past extended support (mandatory: the API refuses them), and AMI families and Kubernetes
versions past their end of support (advisory: the API still accepts them). The dates are the
catalog's (facts.lifecycle); each finding names the day it judged against (GPUFLEET_TODAY fixes it)."""

from __future__ import annotations

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.policies.inputs import depended_on, get
from gpufleet.policies.registry import Policies
from gpufleet.rules import lifecycle

POLICIES = Policies(__name__)

# Where each kind of resource names its Kubernetes version, and whose calendar judges it.
VERSIONS = {
    tokens.EKS_CLUSTER: ("eks", "EKS", "version"),
    tokens.EKS_NODE_GROUP: ("eks", "EKS", "version"),
    tokens.GKE_CLUSTER: ("gke", "GKE", "minMasterVersion"),
    tokens.GKE_NODE_POOL: ("gke", "GKE", "version"),
    tokens.AKS_CLUSTER: ("aks", "AKS", "kubernetesVersion"),
    tokens.AKS_NODE_POOL: ("aks", "AKS", "orchestratorVersion"),
}


def _version(resource_type: str, props, cat: Catalog) -> tuple:
    calendar, cloud, field = VERSIONS[resource_type]
    return getattr(cat.facts.lifecycle.kubernetes, calendar), cloud, get(props, field)


def _group_version(group) -> object:
    """A node group's Kubernetes version: its own, else its cluster's."""
    own = get(group.props, "version")
    if own is not None:
        return own
    clusters = depended_on(group, tokens.EKS_CLUSTER)
    return get(clusters[0].props, "version") if clusters else None


@POLICIES.stack("eks-ami-type-available")
def _validate_ami_type_available(args: StackValidationArgs, report: ReportViolation) -> None:
    facts = catalog.load().facts
    for group in args.resources:
        if group.resource_type == tokens.EKS_NODE_GROUP:
            reason = lifecycle.eks_ami_type_problem(get(group.props, "amiType"), _group_version(group), facts)
            if reason:
                report(f"node group {group.name!r}: {reason}", group.urn)


@POLICIES.resource("kubernetes-version-supported", on=tokens.EKS_CLUSTER)
def _validate_version_supported(args: ResourceValidationArgs, report: ReportViolation) -> None:
    calendar, cloud, version = _version(args.resource_type, args.props, catalog.load())
    reason = lifecycle.kubernetes_version_problem(calendar, cloud, version, lifecycle.today())
    if reason:
        report(reason, None)


@POLICIES.resource("lifecycle-end-of-support", only=(*VERSIONS, tokens.EKS_NODE_GROUP, tokens.LAUNCH_TEMPLATE))
def _validate_end_of_support(args: ResourceValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    on, facts = lifecycle.today(), cat.facts
    if args.resource_type in VERSIONS:
        calendar, cloud, version = _version(args.resource_type, args.props, cat)
        reason = lifecycle.kubernetes_version_advisory(calendar, cloud, version, on)
        if reason:
            report(reason, None)
    if args.resource_type == tokens.EKS_NODE_GROUP:
        reason = lifecycle.eks_ami_type_advisory(get(args.props, "amiType"), on, facts)
        if reason:
            report(reason, None)
    if args.resource_type == tokens.LAUNCH_TEMPLATE:
        ami = catalog.ecs_amis().get(get(args.props, "imageId") or "")
        if ami is not None:
            reason = lifecycle.ecs_ami_advisory(ami.accelerator, ami.variant, on, facts)
            if reason:
                report(f"{ami.ami_id}: {reason}", None)
