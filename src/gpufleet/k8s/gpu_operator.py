"""The NVIDIA GPU Operator as a Helm release with the values that matter: the driver on or off (to
match the node image), the container toolkit, the device plugin's MIG strategy and time-slicing,
tolerations computed from the GPU pools' taints, and node feature discovery only on GPU pools."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.catalog import catalog, charts
from gpufleet.catalog.catalog import Catalog
from gpufleet.k8s.args import GpuOperatorArgs
from gpufleet.k8s.device_plugins import time_slicing_config
from gpufleet.rules import k8s as k8s_rules

# The config map entry the device plugin reads when time-slicing is on.
SLICING_CONFIG = "time-slicing"


def operator_values(args: GpuOperatorArgs, pool_taints: list[dict], gpu_node_labels: dict[str, str], cat: Catalog) -> dict:
    """`pool_taints`: the GPU pools' taints (Kubernetes spelling); `gpu_node_labels`: a label every
    GPU pool's nodes carry, which node feature discovery's workers select."""
    chart = cat.facts.charts.gpu_operator
    eks = cat.facts.eks
    defaults = charts.defaults(chart)
    operand_tolerations = list(charts.default_tolerations(chart))
    worker_tolerations = list(charts.at(defaults, ["node-feature-discovery", "worker", "tolerations"]) or [])
    for taint in pool_taints:
        for tolerations in (operand_tolerations, worker_tolerations):
            if k8s_rules.untolerated(tolerations, [taint], eks):
                tolerations.append(k8s_rules.toleration_for(taint, eks))
    values: dict = {
        "driver": {"enabled": args.driver},
        "toolkit": {"enabled": args.toolkit},
        "mig": {"strategy": args.mig_strategy},
        "daemonsets": {"tolerations": operand_tolerations},
        # Node feature discovery labels the nodes the operands run on: only the GPU pools' nodes.
        "node-feature-discovery": {"worker": {"tolerations": worker_tolerations, "nodeSelector": dict(gpu_node_labels)}},
    }
    if args.time_slicing_replicas is not None:
        values["devicePlugin"] = {
            "config": {
                "create": True,
                "name": "gpufleet-device-plugin",
                "default": SLICING_CONFIG,
                "data": {SLICING_CONFIG: time_slicing_config(args.time_slicing_replicas, cat)},
            }
        }
    return values


class GpuOperator(pulumi.ComponentResource):
    """One Helm release of the pinned gpu-operator chart. Give it the cluster's Kubernetes provider."""

    def __init__(
        self,
        name: str,
        args: GpuOperatorArgs,
        pool_taints: list[dict],
        gpu_node_labels: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
    ):
        """`cat`: the catalog whose pinned chart it installs (absent: the process's own)."""
        super().__init__("gpufleet:k8s:GpuOperator", name, None, opts)
        cat = cat or catalog.load()
        chart = cat.facts.charts.gpu_operator
        self.release = k8s.helm.v3.Release(
            name,
            chart=chart.chart,
            version=chart.version,
            repository_opts={"repo": chart.repository},
            namespace=chart.namespace,
            create_namespace=True,
            values=operator_values(args, pool_taints, gpu_node_labels, cat),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"release": self.release.name})
