"""An ECS task definition as the ECS rules read it from its inputs: containers, the GPUs and Neuron
devices they ask for, and the instance types its memberOf constraints admit."""

from __future__ import annotations

from typing import Any

from pulumi_policy import ReportViolation, ResourceValidationArgs

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import Catalog, UnknownInstanceType
from gpufleet.catalog.facts import EcsFacts
from gpufleet.policies.inputs import get, items, json_document, read_once
from gpufleet.rules import ecs_gpu_sharing
from gpufleet.rules import neuron as neuron_rules
from gpufleet.simulate.ecs_placement import PlacementSyntaxError, admitted_instance_types


def neuron_paths(container: dict, ecs_facts: EcsFacts) -> list[str]:
    """The `/dev/neuronK` host paths a container maps (linuxParameters.devices)."""
    devices = (container.get("linuxParameters") or {}).get("devices") or []
    paths = [d.get("hostPath") for d in devices if isinstance(d, dict)]
    # neuron_device_index() is None for a path that is not a str: the isinstance says so to the type checker.
    return [p for p in paths if isinstance(p, str) and neuron_rules.neuron_device_index(p, ecs_facts) is not None]


class EcsTask:
    """What the ECS rules need of a task definition's inputs."""

    def __init__(self, props, cat: Catalog):
        self._cat = cat
        # Plain JSON objects, which the rules read both as dicts and as Mappings.
        self.containers: list[Any] = [c for c in items(json_document(get(props, "containerDefinitions"))) if isinstance(c, dict)]
        self.gpu_requests = ecs_gpu_sharing.gpu_requests(self.containers)
        # Whole GPUs per container, as ECS pins them (ALL, fractions and shares pin none here).
        self.gpus_by_container: dict[str, int] = {}
        for r in self.gpu_requests:
            self.gpus_by_container[r.container] = self.gpus_by_container.get(r.container, 0) + r.whole
        self.gpus = sum(self.gpus_by_container.values())
        self.neuron_paths = {c.get("name", f"#{i}"): neuron_paths(c, cat.ecs()) for i, c in enumerate(self.containers)}
        self.expressions = [
            get(pc, "expression")
            for pc in items(get(props, "placementConstraints"))
            if get(pc, "type") == "memberOf" and isinstance(get(pc, "expression"), str)
        ]
        compatibilities = [c for c in items(get(props, "requiresCompatibilities")) if isinstance(c, str)]
        self.compatibilities = compatibilities
        self.fargate = "FARGATE" in compatibilities

    @property
    def maps_neuron(self) -> bool:
        return any(self.neuron_paths.values())

    def admitted(self) -> frozenset[str] | None:
        """Instance types all `memberOf` constraints admit (None: the type is left open)."""
        names = self._cat.types
        admitted = None
        for expression in self.expressions:
            types = admitted_instance_types(expression, names)
            if types is not None:
                admitted = types if admitted is None else admitted & types
        return admitted

    def admitted_or_report(self, report: ReportViolation) -> frozenset[str] | None:
        try:
            return self.admitted()
        except PlacementSyntaxError as err:
            report(f"the memberOf expression cannot be read: {err}", None)
            return None


@read_once
def read_task(props, cat: Catalog) -> EcsTask:
    """The task definition of these inputs, read once per inputs object: the rules that read a task
    share one reading (the 200-service bench read each task 17 times, once per rule)."""
    return EcsTask(props, cat)


def known_types(names: frozenset[str], report: ReportViolation, cat: Catalog) -> list:
    """The catalog's records of the admitted names; an unknown name is reported with its reason."""
    known = []
    for name in sorted(names):
        try:
            known.append(cat.get(name))
        except UnknownInstanceType as err:
            report(f"memberOf pins {err}", None)
    return known


def gpu_task(args: ResourceValidationArgs) -> EcsTask | None:
    """The task definition the ECS GPU rules judge; not applicable when it asks for no GPU (the
    engine's not_applicable raises, ending the rule)."""
    if args.resource_type != tokens.ECS_TASK_DEFINITION:
        return None
    task = read_task(args.props, catalog.load())
    if not task.gpu_requests:
        args.not_applicable("the task definition requests no GPUs")
    return task
