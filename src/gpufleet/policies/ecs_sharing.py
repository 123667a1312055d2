"""ECS GPU sharing rules: how a task definition's containers ask for GPUs (whole, a G6f fraction or an
NVIDIA MPS share), and the container instances MPS tasks need.

Each rule reads resource types and inputs only and decides with catalog/ecs_gpu_sharing.py, the
functions the stack spec calls on its rendered containers.
"""

from __future__ import annotations

from typing import cast

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.policies.ecs_task import EcsTask, gpu_task, known_types, read_task
from gpufleet.policies.inputs import get
from gpufleet.policies.registry import Policies
from gpufleet.rules import ecs_gpu_sharing
from gpufleet.simulate.ecs_placement import PlacementSyntaxError

POLICIES = Policies(__name__)


@POLICIES.resource("ecs-gpu-value-or-share", only=tokens.ECS_TASK_DEFINITION)
def _validate_value_or_share(args: ResourceValidationArgs, report: ReportViolation) -> None:
    task = gpu_task(args)
    ecs_facts = catalog.load().ecs()
    for r in task.gpu_requests if task else []:
        reason = ecs_gpu_sharing.value_or_share_problem(r) or ecs_gpu_sharing.value_problem(r, ecs_facts)
        if reason:
            report(reason, None)


@POLICIES.resource("ecs-gpu-one-option", only=tokens.ECS_TASK_DEFINITION)
def _validate_one_option(args: ResourceValidationArgs, report: ReportViolation) -> None:
    task = gpu_task(args)
    reason = ecs_gpu_sharing.one_option_problem(task.gpu_requests) if task else None
    if reason:
        report(reason, None)


@POLICIES.resource("ecs-mps-compute-percent", only=tokens.ECS_TASK_DEFINITION)
def _validate_compute_percent(args: ResourceValidationArgs, report: ReportViolation) -> None:
    task = gpu_task(args)
    for r in task.gpu_requests if task else []:
        reason = ecs_gpu_sharing.compute_percent_problem(r.max_compute_percent) if r.option == ecs_gpu_sharing.SHARE else None
        if reason:
            report(f"container {r.container!r}: {reason}", None)


def _admitted_types(task: EcsTask, report: ReportViolation, cat: Catalog) -> list:
    """The catalog records of the types the task's memberOf admits ([] when it pins none: the
    placement rule reports that)."""
    admitted = task.admitted_or_report(report)
    return known_types(admitted, report, cat) if admitted else []


@POLICIES.resource("ecs-mps-memory-fits", only=tokens.ECS_TASK_DEFINITION)
def _validate_memory_fits(args: ResourceValidationArgs, report: ReportViolation) -> None:
    task = gpu_task(args)
    if task is None or not any(r.option == ecs_gpu_sharing.SHARE for r in task.gpu_requests):
        return
    types = _admitted_types(task, report, catalog.load())
    reasons = [ecs_gpu_sharing.mps_memory_problem(it, task.gpu_requests) for it in types]
    # ECS places the task where it fits: one admitted type with a GPU large enough is enough.
    if types and all(reasons):
        report("; ".join(cast("list[str]", reasons)), None)  # all(reasons): none is None


@POLICIES.resource("ecs-gpu-fractional", subject=gpu_task, only=tokens.ECS_TASK_DEFINITION)
def _validate_fractional(args: ResourceValidationArgs, report: ReportViolation, task: EcsTask) -> None:
    cat = catalog.load()
    ecs_facts = cat.ecs()
    types = _admitted_types(task, report, cat)
    for r in task.gpu_requests:
        if r.option == ecs_gpu_sharing.WHOLE:
            continue
        if r.option == ecs_gpu_sharing.SHARE:
            reasons = [ecs_gpu_sharing.mps_type_problem(it) for it in types]
        else:
            reasons = [ecs_gpu_sharing.fraction_problem(it, r, ecs_facts) for it in types] or [
                ecs_gpu_sharing.fraction_value_problem(r, ecs_facts)
            ]
        if reasons and all(reasons):
            found = cast("list[str]", reasons)  # all(reasons): none is None
            report(f"container {r.container!r}: {'; '.join(dict.fromkeys(found))}", None)


@POLICIES.stack("ecs-mps-agent")
def _validate_agent(args: StackValidationArgs, report: ReportViolation) -> None:
    """Container instances that MPS tasks may land on run an agent that places MPS shares."""
    cat = catalog.load()
    ecs_facts = cat.ecs()
    admitted: set[str] | None = set()
    for resource in args.resources:
        if resource.resource_type != tokens.ECS_TASK_DEFINITION:
            continue
        task = read_task(resource.props, cat)
        if not any(r.option == ecs_gpu_sharing.SHARE for r in task.gpu_requests):
            continue
        try:
            types = task.admitted()
        except PlacementSyntaxError:
            types = None
        admitted = None if types is None or admitted is None else admitted | types
    if admitted is not None and not admitted:
        return  # no MPS task in the stack
    amis = catalog.ecs_amis()
    for template in args.resources:
        if template.resource_type != tokens.LAUNCH_TEMPLATE:
            continue
        ami = amis.get(get(template.props, "imageId"))
        name = get(template.props, "instanceType")
        if ami is None or ami.accelerator != "gpu" or (admitted is not None and name not in admitted):
            continue
        reason = ecs_gpu_sharing.agent_problem(ami.agent_version, ecs_facts)
        if reason:
            report(
                f"MPS tasks run on {name or 'its instances'}, but {reason} (ECS GPU AMI {ami.variant} {ami.image_version})", template.urn
            )
