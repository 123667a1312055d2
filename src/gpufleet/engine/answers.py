"""Answers to the provider functions (invokes) the program calls, from a FactSource.

Offline the source is moto's snapshot and its emulated account; the same handlers answer from live
AWS. A call with no answer is UnansweredCall, naming the function: gpufleet's own program stops on
it (exit 2); a program of one's own gets the answer `--answers FILE` gives, or an unknown one.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gpufleet.catalog import tokens
from gpufleet.engine import aws_functions, gcp_functions
from gpufleet.errors import GpufleetError, InputError

if TYPE_CHECKING:
    from gpufleet.catalog.generate.sources import FactSource


class UnansweredCall(GpufleetError, LookupError):
    """A provider function the offline engine cannot answer."""


class AnswersFileError(InputError):
    """The `--answers` file does not have the shape the engine reads; the message names the place."""


MAX_ANSWERS_BYTES = 4 << 20


def load_given(path: Path) -> dict[str, list[tuple[dict, dict]]]:
    """`--answers FILE`: {"TOKEN": [{"inputs": {...}, "outputs": {...}}, ...]}, the outputs a provider
    function gives for exactly those inputs (as the unknown-answer list prints them)."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_ANSWERS_BYTES + 1)
    except OSError as err:
        raise AnswersFileError(f"--answers {path}: {err.strerror}") from None
    if len(raw) > MAX_ANSWERS_BYTES:
        raise AnswersFileError(f"--answers {path}: larger than {MAX_ANSWERS_BYTES >> 20} MiB")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise AnswersFileError(f"--answers {path}: not JSON ({err})") from None
    if not isinstance(data, dict):
        raise AnswersFileError(f"--answers {path}: {type(data).__name__}: an object keyed by function token is required")
    given: dict[str, list[tuple[dict, dict]]] = {}
    for token, entries in data.items():
        if token.count(":") != 2:
            raise AnswersFileError(f"--answers {path}: {token!r}: not a function token (package:module:function)")
        if not isinstance(entries, list):
            raise AnswersFileError(f"--answers {path}: [{token!r}] = {entries!r}: a list of {{inputs, outputs}} is required")
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or set(entry) != {"inputs", "outputs"} or not all(isinstance(entry[k], dict) for k in entry):
                raise AnswersFileError(
                    f"--answers {path}: [{token!r}][{i}] = {entry!r}: an object of exactly two objects, inputs and outputs, is required"
                )
            given.setdefault(token, []).append((entry["inputs"], entry["outputs"]))
    return given


@functools.cache
def _partitions() -> list[dict]:
    from botocore.loaders import create_loader

    return create_loader().load_data("endpoints")["partitions"]


def provider_location(package: str, inputs: dict) -> str | None:
    """Where a provider's functions look when a call names no place, from its configuration:
    AWS's region (None without one: the engine's default region then); Google's region, else its
    zone (tpgresource.GetLocation, regional_utils.go:47-50 @6a9e0f0b), "" with neither. The
    environment variables the providers also read (GOOGLE_REGION, GOOGLE_ZONE, ...) are not."""
    if package == "aws":
        return inputs["region"] if isinstance(inputs.get("region"), str) else None
    if package == "gcp":
        return next((v for v in (inputs.get("region"), inputs.get("zone")) if isinstance(v, str) and v), "")
    return None


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
        self._emulating = threading.Lock()
        self._handlers = {
            tokens.GET_SSM_PARAMETER: self._ssm_parameter,
            tokens.GET_AVAILABILITY_ZONES: self._availability_zones,
            tokens.GET_PARTITION: self._partition,
            tokens.GET_REGION: self._region,
            tokens.GET_ENGINE_VERSIONS: self._engine_versions,
        }

    def answer(self, token: str, args: dict, region: str) -> dict:
        return self.answer_noted(token, args, region)[0]

    def answer_noted(self, token: str, args: dict, region: str) -> aws_functions.Answer:
        """The answer, and what must be said of it where the emulated account is not the real one."""
        region = given if isinstance(given := args.get("region"), str) else region
        handler = self._handlers.get(token)
        if handler is not None:
            return handler(args, region)
        emulated = aws_functions.FUNCTIONS.get(token)
        if emulated is None:
            raise UnansweredCall(f"provider function {token} has no offline answer (answered: {', '.join(self.answered())})")
        try:
            with self._emulating:  # boto3's default session and moto's backends are not made for threads
                return emulated(self.source.client, args, region)
        except aws_functions.NoAnswer as err:
            raise UnansweredCall(f"{err} in {self.source.label}") from None
        except Exception as err:  # noqa: BLE001 - the emulator's own limits (a filter moto has not implemented)
            # Arguments the account refuses or the emulator does not implement, or that the answer
            # cannot read (a filter without values): the source has no answer, which the engine says.
            raise UnansweredCall(f"{self.source.label} cannot answer these arguments ({type(err).__name__}: {err})") from None

    def answered(self) -> list[str]:
        return sorted([*self._handlers, *aws_functions.FUNCTIONS])

    def _ssm_parameter(self, args: dict, region: str) -> aws_functions.Answer:
        name = args["name"]
        value = self.source.ssm_parameter(region, name)
        if value is None:
            raise UnansweredCall(f"aws:ssm/getParameter: parameter {name} does not exist in {region} ({self.source.label})")
        return {
            "arn": f"arn:{partition_of(region)['partition']}:ssm:{region}::parameter{name}",
            "id": name,
            "name": name,
            "type": "String",
            "value": value,
            "insecureValue": value,
            "version": 1,
            "withDecryption": bool(args.get("withDecryption", True)),
        }, None

    def _availability_zones(self, args: dict, region: str) -> aws_functions.Answer:
        """As terraform-provider-aws reads it (internal/service/ec2/ec2_availability_zones_data_source.go
        @bd53eac3, dataSourceAvailabilityZonesRead): DescribeAvailabilityZones with the state and the
        filters as Filters, the zones sorted by name, less excludeNames and excludeZoneIds; zoneIds
        in the order of names, groupNames the set of the zones' groups, id the region."""
        token = "aws:index/getAvailabilityZones"
        zones, paired = self._zones(region)
        # The provider sends the state as a filter ahead of the program's own: one list, as the API reads them.
        filters: list[tuple[str, list[str]]] = [("state", [args["state"]])] if args.get("state") else []
        filters += [(f["name"], [str(v) for v in f["values"]]) for f in args.get("filters") or []]
        if args.get("allAvailabilityZones") and not _confined_to_availability_zones(filters):
            raise UnansweredCall(
                f"{token}: allAvailabilityZones lists the Local and Wavelength Zones of {region} too, which {self.source.label} does not hold"
            )
        for name, values in filters:
            if name not in _ZONE_ATTRIBUTES:
                raise UnansweredCall(f"{token}: {self.source.label} does not record the zones' {name!r} in {region}")
            if name == "state" and not _matches("available", values):
                # The emulated account's zones are all available: no proof a real account has none impaired.
                raise UnansweredCall(
                    f"{token}: {self.source.label} records no zone in state {values} in {region}, no proof a real account has none"
                )
        excluded_names, excluded_ids = set(args.get("excludeNames") or []), set(args.get("excludeZoneIds") or [])
        kept = [
            (name, zone_id)
            for name, zone_id in zones
            if all(_matches(_ZONE_ATTRIBUTES[key](name, zone_id, region), values) for key, values in filters)
            and name not in excluded_names
            and zone_id not in excluded_ids
        ]
        answer = {
            "id": region,
            "region": region,
            "names": [name for name, _ in kept],
            "zoneIds": [zone_id for _, zone_id in kept],
            "groupNames": [region] if kept else [],
            **{
                k: args[k]
                for k in ("allAvailabilityZones", "excludeNames", "excludeZoneIds", "filters", "state")
                if args.get(k) is not None
            },
        }
        note = (
            f"zoneIds pair with names as {self.source.label}'s account pairs them{paired}; in the Regions AWS maps per account, "
            f"a real account may pair them otherwise ({AZ_IDS_DOC}). groupNames is the Region's name, an Availability Zone's "
            "GroupName as earlier EC2 API references give it; botocore's EC2 model now gives us-east-1-zg-1 as one"
        )
        return answer, note

    def _zones(self, region: str) -> tuple[list[tuple[str, str]], str]:
        """The region's Availability Zones, (name, id) sorted by name, and what is said of their pairing.
        The source's offerings give the names and the ids; its account pairs them. A name the
        account lacks while one id is left takes that id: the only pairing the account's others leave."""
        token = "aws:index/getAvailabilityZones"
        names = sorted({row["Location"] for row in self.source.az_offerings(region)})
        ids = {row["Location"] for row in self.source.az_id_offerings(region)}
        if not names:
            raise UnansweredCall(f"{token}: no zones known for {region} ({self.source.label})")
        if any(not re.fullmatch(f"{re.escape(region)}[a-z]", name) for name in names):
            # An Availability Zone's code is its Region's and a letter (AWS, "AWS Availability Zones":
            # https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.html);
            # another (a Local Zone's) is of a zone whose type and opt-in the answer does not know.
            raise UnansweredCall(f"{token}: {self.source.label} lists zones of {region} other than Availability Zones: {names}")
        with self._emulating:
            described = self.source.client("ec2", region).describe_availability_zones(AllAvailabilityZones=True)["AvailabilityZones"]
        pairs = {z["ZoneName"]: z["ZoneId"] for z in described if z["ZoneName"] in names and z["ZoneId"] in ids}
        unpaired_names = [name for name in names if name not in pairs]
        unpaired_ids = sorted(ids - set(pairs.values()))
        said = ""
        if len(unpaired_names) == len(unpaired_ids) == 1:
            pairs[unpaired_names[0]] = unpaired_ids[0]
            said = f" ({unpaired_names[0]}, which its zones lack, takes the one id left, {unpaired_ids[0]})"
        elif unpaired_names or unpaired_ids:
            raise UnansweredCall(
                f"{token}: {self.source.label}'s account pairs {sorted(pairs.items())} of the zones its offerings list in {region} "
                f"(names {names}, ids {sorted(ids)}): the others' ids are not known"
            )
        return [(name, pairs[name]) for name in names], said

    def _partition(self, args: dict, region: str) -> aws_functions.Answer:
        p = partition_of(region)
        return {
            "id": p["partition"],
            "partition": p["partition"],
            "dnsSuffix": p["dnsSuffix"],
            "reverseDnsPrefix": ".".join(reversed(p["dnsSuffix"].split("."))),
        }, None

    def _region(self, args: dict, region: str) -> aws_functions.Answer:
        return {"id": region, "name": region, "region": region, "endpoint": f"ec2.{region}.{partition_of(region)['dnsSuffix']}"}, None

    def _engine_versions(self, args: dict, location: str) -> aws_functions.Answer:
        """From GKE's getServerConfig response recorded for the location, where one is
        (catalog/data/gke_server_config): the versions of that day, said to be so."""
        token = tokens.GET_ENGINE_VERSIONS
        # tpgresource.GetLocation (regional_utils.go:38-56 @6a9e0f0b): the call's location, else the
        # provider's region, else its zone, each a self link's last segment (self_link_helpers.go:116).
        where = str(args.get("location") or location).rsplit("/", 1)[-1]
        if not where:
            raise UnansweredCall(f"{token}: no location: the call names none and the provider has neither gcp:region nor gcp:zone")
        # Imported here: it loads the catalog, which a hosted program's monitor starts without.
        from gpufleet.catalog.gke_server_configs import server_configs

        snapshot = server_configs().get(where)
        if snapshot is None:
            recorded = ", ".join(f"{s.location} ({s.recorded})" for s in server_configs().values())
            raise UnansweredCall(f"{token}: no recorded getServerConfig response for {where} (recorded: {recorded})")
        answer = gcp_functions.engine_versions(snapshot.response, str(args.get("versionPrefix") or ""))
        # The arguments are the data source's own (Optional, not Computed): read back as given.
        answer |= {k: args[k] for k in ("location", "project", "versionPrefix") if args.get(k) is not None}
        note = (
            f"GKE's versions in {where} as its getServerConfig answered on {snapshot.recorded} ({snapshot.source}), "
            f"computed as {gcp_functions.ENGINE_VERSIONS_SOURCE} does; a real account gets the versions GKE offers today"
        )
        return answer, note


AZ_IDS_DOC = "https://docs.aws.amazon.com/global-infrastructure/latest/regions/az-ids.html"

# The DescribeAvailabilityZones filters an Availability Zone's name and id answer (their names as
# botocore's EC2 model documents the request's Filters). An Availability Zone's opt-in status is
# always opt-in-not-required (the model's AvailabilityZone.OptInStatus); its state is the emulated
# account's (available), and a filter that keeps other states only is refused, not answered empty.
_ZONE_ATTRIBUTES: dict[str, Callable[[str, str, str], str]] = {
    "zone-name": lambda name, zone_id, region: name,
    "zone-id": lambda name, zone_id, region: zone_id,
    "region-name": lambda name, zone_id, region: region,
    "zone-type": lambda name, zone_id, region: "availability-zone",
    "opt-in-status": lambda name, zone_id, region: "opt-in-not-required",
    "state": lambda name, zone_id, region: "available",
}


def _matches(value: str, patterns: list[str]) -> bool:
    """Whether an EC2 filter's values match: alternatives, in which * is any run of characters, ?
    exactly one and a backslash escapes the next (the EC2 Filter's reference,
    https://docs.aws.amazon.com/sdkfornet1/latest/apidocs/html/T_Amazon_EC2_Model_Filter.htm)."""
    return any(re.fullmatch(_wildcard(pattern), value) for pattern in patterns)


def _wildcard(pattern: str) -> str:
    parts, escaped = [], False
    for c in pattern:
        if escaped or c not in "*?\\":
            parts.append(re.escape(c))
            escaped = False
        elif c == "\\":
            escaped = True
        else:
            parts.append(".*" if c == "*" else ".")
    return "".join(parts)


def _confined_to_availability_zones(filters: list[tuple[str, list[str]]]) -> bool:
    """Whether the filters keep Availability Zones only, so that allAvailabilityZones adds nothing
    the answer lacks (the Local and Wavelength Zones it adds are another type, and opted in or not)."""
    return any(
        (name == "zone-type" and set(values) == {"availability-zone"})
        or (name == "opt-in-status" and set(values) == {"opt-in-not-required"})
        for name, values in filters
    )
