"""Azure AKS: GPU node pools (VM sizes with their GPUs, MIG instance profiles, the driver), the NVIDIA device plugin and GPU workloads."""
