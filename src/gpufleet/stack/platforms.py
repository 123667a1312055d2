"""The platforms gpufleet builds on, in the order the stack file, the program and the summary take
them: the one list a new platform joins (its record is src/gpufleet/<platform>/platform.py)."""

from __future__ import annotations

from gpufleet.ack.platform import PLATFORM as ACK
from gpufleet.aks.platform import PLATFORM as AKS
from gpufleet.ecs.platform import PLATFORM as ECS
from gpufleet.eks.platform import PLATFORM as EKS
from gpufleet.gke.platform import PLATFORM as GKE

PLATFORMS = (ECS, EKS, ACK, GKE, AKS)
BY_KEY = {p.key: p for p in PLATFORMS}
