"""The spec door of the placement rules for EKS: the node groups and pods the fleet would create,
built by the same functions the components call, simulated with the same scheduler the policy pack
runs over the plan (src/gpufleet/simulate/k8s_scheduler.py). A pod left Pending is a spec error
naming the field to change."""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from gpufleet.catalog import charts, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.eks import resolved
from gpufleet.eks.args import EksFleetArgs
from gpufleet.eks.resolved import resolve, served_groups
from gpufleet.eks.system_node_group import SYSTEM_NAME_PREFIX, system_labels
from gpufleet.k8s.args import KubernetesArgs, NcclTestArgs
from gpufleet.k8s.device_plugins import release_values
from gpufleet.k8s.gpu_operator import operator_values
from gpufleet.k8s.gpu_workload import workload_object
from gpufleet.k8s.nccl_test import nccl_job, nccl_job_name
from gpufleet.karpenter import manifests
from gpufleet.platform.model import Violation
from gpufleet.rules import eks as eks_rules
from gpufleet.rules import k8s as k8s_rules
from gpufleet.simulate import k8s_scheduler, k8s_workloads, karpenter, node_capacity

# The GPU Operator's values among the device plugins' (not a device-plugin chart key).
OPERATOR = "gpuOperator"

# Where a Pending pod of each kind is fixed in the stack file.
_SYSTEM = ("systemNodeGroup",)


def node_shapes(fleet: EksFleetArgs, region: str, cat: Catalog, plugin_values: dict[str, dict]) -> list[k8s_scheduler.NodeShape]:
    eks = cat.facts.eks
    nvidia = plugin_values.get("nvidiaDevicePlugin") or charts.operator_plugin_values(plugin_values.get(OPERATOR))
    sharing = charts.nvidia_sharing(nvidia, eks.accelerator_resources.nvidia)
    version = fleet.cluster.create.version if fleet.cluster.create is not None else None
    shapes = []
    for ng in fleet.node_groups:
        group = resolve(ng, cat)
        shapes.append(
            node_capacity.eks_node_shape(
                group.instance,
                group=ng.name,
                ami_type=cast(str, group.ami_type),  # placement runs on a spec whose other rules hold (eks-ami-type-supported)
                labels=group.labels,
                taints=[k8s_rules.taint(t, eks) for t in group.taints],
                sizes=(ng.min_size, ng.desired_size, ng.max_size),
                capacity_type=ng.capacity_type,
                zones=resolved.group_zones(ng, fleet, cat, region) if fleet.network.create else [],
                efa_interfaces=group.efa_count,
                gpu_sharing=sharing,
                facts=cat.facts,
                kubernetes_version=version,
            )
        )
    if resolved.system_group_created(fleet):
        sys = fleet.system_node_group
        it = cat.get(sys.instance_type)
        shapes.append(
            node_capacity.eks_node_shape(
                it,
                group=eks_rules.node_group_name({"nodeGroupNamePrefix": SYSTEM_NAME_PREFIX}, ""),
                ami_type=cast(str, resolved.system_ami_type(it, eks)),  # known: eks-system-node-group holds
                labels=system_labels(),
                taints=[],
                sizes=(sys.min_size, sys.desired_size, sys.max_size),
                capacity_type="ON_DEMAND",
                zones=resolved.system_zones(fleet, cat, region),
                efa_interfaces=0,
                gpu_sharing=None,
                facts=cat.facts,
                kubernetes_version=version,
            )
        )
    return shapes


def pods(fleet: EksFleetArgs, cat: Catalog, plugin_values: dict[str, dict]) -> list[tuple[tuple, k8s_scheduler.PodTemplate]]:
    """(field to fix, pod) of every pod template the fleet creates, in the order the plan reads them."""
    eks, charts_facts = cat.facts.eks, cat.facts.charts
    found: list[tuple[tuple, k8s_scheduler.PodTemplate]] = []
    for key, values in plugin_values.items():
        if key == OPERATOR:
            release = f"{fleet.cluster.name}-gpu-operator"  # EksFleet's name for the release
            found += [
                (("kubernetes", "gpuOperator"), pod)
                for pod in k8s_workloads.gpu_operator_pods(
                    charts_facts.gpu_operator,
                    values,
                    release,
                    None,
                    eks.accelerator_resources.nvidia,
                    cat.facts.dra.device_plugin_off,
                    charts_facts.gpu_operator.version,
                )
            ]
            continue
        chart = charts_facts.plugins()[key]
        # gpufleet's components pin each chart at the version whose values it holds.
        advertised = k8s_workloads.advertised(chart, values, eks)
        for pod in k8s_workloads.device_plugin_pods(key, chart, values, key, None, advertised, version=chart.version):
            found.append((("kubernetes",), pod))
    if fleet.cluster.create is not None and not resolved.auto_mode(fleet):  # Auto Mode runs them off the pods' nodes
        found += [(_SYSTEM, pod) for pod in k8s_workloads.addon_pods(eks.default_addons)]
    if resolved.monitoring_addon(fleet):
        found += [(_SYSTEM, pod) for pod in k8s_workloads.monitoring_pods(eks.node_health, resolved.monitoring_values(fleet, cat))]
    if fleet.node_pools and not resolved.auto_mode(fleet):
        karpenter_facts = cat.facts.karpenter
        values = manifests.chart_values(fleet.cluster.name, fleet.cluster.name, fleet.karpenter.node_overlays, cat)
        found += [
            (_SYSTEM, pod) for pod in k8s_workloads.karpenter_pods(karpenter_facts, values, None, None, karpenter_facts.chart.version)
        ]
    nccl = fleet.kubernetes.nccl_test if fleet.kubernetes is not None else None
    if nccl is not None:
        ng = next(ng for ng in fleet.node_groups if ng.name == nccl.node_group)
        found += [(_SYSTEM, pod) for pod in k8s_workloads.manifest_pods(charts_facts.mpi_operator.operator, None)]
        target = resolve(ng, cat).nccl_target
        job = {"metadata": {"name": nccl_job_name(target), "namespace": "default"}, "spec": nccl_job(target, nccl.image, cat)}
        for pod in k8s_workloads.object_pods(tokens.MPIJOB, nccl_job_name(target), job):
            where = _SYSTEM if pod.owner.endswith("(Launcher)") else ("kubernetes", "ncclTest", "nodeGroup")
            found.append((where, pod))
    for i, wl in enumerate(fleet.workloads):
        selector, tolerations, annotations = resolved.workload_scheduling(wl, fleet, cat)
        token, obj = workload_object(wl, selector, tolerations, cat, annotations)
        found += [(("workloads", i, "replicas"), pod) for pod in k8s_workloads.object_pods(token, wl.name, obj)]
    return found


def plugin_values(fleet: EksFleetArgs, cat: Catalog) -> dict[str, dict]:
    """The device-plugin releases' values, by chart key; with the GPU Operator, its values under
    `gpuOperator` instead of the NVIDIA plugin's."""
    if fleet.kubernetes is None:
        return {}
    served = resolved.served_pools(served_groups(fleet.node_groups, cat), resolved.plugin_pools(fleet), cat)
    operator = fleet.kubernetes.gpu_operator
    if operator is None:
        return release_values(served, fleet.kubernetes.nvidia_device_plugin, cat)
    values = release_values(served.without("nvidia"), fleet.kubernetes.nvidia_device_plugin, cat)
    if served.needs("nvidia"):
        values[OPERATOR] = operator_values(operator, served.nvidia, cat.facts.eks.accelerator_labels.nvidia, cat)
    return values


def check_placement(fleet: EksFleetArgs, region: str, cat: Catalog) -> Iterator[Violation]:
    """Every pod the fleet creates has a node. An existing cluster's other node groups are not in the
    stack, so there a Pending pod is not certain: the preview's placement and the pack's advisory
    policy report it, the spec does not refuse it (as the pack does not)."""
    if fleet.cluster.create is None:
        return
    values = plugin_values(fleet, cat)
    shapes = node_shapes(fleet, region, cat, values)
    found = pods(fleet, cat, values)
    placed = k8s_scheduler.simulate(shapes, [pod for _, pod in found], cat)
    if fleet.node_pools:
        auto = resolved.auto_mode(fleet)
        replicas = (
            fleet.kubernetes.nvidia_device_plugin.time_slicing_replicas if fleet.karpenter.node_overlays and fleet.kubernetes else None
        )
        overlays = manifests.overlays_read(manifests.time_slicing_overlays(fleet.node_pools, replicas, cat), cat)
        cat_pools = [
            manifests.read(p, cat, manifests.limits(p, cat, auto, replicas or 1), auto=auto, overlays=overlays) for p in fleet.node_pools
        ]
        nvidia = values.get("nvidiaDevicePlugin") or charts.operator_plugin_values(values.get(OPERATOR))
        sharing = charts.nvidia_sharing(nvidia, cat.facts.eks.accelerator_resources.nvidia)
        karpenter.provision(placed, cat_pools, [pod for _, pod in found if pod.replicas is None], sharing, cat, shapes)
    for (where, pod), result in zip(found, placed):
        if result.status != k8s_scheduler.PENDING:
            continue
        where, value, hint = _fix(fleet, where)
        yield Violation(
            "k8s-pods-schedulable", where, value, f"{pod.owner}: {result.pending} of {pod.replicas} Pending: {result.message}{hint}"
        )
    yield from _plugins_run(fleet, shapes, found, placed)


def _fix(fleet: EksFleetArgs, where: tuple) -> tuple[tuple, object, str]:
    """The field a reader changes for a Pending pod, its value, and a hint."""
    if where[-1] == "nodeGroup":
        # Only the NCCL test's pods are placed by a nodeGroup field: kubernetes.ncclTest is given.
        nccl_test = cast(NcclTestArgs, cast(KubernetesArgs, fleet.kubernetes).nccl_test)
        return where, nccl_test.node_group, ""
    if where[0] == "workloads":
        return where, fleet.workloads[where[1]].replicas, " (fewer replicas, or a larger maxSize or maxNodes)"
    if where == _SYSTEM and not resolved.system_group_created(fleet):
        return (*_SYSTEM, "enabled"), False, " (keep the system node group, or give one node group taints: [])"
    if where == _SYSTEM:
        return (*_SYSTEM, "instanceType"), fleet.system_node_group.instance_type, " (a larger type or more nodes)"
    return where, None, ""


def _plugins_run(fleet: EksFleetArgs, shapes, found, placed) -> Iterator[Violation]:
    """A device plugin that runs on no node of a group it serves: the group's accelerators or EFA
    interfaces are never advertised (the EFA chart's instance list lacks the type, say)."""
    names = [ng.name for ng in fleet.node_groups]
    for result in placed:
        for shape, wanted in k8s_scheduler.unserved(result, shapes):
            i = names.index(shape.group)
            message = k8s_scheduler.unserved_message(result, shape, wanted)
            yield Violation("k8s-pods-schedulable", ("nodeGroups", i, "instanceType"), shape.instance_type, message)
