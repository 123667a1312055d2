"""Where a fleet's GPU workloads land on the GPU pools it creates, judged before any resource exists
(the spec's door): the same scheduler simulation the plan's placement and the pack run, over node
shapes built from the spec. The pods select pools the stack creates, so every node they may land on
is known."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpufleet.catalog.catalog import Catalog
from gpufleet.k8s.args import GpuWorkloadArgs
from gpufleet.k8s.gpu_workload import workload_object
from gpufleet.platform.model import Violation
from gpufleet.simulate import k8s_scheduler, k8s_workloads
from gpufleet.simulate.k8s_shapes import NodeShape


def pending_workloads(
    shapes: Sequence[NodeShape], workloads: Sequence[tuple[int, GpuWorkloadArgs, dict[str, str], list[dict]]], cat: Catalog
) -> Iterator[Violation]:
    """`workloads`: (index in the stack's list, args, node selector, tolerations). A Violation for
    each workload whose pods stay Pending at the pools' minimum sizes grown to their maximum."""
    pods = []
    for i, wl, selector, tolerations in workloads:
        token, obj = workload_object(wl, selector, tolerations, cat)
        pods += [(i, wl, pod) for pod in k8s_workloads.object_pods(token, wl.name, obj)]
    placed = k8s_scheduler.simulate(shapes, [pod for _, _, pod in pods], cat)
    for (i, wl, pod), result in zip(pods, placed):
        if result.status == k8s_scheduler.PENDING:
            yield Violation(
                "k8s-pods-schedulable",
                ("workloads", i, "replicas"),
                wl.replicas,
                f"{pod.owner}: {result.pending} of {pod.replicas} Pending: {result.message} (fewer replicas, or a larger maximum pool size)",
            )
