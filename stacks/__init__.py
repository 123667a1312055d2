"""The shipped stack files (Pulumi.<stack>.yaml), packaged as data so that `gpufleet preview STACK`
finds them in an installed gpufleet too. Pulumi reads this folder as `stackConfigDir`."""
