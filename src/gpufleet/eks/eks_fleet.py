"""An EKS fleet: network, cluster (new or existing), node role, accelerated node groups."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.eks import resolved
from gpufleet.eks.args import EksFleetArgs
from gpufleet.eks.iam import cluster_role, node_role
from gpufleet.eks.node_group import AcceleratedNodeGroup, EksClusterRef
from gpufleet.eks.resolved import resolve, served_groups
from gpufleet.eks.system_node_group import SystemNodeGroup
from gpufleet.k8s import releases
from gpufleet.k8s.args import KubernetesArgs
from gpufleet.k8s.device_plugins import DevicePlugins
from gpufleet.k8s.dra_driver import DraDriver
from gpufleet.k8s.gpu_operator import GpuOperator
from gpufleet.k8s.gpu_workload import GpuWorkload
from gpufleet.k8s.kubeconfig import kubeconfig
from gpufleet.k8s.nccl_test import NcclTest
from gpufleet.karpenter import manifests
from gpufleet.karpenter.controller import Karpenter
from gpufleet.karpenter.node_pool import KarpenterNodePool
from gpufleet.network.vpc import Vpc


class EksFleet(pulumi.ComponentResource):
    """The cluster (created, or an existing one joined by name), the nodes' role, one accelerated
    node group per spec entry, and, when asked, the in-cluster pieces through the cluster's provider."""

    def __init__(self, name: str, args: EksFleetArgs, region: str, opts: pulumi.ResourceOptions | None = None, cat: Catalog | None = None):
        """`cat`: the catalog the fleet resolves against (absent: the process's own)."""
        super().__init__("gpufleet:eks:EksFleet", name, None, opts)
        self._name, self._args, self._region = name, args, region
        self._cat = cat = cat or catalog.load()
        self._auto = resolved.auto_mode(args)
        self._vpc_id, self._subnet_ids, self._zone_subnets = self._network()
        # Before the cluster: an Auto Mode cluster names the nodes' role in its compute config.
        self.node_role = node_role(name, self._child(), cat, self._auto)
        self.cluster_name, self.cluster_security_group_id = self._cluster()
        self.node_pools: dict[str, KarpenterNodePool] = {}
        self.node_groups = {
            ng.name: AcceleratedNodeGroup(
                f"{name}-{ng.name}",
                resolve(ng, cat),
                EksClusterRef(
                    self.cluster_name,
                    self.cluster_security_group_id,
                    self.node_role.role.arn,
                    self._vpc_id,
                    None if ng.subnet_ids else self._node_subnets(ng),
                ),
                # Nodes register with the cluster under the role's policies: attach them first.
                opts=self._child(*self.node_role.attachments),
                cat=cat,
            )
            for ng in args.node_groups
        }
        self.system_node_group = (
            SystemNodeGroup(
                f"{name}-system",
                args.system_node_group,
                cluster_name=self.cluster_name,
                node_role_arn=self.node_role.role.arn,
                subnet_ids=self._system_subnets(),
                opts=self._child(*self.node_role.attachments),
                cat=cat,
            )
            if resolved.system_group_created(args)
            else None
        )
        if resolved.monitoring_addon(args):
            # GPU XID, DCGM and Neuron faults become node conditions that the groups' repair acts on.
            values = resolved.monitoring_values(args, cat)
            self.node_monitoring = aws.eks.Addon(
                f"{name}-node-monitoring-agent",
                cluster_name=self.cluster_name,
                addon_name=cat.facts.eks.node_health.monitoring_addon,
                configuration_values=json.dumps(values, sort_keys=True) if values else None,
                opts=self._child(),
            )
        if args.kubernetes is not None:
            self._kubernetes()
        self.register_outputs({"clusterName": self.cluster_name, "nodeGroups": [g.node_group.arn for g in self.node_groups.values()]})

    def _kubernetes(self) -> None:
        """Device plugins for the groups' accelerators, and the NCCL test, through the cluster's provider."""
        k8s_args = cast(KubernetesArgs, self._args.kubernetes)  # given: __init__ calls this only then
        if self._args.cluster.create is not None:
            endpoint, ca = self.cluster.endpoint, self.cluster.certificate_authority.data
        else:
            # An existing cluster's endpoint and CA from the EKS API (offline, an explicit unanswered call).
            found = aws.eks.get_cluster_output(name=self._args.cluster.name, opts=pulumi.InvokeOptions(parent=self))
            endpoint, ca = found.endpoint, found.certificate_authorities[0].data
        self.k8s_provider = k8s.Provider(
            f"{self._name}-k8s",
            kubeconfig=kubeconfig(self.cluster_name, endpoint, ca, self._region),
            opts=pulumi.ResourceOptions(parent=self),
        )
        groups, cat = self._args.node_groups, self._cat
        served = resolved.served_pools(
            served_groups((g.resolved for g in self.node_groups.values()), cat), resolved.plugin_pools(self._args), cat
        )
        # Plugins schedule onto nodes: create them after the node groups exist.
        groups_created = [g.node_group for g in self.node_groups.values()]
        if self.system_node_group is not None:
            groups_created.append(self.system_node_group.node_group)
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=groups_created)
        if self._args.node_pools:
            self._node_pools(groups_created)
        if k8s_args.gpu_operator is not None:
            # The operator's device plugin serves the NVIDIA groups; the EFA and Neuron plugins stay.
            self.gpu_operator = GpuOperator(
                releases.component_name(self._name, releases.GPU_OPERATOR),
                k8s_args.gpu_operator,
                # Its other operands (the MIG manager among them) run on the DRA groups too.
                [*served.nvidia, *served.dra],
                cat.facts.eks.accelerator_labels.nvidia,
                opts=k8s_opts,
                cat=cat,
            )
            served = served.without("nvidia")
        self.device_plugins = DevicePlugins(
            releases.component_name(self._name, releases.DEVICE_PLUGINS), served, k8s_args.nvidia_device_plugin, opts=k8s_opts, cat=cat
        )
        drivers = []
        if served.needs("dra"):
            self.dra_driver = DraDriver(releases.component_name(self._name, releases.DRA_DRIVER), served.dra, opts=k8s_opts, cat=cat)
            drivers.append(self.dra_driver)
        # The pods need the groups' nodes (or the pools that launch them) and the plugins that advertise their GPUs.
        plugins = [
            self.device_plugins,
            *drivers,
            *([self.gpu_operator] if k8s_args.gpu_operator is not None else []),
            *self.node_pools.values(),
        ]
        self.workloads = [
            GpuWorkload(
                f"{self._name}-{wl.name}",
                wl,
                *resolved.workload_scheduling(wl, self._args, cat),
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=plugins),
                cat=cat,
                claim=resolved.workload_claim(wl, self._args, cat),
            )
            for wl in self._args.workloads
        ]
        if k8s_args.nccl_test is not None:
            ng = next(ng for ng in groups if ng.name == k8s_args.nccl_test.node_group)
            self.nccl_test = NcclTest(
                f"{self._name}-{ng.name}",
                self.node_groups[ng.name].nccl_target,
                k8s_args.nccl_test.image,
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=[self.device_plugins]),
                cat=cat,
            )

    def _node_pools(self, groups_created: list[pulumi.Resource]) -> None:
        """Karpenter on the system group (its chart brings the CRDs), or Auto Mode's own; then each
        pool's NodePool and node class: subnets by the tag the created VPC puts on its private
        subnets (or the given ids), the cluster's security group by id."""
        if self._auto:
            role, after = self.node_role.role.name, [self.cluster]
        else:
            self.karpenter = Karpenter(
                releases.component_name(self._name, releases.KARPENTER),
                self.cluster_name,
                self._region,
                self.k8s_provider,
                self._args.karpenter.node_overlays,
                depends_on=groups_created,
                opts=pulumi.ResourceOptions(parent=self),
                cat=self._cat,
            )
            role, after = self.karpenter.node_role_name, [self.karpenter]
        subnets: list[Mapping[str, Any]]
        if self._args.network.create is not None:
            subnets = [{"tags": resolved.discovery_tag(self._args, self._cat)}]
        else:
            subnets = [{"id": s} for s in self._args.network.subnet_ids]
        k8s_args = cast(KubernetesArgs, self._args.kubernetes)  # given: called from _kubernetes
        replicas = k8s_args.nvidia_device_plugin.time_slicing_replicas if self._args.karpenter.node_overlays else None
        for overlay, spec in manifests.time_slicing_overlays(self._args.node_pools, replicas, self._cat).items():
            k8s.apiextensions.CustomResource(
                f"{self._name}-{overlay}",
                api_version=manifests.OVERLAY_API,
                kind="NodeOverlay",
                metadata={"name": overlay},
                spec=spec,
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=after),
            )
        self.node_pools = {
            pool.name: KarpenterNodePool(
                f"{self._name}-{pool.name}",
                pool,
                role,
                subnets,
                [{"id": self.cluster_security_group_id}],
                auto_mode=self._auto,
                shared_gpus=replicas or 1,
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=after),
                cat=self._cat,
            )
            for pool in self._args.node_pools
        }

    def _child(self, *depends_on: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, depends_on=list(depends_on))

    def _network(self):
        net = self._args.network
        if net.create is None:
            return net.vpc_id, list(net.subnet_ids), {}
        named = resolved.vpc_zones(self._args)
        # Karpenter finds the nodes' subnets by a tag (its getting-started guide's karpenter.sh/discovery).
        tags = resolved.discovery_tag(self._args, self._cat) if self._args.node_pools else {}
        vpc = Vpc(self._name, net.create.cidr, named, private_tags=tags, opts=self._child())
        # The control plane's network interfaces go in the first two named zones only: EKS needs two
        # zones and accepts later subnets only in the zones the cluster was created with (EKS user
        # guide, VPC and subnet requirements), so a zone appended to the list must not reach it.
        # Nodes may use any subnet of the VPC.
        return vpc.vpc_id, [vpc.private_subnet_by_zone[z].id for z in named[:2]], vpc.private_subnet_by_zone

    def _cluster(self) -> tuple[pulumi.Input[str], pulumi.Input[str]]:
        c = self._args.cluster
        if c.create is None:
            return c.name, cast(str, c.security_group_id)  # an existing cluster's is given (eks-cluster-security-group)
        role = cluster_role(self._name, self._child(), self._cat, self._auto)
        auto: dict = {}
        if c.create.auto_mode is not None:
            # Compute, block storage and load balancing on together, the self-managed add-ons off
            # (curated eks.autoMode): EKS runs CoreDNS, the CNI and the device plugins itself.
            auto = {
                "compute_config": {
                    "enabled": True,
                    "node_pools": list(c.create.auto_mode.built_in_node_pools),
                    "node_role_arn": self.node_role.role.arn,
                },
                "kubernetes_network_config": {"elastic_load_balancing": {"enabled": True}},
                "storage_config": {"block_storage": {"enabled": True}},
                "bootstrap_self_managed_addons": False,
            }
        cluster = aws.eks.Cluster(
            self._name,
            name=c.name,
            version=c.create.version,
            role_arn=role.role.arn,
            vpc_config={
                "subnet_ids": self._subnet_ids,
                "endpoint_private_access": True,
                "endpoint_public_access": c.create.endpoint_public_access,
            },
            access_config={"authentication_mode": c.create.authentication_mode, "bootstrap_cluster_creator_admin_permissions": True},
            **auto,
            opts=self._child(*role.attachments, *(self.node_role.attachments if auto else [])),
        )
        self.cluster = cluster
        return cluster.name, cluster.vpc_config.cluster_security_group_id

    def _system_subnets(self) -> pulumi.Input[list[str]]:
        if not self._zone_subnets:
            return self._subnet_ids
        return [self._zone_subnets[z].id for z in resolved.system_zones(self._args, self._cat, self._region)]

    def _node_subnets(self, ng) -> pulumi.Input[list[str]]:
        """In a created VPC, the private subnets of the group's zones (its EFA zone, else the zones
        that offer its type); else the network's (a group's own subnetIds are its args')."""
        if not self._zone_subnets:
            return self._subnet_ids
        return [self._zone_subnets[z].id for z in resolved.group_zones(ng, self._args, self._cat, self._region)]
