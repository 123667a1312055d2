"""A VPC for GPU instances: private subnets for the instances, public subnets only for NAT egress."""

from __future__ import annotations

import ipaddress
import math

import pulumi
import pulumi_aws as aws

from gpufleet.network.args import MAX_ZONES


def subnet_cidrs(cidr: str, zones: int) -> tuple[list[str], list[str]]:
    """The VPC CIDR in 2 x MAX_ZONES equal slots: the private subnet of the zone at position i takes
    slot i, its public subnet slot MAX_ZONES + i. A zone appended later gets new slots; no subnet of
    an existing zone changes (a changed CIDR would replace the subnet and everything in it)."""
    network = ipaddress.IPv4Network(cidr)
    parts = list(network.subnets(prefixlen_diff=int(math.log2(2 * MAX_ZONES))))
    return [str(p) for p in parts[:zones]], [str(p) for p in parts[MAX_ZONES : MAX_ZONES + zones]]


class Vpc(pulumi.ComponentResource):
    """VPC with private subnets (no public IPs) and one NAT gateway, so instances reach ECR and the
    ECS endpoints without being reachable from the internet."""

    def __init__(
        self, name: str, cidr: str, zones: list[str], private_tags: dict[str, str] | None = None, opts: pulumi.ResourceOptions | None = None
    ):
        """`private_tags`: tags on the private subnets besides gpufleet's (Karpenter's discovery tag)."""
        super().__init__("gpufleet:network:Vpc", name, None, opts)
        self._name = name
        self._zones = zones
        self._private_tags = dict(private_tags or {})
        self._private_cidrs, self._public_cidrs = subnet_cidrs(cidr, len(zones))
        self.vpc = aws.ec2.Vpc(
            name,
            cidr_block=cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={"Name": name},
            opts=pulumi.ResourceOptions(parent=self),
        )
        self._internet_gateway()
        self.public_subnets = [self._subnet("public", i) for i in range(len(zones))]
        self.private_subnets = [self._subnet("private", i) for i in range(len(zones))]
        self._public_routes()
        self._nat_and_private_routes()
        self.vpc_id = self.vpc.id
        self.private_subnet_ids = [s.id for s in self.private_subnets]
        self.private_subnet_by_zone = dict(zip(zones, self.private_subnets))
        self.register_outputs({"vpcId": self.vpc_id, "privateSubnetIds": self.private_subnet_ids})

    def _child(self, *depends_on: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, depends_on=list(depends_on))

    def _internet_gateway(self) -> None:
        self.igw = aws.ec2.InternetGateway(self._name, vpc_id=self.vpc.id, tags={"Name": self._name}, opts=self._child())

    def _subnet(self, tier: str, i: int) -> aws.ec2.Subnet:
        zone = self._zones[i]
        cidrs = self._public_cidrs if tier == "public" else self._private_cidrs
        return aws.ec2.Subnet(
            f"{self._name}-{tier}-{zone}",
            vpc_id=self.vpc.id,
            cidr_block=cidrs[i],
            availability_zone=zone,
            map_public_ip_on_launch=False,
            tags={"Name": f"{self._name}-{tier}-{zone}", "gpufleet-tier": tier, **(self._private_tags if tier == "private" else {})},
            opts=self._child(),
        )

    def _public_routes(self) -> None:
        table = aws.ec2.RouteTable(
            f"{self._name}-public",
            vpc_id=self.vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": self.igw.id}],
            tags={"Name": f"{self._name}-public"},
            opts=self._child(),
        )
        for subnet, zone in zip(self.public_subnets, self._zones):
            aws.ec2.RouteTableAssociation(f"{self._name}-public-{zone}", subnet_id=subnet.id, route_table_id=table.id, opts=self._child())

    def _nat_and_private_routes(self) -> None:
        eip = aws.ec2.Eip(f"{self._name}-nat", domain="vpc", tags={"Name": f"{self._name}-nat"}, opts=self._child(self.igw))
        nat = aws.ec2.NatGateway(
            f"{self._name}-nat",
            allocation_id=eip.id,
            subnet_id=self.public_subnets[0].id,
            tags={"Name": f"{self._name}-nat"},
            opts=self._child(self.igw),
        )
        table = aws.ec2.RouteTable(
            f"{self._name}-private",
            vpc_id=self.vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat.id}],
            tags={"Name": f"{self._name}-private"},
            opts=self._child(),
        )
        for subnet, zone in zip(self.private_subnets, self._zones):
            aws.ec2.RouteTableAssociation(f"{self._name}-private-{zone}", subnet_id=subnet.id, route_table_id=table.id, opts=self._child())
