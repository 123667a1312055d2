"""gpufleet: typed Pulumi components for accelerated ML compute, an offline engine that previews them,
and the gpufleet-guard policy pack. This folder (infra/ in the repository) is the package itself:
the Pulumi program, the engine, the analyzer client and the CLI; `gpufleet.components`,
`gpufleet.policies` and `gpufleet.stacks` are the repository's other folders (pyproject.toml)."""
