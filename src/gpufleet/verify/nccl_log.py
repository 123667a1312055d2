"""An nccl-tests launcher log, read: who ran (the `# Rank` lines, the per-process GPU count, NCCL's
line prefixes), the network NCCL used and how it got there (its `NCCL_DEBUG=INFO` lines: the plugin
loaded or failed and why, the OFI provider and NIC count, the channels' network devices), the EFA
devices each worker found before the run (gpufleet's pre-check line), and the bus bandwidth table.
mpirun's `--tag-output` prefix ("[1,0]<stdout>:") and Slurm's `--label` ("0: ") are read through.

The table is read by its own header, so every layout of nccl-tests 2.x reads alike: with the `root`
column (2.11 and later) or without it (2.0-2.10, where the check column is `error`, not `#wrong`),
`N/A` check cells (`-c 0`), per-iteration columns (`-I 1`) and a trailing timestamp, size-0 rows,
and an author's `...` line cutting a table short (NVIDIA/nccl-tests a0b82b2 (v2.19.6)
src/util.cu L740-L760 writeResultHeader, L497-L511 writeBenchmarkLineBody, L687 the Rank line,
L625 the nThread line, L777-L778 the footer).

Read in time linear in the log: every pattern below either is anchored with one quantified run
before a literal of another class, or is searched from a literal prefix with no unbounded run after
it that could fail (read them so before adding one). Numbers are bounded (an integer has at most 9
digits, a bandwidth is a finite float): a bandwidth that reads as NaN or infinite is kept and named
(`NcclRun.bad_numbers`), so the gate fails it instead of comparing it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from gpufleet.errors import InputError

# mpirun --tag-output's "[1,0]<stdout>:" and Slurm srun --label's "0: ".
_TAG = re.compile(r"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: )")
# NCCL's prefix "host:pid:tid [dev]" (src/debug.cc), after the "[date time] " a WARN line may carry.
# The text runs to the end of the (stripped) line: a lazy text before `\s*$` was quadratic in a run of spaces.
_PREFIX = re.compile(r"^(?:\[[\d-]+ [\d:]+\] )?(?P<host>[^\s:\[\]]+):\d+:\d+ \[\d+\] .*?NCCL (?:INFO|WARN) (?P<text>.*)$")
# nccl-tests' device lines: "#  Rank  0 Group  0 Pid 25 on HOST device  0 ..." (2.11+), without Group before.
_RANK = re.compile(r"^#\s*Rank\s+(?P<rank>\d{1,9})\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(?P<host>\S+)\s+device\s+\d+")
_PARAMS = re.compile(r"^#\s*nThread\s+(?P<threads>\d{1,9})\s+nGpus\s+(?P<gpus>\d{1,9})(?!\d)")
# aws-ofi-nccl's provider line: "Selected Provider is efa" (<= 1.4), "... is efa;ofi_rxr" (2019),
# "... is efa (found 1 nics)" (1.5-1.15), "Selected provider is efa, fabric is efa-direct (found 16 nics)"
# (aws/aws-ofi-nccl 2daf7d30 src/nccl_ofi_net.cpp L644).
_PROVIDER = re.compile(
    r"NET/OFI Selected [Pp]rovider is (?P<provider>[\w-]+)(?:;\S+)?(?:, fabric is [\w-]+)?(?: \(found (?P<nics>\d{1,9}) nics?\))?"
)
_NETWORK = re.compile(r"^Using network (?P<network>.+)$")
# A channel over the network: "... via NET/AWS Libfabric/3/GDRDMA" names the NIC it uses.
_NET_DEVICE = re.compile(r"via NET/(?P<net>[^/]+)/(?P<dev>\d{1,9})(?!\d)")
# The network plugin not found or not started, in NCCL's words (NVIDIA/nccl 5067397c
# src/plugin/plugin_open.cc L100-L127; before 2.19 "No plugin found (libnccl-net.so)" and "Plugin load
# returned N : ...") and aws-ofi-nccl's (2daf7d30 src/nccl_ofi_net.cpp L334-L418, src/nccl_ofi_api.cpp
# L79). "Failed to find ncclCollNetPlugin_vN symbol" is not among them: CollNet is optional.
_PLUGIN_FAILED = re.compile(r"NET/Plugin ?: (?:No plugin found|Plugin load (?:\(\S+\) )?returned|Could not find:|dlerror=)")
# The plugin's own words, searched after its first `NET/OFI ` only: `NET/OFI .*(...)` tried again from
# every later `NET/OFI ` was quadratic in their number.
_OFI = "NET/OFI "
_OFI_FAILED = re.compile(
    r"initialization failed|Initializing plugin failed|Failed to initialize|Unable to find a protocol"
    r"|No eligible providers|Only EFA provider is supported|Couldn't find any optimal provider"
)
# NCCL's own stop when the pinned network does not start (src/plugin/net.cc L349), nccl-tests' on any error.
# "Error: network NAME not found" is found by its two ends (_network_not_found): `Error: network .* not
# found` tried from every "Error: network " was quadratic in their number.
_INIT_FAILED = re.compile(r"Failed to initialize any NET plugin|Test NCCL failure.*")
_NETWORK_NOT_FOUND = ("Error: network ", " not found")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<avg>\S+)")


class NotAnNcclLog(InputError):
    """The text holds neither a bus bandwidth table nor any NCCL line."""


@dataclass(frozen=True)
class Row:
    """One message size of the table: out-of-place (and in-place) algbw and busbw, in GB/s."""

    size: int
    algbw: float
    busbw: float
    busbw_in_place: float | None


@dataclass(frozen=True)
class NcclRun:
    ranks: dict[int, str]  # rank -> host, from nccl-tests' "# Rank" lines
    gpus_per_process: int | None  # nccl-tests' nGpus (-g)
    nccl_hosts: frozenset[str]  # the hosts NCCL's own lines come from
    providers: tuple[tuple[str, str, int | None], ...]  # (host, provider, NICs found) per provider line
    networks: tuple[str, ...]  # "Libfabric", "AWS Libfabric", "Socket", "IB", ...
    net_devices: dict[str, frozenset[int]]  # host -> the network devices its channels use
    plugin_failures: tuple[str, ...]  # the plugin's and NCCL's lines saying it was not found or did not start
    efa_checks: tuple[tuple[str, int, int], ...]  # (host, found, expected): gpufleet's pre-check
    rows: tuple[Row, ...]
    average: float | None
    failure: str | None  # NCCL's own line where it could not start
    bad_numbers: tuple[str, ...] = ()  # the table's bandwidths that are no finite number, each with its row

    @property
    def largest(self) -> Row | None:
        return max(self.rows, key=lambda r: r.size) if self.rows else None

    @property
    def hosts(self) -> frozenset[str]:
        """The hosts that ran: nccl-tests' rank lines, else NCCL's line prefixes."""
        return frozenset(self.ranks.values()) or self.nccl_hosts

    def inferred_ranks(self) -> int | None:
        """Ranks from the largest row: an all-reduce's busbw is algbw x 2(n-1)/n (nccl-tests
        doc/PERFORMANCE.md L59-L63), so n = 2 / (2 - busbw/algbw); None where that cannot be read."""
        row = self.largest
        if row is None or row.algbw <= 0:
            return None
        ratio = row.busbw / row.algbw
        return round(2 / (2 - ratio)) if 1 <= ratio < 1.99 else None


@dataclass
class _Table:
    busbw: int  # column index of the out-of-place busbw, counted from the row's first cell
    algbw: int
    busbw_in_place: int | None
    rows: list[Row]
    average: float | None = None
    bad_numbers: list[str] = field(default_factory=list)


def _table(header: str) -> _Table | None:
    """The column layout a table header names ("# size count type redop [root] time algbw busbw #wrong ...")."""
    names = header.lstrip("#").split()
    if "size" not in names or names.count("busbw") < 1:
        return None
    start = names.index("size")
    busbw = [i - start for i, n in enumerate(names) if n == "busbw"]
    algbw = names.index("algbw") - start
    return _Table(busbw[0], algbw, busbw[1] if len(busbw) > 1 else None, [])


def _row(line: str, table: _Table) -> Row | None:
    cells = line.split()
    if len(cells) <= table.busbw or not (cells[0].isdigit() and cells[1].isdigit()):
        return None
    columns = {"algbw": table.algbw, "busbw": table.busbw}
    if table.busbw_in_place is not None and len(cells) > table.busbw_in_place:
        columns["in-place busbw"] = table.busbw_in_place
    try:
        size = int(cells[0])  # more than Python's 4300 digits is a ValueError too
        values = {name: float(cells[i]) for name, i in columns.items()}
    except ValueError:  # a cell that is not a number: not a row of this table
        return None
    # float() reads "nan", "inf" and "1e999": numbers to Python, no bandwidth to the gate.
    table.bad_numbers += [
        f"the row of {size} bytes: {name} {_shown(cells[columns[name]])}" for name, v in values.items() if not math.isfinite(v)
    ]
    return Row(size, values["algbw"], values["busbw"], values.get("in-place busbw"))


def _average(text: str, table: _Table) -> float | None:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isfinite(value):
        return value
    table.bad_numbers.append(f"the '# Avg bus bandwidth' line: {_shown(text)}")
    return None


def _shown(cell: str) -> str:
    """A cell as a message quotes it: a log's cell can be a megabyte long."""
    return repr(cell if len(cell) <= 24 else cell[:24] + "...")


def _plugin_failed(text: str) -> bool:
    if _PLUGIN_FAILED.search(text):
        return True
    ofi = text.find(_OFI)
    return ofi >= 0 and _OFI_FAILED.search(text, ofi + len(_OFI)) is not None


def _init_failure(line: str) -> str | None:
    """NCCL's or nccl-tests' own line where the run could not start (the leftmost, if several)."""
    found = []
    if m := _INIT_FAILED.search(line):
        found.append((m.start(), m.group(0)))
    head, tail = _NETWORK_NOT_FOUND
    end = line.rfind(tail)
    start = line.find(head, 0, end) if end >= 0 else -1
    if start >= 0:
        found.append((start, line[start : end + len(tail)]))
    return min(found)[1].strip() if found else None


@dataclass
class _Reader:
    marker: str
    ranks: dict[int, str]
    gpus_per_process: int | None = None
    failure: str | None = None
    seen_nccl: bool = False

    def __post_init__(self) -> None:
        self.check = re.compile(re.escape(self.marker) + r": (?P<host>\S+) found (?P<found>\d{1,9}) of (?P<expected>\d{1,9}) EFA devices")
        self.hosts: set[str] = set()
        self.providers: list[tuple[str, str, int | None]] = []
        self.networks: list[str] = []
        self.devices: dict[str, set[int]] = {}
        self.plugin_failures: list[str] = []
        self.efa_checks: list[tuple[str, int, int]] = []
        self.tables: list[_Table] = []
        self.current: _Table | None = None

    def nccl_line(self, host: str, text: str) -> None:
        self.hosts.add(host)
        if m := _PROVIDER.search(text):
            self.providers.append((host, m["provider"], int(m["nics"]) if m["nics"] else None))
        elif m := _NETWORK.match(text):
            self.networks.append(m["network"])
        elif _plugin_failed(text):
            self.plugin_failures.append(text)
        for m in _NET_DEVICE.finditer(text):
            self.devices.setdefault(host, set()).add(int(m["dev"]))

    def table_line(self, line: str) -> None:
        stripped = line.strip()
        if stripped.startswith("#") and "busbw" in stripped and "size" in stripped:
            self.current = _table(stripped)
            if self.current is not None:
                self.tables.append(self.current)
        elif self.current is not None and (m := _AVG.match(stripped)):
            self.current.average = _average(m["avg"], self.current)
            self.current = None
        elif self.current is not None and (row := _row(stripped, self.current)) is not None:
            self.current.rows.append(row)

    def read(self, raw: str) -> None:
        line = _TAG.sub("", raw)
        stripped = line.strip()
        if "NCCL" in line or self.marker in line:
            self.seen_nccl = True
        if m := _PREFIX.match(stripped):
            self.nccl_line(m["host"], m["text"])
        elif m := self.check.search(line):
            self.efa_checks.append((m["host"], int(m["found"]), int(m["expected"])))
        elif m := _RANK.match(stripped):
            self.ranks[int(m["rank"])] = m["host"]
        elif m := _PARAMS.match(stripped):
            self.gpus_per_process = int(m["gpus"])
        else:
            self.table_line(line)
        if self.failure is None:
            self.failure = _init_failure(line)


def parse(text: str, marker: str) -> NcclRun:
    """The run the text records; `marker` starts the EFA pre-check's lines (the catalog's)."""
    reader = _Reader(marker, {})
    for raw in text.splitlines():
        reader.read(raw)
    complete = [t for t in reader.tables if t.rows]
    if not complete and not reader.seen_nccl:
        raise NotAnNcclLog("no all_reduce_perf bus bandwidth table and no NCCL line")
    # A document may quote a run twice (whole, then an excerpt): the run reaching the largest size.
    best = max(complete, key=lambda t: max(r.size for r in t.rows)) if complete else None
    return NcclRun(
        ranks=reader.ranks,
        gpus_per_process=reader.gpus_per_process,
        nccl_hosts=frozenset(reader.hosts),
        providers=tuple(reader.providers),
        networks=tuple(reader.networks),
        net_devices={h: frozenset(d) for h, d in reader.devices.items()},
        plugin_failures=tuple(reader.plugin_failures),
        efa_checks=tuple(reader.efa_checks),
        rows=tuple(best.rows) if best else (),
        average=best.average if best else None,
        failure=reader.failure,
        bad_numbers=tuple(best.bad_numbers) if best else (),
    )
