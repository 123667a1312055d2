"""Answers to the provider functions (invokes) the program calls, from a FactSource.

Offline the source is moto's snapshot and its emulated account; the same handlers answer from live
AWS. A call with no answer is UnansweredCall, naming the function: gpufleet's own program stops on
it (exit 2); a program of one's own gets the answer `--answers FILE` gives, or an unknown one.
"""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path

from gpufleet.catalog import tokens
from gpufleet.catalog.generate.sources import FactSource
from gpufleet.engine import aws_functions
from gpufleet.errors import GpufleetError, InputError


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
        }

    def answer(self, token: str, args: dict, region: str) -> dict:
        return self.answer_noted(token, args, region)[0]

    def answer_noted(self, token: str, args: dict, region: str) -> tuple[dict, str | None]:
        """The answer, and what must be said of it where the emulated account is not the real one."""
        region = given if isinstance(given := args.get("region"), str) else region
        handler = self._handlers.get(token)
        if handler is not None:
            return handler(args, region), None
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

    def _ssm_parameter(self, args: dict, region: str) -> dict:
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
