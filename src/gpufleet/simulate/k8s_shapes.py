"""What the scheduler simulation reasons over: amounts shown as kubectl shows them (apis/quantity.py
parses them), the nodes of a node group, a pod template, and where one template lands (k8s_scheduler)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from gpufleet.catalog.catalog import Gpu
from gpufleet.simulate.dra_objects import ResourceSlice

SCHEDULED, AFTER_SCALE_UP, PENDING, DAEMON = "scheduled", "after-scale-up", "pending", "daemon"


def show(resource: str, amount: int) -> str:
    """An amount in the units people write: 1500m, 32000Mi, 8."""
    if resource == "cpu":
        return f"{amount}m" if amount % 1000 else str(amount // 1000)
    if resource == "memory" or resource.startswith(("hugepages-", "ephemeral-storage")):
        return f"{amount / 2**30:g}Gi" if amount % 2**30 == 0 else f"{math.ceil(amount / 2**20)}Mi"
    return str(amount)


@dataclass(frozen=True)
class NodeShape:
    """The nodes of one node group as the scheduler sees them."""

    group: str
    instance_type: str
    labels: Mapping[str, str]
    taints: tuple[Mapping, ...]  # Kubernetes spelling: key, value, effect NoSchedule | NoExecute | PreferNoSchedule
    allocatable: Mapping[str, int]  # resource -> amount (quantity units); `pods` is the pod count
    nodes: int  # at creation (desired size)
    max_nodes: int
    min_nodes: int
    # Memory allocatable if the OS keeps the estimated share rather than the documented one: a node
    # whose pods need more than this may not fit them on a real instance.
    memory_estimate: int | None = None
    # The cluster's Kubernetes version, which words the scheduler's messages (None: not in the plan).
    kubernetes_version: str | None = None
    # Labels whose value differs between the group's nodes or is unknown (the zone of a multi-zone group).
    uncertain_labels: frozenset[str] = frozenset()
    # Resources whose amount cannot be known from the plan (MIG partitions; the CPU and memory of
    # machine sizes the catalog does not hold): not checked, noted with the reason.
    unknown_resources: frozenset[str] = frozenset()
    unknown_reason: str = "depends on its MIG layout, which the plan does not set"
    # Extended resources the kubelet rejects requests larger than 1 of (time-slicing's failRequestsGreaterThanOne).
    single_unit_resources: frozenset[str] = frozenset()
    # Facts the shape takes on trust (kubelet reservations of an AMI type no source gives).
    assumptions: tuple[str, ...] = ()
    # Extended resources a device plugin of the plan should advertise (a request for one that no
    # DaemonSet of the plan advertises is judged on trust).
    plugin_resources: frozenset[str] = frozenset()
    # Resources a pod takes from one device (a shared GPU's memory and compute): per device, what it
    # holds. A pod's requests of these must fit one device (ACK's GPU sharing binpacks them).
    devices: tuple[Mapping[str, int], ...] = ()
    # Why the group's nodes are derived, not read from the plan (an API's or a library's default).
    derived: str | None = None
    # The ResourceSlices one node of the group publishes (DRA drivers' devices), its nodeName the group's.
    slices: tuple[ResourceSlice, ...] = ()
    slices_unknown: str = ""  # why the devices its nodes publish are not known ("": they are, or none)
    # The GPUs of a node whose machine EC2's records do not hold (a GKE pool's, from its accelerator
    # facts); None: the instance type's, where the catalog has it.
    gpu: Gpu | None = None


@dataclass(frozen=True)
class LabelSelector:
    """A metav1.LabelSelector as LabelSelectorAsSelector reads it: a nil one matches no pod, an
    empty one every pod; matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist) ANDed."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    expressions: tuple[Mapping, ...] = ()
    nothing: bool = False


@dataclass(frozen=True)
class PodTerm:
    """A required pod (anti-)affinity term: the pods its selector matches in its namespaces, by
    the domains of its topology key (k8s_topology)."""

    selector: LabelSelector
    topology_key: str
    namespaces: frozenset[str] = frozenset()
    all_namespaces: bool = False  # namespaceSelector: {}
    unknown: str = ""  # why the plan cannot judge it (a namespaceSelector over namespaces' labels)


@dataclass(frozen=True)
class Spread:
    """A topologySpreadConstraint with whenUnsatisfiable: DoNotSchedule, its matchLabelKeys merged
    into the selector and its policies defaulted as kube-scheduler does (k8s_topology)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    honor_affinity: bool = True  # nodeAffinityPolicy
    honor_taints: bool = False  # nodeTaintsPolicy
    unknown: str = ""  # why the plan cannot judge it


@dataclass(frozen=True)
class PodClaim:
    """One entry of a pod's spec.resourceClaims: a named ResourceClaim or a template's (k8s_dra)."""

    name: str
    claim: str | None = None
    template: str | None = None


@dataclass(frozen=True)
class PodTemplate:
    """A pod template as the scheduler filters it."""

    owner: str  # "Deployment kube-system/coredns", "MPIJob default/nccl-tests (Worker)"
    replicas: int | None  # None for a DaemonSet (one per matching node)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    # required nodeSelectorTerms (ORed; each term's matchExpressions ANDed); None: no node affinity.
    affinity_terms: tuple[Mapping, ...] | None = None
    tolerations: tuple[Mapping, ...] = ()
    requests: Mapping[str, int] = field(default_factory=dict)
    # Extended resources this DaemonSet's pods advertise on their nodes (device plugins).
    advertises: tuple[str, ...] = ()
    # Extended resources whose devices this DaemonSet's pods serve otherwise on their nodes (the DRA
    # driver's kubelet plugin: GPUs as ResourceSlice devices): a device plugin kept off those nodes
    # leaves nothing unserved.
    serves_instead: tuple[str, ...] = ()
    urn: str | None = None
    source: str = ""  # where the pod spec comes from (a chart's values, an EKS add-on, a manifest)
    notes: tuple[str, ...] = ()  # what could not be read (unknown values)
    annotations: Mapping[str, str] = field(default_factory=dict)  # the pod template's (karpenter.sh/do-not-disrupt)
    # The pod template's labels (what a Fargate profile's selector matches); None where the plan
    # does not give them (a chart's or an add-on's pods).
    labels: Mapping[str, str] | None = None
    # A required pod anti-affinity on kubernetes.io/hostname against its own pods: one per node.
    one_per_node: bool = False
    # (hostIP, protocol, hostPort) it holds on its node (k8s_requests.host_ports): one per node, and
    # none beside another pod holding one of them.
    host_ports: tuple[tuple[str, str, int], ...] = ()
    # Required inter-pod rules and hard spread constraints (k8s_topology reads and judges them).
    pod_affinity: tuple[PodTerm, ...] = ()
    pod_anti_affinity: tuple[PodTerm, ...] = ()
    spread: tuple[Spread, ...] = ()
    # spec.resourceClaims: the DRA claims every pod of the template needs (k8s_dra)
    claims: tuple[PodClaim, ...] = ()


@dataclass
class Placement:
    """Where one pod template runs: per group, how many fit one node and how many were placed; or
    Pending with the scheduler's words."""

    pod: PodTemplate
    status: str  # scheduled | after-scale-up | pending | daemon (provisioned: simulate/karpenter.py)
    per_node: dict[str, int | None] = field(default_factory=dict)  # group -> pods of this template one empty node holds (None: unknown)
    placed: dict[str, int] = field(default_factory=dict)  # group -> replicas placed (DaemonSet: nodes it runs on)
    scaled_up: dict[str, int] = field(default_factory=dict)  # group -> new nodes its replicas need
    pending: int = 0
    message: str = ""  # the scheduler's message for the replicas left Pending
    # Left Pending for its DRA claims: the DynamicResources plugin refused nodes, or the provisioners
    # that could launch one refuse pods with claims.
    claims_refused: bool = False
    notes: list[str] = field(default_factory=list)  # tight memory, assumed facts, unknown capacities
    # Nodes Karpenter launches for the replicas the groups leave Pending: per NodePool, the type, the
    # nodes and the replicas they hold (simulate/karpenter.py).
    provisioned: list[dict] = field(default_factory=list)
    # Where EKS runs it on Fargate instead of a node: the profile that selects it and the size each
    # replica gets (the pod's CapacityProvisioned annotation).
    fargate: dict[str, str] = field(default_factory=dict)

    @property
    def unverified(self) -> bool:
        return bool(self.notes)
