"""Typed inputs of a fleet's network: existing subnets, or a VPC to create in named zones."""

from __future__ import annotations

import ipaddress
import re

from pydantic import Field, field_validator, model_validator

from gpufleet.platform.model import SpecModel, rule_error

# Subnet slots of a created VPC: private subnets take slots 0..7, public 8..15, by zone position, so
# a zone appended later adds subnets without renumbering the others.
MAX_ZONES = 8


class NewVpcArgs(SpecModel):
    """A VPC created for the fleet: private subnets for the instances, one NAT gateway for egress."""

    MOVED = {"azCount": "azCount is gone: name the zones in order under `zones` (gpufleet never chooses them)"}

    cidr: str = Field("10.0.0.0/16", description="IPv4 CIDR of the VPC (a /16 to /24).")
    zones: list[str] | None = Field(
        None,
        min_length=1,
        max_length=MAX_ZONES,
        description="Availability zones of the VPC, in order, a private and a public subnet each (required). "
        "gpufleet never chooses them, so no later change can move them; to grow, append a zone (new subnets, "
        "nothing replaced). Each group runs in the zones that offer its type.",
    )

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        network = ipaddress.IPv4Network(value, strict=True)
        if not 16 <= network.prefixlen <= 24:
            raise rule_error("vpc-cidr-prefix", f"prefix /{network.prefixlen} is outside /16../24")
        return value


class NetworkArgs(SpecModel):
    """Where the instances run: existing subnets of a VPC, or a VPC to create. Exactly one."""

    vpc_id: str | None = Field(None, pattern=r"^vpc-[0-9a-f]{8,17}$", description="Existing VPC (with `subnetIds`).")
    subnet_ids: list[str] = Field(default_factory=list, description="Existing private subnets of `vpcId` for the instances (with `vpcId`).")
    create: NewVpcArgs | None = Field(None, description="Create a VPC instead of using existing subnets.")

    @field_validator("subnet_ids")
    @classmethod
    def _subnets(cls, value: list[str]) -> list[str]:
        bad = [s for s in value if not re.fullmatch(r"subnet-[0-9a-f]{8,17}", s)]
        if bad:
            raise rule_error("subnet-id", f"not subnet IDs (subnet-<hex>): {', '.join(bad)}")
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> NetworkArgs:
        existing = self.vpc_id is not None or bool(self.subnet_ids)
        if existing and self.create is not None:
            raise rule_error("network-one-of", "give either vpcId with subnetIds, or create; not both")
        if not existing and self.create is None:
            raise rule_error("network-one-of", "give either vpcId with subnetIds, or create")
        if existing and (self.vpc_id is None or not self.subnet_ids):
            raise rule_error("network-one-of", "vpcId and subnetIds go together")
        return self
