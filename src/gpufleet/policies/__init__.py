"""The gpufleet-guard CrossGuard policy pack (run by `__main__.py`); one module per rule group."""
