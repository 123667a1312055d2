"""Reading any plan, gpufleet's or `pulumi preview --json`'s, by resource types and inputs alone: the
index, the pods and tasks it runs, the accelerated groups, where everything lands, what an update
replaces and drags along, and the shapes checked before anything reads an input. Platforms never
import this room; the pack, the CLI and the engine do."""
