"""The NCCL gate's rules: did the all-reduce run across the plan's hosts, over the fabric the plan gives
it (the OFI plugin, provider EFA, every NIC), and did its bus bandwidth reach the floor its type's EFA
bandwidth gives? Plain functions over the catalog and what a launcher's log shows, returning None
when the rule holds, else the reason; `gpufleet verify --nccl` calls them.

The floor of a type: its EFA bandwidth (EC2's NetworkPerformance, Gbit/s, / 8 for GB/s) x the
efficiency of the lowest public run on its fabric (that run's busbw / the same bandwidth) x the
catalog's margin, read at that run's message size. nccl-tests' busbw counts every rank's traffic,
NVLink included, so on 2 nodes it exceeds the NICs' bandwidth (NVIDIA/nccl-tests#22, quoting
NVIDIA/nccl#209: "the reported BusBW figure can exceed the actual available peak BW, when running on
just 2 nodes") and it falls as nodes are added. So the lowest figure across a fabric's runs holds
for any run of 2 nodes up to the largest node count among them, and a larger run is not judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpufleet.catalog.catalog import Catalog, InstanceType
from gpufleet.catalog.facts import NcclPublicRun

EFA_PROVIDER = "efa"
_BITS_PER_BYTE = 8
_NETWORK_PERFORMANCE = re.compile(r"(?:(?P<cards>\d+)x )?(?P<gbps>\d+(?:\.\d+)?) Gigabit")


def efa_gbps(it: InstanceType) -> float | None:
    """The type's network bandwidth in Gbit/s, from EC2's words ("3200 Gigabit", "4x 100 Gigabit");
    None where EC2 gives a range ("Up to 25 Gigabit") or nothing."""
    m = _NETWORK_PERFORMANCE.fullmatch(it.network_performance)
    return int(m["cards"] or 1) * float(m["gbps"]) if m else None


def _fabric(it: InstanceType) -> tuple[object, ...]:
    """What a run's efficiency depends on: the GPUs (model, count) and the EFA fabric (bandwidth, interfaces)."""
    return (it.gpu.model if it.gpu else None, it.gpu.count if it.gpu else 0, it.network_performance, it.max_efa_interfaces)


@dataclass(frozen=True)
class Floor:
    """The least out-of-place busbw a healthy run of `instance_type` reaches at `message_bytes`,
    across 2 to `max_nodes` nodes, and how it is derived."""

    instance_type: str
    efa_gbps: float
    efficiency: float  # busbw / EFA GB/s of the lowest run on this fabric
    margin: float
    basis: NcclPublicRun  # that run
    runs: tuple[NcclPublicRun, ...]  # every public run on this fabric
    margin_source: str

    @property
    def message_bytes(self) -> int:
        return self.basis.message_bytes

    @property
    def max_nodes(self) -> int:
        return max(r.nodes for r in self.runs)

    @property
    def busbw_gbps(self) -> float:
        return round(self.efa_gbps / _BITS_PER_BYTE * self.efficiency * self.margin, 2)

    def derivation(self) -> str:
        basis = self.basis
        on = "" if basis.instance_type == self.instance_type else f" on {basis.instance_type}, the same GPUs and EFA fabric"
        return (
            f"{self.efa_gbps:g} Gbps EFA (EC2 NetworkPerformance) / 8 = {self.efa_gbps / _BITS_PER_BYTE:g} GB/s"
            f" x efficiency {self.efficiency:.3f} (the lowest public run{on}: {basis.busbw_gbps:g} GB/s at"
            f" {basis.message_bytes} bytes across {basis.nodes} nodes) x margin {self.margin:g} = {self.busbw_gbps:g} GB/s"
        )

    def sources(self) -> list[str]:
        return [r.source for r in self.runs] + [self.margin_source]


def nccl_types(cat: Catalog) -> list[InstanceType]:
    """The types an NCCL gate applies to: NVIDIA GPUs with EFA."""
    return sorted(
        (it for it in cat.types.values() if it.efa_supported and it.gpu is not None and it.gpu.manufacturer == "NVIDIA"),
        key=lambda it: it.name,
    )


def floor(cat: Catalog, instance_type: str | None) -> Floor | None:
    """The type's floor; None for a type no public run on its fabric gives an efficiency for."""
    it = cat.find(instance_type)
    gbps = efa_gbps(it) if it else None
    if it is None or not gbps:
        return None
    facts = cat.facts.nccl_bandwidth
    runs = tuple(r for r in facts.runs if (other := cat.find(r.instance_type)) is not None and _fabric(other) == _fabric(it))
    if not runs:
        return None
    basis = min(runs, key=lambda r: r.busbw_gbps)
    efficiency = basis.busbw_gbps / (gbps / _BITS_PER_BYTE)
    return Floor(it.name, gbps, efficiency, facts.margin, basis, runs, facts.margin_source)


def efa_check_problems(checks: tuple[tuple[str, int, int], ...], workers: int, efa_per_worker: int) -> list[str]:
    """Each worker's pre-check line: every worker reported, each with the group's EFA devices."""
    problems = [f"{host} found {found} of {expected} EFA devices" for host, found, expected in checks if found != efa_per_worker]
    if len({host for host, _, _ in checks}) < workers:
        problems.append(f"{len({h for h, _, _ in checks})} of {workers} workers reported their EFA devices before the run")
    return problems


def network_problem(networks: tuple[str, ...], plugin_failures: tuple[str, ...], net: str) -> tuple[str, str] | None:
    """(failure, reason) where NCCL did not run on the pinned network: the plugin not found or not
    started, a fallback to sockets, another network."""
    pinned = (net.lower(), f"aws {net.lower()}")
    other = sorted({n for n in networks if n.lower() not in pinned})
    fell_back = f"NCCL used network {', '.join(other)}, not {net} (the OFI plugin over EFA): the fabric was not used" if other else ""
    if plugin_failures:
        why = "; ".join(dict.fromkeys(plugin_failures))
        return "plugin-failed", f"the OFI plugin was not found or did not start ({why})" + (f"; {fell_back}" if fell_back else "")
    if "Socket" in other:
        return "socket-fallback", fell_back
    if other:
        return "other-network", fell_back
    return None


def provider_problem(providers: tuple[tuple[str, str, int | None], ...]) -> str | None:
    wrong = sorted({p for _, p, _ in providers if p != EFA_PROVIDER})
    return f"the OFI plugin selected provider {', '.join(wrong)}, not {EFA_PROVIDER}" if wrong else None


def nic_counts(providers: tuple[tuple[str, str, int | None], ...], devices: dict[str, frozenset[int]]) -> tuple[dict[str, int], str]:
    """NICs per host and where the count comes from: the provider lines' "found N nics", else the
    network devices the host's channels use (a lower bound: NCCL need not use every NIC)."""
    found = {host: n for host, _, n in providers if n is not None}
    if found:
        return found, "the provider line's NIC count"
    return {host: len(d) for host, d in devices.items()}, "the network devices NCCL's channels use"


def span_problem(hosts: int, ranks: int, workers: int, gpus_per_worker: int) -> str | None:
    """Hosts (and ranks, where the log names them) against the plan's job."""
    if hosts == 1:
        return "a single-node run: every rank on one host, so the fabric was not used"
    if hosts < workers:
        return f"the run spans {hosts} hosts; the plan's job has {workers} workers"
    if ranks and ranks < workers * gpus_per_worker:
        return f"{ranks} ranks across {hosts} hosts; the plan's job runs {workers} x {gpus_per_worker} GPUs"
    return None


def ranks_problem(ranks: int, workers: int, gpus_per_worker: int) -> str | None:
    """Ranks read from the table alone, against the plan's job."""
    expected = workers * gpus_per_worker
    if not gpus_per_worker or ranks >= expected:
        return None
    single = f"; {ranks} ranks fit one node's {gpus_per_worker} GPUs: a single-node run" if ranks <= gpus_per_worker else ""
    return f"the run had {ranks} ranks (busbw/algbw = 2(n-1)/n); the plan's job runs {workers} x {gpus_per_worker} = {expected}{single}"


def bandwidth_problem(busbw_at: dict[int, float], nodes: int, fl: Floor) -> tuple[str | None, str | None]:
    """(problem, why not judged): the run's out-of-place busbw at the floor's message size against it."""
    if nodes > fl.max_nodes:
        return None, f"the floor holds across 2 to {fl.max_nodes} nodes (busbw per NIC falls as nodes are added); the run spans {nodes}"
    if fl.message_bytes not in busbw_at:
        largest = max(busbw_at, default=0)
        return None, f"the floor is read at {fl.message_bytes} bytes; the run's largest message is {largest} bytes"
    busbw = busbw_at[fl.message_bytes]
    if busbw < fl.busbw_gbps:
        return f"bus bandwidth {busbw:g} GB/s at {fl.message_bytes} bytes, below the floor {fl.busbw_gbps:g} GB/s", None
    return None, None
