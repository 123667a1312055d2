"""Google GKE: GPU node pools (guest accelerators, MIG partitions, GPU sharing, the driver) and GPU workloads."""
