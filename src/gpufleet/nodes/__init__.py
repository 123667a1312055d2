"""What every EC2 node gpufleet launches gets, on ECS and EKS alike: IMDSv2 with its hop limit,
encrypted gp3 volumes, and the IAM roles services assume (a leaf, as network/ and k8s/ are)."""
