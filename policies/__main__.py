"""The gpufleet-guard policy pack's shell: `pulumi preview --policy-pack policies` runs this file. Its
rules are gpufleet's (gpufleet.policies), installed in the pack's virtualenv from requirements.txt."""

from gpufleet.policies.serve import serve

serve()
