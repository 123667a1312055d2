"""The NCCL gate's floors, one row per EFA type with NVIDIA GPUs, as docs/verify.md shows them:
derived from the catalog (EC2's NetworkPerformance) and the public runs it cites (rules/nccl.py).

    python -m gpufleet.verify.nccl_floors     # prints the table docs/verify.md holds
"""

from __future__ import annotations

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.rules import nccl as nccl_rules

_GIB = 1 << 30


def _size(n: int) -> str:
    return f"{n // _GIB} GiB" if n % _GIB == 0 else f"{n} bytes"


def table(cat: Catalog) -> str:
    lines = [
        "| type | EFA (EC2 NetworkPerformance) | floor | derivation | public runs on its fabric |",
        "|---|---|---|---|---|",
    ]
    for it in nccl_rules.nccl_types(cat):
        fl = nccl_rules.floor(cat, it.name)
        if fl is None:
            lines.append(f"| {it.name} | {it.network_performance} | not judged | no public multi-node run on its fabric | - |")
            continue
        nodes = "2 nodes" if fl.max_nodes == 2 else f"2 to {fl.max_nodes} nodes"
        runs = "; ".join(
            f"{r.instance_type}, {r.nodes} nodes, {r.busbw_gbps:g} GB/s at {_size(r.message_bytes)}: {r.source}" for r in fl.runs
        )
        lines.append(
            f"| {it.name} | {it.network_performance} | {fl.busbw_gbps:g} GB/s at {_size(fl.message_bytes)}, {nodes} | {fl.derivation()} | {runs} |"
        )
    gated = {it.name for it in nccl_rules.nccl_types(cat)}
    others = sorted((it for it in cat.types.values() if it.efa_supported and it.name not in gated), key=lambda it: it.name)
    neuron = [it.name for it in others if it.neuron is not None]
    lines += [
        "",
        f"The catalog's {len(others)} other EFA types carry no NVIDIA GPU, so the gate does not apply to them: "
        f"the {len(neuron)} Neuron types ({', '.join(neuron)}) run Neuron's collectives (nccom-test), "
        f"which verify does not read; the other {len(others) - len(neuron)} are CPU or other-accelerator types.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    print(table(catalog.load()), end="")


if __name__ == "__main__":
    main()
