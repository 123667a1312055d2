"""The platforms gpufleet builds on, in the order the stack file, the program and the summary take
them: the one list a new platform joins (its record is components/<platform>/platform.py)."""

from __future__ import annotations

from gpufleet.components.ack.platform import PLATFORM as ACK
from gpufleet.components.aks.platform import PLATFORM as AKS
from gpufleet.components.ecs.platform import PLATFORM as ECS
from gpufleet.components.eks.platform import PLATFORM as EKS
from gpufleet.components.gke.platform import PLATFORM as GKE

PLATFORMS = (ECS, EKS, ACK, GKE, AKS)
BY_KEY = {p.key: p for p in PLATFORMS}
