"""An ECS cluster of GPU or Neuron instances: network, cluster, capacity providers, task definitions,
services."""

from __future__ import annotations

import json
from typing import cast

import pulumi
import pulumi_aws as aws

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.ecs.args import EcsFleetArgs, WorkloadArgs
from gpufleet.ecs.capacity_provider import GpuCapacityProvider
from gpufleet.ecs.cluster_ref import EcsClusterRef
from gpufleet.ecs.container_definitions import container_definitions
from gpufleet.ecs.instance_role import InstanceRole
from gpufleet.ecs.managed_instances import ManagedInstancesCapacityProvider
from gpufleet.ecs.neuron import device_counts, per_chip_families
from gpufleet.ecs.resolved import capacity_provider_name, managed_candidates, resolve, workload_type
from gpufleet.network import zones
from gpufleet.network.vpc import Vpc
from gpufleet.rules.managed_instances import MANAGED_INSTANCES
from gpufleet.simulate.ecs_placement import member_of


class GpuCluster(pulumi.ComponentResource):
    """Everything one ECS GPU fleet needs, built in preview order by the builders below."""

    def __init__(self, name: str, args: EcsFleetArgs, region: str, opts: pulumi.ResourceOptions | None = None, cat: Catalog | None = None):
        """`cat`: the catalog the providers resolve against (absent: the process's own)."""
        super().__init__("gpufleet:ecs:GpuCluster", name, None, opts)
        self._cat = cat = cat or catalog.load()
        self._name = name
        self._args = args
        self._region = region
        self._vpc_id, self._subnet_ids = self._network()
        self.security_group = self._security_group()
        self.cluster = self._cluster()
        # Auto Scaling capacity runs with this role; Managed Instances bring their own.
        self.instance_role = InstanceRole(f"{name}-instance", args.session_manager, opts=self._child()) if args.capacity_providers else None
        amis = self._ami_ids()
        self.capacity_providers: dict[str, GpuCapacityProvider | ManagedInstancesCapacityProvider] = {
            cp.name: GpuCapacityProvider(
                f"{name}-{cp.name}",
                cp,
                # The role exists when there are capacity providers (above).
                EcsClusterRef(
                    args.cluster_name, self._subnet_ids[cp.name], self.security_group.id, cast(InstanceRole, self.instance_role).profile.arn
                ),
                provider_name=capacity_provider_name(args.cluster_name, cp.name),
                ami_id=amis[resolve(cp, cat).ami_parameter],
                # Instances must find their cluster when they boot.
                opts=self._child(self.cluster),
                cat=cat,
            )
            for cp in args.capacity_providers
        }
        for mp in args.managed_instance_providers:
            self.capacity_providers[mp.name] = ManagedInstancesCapacityProvider(
                f"{name}-{mp.name}",
                mp,
                EcsClusterRef(self.cluster.name, self._subnet_ids[mp.name], self.security_group.id),
                provider_name=capacity_provider_name(args.cluster_name, mp.name),
                candidates=list(managed_candidates(mp, region, cat)),
                opts=self._child(),
            )
        self.cluster_capacity_providers = self._cluster_capacity_providers()
        self.task_definitions: dict[str, aws.ecs.TaskDefinition] = {}
        self.services: dict[str, aws.ecs.Service] = {}
        for wl in args.workloads:
            self._workload(wl)
        self.register_outputs(
            {
                "clusterArn": self.cluster.arn,
                "capacityProviders": [cp.capacity_provider.name for cp in self.capacity_providers.values()],
                "taskDefinitionArns": {n: td.arn for n, td in self.task_definitions.items()},
            }
        )

    def _child(self, *depends_on: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, depends_on=list(depends_on))

    def _network(self) -> tuple[pulumi.Input[str], dict[str, pulumi.Input[list[str]]]]:
        """The VPC and, per capacity provider, its subnets: existing ones, or the created VPC's
        private subnets in the zones that offer the provider's type."""
        net = self._args.network
        managed = [mp.name for mp in self._args.managed_instance_providers]
        if net.create is None:
            # Existing subnets come with their VPC (network-one-of).
            vpc_id = cast(str, net.vpc_id)
            return vpc_id, {name: list(net.subnet_ids) for name in [*(cp.name for cp in self._args.capacity_providers), *managed]}
        created_zones = cast(list[str], net.create.zones)  # required (vpc-zones-required)
        vpc = Vpc(self._name, net.create.cidr, list(created_zones), opts=self._child())
        subnets: dict[str, pulumi.Input[list[str]]] = {
            cp.name: [
                vpc.private_subnet_by_zone[z].id
                for z in zones.group_zones(resolve(cp, self._cat).instance, list(created_zones), self._region)
            ]
            for cp in self._args.capacity_providers
        }
        # ECS launches Managed Instances in a zone of these subnets that offers the type it picks.
        subnets.update({name: [vpc.private_subnet_by_zone[z].id for z in created_zones] for name in managed})
        return vpc.vpc_id, subnets

    def _security_group(self) -> aws.ec2.SecurityGroup:
        # No ingress: the agent and tasks only dial out (ECS endpoints, ECR, the workload's peers).
        return aws.ec2.SecurityGroup(
            f"{self._name}-instances",
            vpc_id=self._vpc_id,
            description=f"ECS GPU instances of {self._args.cluster_name}: egress only",
            egress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"], "ipv6_cidr_blocks": ["::/0"]}],
            tags={"Name": f"{self._args.cluster_name}-instances"},
            opts=self._child(),
        )

    def _cluster(self) -> aws.ecs.Cluster:
        return aws.ecs.Cluster(
            self._name,
            name=self._args.cluster_name,
            settings=[{"name": "containerInsights", "value": self._args.container_insights}],
            opts=self._child(),
        )

    def _ami_ids(self) -> dict[str, pulumi.Input[str]]:
        """One SSM look-up per AMI in use, in the provider's region, keyed by its parameter."""
        parameters = sorted({resolve(cp, self._cat).ami_parameter for cp in self._args.capacity_providers})
        return {name: aws.ssm.get_parameter(name=name, opts=pulumi.InvokeOptions(parent=self)).value for name in parameters}

    def _cluster_capacity_providers(self) -> aws.ecs.ClusterCapacityProviders:
        return aws.ecs.ClusterCapacityProviders(
            self._name,
            cluster_name=self.cluster.name,
            capacity_providers=[cp.capacity_provider.name for cp in self.capacity_providers.values()],
            opts=self._child(),
        )

    def _workload(self, wl: WorkloadArgs) -> None:
        """One task definition (and service), or for a task per Neuron chip one of each per chip index:
        ECS maps devices statically, so tasks sharing one definition would share its chip."""
        managed = next((mp for mp in self._args.managed_instance_providers if mp.name == wl.capacity_provider), None)
        if managed is not None:
            self._managed_workload(wl)
            return
        cp = next(cp for cp in self._args.capacity_providers if cp.name == wl.capacity_provider)
        it = resolve(cp, self._cat).instance
        counts = device_counts(wl, it)
        if wl.service is not None and wl.service.per_chip:
            for chip, family in enumerate(per_chip_families(wl.name, it)):
                self.task_definitions[family] = self._task_definition(family, wl, cp.instance_type, counts, chip)
                self.services[family] = self._service(
                    family, wl.capacity_provider, self.task_definitions[family], cp.desired_size, one_per_instance=True
                )
            return
        self.task_definitions[wl.name] = self._task_definition(wl.name, wl, cp.instance_type, counts, 0)
        if wl.service is not None:
            self.services[wl.name] = self._service(wl.name, wl.capacity_provider, self.task_definitions[wl.name], wl.service.desired_count)

    def _managed_workload(self, wl: WorkloadArgs) -> None:
        """A task on Managed Instances: awsvpc networking (their only modes are awsvpc and host), task-level
        CPU and memory, no instance-type constraint (the provider's requirements choose the type), and
        Neuron chips through NeuronDevice ALL."""
        it = workload_type(wl, self._args, self._region, self._cat)
        definitions = container_definitions(wl, self._cat, device_counts(wl, it), managed=True)
        self.task_definitions[wl.name] = aws.ecs.TaskDefinition(
            f"{self._name}-{wl.name}",
            family=wl.name,
            requires_compatibilities=[MANAGED_INSTANCES],
            network_mode="awsvpc",
            cpu=str(sum(c.cpu for c in wl.containers) or 1024),
            memory=str(sum(c.memory for c in wl.containers)),
            container_definitions=json.dumps(definitions),
            opts=self._child(),
        )
        if wl.service is not None:
            self.services[wl.name] = self._service(
                wl.name,
                wl.capacity_provider,
                self.task_definitions[wl.name],
                wl.service.desired_count,
                network={
                    "subnets": self._subnet_ids[wl.capacity_provider],
                    "security_groups": [self.security_group.id],
                    "assign_public_ip": False,
                },
            )

    def _task_definition(
        self, family: str, wl: WorkloadArgs, instance_type: str, neuron_devices: list[int], first_chip: int
    ) -> aws.ecs.TaskDefinition:
        return aws.ecs.TaskDefinition(
            f"{self._name}-{family}",
            family=family,
            requires_compatibilities=["EC2"],
            container_definitions=json.dumps(container_definitions(wl, self._cat, neuron_devices, first_chip)),
            placement_constraints=[{"type": "memberOf", "expression": member_of(instance_type)}],
            opts=self._child(),
        )

    def _service(
        self,
        name: str,
        capacity_provider: str,
        task_definition: aws.ecs.TaskDefinition,
        desired_count: int | None,
        one_per_instance: bool = False,
        network: dict | None = None,
    ) -> aws.ecs.Service:
        provider = self.capacity_providers[capacity_provider]
        return aws.ecs.Service(
            f"{self._name}-{name}",
            name=name,
            cluster=self.cluster.arn,
            task_definition=task_definition.arn,
            desired_count=desired_count,
            # A capacity provider strategy and a launch type are mutually exclusive: no launch type here.
            capacity_provider_strategies=[{"capacity_provider": provider.capacity_provider.name, "weight": 1, "base": 0}],
            placement_constraints=[{"type": "distinctInstance"}] if one_per_instance else None,
            network_configuration=network,
            # The strategy's provider must be associated with the cluster before the service exists.
            opts=self._child(self.cluster_capacity_providers),
        )
