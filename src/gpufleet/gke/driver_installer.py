"""GKE's NVIDIA driver installer for COS nodes, as GKE's DRA guide has it applied to pools that take
no driver from GKE (`allocation: dra`): one DaemonSet, made from the manifest kept unchanged in the
catalog (catalog/data/gke_driver_installer/SOURCE.md), never retyped."""

from __future__ import annotations

import functools

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog


@functools.cache
def installer_manifest(path: str) -> dict:
    """The DaemonSet as the upstream file declares it (`path`: under the catalog's data)."""
    return catalog.shipped_yaml(path)


class GkeDriverInstaller(pulumi.ComponentResource):
    """The installer DaemonSet, in kube-system as upstream names it. Give it the cluster's Kubernetes provider."""

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None, cat: Catalog | None = None):
        """`cat`: the catalog that names the manifest (absent: the process's own)."""
        super().__init__("gpufleet:gke:DriverInstaller", name, None, opts)
        manifest = installer_manifest((cat or catalog.load()).facts.gke.dra.driver_installer.value)
        self.daemon_set = k8s.apps.v1.DaemonSet(
            name, metadata=manifest["metadata"], spec=manifest["spec"], opts=pulumi.ResourceOptions(parent=self)
        )
        self.register_outputs({})
