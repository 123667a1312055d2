"""Google GKE GPU node pool rules: the machine type's GPUs, the zones that offer it, multi-instance
GPU partitions, exactly one driver per node, one shared GPU per container on sharing pools, and the
request the GKE API receives (the container.v1 discovery document). Each rule is a `gke_rules` or
`gke_api` function, the ones the stack spec calls.

A pod targets a pool when its nodeSelector names the pool (cloud.google.com/gke-nodepool).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.apis import gke as gke_api
from gpufleet.apis.values import decimal
from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.facts import GkeFacts
from gpufleet.policies.inputs import get, items, plain, report_api_model
from gpufleet.policies.k8s import containers, operator_installs_driver, pod_specs
from gpufleet.policies.registry import Policies
from gpufleet.rules import gke as gke_rules
from gpufleet.rules import k8s as k8s_rules

POLICIES = Policies(__name__)


def _accelerator(props) -> Mapping:
    first = get(props, "nodeConfig", "guestAccelerators", 0)
    return first if isinstance(first, Mapping) else {}


def _gpus(props, gke: GkeFacts) -> gke_rules.GkeGpus | str | None:
    """The pool's GPUs, the reason they do not go together, or None for a pool without GPUs."""
    machine_type = get(props, "nodeConfig", "machineType")
    accelerator = _accelerator(props)
    if not isinstance(machine_type, str) or (not accelerator and machine_type not in gke.machine_types):
        return None
    count = get(accelerator, "count")
    kind = get(accelerator, "type")
    return gke_rules.gpus(
        machine_type, kind if isinstance(kind, str) else None, int(count) if isinstance(count, (int, float)) else None, gke
    )


@POLICIES.resource("gke-accelerator", on=tokens.GKE_NODE_POOL)
def _validate_accelerator(args: ResourceValidationArgs, report: ReportViolation) -> None:
    resolved = _gpus(args.props, catalog.load().facts.gke)
    if isinstance(resolved, str):
        report(f"node pool {args.name!r} ({get(args.props, 'nodeConfig', 'machineType')}): {resolved}", None)


def _region(props) -> str | None:
    """A regional pool's location is its region; a zonal cluster's (us-central1-a) names it too."""
    location = get(props, "location")
    if not isinstance(location, str):
        return None
    parts = location.split("-")
    return "-".join(parts[:2]) if len(parts) > 2 else location


def _location_unknown(resource) -> str | None:
    """A GPU pool whose location is not known before apply."""
    if not isinstance(_gpus(resource.props, catalog.load().facts.gke), gke_rules.GkeGpus) or _region(resource.props) is not None:
        return None
    return "its location (a region or zone) is not known before apply"


@POLICIES.resource("gke-zone", on=tokens.GKE_NODE_POOL, unjudged=_location_unknown)
def _validate_zones(args: ResourceValidationArgs, report: ReportViolation) -> None:
    gke = catalog.load().facts.gke
    machine_type, region = get(args.props, "nodeConfig", "machineType"), _region(args.props)
    if not isinstance(_gpus(args.props, gke), gke_rules.GkeGpus):
        return  # no GPUs (or not known ones, reported by gke-accelerator)
    region = cast(str, region)  # known: the unjudged guard (_location_unknown) passed for a GPU pool
    for zone in items(get(args.props, "nodeLocations")):
        if isinstance(zone, str):
            reason = gke_rules.zone_problem(machine_type, region, zone, gke)
            if reason:
                report(f"node pool {args.name!r}: {reason}", None)


@POLICIES.resource("gke-mig-partition", on=tokens.GKE_NODE_POOL)
def _validate_partition(args: ResourceValidationArgs, report: ReportViolation) -> None:
    gke = catalog.load().facts.gke
    size = get(_accelerator(args.props), "gpuPartitionSize")
    resolved = _gpus(args.props, gke)
    if isinstance(size, str) and isinstance(resolved, gke_rules.GkeGpus):
        reason = gke_rules.partition_problem(resolved.accelerator, size, gke)
        if reason:
            report(f"node pool {args.name!r}: {reason}", None)


@POLICIES.stack("gke-gpu-driver")
def _validate_driver(args: StackValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    gke = cat.facts.gke
    operator = operator_installs_driver(args, cat)
    for r in args.resources:
        if r.resource_type != tokens.GKE_NODE_POOL or _gpus(r.props, gke) is None:
            continue
        driver = get(_accelerator(r.props), "gpuDriverInstallationConfig", "gpuDriverVersion")
        labels = get(r.props, "nodeConfig", "labels")
        dra = gke_rules.dra_pool({str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}, gke)
        problem = gke_rules.dra_driver_problem if dra else gke_rules.driver_problem
        # Without the block the API's default applies: GPU_DRIVER_VERSION_UNSPECIFIED, no driver.
        reason = problem(driver if isinstance(driver, str) else "GPU_DRIVER_VERSION_UNSPECIFIED", operator, gke)
        if reason:
            report(f"node pool {r.name!r}: {reason}", r.urn)


def _sharing_pools(args: StackValidationArgs) -> dict[str, str]:
    """Pool name -> sharing strategy, for the stack's GKE pools that share GPUs."""
    found = {}
    for r in args.resources:
        if r.resource_type == tokens.GKE_NODE_POOL:
            strategy = get(_accelerator(r.props), "gpuSharingConfig", "gpuSharingStrategy")
            name = get(r.props, "name")
            if isinstance(strategy, str) and isinstance(name, str):
                found[name] = strategy
    return found


@POLICIES.stack("gke-shared-gpu-request")
def _validate_shared_request(args: StackValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    gke = cat.facts.gke
    pools = _sharing_pools(args)
    resource = cat.facts.eks.accelerator_resources.nvidia
    for r in args.resources:
        for where, pod in pod_specs(r.resource_type, r.props):
            strategy = pools.get(get(pod, "nodeSelector", gke.labels.node_pool))
            if strategy is None:
                continue
            for c in containers(pod):
                value = get(c, "resources", "limits", resource)
                text = k8s_rules.quantity(value) if value is not None else ""
                reason = gke_rules.shared_request_problem(n, strategy, gke) if (n := decimal(text)) is not None else None
                if reason:
                    report(f"{where}: container {c.get('name', '?')!r} {reason}; the pod fails admission", r.urn)


@POLICIES.resource("gke-api-model", on=tokens.GKE_NODE_POOL)
def _validate_api_model(args: ResourceValidationArgs, report: ReportViolation) -> None:
    report_api_model(args.props, gke_api.to_api, gke_api.problems, "container.v1", report)


@POLICIES.resource("gke-api-unchecked", on=tokens.GKE_NODE_POOL)
def _validate_api_coverage(args: ResourceValidationArgs, report: ReportViolation) -> None:
    _, unmapped = gke_api.to_api(plain(args.props))
    if unmapped:
        report(f"inputs {', '.join(unmapped)} have no mapping to the GKE API here: the discovery-document check does not see them", None)
