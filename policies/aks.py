"""Azure AKS GPU node pool rules: the VM size's GPUs, MIG instance profiles of its GPU, exactly one
driver per node, the GPU taint AKS recommends, and the request the AKS API receives (the models of
azure-mgmt-containerservice). Each rule is an `aks_rules` or `aks_api` function, the ones the stack
spec calls."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, StackValidationArgs, StackValidationPolicy

from gpufleet.components.apis import aks as aks_api
from gpufleet.components.rules import aks as aks_rules
from gpufleet.components.catalog import catalog, charts, tokens
from gpufleet.components.catalog.facts import AksFacts
from gpufleet.policies.k8s import operator_installs_driver
from gpufleet.policies.inputs import get, items, plain


def _aks() -> AksFacts:
    return catalog.load().facts.aks


def _validate_vm_size(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != tokens.AKS_NODE_POOL:
        args.not_applicable("not an AKS node pool")
        return
    size, profile = get(args.props, "vmSize"), get(args.props, "gpuInstance")
    if not isinstance(size, str) or not (profile or get(args.props, "gpuDriver") or size.startswith(("Standard_NC", "Standard_ND"))):
        return  # not a GPU pool by any sign: a CPU pool is not this rule's business
    node = aks_rules.gpus(size, _aks())
    if isinstance(node, str):
        report(f"node pool {args.name!r} ({size}): {node}")


def _validate_mig(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != tokens.AKS_NODE_POOL:
        args.not_applicable("not an AKS node pool")
        return
    node = aks_rules.gpus(str(get(args.props, "vmSize")), _aks())
    profile = get(args.props, "gpuInstance")
    if isinstance(profile, str) and not isinstance(node, str):
        reason = aks_rules.mig_problem(node, profile, _aks())
        if reason:
            report(f"node pool {args.name!r}: {reason}")


def _gpu_pools(args: StackValidationArgs):
    return [r for r in args.resources if r.resource_type == tokens.AKS_NODE_POOL and get(r.props, "vmSize") in _aks().vm_sizes]


def _validate_driver(args: StackValidationArgs, report: ReportViolation) -> None:
    operator = operator_installs_driver(args)
    for r in _gpu_pools(args):
        driver = get(r.props, "gpuDriver")
        # Unset, AKS installs the driver (GPUDriver: "When it's not specified, default is Install").
        reason = aks_rules.driver_problem(driver if isinstance(driver, str) else "Install", operator, _aks())
        if reason:
            report(f"node pool {r.name!r}: {reason}", r.urn)


def _validate_taint(args: StackValidationArgs, report: ReportViolation) -> None:
    for r in _gpu_pools(args):
        taints = [t for t in (aks_rules.parse_taint(x) for x in items(get(r.props, "nodeTaints")) if isinstance(x, str)) if t]
        if not any(t["effect"] in ("NoSchedule", "NoExecute") for t in taints):
            taint = _aks().gpu_taint
            report(
                f"node pool {r.name!r} has GPUs and no NoSchedule taint: AKS does not taint GPU nodes (003), so any pod may take "
                f"them; add {taint.key}={taint.value}:{taint.effect} and tolerate it in the GPU workloads",
                r.urn,
            )


def _time_sliced(release) -> bool:
    """Does a device-plugin or GPU Operator release configure time-slicing?"""
    nvidia = catalog.load().facts.charts
    chart = get(release.props, "chart")
    if chart == nvidia.nvidia_device_plugin.chart:
        return "replicas" in charts.nvidia_sharing(plain(get(release.props, "values")), catalog.load().facts.eks.accelerator_resources.nvidia)
    if chart == nvidia.gpu_operator.chart:
        data = plain(get(release.props, "values", "devicePlugin", "config", "data")) or {}
        return any(isinstance(v, str) and "timeSlicing" in v for v in data.values())
    return False


def _validate_time_sharing(args: StackValidationArgs, report: ReportViolation) -> None:
    if not _gpu_pools(args):
        return
    reason = aks_rules.time_sharing_problem(_aks())
    for r in args.resources:
        if reason and r.resource_type == tokens.HELM_RELEASE and _time_sliced(r):
            report(f"release {r.name!r} time-slices the GPUs of the stack's AKS pools: {reason}", r.urn)


def _validate_api_model(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != tokens.AKS_NODE_POOL:
        args.not_applicable("not an AKS node pool")
        return
    body, unmapped = aks_api.to_api(plain(args.props))
    for problem in aks_api.problems(body):
        report(f"AgentPool {problem}")
    if unmapped:
        report(f"inputs {', '.join(unmapped)} have no mapping to the AKS API here: the model check does not see them")


POLICIES = [
    ResourceValidationPolicy(
        name="aks-vm-size",
        description="An AKS GPU node pool's VM size is one of the curated NC/ND sizes, whose GPUs are known.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_vm_size,
        remediation_steps="Use a listed GPU VM size (e.g. Standard_NC24ads_A100_v4, Standard_NC4as_T4_v3), or add the size to the curated facts with its source.",
    ),
    ResourceValidationPolicy(
        name="aks-mig-profile",
        description="An AKS node pool's gpuInstance (MIG1g..MIG7g) is set only on VM sizes whose GPU supports MIG (A100, H100).",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_mig,
        remediation_steps="Drop gpuInstance, or move the pool to an A100 or H100 VM size.",
    ),
    StackValidationPolicy(
        name="aks-gpu-driver",
        description="Each AKS GPU node gets exactly one driver: AKS's (Install, the default) or the GPU Operator's (None), never both and never none.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_driver,
        remediation_steps="Set gpuDriver None when the GPU Operator installs the driver; Install otherwise.",
    ),
    StackValidationPolicy(
        name="aks-gpu-pool-tainted",
        description="An AKS GPU node pool carries a NoSchedule taint (AKS's GPU page recommends sku=gpu:NoSchedule), so only GPU pods land there.",
        enforcement_level=EnforcementLevel.ADVISORY,
        validate=_validate_taint,
        remediation_steps="Add nodeTaints [sku=gpu:NoSchedule] and a matching toleration to the GPU workloads.",
    ),
    StackValidationPolicy(
        name="aks-time-sharing",
        description="No device plugin or GPU Operator release time-slices the GPUs of AKS pools: AKS supports MIG, not time-sharing (003).",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_time_sharing,
        remediation_steps="Drop the time-slicing config; share A100/H100 GPUs with MIG instance profiles instead.",
    ),
    ResourceValidationPolicy(
        name="aks-api-model",
        description="An AKS node pool's request has the shape of the AKS API's AgentPool (azure-mgmt-containerservice models): known fields, types and enum values; unmapped inputs are named.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_api_model,
        remediation_steps="Fix the field the message names (e.g. gpuInstance MIG1g..MIG7g, gpuDriver Install or None).",
    ),
]
