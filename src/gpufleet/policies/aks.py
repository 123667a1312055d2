"""Azure AKS GPU node pool rules: the VM size's GPUs, MIG instance profiles of its GPU, exactly one
driver per node, the GPU taint AKS recommends, and the request the AKS API receives (the models of
azure-mgmt-containerservice). Each rule is an `aks_rules` or `aks_api` function, the ones the stack
spec calls."""

from __future__ import annotations

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.apis import aks as aks_api
from gpufleet.catalog import catalog, charts, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import AksFacts
from gpufleet.policies.inputs import get, items, plain, report_api_model
from gpufleet.policies.k8s import operator_installs_driver
from gpufleet.policies.registry import Policies
from gpufleet.rules import aks as aks_rules

POLICIES = Policies(__name__)


@POLICIES.resource("aks-vm-size", on=tokens.AKS_NODE_POOL)
def _validate_vm_size(args: ResourceValidationArgs, report: ReportViolation) -> None:
    size, profile = get(args.props, "vmSize"), get(args.props, "gpuInstance")
    if not isinstance(size, str) or not (profile or get(args.props, "gpuDriver") or size.startswith(("Standard_NC", "Standard_ND"))):
        return  # not a GPU pool by any sign: a CPU pool is not this rule's business
    node = aks_rules.gpus(size, catalog.load().facts.aks)
    if isinstance(node, str):
        report(f"node pool {args.name!r} ({size}): {node}", None)


@POLICIES.resource("aks-mig-profile", on=tokens.AKS_NODE_POOL)
def _validate_mig(args: ResourceValidationArgs, report: ReportViolation) -> None:
    aks = catalog.load().facts.aks
    node = aks_rules.gpus(str(get(args.props, "vmSize")), aks)
    profile = get(args.props, "gpuInstance")
    if isinstance(profile, str) and not isinstance(node, str):
        reason = aks_rules.mig_problem(node, profile, aks)
        if reason:
            report(f"node pool {args.name!r}: {reason}", None)


def _gpu_pools(args: StackValidationArgs, aks: AksFacts):
    return [r for r in args.resources if r.resource_type == tokens.AKS_NODE_POOL and get(r.props, "vmSize") in aks.vm_sizes]


@POLICIES.stack("aks-gpu-driver")
def _validate_driver(args: StackValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    operator = operator_installs_driver(args, cat)
    for r in _gpu_pools(args, cat.facts.aks):
        driver = get(r.props, "gpuDriver")
        # Unset, AKS installs the driver (GPUDriver: "When it's not specified, default is Install").
        reason = aks_rules.driver_problem(driver if isinstance(driver, str) else "Install", operator, cat.facts.aks)
        if reason:
            report(f"node pool {r.name!r}: {reason}", r.urn)


@POLICIES.stack("aks-gpu-pool-tainted")
def _validate_taint(args: StackValidationArgs, report: ReportViolation) -> None:
    aks = catalog.load().facts.aks
    for r in _gpu_pools(args, aks):
        taints = [t for t in (aks_rules.parse_taint(x) for x in items(get(r.props, "nodeTaints")) if isinstance(x, str)) if t]
        if not any(t["effect"] in ("NoSchedule", "NoExecute") for t in taints):
            taint = aks.gpu_taint
            report(
                f"node pool {r.name!r} has GPUs and no NoSchedule taint: AKS does not taint GPU nodes (003), so any pod may take "
                f"them; add {taint.key}={taint.value}:{taint.effect} and tolerate it in the GPU workloads",
                r.urn,
            )


def _time_sliced(release, cat: Catalog) -> bool:
    """Does a device-plugin or GPU Operator release configure time-slicing?"""
    nvidia = cat.facts.charts
    chart = get(release.props, "chart")
    if chart == nvidia.nvidia_device_plugin.chart:
        return "replicas" in charts.nvidia_sharing(plain(get(release.props, "values")), cat.facts.eks.accelerator_resources.nvidia)
    if chart == nvidia.gpu_operator.chart:
        data = plain(get(release.props, "values", "devicePlugin", "config", "data")) or {}
        return any(isinstance(v, str) and "timeSlicing" in v for v in data.values())
    return False


@POLICIES.stack("aks-time-sharing")
def _validate_time_sharing(args: StackValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    if not _gpu_pools(args, cat.facts.aks):
        return
    reason = aks_rules.time_sharing_problem(cat.facts.aks)
    for r in args.resources:
        if reason and r.resource_type == tokens.HELM_RELEASE and _time_sliced(r, cat):
            report(f"release {r.name!r} time-slices the GPUs of the stack's AKS pools: {reason}", r.urn)


@POLICIES.resource("aks-api-model", on=tokens.AKS_NODE_POOL)
def _validate_api_model(args: ResourceValidationArgs, report: ReportViolation) -> None:
    unmapped = report_api_model(args.props, aks_api.to_api, aks_api.problems, "AgentPool", report)
    if unmapped:
        report(f"inputs {', '.join(unmapped)} have no mapping to the AKS API here: the model check does not see them", None)
