"""Answers to the provider functions (invokes) the program calls, from a FactSource.

Offline the source is moto's snapshot; the same handlers would answer from live AWS. A call with no
handler, or a parameter the region does not have, is an explicit error naming the function.
"""

from __future__ import annotations

import functools

from gpufleet.components.catalog.generate.sources import FactSource
from gpufleet.components.catalog import tokens


class UnansweredCall(LookupError):
    """A provider function the offline engine cannot answer."""


@functools.cache
def _partitions() -> list[dict]:
    from botocore.loaders import create_loader

    return create_loader().load_data("endpoints")["partitions"]


def partition_of(region: str) -> dict:
    """The AWS partition of a region, from botocore's endpoint data."""
    import re

    for p in _partitions():
        if region in p.get("regions", {}) or re.match(p["regionRegex"], region):
            return p
    raise UnansweredCall(f"aws:index/getPartition: no partition in botocore's data matches region {region!r}")


class OfflineAnswers:
    def __init__(self, source: FactSource):
        self.source = source
        self._handlers = {
            tokens.GET_SSM_PARAMETER: self._ssm_parameter,
            tokens.GET_AVAILABILITY_ZONES: self._availability_zones,
            tokens.GET_PARTITION: self._partition,
            tokens.GET_REGION: self._region,
        }

    def answer(self, token: str, args: dict, region: str) -> dict:
        handler = self._handlers.get(token)
        if handler is None:
            raise UnansweredCall(
                f"provider function {token} has no offline answer (answered: {', '.join(sorted(self._handlers))})"
            )
        return handler(args, region)

    def _ssm_parameter(self, args: dict, region: str) -> dict:
        name = args["name"]
        value = self.source.ssm_parameter(region, name)
        if value is None:
            raise UnansweredCall(
                f"aws:ssm/getParameter: parameter {name} does not exist in {region} ({self.source.label})"
            )
        return {
            "arn": f"arn:{partition_of(region)['partition']}:ssm:{region}::parameter{name}",
            "id": name,
            "name": name,
            "type": "String",
            "value": value,
            "insecureValue": value,
            "version": 1,
            "withDecryption": bool(args.get("withDecryption", True)),
        }

    def _availability_zones(self, args: dict, region: str) -> dict:
        zones = sorted({row["Location"] for row in self.source.az_offerings(region)})
        if not zones:
            raise UnansweredCall(f"aws:index/getAvailabilityZones: no zones known for {region} ({self.source.label})")
        return {"id": region, "names": zones, "state": args.get("state"), "groupNames": [region]}

    def _partition(self, args: dict, region: str) -> dict:
        p = partition_of(region)
        return {
            "id": p["partition"],
            "partition": p["partition"],
            "dnsSuffix": p["dnsSuffix"],
            "reverseDnsPrefix": ".".join(reversed(p["dnsSuffix"].split("."))),
        }

    def _region(self, args: dict, region: str) -> dict:
        return {"id": region, "name": region, "region": region, "endpoint": f"ec2.{region}.{partition_of(region)['dnsSuffix']}"}
