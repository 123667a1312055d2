"""ECS GPU rules: task definitions that request GPUs, the launch templates of GPU container
instances, and the Auto Scaling groups behind capacity providers.

Each rule reads resource types and inputs only (any Pulumi program's, not only gpufleet's) and
decides with the catalog predicates, the same functions the stack spec calls.
"""

from __future__ import annotations

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import UnknownInstanceType
from gpufleet.catalog.wording import counted
from gpufleet.policies.ecs_task import EcsTask, gpu_task, known_types
from gpufleet.policies.inputs import depended_on, get, items, text, truthy, user_data_text
from gpufleet.policies.registry import Policies
from gpufleet.rules import ecs_amis as ami_rules
from gpufleet.rules import ecs_gpu_sharing, managed_instances
from gpufleet.rules import gpus as gpu_rules

POLICIES = Policies(__name__)


@POLICIES.resource("ecs-gpus-fit-instance", subject=gpu_task, only=tokens.ECS_TASK_DEFINITION)
def _validate_gpus_fit(args: ResourceValidationArgs, report: ReportViolation, task: EcsTask) -> None:
    limit = (args.get_config() or {}).get("maxGpusPerTask")
    if limit is not None and task.gpus > limit:
        report(f"the task requests {task.gpus} GPUs; this pack allows at most {text(limit)} per task (maxGpusPerTask)", None)
    admitted = task.admitted_or_report(report)
    if admitted is None:
        return  # ecs-gpu-task-placement reports a task that pins no instance type
    reason = gpu_rules.gpus_fit_any(known_types(admitted, report, catalog.load()), task.gpus)
    if reason:
        per_container = ", ".join(f"{name}: {n}" for name, n in task.gpus_by_container.items() if n)
        report(f"the containers request {counted(task.gpus, 'GPU')} in all ({per_container}): {reason}", None)


@POLICIES.resource("ecs-gpu-task-placement", subject=gpu_task, only=tokens.ECS_TASK_DEFINITION)
def _validate_task_placement(args: ResourceValidationArgs, report: ReportViolation, task: EcsTask) -> None:
    if task.fargate:
        report("the task requests GPUs but is FARGATE-compatible: Fargate has no GPUs; use the EC2 launch type", None)
    cat = catalog.load()
    reason = ecs_gpu_sharing.compatibility_problem(task.compatibilities, task.gpu_requests, cat.ecs())
    if reason:
        report(reason, None)
    admitted = task.admitted_or_report(report)
    if admitted is None and managed_instances.MANAGED_INSTANCES in task.compatibilities:
        return  # the capacity provider's instance requirements choose the types (ecs-tasks-placeable)
    if admitted is None:
        report(
            f"the task requests GPUs ({', '.join(sorted({r.option for r in task.gpu_requests}))}) but no memberOf placement "
            "constraint pins a GPU instance type (attribute:ecs.instance-type == TYPE, in [...] or =~ FAMILY.*)",
            None,
        )
        return
    allowed = (args.get_config() or {}).get("allowedInstanceFamilies")
    whole = any(r.option == ecs_gpu_sharing.WHOLE for r in task.gpu_requests)
    for it in known_types(admitted, report, cat):
        # Fractions and shares have their own type rule (ecs-gpu-fractional); here, a GPU at all.
        reason = gpu_rules.gpu_capable(it) if whole else (None if it.gpu is not None or it.incomplete else f"{it.name} has no GPU")
        if reason:
            report(f"memberOf admits {it.name}: {reason}", None)
        if allowed and it.family not in allowed:
            report(f"memberOf admits {it.name}; allowed families are {', '.join(allowed)} (allowedInstanceFamilies)", None)


@POLICIES.resource("ecs-gpu-driver-capabilities", subject=gpu_task, only=tokens.ECS_TASK_DEFINITION)
def _validate_driver_capabilities(args: ResourceValidationArgs, report: ReportViolation, task: EcsTask) -> None:
    ecs_facts = catalog.load().ecs()
    asking = {r.index for r in task.gpu_requests}
    for i, container in enumerate(task.containers):
        if i not in asking:
            continue
        env = {e.get("name"): e.get("value") for e in container.get("environment") or [] if isinstance(e, dict)}
        value = env.get("NVIDIA_DRIVER_CAPABILITIES")
        name = container.get("name", "?")
        if value is None:
            report(
                f"container {name!r} requests GPUs but sets no NVIDIA_DRIVER_CAPABILITIES: ECS does not set it, "
                "and images not built on the NVIDIA CUDA images then see no driver libraries",
                None,
            )
            continue
        reason = gpu_rules.driver_capabilities(value, ecs_facts)
        if reason:
            report(f"container {name!r}: {reason}", None)


@POLICIES.resource("ecs-gpu-ami-supported", on=tokens.LAUNCH_TEMPLATE)
def _validate_ami_supported(args: ResourceValidationArgs, report: ReportViolation) -> None:
    props = args.props
    ami = catalog.ecs_amis().get(get(props, "imageId"))
    if ami is not None and ami.accelerator != "gpu":
        args.not_applicable("an ECS Neuron AMI (ecs-neuron-ami-supported judges it)")
        return
    joins_ecs = "ECS_CLUSTER" in user_data_text(get(props, "userData"))
    if ami is None and not joins_ecs:
        args.not_applicable("neither an ECS GPU AMI nor user data that joins an ECS cluster")
        return
    name = get(props, "instanceType")
    if not isinstance(name, str):
        return  # unknown during preview, or set by the group's overrides
    cat = catalog.load()
    try:
        it = cat.get(name)
    except UnknownInstanceType as err:
        report(str(err), None)  # the reason and the nearest real names, as the spec door says them
        return
    ecs_facts = cat.ecs()
    if ami is not None:
        reason = ami_rules.ecs_gpu_ami_support(it, ami.variant, ecs_facts, ami.image_version)
        if reason:
            report(f"{ami.ami_id} is the ECS GPU AMI {ami.variant} {ami.image_version}: {reason}", None)
        return
    if it.gpu is None:
        return  # a container instance without GPUs: nothing GPU-specific to judge
    reasons = [ami_rules.ecs_gpu_ami_support(it, v, ecs_facts) for v in ecs_facts.gpu_ami_variants]
    if all(reasons):
        report(f"{it.name} joins an ECS cluster but no ECS GPU AMI supports it: {reasons[0]}", None)


@POLICIES.stack("ecs-capacity-provider-managed")
def _validate_capacity_provider_managed(args: StackValidationArgs, report: ReportViolation) -> None:
    for cp in args.resources:
        if cp.resource_type != tokens.ECS_CAPACITY_PROVIDER:
            continue
        if get(cp.props, "autoScalingGroupProvider", "managedTerminationProtection") != "ENABLED":
            continue
        for group in depended_on(cp, tokens.ASG):
            if not truthy(get(group.props, "protectFromScaleIn")):
                report(
                    f"capacity provider {cp.name!r} has managed termination protection but its Auto Scaling group "
                    "does not protect instances from scale-in (protectFromScaleIn: true); ECS cannot keep tasks running",
                    group.urn,
                )
            keys = {get(tag, "key") for tag in items(get(group.props, "tags"))}
            if "AmazonECSManaged" not in keys:
                report(
                    f"the Auto Scaling group behind capacity provider {cp.name!r} lacks the AmazonECSManaged tag: ECS "
                    "adds it itself, so the next update of this program removes it again (permanent drift)",
                    group.urn,
                )
