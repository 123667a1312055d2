"""The GPU sharing component of ACK (ack-ai-installer: the sharing device plugin and cGPU), as a Helm
release. 004 names it and its minimum version; no public chart repository or addon name could be
confirmed (charts.md "6."), so the repository and version come from the stack, never from here."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.ack.args import SharingComponentArgs
from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog


class GpuSharing(pulumi.ComponentResource):
    def __init__(self, name: str, args: SharingComponentArgs, opts: pulumi.ResourceOptions | None = None, cat: Catalog | None = None):
        """`cat`: the catalog that names the chart (absent: the process's own)."""
        super().__init__("gpufleet:ack:GpuSharing", name, None, opts)
        chart = (cat or catalog.load()).facts.ack.sharing_chart
        self.release = k8s.helm.v3.Release(
            name,
            name=chart,
            chart=chart,
            version=args.version,
            repository_opts={"repo": args.repository},
            namespace=args.namespace,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"release": self.release.name})
