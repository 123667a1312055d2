"""Benchmarks (run as scripts) and the generated fleets they and the scale tests share."""
