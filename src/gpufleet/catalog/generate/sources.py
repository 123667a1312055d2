"""Where EC2 and SSM facts come from: the snapshot that `moto` ships, or live AWS through boto3.

Both sources answer the same questions in the shape of the AWS APIs (DescribeInstanceTypes records,
DescribeInstanceTypeOfferings rows, SSM parameter values), so the catalog generator and the offline
engine use one code path whichever source is behind it. Nothing here is imported by the policy pack
or by the catalog's predicates: they read the generated data file only.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
from importlib import metadata
from pathlib import Path
from typing import Protocol, cast


class FactSource(Protocol):
    """What the catalog generator and the offline engine ask of EC2 and SSM."""

    label: str

    def instance_types(self) -> dict[str, dict]:
        """DescribeInstanceTypes records keyed by instance type."""

    def regions(self) -> list[str]:
        """Regions the source can answer offerings for."""

    def az_offerings(self, region: str) -> list[dict]:
        """DescribeInstanceTypeOfferings rows (`InstanceType`, `Location`) with location type AZ."""

    def az_id_offerings(self, region: str) -> list[dict]:
        """The same rows with location type AZ ID: `Location` is a zone's id (use1-az1), the same
        zone in every account, where its name (us-east-1a) may not be."""

    def ssm_parameter(self, region: str, name: str) -> str | None:
        """The value of an SSM parameter, or None when the region has no such parameter."""

    def ssm_children(self, region: str, path: str) -> list[str]:
        """The values of the parameters directly under `path` (GetParametersByPath, not recursive)."""

    def client(self, service: str, region: str):
        """A boto3 client of the service: the account behind the source (moto's emulated one offline)."""


def _moto_file(*parts: str) -> Path:
    # The package's folder without importing it: importing moto costs about 0.15 s of a cold start.
    spec = importlib.util.find_spec("moto")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the moto package (its EC2 and SSM snapshots) is not installed")
    return Path(spec.submodule_search_locations[0]).joinpath(*parts)


def _load_gz_json(path) -> object:
    with path.open("rb") as raw, gzip.open(raw) as fh:
        return json.load(fh)


# moto's emulated account draws its ids (the default VPC's, its subnets') from one random source;
# seeded, the same program gets the same ids on every run.
MOTO_SEED = 1


@functools.cache
def _moto_account():
    """moto's emulation of AWS, started once per process: from then on boto3 in this process talks
    to it, never to AWS (the offline engine makes no other AWS call)."""
    from moto import mock_aws
    from moto.moto_api._internal import mock_random

    mock = mock_aws()
    mock.start()
    mock_random.seed(MOTO_SEED)
    return mock


class MotoSnapshot:
    """The EC2 and SSM snapshots the installed `moto` package ships (no network, no credentials)."""

    def __init__(self) -> None:
        self.version = metadata.version("moto")
        self.label = f"moto {self.version} snapshot"

    @functools.cache  # noqa: B019 (one source object per run: the cache lives as long as the run does)
    def instance_types(self) -> dict[str, dict]:
        return cast("dict[str, dict]", _load_gz_json(_moto_file("ec2", "resources", "instance_types.json.gz")))

    def regions(self) -> list[str]:
        folder = _moto_file("ec2", "resources", "instance_type_offerings", "availability-zone")
        return sorted(p.name.removesuffix(".json.gz") for p in folder.iterdir() if p.name.endswith(".json.gz"))

    def az_offerings(self, region: str) -> list[dict]:
        return self._offerings("availability-zone", region)

    def az_id_offerings(self, region: str) -> list[dict]:
        return self._offerings("availability-zone-id", region)

    @functools.cache  # noqa: B019 (one source object per run: the cache lives as long as the run does)
    def _offerings(self, location_type: str, region: str) -> list[dict]:
        path = _moto_file("ec2", "resources", "instance_type_offerings", location_type, f"{region}.json.gz")
        if not path.is_file():
            return []
        return cast("list[dict]", _load_gz_json(path))

    @functools.cache  # noqa: B019 (one source object per run: the cache lives as long as the run does)
    def _ssm_tree(self, region: str) -> dict:
        path = _moto_file("ssm", "resources", "ecs", "optimized_amis", f"{region}.json.gz")
        if not path.is_file():
            return {}
        return cast(dict, _load_gz_json(path))

    def _ssm_node(self, region: str, path: str) -> object:
        # moto stores the ECS optimized AMI parameters as a tree keyed by path segment; a node's
        # "Value" is the parameter value (a dict for the JSON-valued `.../recommended` parameters).
        node: object = self._ssm_tree(region)
        for segment in path.strip("/").split("/"):
            if not isinstance(node, dict) or segment not in node:
                return None
            node = node[segment]
        return node

    def ssm_parameter(self, region: str, name: str) -> str | None:
        node = self._ssm_node(region, name)
        if not isinstance(node, dict) or "Value" not in node:
            return None
        return _as_text(node["Value"])

    def ssm_children(self, region: str, path: str) -> list[str]:
        node = self._ssm_node(region, path)
        if not isinstance(node, dict):
            return []
        return [_as_text(child["Value"]) for child in node.values() if isinstance(child, dict) and "Value" in child]

    def client(self, service: str, region: str):
        return _moto_client(service, region)


def _moto_client(service: str, region: str):
    import boto3

    _moto_account()
    return boto3.client(service, region_name=region, aws_access_key_id="testing", aws_secret_access_key="testing")


def _as_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class LiveAws:
    """Live AWS through boto3 (credentials from the usual chain)."""

    def __init__(self, home_region: str = "us-east-1") -> None:
        import boto3  # imported here: the offline path never needs a boto3 session

        self._boto3 = boto3
        self.home_region = home_region
        self.label = f"live AWS (DescribeInstanceTypes in {home_region})"

    def client(self, service: str, region: str):
        return self._boto3.client(service, region_name=region)

    @functools.cache  # noqa: B019 (one source object per run: the cache lives as long as the run does)
    def instance_types(self) -> dict[str, dict]:
        pages = self.client("ec2", self.home_region).get_paginator("describe_instance_types").paginate()
        return {r["InstanceType"]: r for page in pages for r in page["InstanceTypes"]}

    def regions(self) -> list[str]:
        answer = self.client("ec2", self.home_region).describe_regions(AllRegions=False)
        return sorted(r["RegionName"] for r in answer["Regions"])

    @functools.cache  # noqa: B019 (one source object per run: the cache lives as long as the run does)
    def az_offerings(self, region: str) -> list[dict]:
        pages = self.client("ec2", region).get_paginator("describe_instance_type_offerings").paginate(LocationType="availability-zone")
        return [{"InstanceType": r["InstanceType"], "Location": r["Location"]} for page in pages for r in page["InstanceTypeOfferings"]]

    @functools.cache  # noqa: B019 (one source object per run: the cache lives as long as the run does)
    def az_id_offerings(self, region: str) -> list[dict]:
        pages = self.client("ec2", region).get_paginator("describe_instance_type_offerings").paginate(LocationType="availability-zone-id")
        return [{"InstanceType": r["InstanceType"], "Location": r["Location"]} for page in pages for r in page["InstanceTypeOfferings"]]

    def ssm_parameter(self, region: str, name: str) -> str | None:
        client = self.client("ssm", region)
        try:
            return client.get_parameter(Name=name)["Parameter"]["Value"]
        except client.exceptions.ParameterNotFound:
            return None

    def ssm_children(self, region: str, path: str) -> list[str]:
        pages = self.client("ssm", region).get_paginator("get_parameters_by_path").paginate(Path=path, Recursive=False)
        return [p["Value"] for page in pages for p in page["Parameters"]]
