"""The NodePool and EC2NodeClass specs a pool's args make: written once, for the component that
creates them and for the spec's checks and placement, which read them back through the same pool
reader the pack runs on any program (simulate/karpenter_pools.py).

Facts: Karpenter v1.14.1's CRDs and labels (curated `karpenter`); the accelerator's taint and labels
are the node groups' (curated `eks`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from gpufleet.catalog.catalog import Catalog, InstanceType
from gpufleet.karpenter.args import GpuSelectorArgs, NeuronSelectorArgs, NodePoolArgs
from gpufleet.rules import k8s as k8s_rules
from gpufleet.rules.efa import EfaInterface, efa_layout
from gpufleet.simulate import karpenter, karpenter_pools

NODE_CLASS_GROUP, NODE_CLASS_KIND = "karpenter.k8s.aws", "EC2NodeClass"
# The node class's ENA interfaces are `interface` in Karpenter's enum (ec2nodeclass.go L543-L565).
_INTERFACE_TYPES = {"interface": "interface", "efa-only": "efa-only"}


def kind(pool: NodePoolArgs) -> str:
    """The pool's accelerator: nvidia | neuron."""
    return "nvidia" if pool.gpu is not None else "neuron"


def chart_values(cluster_name: object, queue_name: object, node_overlays: bool, cat: Catalog) -> dict:
    """The chart's values: the cluster and queue, the Pod Identity service account, the guide's
    controller resources; the NodeOverlay gate only when the stack asks for overlays."""
    facts = cat.facts.karpenter
    install = facts.install
    settings: dict = {"clusterName": cluster_name, "interruptionQueue": queue_name}
    if node_overlays:
        gate = facts.node_overlay.feature_gate
        settings.setdefault(gate[1], {})[gate[2]] = True
    resources = dict(install.controller_resources)
    return {
        "settings": settings,
        "serviceAccount": {"name": install.service_account},
        "controller": {"resources": {"requests": resources, "limits": resources}},
    }


def requirements(pool: NodePoolArgs, cat: Catalog, auto: bool = False) -> list[dict]:
    """The pool's requirements on Karpenter's well-known labels (under eks.amazonaws.com with Auto
    Mode, whose nodes carry no instance-accelerator-* label: a Neuron pool there is its families or
    types), from its accelerator terms."""
    facts, names = cat.facts.karpenter, cat.facts.eks.well_known_labels
    domain = cat.facts.eks.auto_mode.label_domain if auto else facts.labels.domain
    found = [{"key": names.os, "operator": "In", "values": ["linux"]}]
    selector: GpuSelectorArgs | NeuronSelectorArgs | None
    if pool.gpu is not None:
        found.append({"key": f"{domain}/instance-gpu-manufacturer", "operator": "In", "values": [facts.labels.manufacturers["nvidia"]]})
        selector, prefix = pool.gpu, "instance-gpu"
    elif not auto:
        found.append(
            {"key": f"{domain}/instance-accelerator-manufacturer", "operator": "In", "values": [facts.labels.manufacturers["neuron"]]}
        )
        selector, prefix = pool.neuron, "instance-accelerator"
    else:
        selector, prefix = None, ""
    if selector is not None and selector.names is not None:
        found.append({"key": f"{domain}/{prefix}-name", "operator": "In", "values": list(selector.names)})
    if selector is not None and selector.count is not None:
        found.append({"key": f"{domain}/{prefix}-count", "operator": "In", "values": [str(selector.count)]})
    if pool.instance_families is not None:
        found.append({"key": f"{domain}/instance-family", "operator": "In", "values": list(pool.instance_families)})
    if pool.instance_types is not None:
        found.append({"key": names.instance_type, "operator": "In", "values": list(pool.instance_types)})
    found.append({"key": facts.labels.capacity_type, "operator": "In", "values": list(pool.capacity_types)})
    if pool.zones is not None:
        found.append({"key": names.zone, "operator": "In", "values": list(pool.zones)})
    return found


def taints(pool: NodePoolArgs, cat: Catalog) -> list[dict]:
    """The accelerator's taint, in Kubernetes' spelling (as a node group's)."""
    return [k8s_rules.taint(cast(dict, cat.facts.eks.accelerator_taints.of(kind(pool))), cat.facts.eks)]  # nvidia and neuron have one


def labels(pool: NodePoolArgs, cat: Catalog) -> dict[str, str]:
    """The accelerator's labels (the NVIDIA device plugin's affinity needs one), then the pool's."""
    return {**cat.facts.eks.accelerator_labels.of(kind(pool)), **pool.labels}


def node_class_ref(pool: NodePoolArgs, cat: Catalog, auto: bool = False) -> dict:
    """Karpenter's EC2NodeClass, or with Auto Mode its NodeClass, of the pool's name."""
    if auto:
        build = cat.facts.eks.auto_mode
        return {"group": build.node_class_group, "kind": build.build.node_class_kind, "name": pool.name}
    return {"group": NODE_CLASS_GROUP, "kind": NODE_CLASS_KIND, "name": pool.name}


def node_pool_spec(pool: NodePoolArgs, cat: Catalog, limits: Mapping[str, int] | None = None, auto: bool = False) -> dict:
    """The NodePool's spec; `limits` None: as yet without (they are derived from its types)."""
    template = {
        "metadata": {"labels": labels(pool, cat)},
        "spec": {
            "nodeClassRef": node_class_ref(pool, cat, auto),
            "requirements": requirements(pool, cat, auto),
            "taints": taints(pool, cat),
            "expireAfter": pool.expire_after,
        },
    }
    spec: dict = {
        "template": template,
        "disruption": {
            "consolidationPolicy": pool.consolidation,
            "consolidateAfter": pool.consolidate_after,
            "budgets": [{"nodes": pool.disruption_budget}],
        },
    }
    if limits:
        spec["limits"] = {k: str(v) for k, v in limits.items()}
    if pool.weight is not None:
        spec["weight"] = pool.weight
    return spec


def volumes(pool: NodePoolArgs, cat: Catalog) -> list[dict]:
    """Encrypted gp3 volumes of the family's layout, the size where images and pods live (Bottlerocket:
    its data volume, beside its control volume at Karpenter's default size)."""
    facts = cat.facts.karpenter.volumes
    family = pool.ami_family

    def volume(device: str, gib: int) -> dict:
        return {
            "deviceName": device,
            "ebs": {"volumeSize": f"{gib}Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True},
        }

    data = volume(facts.data_device[family], pool.root_volume_gib)
    if facts.data_device[family] == facts.root_device[family]:
        return [{**data, "rootVolume": True}]
    return [volume(facts.root_device[family], facts.control_volume_gib[family]), data]


def node_class_spec(
    pool: NodePoolArgs,
    role: object,
    subnets: list,
    security_groups: list,
    cat: Catalog,
    efa: Sequence[EfaInterface] = (),
    placement_group: object = None,
) -> dict:
    """The EC2NodeClass's spec: the pinned AMI alias, the nodes' role, the selector terms the caller
    resolves (gpufleet's tags or ids), an encrypted gp3 root volume, IMDSv2 with hop limit 1, the
    reservations, and for EFA the interfaces card by card."""
    spec: dict = {
        "role": role,
        "amiSelectorTerms": [{"alias": f"{pool.ami_family}@{pool.ami_version}"}],
        "subnetSelectorTerms": subnets,
        "securityGroupSelectorTerms": security_groups,
        "blockDeviceMappings": volumes(pool, cat),
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        },
    }
    if pool.capacity_reservations:
        spec["capacityReservationSelectorTerms"] = [{"id": r.id} for r in pool.capacity_reservations]
    if efa:
        spec["networkInterfaces"] = [
            {"networkCardIndex": i.network_card_index, "deviceIndex": i.device_index, "interfaceType": _INTERFACE_TYPES[i.interface_type]}
            for i in efa
        ]
    if placement_group is not None:
        spec["placementGroupSelector"] = {"name": placement_group}
    return spec


def auto_node_class_spec(pool: NodePoolArgs, role: object, subnets: list, security_groups: list) -> dict:
    """An Auto Mode NodeClass's spec: the nodes' role, the selector terms, the ephemeral storage
    (Auto Mode chooses AMIs, interfaces and volumes' other settings itself)."""
    return {
        "role": role,
        "subnetSelectorTerms": subnets,
        "securityGroupSelectorTerms": security_groups,
        "ephemeralStorage": {"size": f"{pool.root_volume_gib}Gi"},
    }


def node_class_metadata(pool: NodePoolArgs) -> dict:
    """The EC2NodeClass's metadata: its name, and the instances its reservations hold (stated in the
    stack, recorded so the placement of any reader of the plan holds the pool to them)."""
    metadata: dict = {"name": pool.name}
    if pool.capacity_reservations:
        metadata["annotations"] = {karpenter_pools.RESERVED_INSTANCES: str(sum(r.instances for r in pool.capacity_reservations))}
    return metadata


def places_in_group(pool: NodePoolArgs) -> bool:
    """Does the EFA pool launch into a placement group of its own? Not into reservations, which
    carry their own placement."""
    return pool.efa is not None and pool.efa.placement_group and not pool.capacity_reservations


OVERLAY_API = "karpenter.sh/v1alpha1"


def time_slicing_overlays(pools: Sequence[NodePoolArgs], replicas: int | None, cat: Catalog) -> dict[str, dict]:
    """NodeOverlays (name -> spec) that tell Karpenter what the device plugin's time-slicing makes
    of a node's GPUs: one per GPU count among the NVIDIA pools' types, each setting nvidia.com/gpu to
    that count times `replicas` (the plugin shares every NVIDIA node alike, so no pool is named)."""
    if not replicas:
        return {}
    domain, resource = cat.facts.karpenter.labels.domain, cat.facts.eks.accelerator_resources.nvidia
    counts = sorted({accelerators_of(it) for pool in pools if pool.gpu is not None for it in admitted(pool, cat)})
    return {
        f"nvidia-time-slicing-{n}-gpu": {
            "requirements": [
                {
                    "key": f"{domain}/instance-gpu-manufacturer",
                    "operator": "In",
                    "values": [cat.facts.karpenter.labels.manufacturers["nvidia"]],
                },
                {"key": f"{domain}/instance-gpu-count", "operator": "In", "values": [str(n)]},
            ],
            "capacity": {resource: str(n * replicas)},
        }
        for n in counts
        if n
    }


def overlays_read(overlays: Mapping[str, dict], cat: Catalog) -> list[karpenter_pools.Overlay]:
    """The NodeOverlays as the pool reader takes them (the plan reader reads the plan's the same way)."""
    gaps: list[str] = []
    return [
        (karpenter_pools.requirements_of(spec, name, gaps), karpenter_pools.quantities(spec["capacity"], name, gaps))
        for name, spec in overlays.items()
    ]


def read(
    pool: NodePoolArgs,
    cat: Catalog,
    limits: Mapping[str, int] | None = None,
    gaps: list[str] | None = None,
    auto: bool = False,
    overlays: Sequence[karpenter_pools.Overlay] = (),
) -> karpenter.Pool:
    """The pool as the provisioning simulation (and the pack) reads its NodePool and node class."""
    plain = (id(pool), id(cat), auto) if limits is None and gaps is None and not overlays else None
    held = _PLAIN.get(plain) if plain is not None else None
    if held is not None:
        return held[2]
    node_class = node_class_spec(pool, "role", [{"tags": {}}], [{"tags": {}}], cat) if not auto else None
    reserved = sum(r.instances for r in pool.capacity_reservations) if pool.capacity_reservations else None
    spec = node_pool_spec(pool, cat, limits, auto)
    found = karpenter_pools.read_pool(
        pool.name, spec, (pool.name, node_class), list(overlays), cat, [] if gaps is None else gaps, reserved=reserved
    )
    assert found is not None  # a spec is always known here
    if plain is not None:
        if len(_PLAIN) >= _PLAIN_KEPT:  # a preview reads a few pools; a process of many previews starts over
            _PLAIN.clear()
        _PLAIN[plain] = (pool, cat, found)
    return found


# A pool read with nothing of the caller's own (no limits, overlays or gaps asked for), by the
# objects it was read from: the checks, the EFA layout, the limits and the summary each ask again of
# the same NodePoolArgs, about 20 ms a reading (eks-karpenter-gpu: 12 of its 13 readings, of two
# pools). The entry holds the pool's and catalog's objects, so neither id is another's while kept.
_PLAIN: dict[tuple[int, int, bool], tuple[NodePoolArgs, Catalog, karpenter.Pool]] = {}
_PLAIN_KEPT = 64


def admitted(pool: NodePoolArgs, cat: Catalog, auto: bool = False) -> list[InstanceType]:
    """The catalog's types the pool's requirements admit (and its AMI family runs)."""
    return [cat.get(c.shape.instance_type) for c in read(pool, cat, auto=auto).candidates]


def limits(pool: NodePoolArgs, cat: Catalog, auto: bool = False, shared: int = 1) -> dict[str, int]:
    """maxNodes of the largest admitted type's accelerators, and of its vCPUs: Karpenter subtracts a
    new node's largest possible capacity, so the pool can always reach maxNodes nodes. `shared`: the
    NVIDIA GPUs a NodeOverlay tells Karpenter each GPU counts for (time-slicing's replicas)."""
    types = admitted(pool, cat, auto)
    if not types:
        return {}
    resource = getattr(cat.facts.eks.accelerator_resources, kind(pool))
    per_node = max(accelerators_of(it) for it in types) * (shared if pool.gpu is not None else 1)
    return {resource: pool.max_nodes * per_node, "cpu": pool.max_nodes * max(it.vcpus for it in types)}


def accelerators_of(it: InstanceType) -> int:
    """GPUs or Neuron devices of a type (what a pool's accelerator limit counts)."""
    return (it.gpu.count if it.gpu else 0) or (it.neuron.count if it.neuron else 0)


def efa_interfaces(pool: NodePoolArgs, cat: Catalog, auto: bool = False) -> list[EfaInterface]:
    """The node class's interfaces for EFA: the recommended layout (an ENA primary, efa-only beside
    it and on every further card), the same for every admitted type. Raises ValueError when the
    types differ in it, or a type cannot take it (the spec check reports it first)."""
    if pool.efa is None:
        return []
    layouts = {it.name: tuple(efa_layout(it, "recommended", count=pool.efa.interfaces)) for it in admitted(pool, cat, auto)}
    distinct = set(layouts.values())
    if len(distinct) > 1:
        raise ValueError(
            f"the admitted types lay out EFA differently ({', '.join(sorted(layouts))}): give one instance type, or types of one layout"
        )
    found = list(next(iter(distinct), ()))
    if any(i.interface_type not in _INTERFACE_TYPES for i in found):
        raise ValueError("Karpenter's networkInterfaces take interface and efa-only only: this type's EFA needs an efa interface")
    return found
