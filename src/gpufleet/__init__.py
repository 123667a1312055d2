"""gpufleet: typed Pulumi components for accelerated ML compute, an offline engine that previews them,
and the gpufleet-guard policy pack. Each folder here is its import path: the kernel (catalog, apis,
rules, simulate, plans), the platform base and leaves (platform, network, nodes, k8s), the platforms
(ecs, eks, karpenter, ack, gke, aks), the pack's rules (policies), and the application (stack,
library, analyzer, engine, verify, cli). docs/contributing.md walks the rooms."""
