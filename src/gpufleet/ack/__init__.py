"""Alibaba ACK: GPU node pools for shared GPU scheduling (GPU memory and computing power isolation)."""
