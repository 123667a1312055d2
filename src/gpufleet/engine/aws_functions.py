"""The AWS provider functions an emulator can answer, answered through boto3 against the source's
account: moto's emulated one offline (its default VPC and subnets, its AMIs, its caller identity),
the real one with credentials. The answers take the provider's own names (pulumi-aws's result
properties, camelCase on the wire).

Offline, what the emulated account does not hold (a VPC by tag, an AMI moto does not ship) is no
proof the real account lacks it: such a call has no answer here (NoAnswer), and the engine answers
it unknown, as a preview does before the value exists."""

from __future__ import annotations

import re
from collections.abc import Callable

from gpufleet.catalog import tokens
from gpufleet.errors import GpufleetError


class NoAnswer(GpufleetError, LookupError):
    """The source's account holds nothing the call matches, or more than the provider would take."""


# An answer, and what the engine must say of it (None: nothing; the emulated account answered as the
# real one would).
Answer = tuple[dict, "str | None"]


def _filters(args: dict, named: dict[str, str]) -> list[dict]:
    """The EC2 Filters of a data source: its `filters` blocks, its named arguments and its `tags`."""
    found = [{"Name": f["name"], "Values": list(f["values"])} for f in args.get("filters") or []]
    for arg, name in named.items():
        if args.get(arg) is not None:
            value = args[arg]
            found.append({"Name": name, "Values": [str(value).lower() if isinstance(value, bool) else str(value)]})
    found += [{"Name": f"tag:{k}", "Values": [v]} for k, v in (args.get("tags") or {}).items()]
    return found


def caller_identity(client: Callable, args: dict, region: str) -> Answer:
    who = client("sts", region).get_caller_identity()
    return {"accountId": who["Account"], "arn": who["Arn"], "id": who["Account"], "userId": who["UserId"]}, None


def vpc(client: Callable, args: dict, region: str) -> Answer:
    ec2 = client("ec2", region)
    filters = _filters(args, {"default": "is-default", "cidrBlock": "cidr", "dhcpOptionsId": "dhcp-options-id", "state": "state"})
    found = ec2.describe_vpcs(**({"VpcIds": [args["id"]]} if args.get("id") else {}), Filters=filters)["Vpcs"]
    if len(found) != 1:
        raise NoAnswer(f"{len(found)} VPCs match (the provider takes exactly one)")
    v = found[0]
    tables = ec2.describe_route_tables(
        Filters=[{"Name": "vpc-id", "Values": [v["VpcId"]]}, {"Name": "association.main", "Values": ["true"]}]
    )["RouteTables"]
    return {
        "arn": f"arn:aws:ec2:{region}:{v['OwnerId']}:vpc/{v['VpcId']}",
        "cidrBlock": v["CidrBlock"],
        "cidrBlockAssociations": [
            {"associationId": a["AssociationId"], "cidrBlock": a["CidrBlock"], "state": a["CidrBlockState"]["State"]}
            for a in v.get("CidrBlockAssociationSet", [])
        ],
        "default": v["IsDefault"],
        "dhcpOptionsId": v["DhcpOptionsId"],
        "id": v["VpcId"],
        "instanceTenancy": v["InstanceTenancy"],
        "mainRouteTableId": tables[0]["RouteTableId"] if tables else "",
        "ownerId": v["OwnerId"],
        "region": region,
        "state": v["State"],
        "tags": {t["Key"]: t["Value"] for t in v.get("Tags", [])},
        **({"filters": args["filters"]} if args.get("filters") else {}),
    }, None


def subnets(client: Callable, args: dict, region: str) -> Answer:
    found = client("ec2", region).describe_subnets(Filters=_filters(args, {}))["Subnets"]
    if not found:
        raise NoAnswer("no subnet matches")
    return {
        "id": region,
        "ids": sorted(s["SubnetId"] for s in found),
        "region": region,
        **{k: args[k] for k in ("filters", "tags") if args.get(k)},
    }, None


def ami(client: Callable, args: dict, region: str) -> Answer:
    request = {"Filters": _filters(args, {})}
    if args.get("owners"):
        request["Owners"] = list(args["owners"])
    if args.get("executableUsers"):
        request["ExecutableUsers"] = list(args["executableUsers"])
    found = client("ec2", region).describe_images(**request)["Images"]
    if args.get("nameRegex"):
        found = [i for i in found if re.search(args["nameRegex"], i.get("Name", ""))]
    note = None
    if len(found) > 1 and str(args.get("mostRecent")).lower() == "true":
        # The provider takes the latest CreationDate; moto stamps every AMI it ships with its own
        # clock, so its answer among equal dates is the first it lists: said, never passed off.
        latest = max(i.get("CreationDate", "") for i in found)
        found = [i for i in found if i.get("CreationDate", "") == latest][:1]
        note = f"the emulated account's most recent of several AMIs is the first moto lists ({found[0]['ImageId']}): its creation dates are its clock's"
    if len(found) != 1:
        raise NoAnswer(f"{len(found)} AMIs match in the emulated account (the provider takes one, or the most recent)")
    i = found[0]
    return {
        "architecture": i["Architecture"],
        "description": i.get("Description", ""),
        "hypervisor": i.get("Hypervisor", ""),
        "id": i["ImageId"],
        "imageId": i["ImageId"],
        "imageLocation": i.get("ImageLocation", ""),
        "imageOwnerAlias": i.get("ImageOwnerAlias", ""),
        "imageType": i.get("ImageType", ""),
        "name": i.get("Name", ""),
        "ownerId": i["OwnerId"],
        "platform": i.get("Platform", ""),
        "public": i.get("Public", False),
        "region": region,
        "rootDeviceName": i.get("RootDeviceName", ""),
        "rootDeviceType": i.get("RootDeviceType", ""),
        "state": i.get("State", ""),
        "virtualizationType": i.get("VirtualizationType", ""),
        # The provider's state, not the program's text: mostRecent is a boolean there ("true" is read as one).
        "mostRecent": str(args.get("mostRecent")).lower() == "true",
        **{k: args[k] for k in ("filters", "owners", "nameRegex") if args.get(k) is not None},
    }, note


FUNCTIONS = {
    tokens.GET_CALLER_IDENTITY: caller_identity,
    tokens.GET_VPC: vpc,
    tokens.GET_SUBNETS: subnets,
    tokens.GET_AMI: ami,
}
