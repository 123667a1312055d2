"""The gpufleet-guard policy pack's shell: `pulumi preview --policy-pack policies` runs this file. Its
rules are gpufleet's (gpufleet.policies), installed in the pack's virtualenv from requirements.txt."""

import gc

# The collector stays off while the pack imports its rules and loads the catalog, and serve() turns
# it back on: what they allocate lives as long as the pack, and the collector's passes over it took
# a sixth of that start (0.52 s of CPU, 0.44 s without them, on the 2-core bench host).
gc.disable()

from gpufleet.policies.serve import serve  # noqa: E402 - after the collector is off

serve()
