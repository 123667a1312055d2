"""The shape of the inputs gpufleet reads from a plan, per resource type, checked before anything
reads them: a plan (gpufleet's or `pulumi preview --json`) whose inputs have another shape is refused
with exit 2 naming the resource and the field, instead of crashing a reader or being blamed on the
pack. Only the inputs a reader uses are described; everything else passes. A value known only after
apply (the engine's unknown marker) stands in for any shape.

The small language: `str`, `NUM` (a number, not a boolean), `BOOL` (a boolean, or pulumi-aws's
"true"/"false" strings), `QTY` (a Kubernetes quantity: a string or a number), `ANY`; `[spec]` a list
of spec; `{key: spec}` an object whose listed keys, where present, have those shapes; `{str: spec}`
a map of any keys; `("json", spec)` a string holding JSON of that shape, or the decoded value.
"""

from __future__ import annotations

import json

from gpufleet.catalog import tokens
from gpufleet.catalog.tokens import UNKNOWN

NUM, BOOL, QTY, ANY = "number", "boolean", "quantity", "any"

_TOLERATION = {"key": str, "operator": str, "value": str, "effect": str}
_TAINT = {"key": str, "value": str, "effect": str}
_RESOURCES = {"requests": {str: QTY}, "limits": {str: QTY}}
_PORT = {"hostPort": NUM, "hostIP": str, "protocol": str}
_CONTAINER = {"name": str, "resources": _RESOURCES, "restartPolicy": str, "ports": [_PORT]}
_SELECTOR_TERM = {"matchExpressions": [{"key": str, "operator": str, "values": [str]}]}
POD_SPEC = {
    "containers": [_CONTAINER],
    "initContainers": [_CONTAINER],
    "resources": _RESOURCES,
    "overhead": {str: QTY},
    "tolerations": [_TOLERATION],
    "nodeSelector": {str: str},
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_SELECTOR_TERM]}}},
}
_TEMPLATE = {"spec": POD_SPEC}
_PLUGIN_POD = {
    "tolerations": [_TOLERATION],
    "nodeSelector": {str: str},
    "affinity": POD_SPEC["affinity"],
    "resources": _RESOURCES,
}
_REPLICA = {"replicas": NUM, "template": _TEMPLATE}
# What the placement reads of an AKS pool, a separate one or a cluster's default one.
_AKS_POOL = {
    "name": str,
    "vmSize": str,
    "nodeCount": NUM,
    "autoScalingEnabled": BOOL,
    "minCount": NUM,
    "maxCount": NUM,
    "nodeLabels": {str: str},
}
_WORKLOAD = {
    "metadata": {"name": str, "namespace": str},
    "spec": {
        "replicas": NUM,
        "parallelism": NUM,
        "template": _TEMPLATE,
        "jobTemplate": {"spec": {"parallelism": NUM, "template": _TEMPLATE}},
        "mpiReplicaSpecs": {"Launcher": _REPLICA, "Worker": _REPLICA},
        # A bare Pod's spec is the pod spec itself.
        **POD_SPEC,
    },
}
_ECS_CONTAINER = {
    "name": str,
    "cpu": NUM,
    "memory": NUM,
    "memoryReservation": NUM,
    "resourceRequirements": [{"type": str, "value": str}],
    "linuxParameters": {"devices": [{"hostPath": str}], "capabilities": {"add": [str]}},
    "portMappings": [{"hostPort": NUM, "containerPort": NUM, "protocol": str}],
    "environment": [{"name": str, "value": str}],
}
_CONSTRAINTS = [{"type": str, "expression": str}]

SHAPES: dict[str, dict] = {
    tokens.EKS_NODE_GROUP: {
        "nodeGroupName": str,
        "instanceTypes": [str],
        "amiType": str,
        "capacityType": str,
        "scalingConfig": {"minSize": NUM, "desiredSize": NUM, "maxSize": NUM},
        "labels": {str: str},
        "taints": [_TAINT],
        "subnetIds": [str],
    },
    tokens.EKS_CLUSTER: {"name": str, "version": str, "bootstrapSelfManagedAddons": BOOL},
    tokens.EKS_ADDON: {"addonName": str, "configurationValues": str},
    tokens.LAUNCH_TEMPLATE: {
        "instanceType": str,
        "imageId": str,
        "userData": str,
        "networkInterfaces": [{"deviceIndex": NUM, "networkCardIndex": NUM, "interfaceType": str, "securityGroups": [str]}],
        "instanceMarketOptions": {"marketType": str},
        "metadataOptions": {"httpTokens": str, "httpPutResponseHopLimit": NUM},
        "blockDeviceMappings": [{"deviceName": str, "ebs": {"encrypted": BOOL, "volumeSize": NUM}}],
        "placement": {"groupName": str},
    },
    tokens.SUBNET: {"availabilityZone": str},
    tokens.ASG: {
        "minSize": NUM,
        "maxSize": NUM,
        "desiredCapacity": NUM,
        "protectFromScaleIn": BOOL,
        "tags": [{"key": str, "value": str}],
        # A Spot group's purchase options (src/gpufleet/plans/groups.py reads them for the diff).
        "mixedInstancesPolicy": {"instancesDistribution": {"onDemandBaseCapacity": NUM, "onDemandPercentageAboveBaseCapacity": NUM}},
    },
    tokens.ECS_CAPACITY_PROVIDER: {
        "name": str,
        "autoScalingGroupProvider": {"managedTerminationProtection": str, "managedScaling": {"status": str, "targetCapacity": NUM}},
    },
    tokens.ECS_TASK_DEFINITION: {
        "family": str,
        "containerDefinitions": ("json", [_ECS_CONTAINER]),
        "placementConstraints": _CONSTRAINTS,
        "requiresCompatibilities": [str],
        "networkMode": str,
    },
    tokens.ECS_SERVICE: {
        "desiredCount": NUM,
        "launchType": str,
        "capacityProviderStrategies": [{"capacityProvider": str}],
        "placementConstraints": _CONSTRAINTS,
    },
    tokens.HELM_RELEASE: {
        "chart": str,
        "version": str,
        "name": str,
        "namespace": str,
        "repositoryOpts": {"repo": str},
        # The device-plugin charts' values that their DaemonSet templates read (src/gpufleet/catalog/charts.py).
        "values": {
            **_PLUGIN_POD,
            "migStrategy": str,
            "config": {"name": str, "default": str, "map": {str: str}},
            "devicePlugin": {"enabled": BOOL, **_PLUGIN_POD, "config": {"data": {str: str}}},
            # The GPU Operator's controllers (src/gpufleet/catalog/k8s_workloads.controller_pods).
            "operator": _PLUGIN_POD,
            "nfd": {"enabled": BOOL},
            # The GPU Operator's (src/gpufleet/catalog/k8s_workloads.gpu_operator_pods, the driver rules).
            "driver": {"enabled": BOOL},
            "daemonsets": {"tolerations": [_TOLERATION]},
            "node-feature-discovery": {
                "worker": {"tolerations": [_TOLERATION], "nodeSelector": {str: str}},
                "master": {"enable": BOOL, "replicaCount": NUM, **_PLUGIN_POD},
                "gc": {"enable": BOOL, "replicaCount": NUM, **_PLUGIN_POD},
            },
            "supportedInstanceLabels": {"keys": [str], "values": [str]},
            "neuronInstances": [str],
        },
    },
    tokens.GKE_NODE_POOL: {
        "name": str,
        "namePrefix": str,
        "location": str,
        "nodeLocations": [str],
        "nodeCount": NUM,
        "initialNodeCount": NUM,
        "autoscaling": {"minNodeCount": NUM, "maxNodeCount": NUM},
        "nodeConfig": {
            "machineType": str,
            "spot": BOOL,
            "labels": {str: str},
            "taints": [_TAINT],
            "guestAccelerators": [
                {
                    "type": str,
                    "count": NUM,
                    "gpuPartitionSize": str,
                    "gpuDriverInstallationConfig": {"gpuDriverVersion": str},
                    "gpuSharingConfig": {"gpuSharingStrategy": str, "maxSharedClientsPerGpu": NUM},
                }
            ],
        },
    },
    tokens.AKS_NODE_POOL: {
        **_AKS_POOL,
        "gpuInstance": str,
        "gpuDriver": str,
        "nodeTaints": [str],
        "priority": str,
        "osType": str,
    },
    # A created cluster's default (system) pool (src/gpufleet/plans/pods.py, _aks_default_pool).
    tokens.AKS_CLUSTER: {"defaultNodePool": {**_AKS_POOL, "onlyCriticalAddonsEnabled": BOOL}},
    tokens.ACK_NODE_POOL: {
        "nodePoolName": str,
        "instanceTypes": [str],
        "labels": [{"key": str, "value": str}],
        "taints": [_TAINT],
        "desiredSize": QTY,
        "scalingConfig": {"enable": BOOL, "minSize": NUM, "maxSize": NUM},
        "instanceChargeType": str,
    },
}


def _expected(spec) -> str:
    if spec is str:
        return "a string"
    if isinstance(spec, list):
        return "a list"
    if isinstance(spec, dict):
        return "an object"
    if isinstance(spec, tuple):
        return "JSON text"
    return {NUM: "a number", BOOL: "true or false", QTY: "a quantity (string or number)"}.get(spec, "a value")


def _matches(value, spec) -> bool:
    if spec is str:
        return isinstance(value, str)
    if spec == NUM:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if spec == BOOL:
        return isinstance(value, bool) or value in ("true", "false")
    if spec == QTY:
        return isinstance(value, (str, int, float)) and not isinstance(value, bool)
    if isinstance(spec, list):
        return isinstance(value, list)
    if isinstance(spec, dict):
        return isinstance(value, dict)
    return True


def problems(value, spec, path: str, member: bool = True) -> list[str]:
    """Where `value` departs from `spec`: '<path> = <value>: must be <shape>' lines. A null member of
    an object means absent; a null list element is not a value of the list's shape."""
    if (value is None and member) or value == UNKNOWN or spec == ANY:
        return []
    if isinstance(spec, tuple):  # ("json", inner)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                return [f"{path}: must be JSON text"]
        return problems(value, spec[1], path)
    if not _matches(value, spec):
        text = json.dumps(value)
        return [f"{path} = {text if len(text) <= 40 else text[:37] + '...'}: must be {_expected(spec)}"]
    found: list[str] = []
    if isinstance(spec, list) and spec:
        for i, item in enumerate(value):
            found += problems(item, spec[0], f"{path}[{i}]", member=False)
    elif isinstance(spec, dict) and spec:
        keys = list(spec)
        if keys == [str]:
            for key, item in value.items():
                found += problems(item, spec[str], f"{path}.{key}")
        else:
            for key in keys:
                if key in value:
                    found += problems(value[key], spec[key], f"{path}.{key}")
    return found


def resource_problems(type_token: str, inputs: dict) -> list[str]:
    """The input shape problems of one resource (paths start at `inputs`)."""
    spec = SHAPES.get(type_token)
    if spec is None and type_token.startswith("kubernetes:") and type_token != tokens.HELM_RELEASE:
        spec = _WORKLOAD
    return problems(inputs, spec, "inputs") if spec is not None else []
