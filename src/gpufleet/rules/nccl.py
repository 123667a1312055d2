"""The NCCL gate's rules: did the all-reduce run over the fabric the plan gives it (EFA, every
device), and did its bus bandwidth reach the type's published threshold? Plain functions returning
None when the rule holds, else the reason; `gpufleet verify --nccl` calls them on a launcher's log."""

from __future__ import annotations

from gpufleet.catalog.facts import NcclThreshold

EFA_PROVIDER = "efa"


def efa_check_problems(checks: list[tuple[str, int, int]], workers: int, efa_per_worker: int) -> list[str]:
    """Each worker's pre-check line: every worker reported, each with the group's EFA devices."""
    problems = [f"{host} found {found} of {expected} EFA devices" for host, found, expected in checks if found != efa_per_worker]
    if len({host for host, _, _ in checks}) < workers:
        problems.append(f"{len({h for h, _, _ in checks})} of {workers} workers reported their EFA devices before the run")
    return problems


def network_problem(networks: list[str], providers: list[tuple[str, int | None]], net: str, efa_per_worker: int) -> str | None:
    """NCCL ran on the pinned network, over EFA, with every EFA device of a node."""
    if not networks:
        return "no 'Using network' line: NCCL_DEBUG=INFO was not on, or NCCL never started"
    other = sorted({n for n in networks if n.lower() not in (net.lower(), f"aws {net.lower()}")})
    if other:
        return f"NCCL used network {', '.join(other)}, not {net} (the OFI plugin over EFA): the fabric was not used"
    if any(p != EFA_PROVIDER for p, _ in providers):
        return f"the OFI plugin selected provider {', '.join(sorted({p for p, _ in providers}))}, not {EFA_PROVIDER}"
    short = sorted({n for _, n in providers if n is not None and n != efa_per_worker})
    if short:
        return f"NCCL found {', '.join(map(str, short))} EFA NIC(s) on a node, the group has {efa_per_worker}"
    return None


def bandwidth_problem(rows: list[tuple[int, float, float]], threshold: NcclThreshold, nodes: int) -> tuple[str | None, str | None]:
    """(problem, why not judged): the out-of-place busbw of the threshold's message size against it."""
    if nodes < threshold.min_nodes:
        return None, f"the threshold holds across {threshold.min_nodes} nodes or more; the run spans {nodes}"
    row = next((r for r in rows if r[0] == threshold.message_bytes), None)
    if row is None:
        largest = max((r[0] for r in rows), default=0)
        return None, f"the run's largest message is {largest} bytes; the threshold is read at {threshold.message_bytes}"
    floor = threshold.busbw_gbps * threshold.tolerance
    if row[1] < floor:
        return (
            f"bus bandwidth {row[1]:g} GB/s at {row[0]} bytes, below {floor:g} GB/s ({threshold.busbw_gbps:g} x {threshold.tolerance:g})",
            None,
        )
    return None, None
