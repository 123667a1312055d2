"""The stack-file program: a stack's config read (files, yaml_reader), validated into the typed
spec (spec, schema), built by each platform's record (platforms, program) and summarised (summary).
`__main__.py` is the Pulumi program the offline engine runs; the repository's own `__main__.py` is
its shell for the Pulumi CLI."""
