"""The shape of what verify reads from a recording, checked before it is read, in the plan readers'
own shape language (plans/shapes.py): for each recorded kind (a Kubernetes Node, Pod or DaemonSet,
a ResourceSlice or ResourceClaim; an ECS container instance or task), every field verify reads and
the JSON type the API writes it as (k8s.io/api core/v1, apps/v1 and resource/v1; botocore's ecs
model, DescribeContainerInstances and DescribeTasks). A field may be absent or null; present, it must be what the API writes. Other fields
are not looked at, so a recording from a newer API passes.

A field that is not what the API writes is one error naming the file, the object (kind and name, or
its place in the file), the field's path, the value and what was expected: exit 2, never a
traceback half-way through a judgement."""

from __future__ import annotations

from collections.abc import Mapping

from gpufleet.plans.shapes import BOOL, NUM, QTY, problems
from gpufleet.verify.verdict import BadInput

_METADATA = {"name": str, "namespace": str, "uid": str, "labels": {str: str}}
_CONDITIONS = [{"type": str, "status": str, "reason": str, "message": str}]
_STATE = {"waiting": {"reason": str, "message": str}, "terminated": {"exitCode": NUM, "reason": str}}
_CONTAINER_STATUSES = [{"name": str, "restartCount": NUM, "state": _STATE}]
# core/v1 NodeSelectorRequirement, as a ResourceClaim's allocation names its node (matchFields).
_REQUIREMENTS = [{"key": str, "operator": str, "values": [str]}]

SHAPES: Mapping[str, dict] = {
    # core/v1 Node: NodeStatus.allocatable is a ResourceList (quantities by name).
    "Node": {"metadata": _METADATA, "status": {"allocatable": {str: QTY}, "conditions": _CONDITIONS}},
    # core/v1 Pod: ObjectMeta.ownerReferences, PodSpec.nodeName, PodStatus, ContainerStatus.
    "Pod": {
        "metadata": {**_METADATA, "ownerReferences": [{"kind": str, "name": str, "uid": str}]},
        # PodSpec.resourceClaims (PodResourceClaim) and PodStatus.resourceClaimStatuses
        # (PodResourceClaimStatus: the claim made from a template for this pod).
        "spec": {"nodeName": str, "resourceClaims": [{"name": str, "resourceClaimName": str, "resourceClaimTemplateName": str}]},
        "status": {
            "resourceClaimStatuses": [{"name": str, "resourceClaimName": str}],
            "phase": str,
            "reason": str,
            "message": str,
            "conditions": _CONDITIONS,
            "containerStatuses": _CONTAINER_STATUSES,
            "initContainerStatuses": _CONTAINER_STATUSES,
        },
    },
    # apps/v1 DaemonSet: spec.selector is a LabelSelector; DaemonSetStatus counts are int32.
    "DaemonSet": {
        "metadata": _METADATA,
        "spec": {"selector": {"matchLabels": {str: str}}},
        "status": {"numberReady": NUM, "desiredNumberScheduled": NUM},
    },
    # resource/v1 ResourceSlice: ResourceSliceSpec (driver, nodeName, ResourcePool), Device and
    # DeviceAttribute (exactly one of bool, int, string, version); the devices are read further by
    # the allocator's one parser (simulate/dra_objects.resource_slice).
    "ResourceSlice": {
        "metadata": _METADATA,
        "spec": {
            "driver": str,
            "nodeName": str,
            "pool": {"name": str, "generation": NUM, "resourceSliceCount": NUM},
            "devices": [{"name": str, "attributes": {str: {"bool": BOOL, "int": NUM, "string": str, "version": str}}}],
        },
    },
    # resource/v1 ResourceClaim: its status (AllocationResult: DeviceRequestAllocationResult,
    # nodeSelector; ResourceClaimConsumerReference in reservedFor); its spec is the plan's to judge.
    "ResourceClaim": {
        "metadata": _METADATA,
        "status": {
            "allocation": {
                "devices": {"results": [{"request": str, "driver": str, "pool": str, "device": str}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": _REQUIREMENTS, "matchExpressions": _REQUIREMENTS}]},
            },
            "reservedFor": [{"resource": str, "name": str, "uid": str}],
        },
    },
    # botocore ecs service-2.json ContainerInstance (Attribute, Resource) and Task.
    "containerInstances": {
        "containerInstanceArn": str,
        "ec2InstanceId": str,
        "status": str,
        "agentConnected": BOOL,
        "capacityProviderName": str,
        "attributes": [{"name": str, "value": str}],
        "registeredResources": [{"name": str, "stringSetValue": [str]}],
    },
    "tasks": {"taskArn": str, "group": str, "lastStatus": str, "capacityProviderName": str, "containerInstanceArn": str},
}
_ECS = {"containerInstances": "an ECS container instance", "tasks": "an ECS task"}


def check(kind: str, obj: object, where: str) -> None:
    """Refuse `obj` (a recorded `kind`, found at `where`: the file and its place in it) unless each
    field verify reads is absent, null or of the type the API writes."""
    found = problems(obj, SHAPES[kind], "", member=False)
    if found:
        text = found[0].lstrip(".")
        raise BadInput(f"{where} ({_named(kind, obj)}): {'the value' + text if text.startswith(' = ') else text}")


def _named(kind: str, obj: object) -> str:
    if kind in _ECS:
        arn = obj.get("containerInstanceArn" if kind == "containerInstances" else "taskArn") if isinstance(obj, dict) else None
        return f"{_ECS[kind]} {arn}" if isinstance(arn, str) else _ECS[kind]
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return f"{kind} {name}" if isinstance(name, str) else f"a {kind}"
