"""The `gpufleet` command (main) and what it prints: the preview report, the reviewer's diff and its
Mermaid pictures, the catalog view, saved plans read for check and diff, the generated docs."""
