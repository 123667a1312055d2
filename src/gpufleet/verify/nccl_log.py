"""An NCCL all_reduce_perf launcher log, read: the network NCCL used (its `NCCL_DEBUG=INFO` lines),
the EFA devices each worker found before the run (gpufleet's pre-check line), and the bus bandwidth
table. mpirun's `--tag-output` prefix ("[1,0]<stdout>:") is read through.

nccl-tests prints one table per run: a header naming the busbw columns, one row per message size
(size, count, type, redop, root, then time, algbw, busbw, #wrong out of place and again in place),
and "# Avg bus bandwidth" after it (NVIDIA/nccl-tests src/util.cu @f727aa2a, v2.18.3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpufleet.errors import InputError

# mpirun --tag-output's "[1,0]<stdout>:" and Slurm srun --label's "0: ".
_TAG = re.compile(r"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: )")
# aws-ofi-nccl's provider line: "Selected Provider is efa (found 1 nics)" (<= 1.15) and "Selected
# provider is efa, fabric is efa-direct (found 16 nics)" (>= 1.16).
_PROVIDER = re.compile(r"NET/OFI Selected [Pp]rovider is (?P<provider>[\w-]+)(?:, fabric is [\w-]+)?(?: \(found (?P<nics>\d+) nics?\))?")
_NETWORK = re.compile(r"NCCL INFO Using network (?P<network>.+?)\s*$")
_INIT_FAILED = re.compile(r"Failed to initialize any NET plugin|Error: network .* not found|Test NCCL failure.*")
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+\w+\s+\w+\s+-?\d+\s+(?:\S+\s+){2}(\S+)\s+\S+\s+(?:\S+\s+){2}(\S+)\s+\S+\s*$")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<avg>[\d.]+)")

_CHECK = r": (?P<host>\S+) found (?P<found>\d+) of (?P<expected>\d+) EFA devices"


class NotAnNcclLog(InputError):
    """The text holds neither a bus bandwidth table nor any NCCL line."""


@dataclass
class NcclRun:
    providers: list[tuple[str, int | None]] = field(default_factory=list)  # (provider, NICs) per rank's line
    networks: list[str] = field(default_factory=list)  # "Libfabric", "AWS Libfabric", "Socket", ...
    efa_checks: list[tuple[str, int, int]] = field(default_factory=list)  # (host, found, expected)
    rows: list[tuple[int, float, float]] = field(default_factory=list)  # (bytes, busbw out of place, in place)
    average: float | None = None
    failure: str | None = None  # NCCL's own line where it could not start

    @property
    def largest(self) -> tuple[int, float, float] | None:
        return max(self.rows, key=lambda r: r[0]) if self.rows else None


def parse(text: str, marker: str) -> NcclRun:
    """The run the text records; `marker` starts the EFA pre-check's lines (the catalog's)."""
    check = re.compile(re.escape(marker) + _CHECK)
    run = NcclRun()
    tables: list[dict] = []  # {"rows": [...], "average": float | None}, in the order they appear
    current: dict | None = None
    seen_nccl = False
    for raw in text.splitlines():
        line = _TAG.sub("", raw)
        if "NCCL" in line or marker in line:
            seen_nccl = True
        if m := _PROVIDER.search(line):
            run.providers.append((m["provider"], int(m["nics"]) if m["nics"] else None))
        elif m := _NETWORK.search(line):
            run.networks.append(m["network"])
        elif m := check.search(line):
            run.efa_checks.append((m["host"], int(m["found"]), int(m["expected"])))
        elif run.failure is None and (m := _INIT_FAILED.search(line)):
            run.failure = m.group(0).strip()
        if line.lstrip().startswith("#") and "busbw" in line and "size" in line:
            current = {"rows": [], "average": None}
            tables.append(current)
        elif current is not None and (m := _ROW.match(line)):
            try:
                current["rows"].append((int(m[1]), float(m[3]), float(m[4])))
            except ValueError:  # a "N/A" cell
                continue
        elif current is not None and (m := _AVG.match(line.strip())):
            current["average"] = float(m["avg"])
            current = None
    complete = [t for t in tables if t["rows"]]
    if complete:
        # A document may quote a run twice (whole, then an excerpt): the run reaching the largest size.
        best = max(complete, key=lambda t: max(r[0] for r in t["rows"]))
        run.rows, run.average = best["rows"], best["average"]
    if not complete and not seen_nccl:
        raise NotAnNcclLog("no all_reduce_perf bus bandwidth table and no NCCL line")
    return run
