"""How deep a JSON document from outside may nest, for every reader of one: a plan (gpufleet's or
`pulumi preview --json`), a recorded fleet (`verify --from`) and a price source. Real inputs
(Kubernetes manifests, Helm values, kubectl's JSON) nest about 20 deep; the pack's converters recurse
once per level and stop near 400. Kept in the catalog, the lowest room, so that the price generator,
which may import only the catalog, reads the same bound as the plan readers."""

from __future__ import annotations

MAX_DEPTH = 128


def depth(value: object) -> int:
    """How many arrays and objects nest in `value` at the deepest (0 for a scalar), walked without
    recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in (node.values() if isinstance(node, dict) else node))
    return deepest
