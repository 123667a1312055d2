"""Amazon EKS: a cluster (new or existing) and accelerated managed node groups with EFA."""
