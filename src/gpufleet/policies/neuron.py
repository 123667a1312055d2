"""ECS Neuron rules: task definitions that map Inferentia or Trainium chips as devices, and the
launch templates of Neuron container instances.

Each rule reads resource types and inputs only and decides with the catalog predicates, the same
functions the stack spec calls.
"""

from __future__ import annotations

from typing import cast

from pulumi_policy import ReportViolation, ResourceValidationArgs

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.policies.ecs_task import EcsTask, known_types, read_task
from gpufleet.policies.inputs import get, instance_type, provider_region, user_data_text
from gpufleet.policies.registry import Policies
from gpufleet.rules import ecs_amis as ami_rules
from gpufleet.rules import managed_instances
from gpufleet.rules import neuron as neuron_rules

POLICIES = Policies(__name__)


def _neuron_task(args: ResourceValidationArgs) -> EcsTask | None:
    if args.resource_type != tokens.ECS_TASK_DEFINITION:
        return None
    task = read_task(args.props, catalog.load())
    asks = any(
        isinstance(r, dict) and r.get("type") == "NeuronDevice" for c in task.containers for r in c.get("resourceRequirements") or []
    )
    if not task.maps_neuron and not asks:
        args.not_applicable("the task definition maps no Neuron device")
    return task


@POLICIES.resource("ecs-neuron-device-managed", only=tokens.ECS_TASK_DEFINITION)
def _validate_device_managed(args: ResourceValidationArgs, report: ReportViolation) -> None:
    task = _neuron_task(args)
    for reason in managed_instances.neuron_device_problems(task.containers, task.compatibilities) if task else []:
        report(reason, None)


@POLICIES.resource("ecs-neuron-devices-exist", subject=_neuron_task, only=tokens.ECS_TASK_DEFINITION)
def _validate_devices_exist(args: ResourceValidationArgs, report: ReportViolation, task: EcsTask) -> None:
    admitted = task.admitted_or_report(report)
    if not admitted or not task.maps_neuron:
        return  # ecs-neuron-task-pinned reports a task that pins no instance type
    mapped = [p for paths in task.neuron_paths.values() for p in paths]
    duplicates = sorted({p for p in mapped if mapped.count(p) > 1})
    if duplicates:
        report(f"{', '.join(duplicates)} mapped more than once in the task: one Neuron runtime owns a chip", None)
    cat = catalog.load()
    ecs_facts = cat.ecs()
    for it in known_types(admitted, report, cat):
        for name, paths in task.neuron_paths.items():
            for path in paths:
                reason = neuron_rules.neuron_device_exists(it, path, ecs_facts)
                if reason:
                    report(f"container {name!r} maps {reason}", None)


@POLICIES.resource("ecs-neuron-task-pinned", only=tokens.ECS_TASK_DEFINITION)
def _validate_task_pinned(args: ResourceValidationArgs, report: ReportViolation) -> None:
    task = _neuron_task(args)
    if task is None or not task.maps_neuron:
        return
    admitted = task.admitted_or_report(report)
    if admitted is None or len(admitted) != 1:
        count = "no instance types" if admitted is None else f"{len(admitted)} instance types ({', '.join(sorted(admitted)) or 'none'})"
        report(
            f"the task maps Neuron devices, so it must be specific to one instance type; its memberOf constraints "
            f"admit {count} (use attribute:ecs.instance-type == TYPE)",
            None,
        )
        return
    for it in known_types(admitted, report, catalog.load()):
        if it.neuron is None and not it.incomplete:
            report(f"the task maps Neuron devices but memberOf pins {it.name}, which has no Neuron chip", None)


@POLICIES.resource("ecs-neuron-ipc-lock", subject=_neuron_task, only=tokens.ECS_TASK_DEFINITION)
def _validate_ipc_lock(args: ResourceValidationArgs, report: ReportViolation, task: EcsTask) -> None:
    ecs_facts = catalog.load().ecs()
    for container in task.containers:
        name = container.get("name", "?")
        if not task.neuron_paths.get(name):
            continue
        capabilities = (container.get("linuxParameters") or {}).get("capabilities") or {}
        added = [c for c in capabilities.get("add") or [] if isinstance(c, str)]
        reason = neuron_rules.neuron_capabilities(added, ecs_facts)
        if reason:
            report(f"container {name!r} {reason}", None)


def _neuron_facts(resource, cat: Catalog):
    """(the ECS Neuron AMI or None, the Neuron instance type or None) of a launch template that starts
    ECS Neuron container instances; None for any other resource."""
    if resource.resource_type != tokens.LAUNCH_TEMPLATE:
        return None
    ami = catalog.ecs_amis().get(get(resource.props, "imageId"))
    it = instance_type(cat, get(resource.props, "instanceType"))
    joins_ecs = "ECS_CLUSTER" in user_data_text(get(resource.props, "userData"))
    neuron_ami = ami if ami is not None and ami.accelerator == "neuron" else None
    if neuron_ami is None and not (joins_ecs and it is not None and it.neuron is not None):
        return None
    return neuron_ami, it


def _neuron_launch_template(args: ResourceValidationArgs, cat: Catalog):
    """`_neuron_facts`, the policy not applicable where there are none."""
    if args.resource_type != tokens.LAUNCH_TEMPLATE:
        return None, None
    found = _neuron_facts(args, cat)
    if found is None:
        args.not_applicable("neither an ECS Neuron AMI nor a Neuron instance that joins an ECS cluster")
    return found


def _region(resource) -> str | None:
    return provider_region(resource, "aws", "AWS_REGION", "AWS_DEFAULT_REGION")


def _region_unknown(resource) -> str | None:
    """A Neuron launch template whose region is not known before apply."""
    if _neuron_facts(resource, catalog.load()) is None or _region(resource) is not None:
        return None
    return "no region known before apply (its provider's region, aws:region or AWS_REGION)"


@POLICIES.resource("ecs-neuron-region", unjudged=_region_unknown, only=tokens.LAUNCH_TEMPLATE)
def _validate_region(args: ResourceValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    ami, it = _neuron_launch_template(args, cat)
    if ami is None and it is None:
        return
    region = cast(str, _region(args))  # known: the unjudged guard (_region_unknown) passed
    reason = ami_rules.neuron_ami_region(region, cat.ecs())
    if reason:
        what = f"{ami.ami_id} is the ECS Neuron AMI {ami.variant}" if ami else f"{it.name} runs ECS on the Neuron AMI"
        report(f"{what}: {reason}", None)


@POLICIES.resource("ecs-neuron-ami-supported", only=tokens.LAUNCH_TEMPLATE)
def _validate_ami_supported(args: ResourceValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    ami, it = _neuron_launch_template(args, cat)
    if ami is None or it is None:
        return  # a custom AMI, or the type is unknown or set by the group's overrides
    reason = ami_rules.ecs_neuron_ami_support(it, ami.variant, cat.ecs())
    if reason:
        report(f"{ami.ami_id} is the ECS Neuron AMI {ami.variant} {ami.image_version}: {reason}", None)
