"""What has an end (facts.lifecycle): AMI families past their end of support, and Kubernetes versions
past a cloud's windows. Dates are judged against one day, `today()`, which every message names.

Levels, as the stack spec and the pack use them: the `*_problem` functions are what the cloud refuses
(no AMI of the type for the version; a version EKS no longer creates); the `*_advisory` functions are
dates that have passed while the API still accepts."""

from __future__ import annotations

import functools
import os
import re
from datetime import date
from typing import TYPE_CHECKING

from gpufleet.errors import InputError
from gpufleet.rules.versions import version_tuple

if TYPE_CHECKING:  # the CLI reads today() before any command, which needs no facts
    from gpufleet.catalog.facts import AmiEnd, CuratedFacts, VersionCalendar

TODAY = "GPUFLEET_TODAY"  # YYYY-MM-DD: the day to judge against, instead of the machine's


class TodayError(InputError):
    """GPUFLEET_TODAY is set to something that is not a date."""


def today() -> date:
    """The day lifecycles are judged against: GPUFLEET_TODAY, else the machine's date (UTC)."""
    given = os.environ.get(TODAY)
    if given is None:
        return date.today()
    try:
        return date.fromisoformat(given)
    except ValueError:
        raise TodayError(f"{TODAY} = {given[:40]!r}: not a date (YYYY-MM-DD)") from None


def minor(version: object) -> str | None:
    """ "1.33" of "1.33", "v1.33.2" or "1.33.2-gke.1200"; None for anything else ("latest", unknown)."""
    return _minor(version) if isinstance(version, str) else None


@functools.lru_cache(maxsize=256)
def _minor(version: str) -> str | None:
    # The scheduler words a reason per node state and pod template: a cluster's few versions, read once.
    match = re.match(r"^v?(\d+)\.(\d+)(?:[.\-+].*)?$", version)
    return f"{match[1]}.{match[2]}" if match else None


def _key(version: str) -> tuple[int, ...]:
    return version_tuple(version) or ()


def eks_ami_type_problem(ami_type: object, version: object, facts: CuratedFacts) -> str | None:
    """Does EKS publish an AMI of the type for the cluster's Kubernetes version?"""
    ends = facts.lifecycle.eks_ami_types
    end = ends.types.get(ami_type) if isinstance(ami_type, str) else None
    v = minor(version)
    if end is None or end.last_kubernetes is None or v is None or _key(v) <= _key(end.last_kubernetes):
        return None
    return (
        f"EKS publishes no {ami_type} AMI for Kubernetes {v}: {end.last_kubernetes} is the last version with one; "
        f"use {end.instead} ({ends.source})"
    )


def eks_ami_type_advisory(ami_type: object, on: date, facts: CuratedFacts) -> str | None:
    ends = facts.lifecycle.eks_ami_types
    end = ends.types.get(ami_type) if isinstance(ami_type, str) else None
    return _ended(end, on, str(ami_type), "EKS releases no more updates or fixes of it", ends.source)


def ecs_ami_advisory(accelerator: str, variant: str, on: date, facts: CuratedFacts) -> str | None:
    ends = facts.lifecycle.ecs_ami_variants
    end = ends.variants.get(f"{accelerator}/{variant}")
    return _ended(end, on, f"the ECS {accelerator} AMI variant {variant}", "it ends with Amazon Linux 2", ends.source)


def _ended(end: AmiEnd | None, on: date, what: str, meaning: str, source: str) -> str | None:
    if end is None or on < date.fromisoformat(end.end_of_support):
        return None
    return f"{what} reached its end of support on {end.end_of_support} (judged on {on}): {meaning}; use {end.instead} ({source})"


def kubernetes_version_problem(calendar: VersionCalendar, cloud: str, version: object, on: date) -> str | None:
    """Does the cloud still run the version? (Only where it refuses a version past its windows.)"""
    v = minor(version)
    window = calendar.versions.get(v) if v else None
    if window is None or not calendar.refused_after_extended_support or window.end_of_extended_support is None:
        return None
    if on < date.fromisoformat(window.end_of_extended_support):
        return None
    return (
        f"{cloud}'s {calendar.extended_support} for Kubernetes {v} ended on {window.end_of_extended_support} (judged on "
        f"{on}): {cloud} creates no cluster on it and upgrades existing ones itself ({calendar.source})"
    )


def kubernetes_version_advisory(calendar: VersionCalendar, cloud: str, version: object, on: date) -> str | None:
    """Is the version past its standard support, or outside the curated calendar (not judged)?"""
    v = minor(version)
    if v is None:
        return None
    window = calendar.versions.get(v)
    if window is None:
        known = sorted(calendar.versions, key=_key)
        where = "newer than" if _key(v) > _key(known[-1]) else "older than"
        return f"Kubernetes {v} is {where} {cloud}'s curated calendar ({known[0]} to {known[-1]}): its support is not judged ({calendar.source})"
    if on < date.fromisoformat(window.end_of_standard_support):
        return None
    extended = window.end_of_extended_support
    if extended is not None and on >= date.fromisoformat(extended):
        if calendar.refused_after_extended_support:
            return None  # kubernetes_version_problem says it
        return (
            f"{cloud}'s standard support for Kubernetes {v} ended on {window.end_of_standard_support}, and its "
            f"{calendar.extended_support} on {extended} (judged on {on}) ({calendar.source})"
        )
    longer = f"; {calendar.extended_support} until {extended}" if extended else f"; {calendar.extended_support}"
    return (
        f"{cloud}'s standard support for Kubernetes {v} ended on {window.end_of_standard_support} (judged on {on}){longer}: "
        f"upgrade the version ({calendar.source})"
    )
