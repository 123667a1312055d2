"""Checks every platform's instance groups share: the type is offered in the region, and Spot is
offered for it when the group buys Spot. One statement for ECS and EKS."""

from __future__ import annotations

from collections.abc import Iterator

from gpufleet.catalog.catalog import InstanceType
from gpufleet.platform.model import Violation
from gpufleet.rules import offerings as offering_rules


def offered_and_purchasable(it: InstanceType, region: str, spot: bool, purchase: tuple[str, str]) -> Iterator[Violation]:
    """`purchase` is (the field that chose the purchase option, its value)."""
    reason = offering_rules.offered_in(it, region)
    if reason:
        yield Violation("instance-type-offered", ("instanceType",), it.name, reason)
    if spot:
        reason = offering_rules.spot_supported(it)
        if reason:
            yield Violation("spot-supported", (purchase[0],), purchase[1], reason)
