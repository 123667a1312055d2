"""In-cluster pieces of an accelerated EKS fleet: device plugins, MPI operator, NCCL test."""
