"""`gpufleet verify`: the live (or recorded) fleet held against the plan, in the plan's terms.

Layered below the CLI: `expected` reads what the plan says; `recorded`, `kube_live` and `ecs_live`
read what exists, into the shapes of `fleet`; `kube_checks`, `ecs_checks` and `nccl_gate` compare;
`verdict` holds the findings the CLI prints and exits on.
"""
