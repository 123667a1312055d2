"""The DRA fleet `gpufleet verify` is tested on (tests/fixtures/verify-dra/SOURCE.md): the real
ResourceSlices NVIDIA's DRA driver published on two p5.48xlarge nodes (NVIDIA/aicr's conformance
evidence, `kubectl get resourceslices -o yaml`, read from the kept file and written as `-o json`
prints the same objects), and a plan holding the real test manifest that evidence ran (a
ResourceClaim `gpu-claim` and the Pod `dra-gpu-test` that claims it).

What the evidence does not hold is built here in the API's shape, each marked so: the two Node
objects (the real EKS node of tests/fixtures/verify, renamed to the evidence's node names), the Pod
as it ran (on gpu-node-2, dra-support.md), and the claim as it was while the pod ran (allocated
gpu-2 on gpu-node-2, the device its log shows as /dev/nvidia2; the evidence recorded it only once
deallocated, `pending`)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml

from tests.conftest import ROOT
from tests.dra_plans import res
from tests.verify import fleets

FIXTURES = ROOT / "tests" / "fixtures" / "verify-dra"
EVIDENCE = FIXTURES / "aicr-secure-accelerator-access.md"
MANIFEST = FIXTURES / "aicr-dra-gpu-test.yaml"
NODES = ("gpu-node-1", "gpu-node-2")
POD_UID = "built-uid-dra-gpu-test"


def slices() -> dict:
    """The evidence's `kubectl get resourceslices -o yaml` List, as read from the kept file."""
    block = EVIDENCE.read_text().split("$ kubectl get resourceslices -o yaml\n", 1)[1].split("```", 1)[0]
    return yaml.safe_load(block)


def manifest() -> dict[str, dict]:
    """The evidence's test manifest, by kind."""
    return {d["kind"]: d for d in yaml.safe_load_all(MANIFEST.read_text()) if d}


def plan() -> dict:
    """Two p5.48xlarge nodes in a group labelled for the driver's kubelet plugin, the driver chart
    gpufleet carries (tests/dra_plans), and the evidence's manifest as a program declares it."""
    objects = manifest()
    resources = [
        res(
            "aws:eks/nodeGroup:NodeGroup",
            "gpu",
            {
                "nodeGroupName": "gpu",
                "instanceTypes": ["p5.48xlarge"],
                "amiType": "AL2023_x86_64_NVIDIA",
                "labels": {"nvidia.com/gpu.present": "true"},
                "scalingConfig": {"minSize": 2, "desiredSize": 2, "maxSize": 2},
            },
        ),
        res(
            "kubernetes:helm.sh/v3:Release",
            "dra",
            {
                "name": "nvidia-dra-driver",
                "chart": "nvidia-dra-driver-gpu",
                "version": "v25.8.1",
                # The evidence's driver ran in nvidia-dra-driver, with GPUs (its gpu.nvidia.com slices),
                # which the chart renders only with the override (templates/validation.yaml
                # @v25.8.1 L33-L40), and ComputeDomains, the chart's default (its compute-domain
                # slices, a controller, a 2-container kubelet plugin: dra-support.md, "DRA driver pods").
                "namespace": "nvidia-dra-driver",
                "values": {"gpuResourcesEnabledOverride": True, "resources": {"gpus": {"enabled": True}}},
            },
        ),
        res("kubernetes:resource.k8s.io/v1:ResourceClaim", "gpu-claim", objects["ResourceClaim"]),
        res("kubernetes:core/v1:Pod", "dra-gpu-test", objects["Pod"]),
    ]
    return {"version": 1, "project": "aicr-dra", "stack": "p5-dra", "resources": resources}


def driver_pods() -> list[dict]:
    """The driver's pods as the evidence lists them (dra-support.md, `kubectl get pods -n
    nvidia-dra-driver -o wide`): the controller Running on system-node-1, a node outside the plan's
    groups, and a kubelet plugin on each GPU node. Only their names, nodes and phase are the
    evidence's; the objects are built in the API's shape."""
    block = (FIXTURES / "aicr-dra-support.md").read_text().split("$ kubectl get pods -n nvidia-dra-driver -o wide\n", 1)[1]
    rows = [line.split() for line in block.split("```", 1)[0].splitlines()[1:] if line.strip()]
    return [fleets.pod("nvidia-dra-driver", row[0], row[6], phase=row[2]) for row in rows]


# --- built: no public recording of these exists (SOURCE.md) ----------------------------------------


def nodes() -> list[dict]:
    template = fleets.study_nodes()[0]
    return [fleets._node(template, name, "gpu", "p5.48xlarge", fleets.p5_allocatable()) for name in NODES]


def pod(node: str | None = "gpu-node-2") -> dict:
    built = fleets.pod("dra-test", "dra-gpu-test", node, phase="Running" if node else "Pending", ready=node is not None)
    built["metadata"]["uid"] = POD_UID
    built["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu-claim"}]
    return built


def claim(node: str | None = "gpu-node-2", devices: tuple[str, ...] = ("gpu-2",), reserved: bool = True) -> dict:
    """The evidence's ResourceClaim with the status resource/v1 writes once the scheduler allocated
    it (AllocationResult: results, nodeSelector on metadata.name) and the pod holds it (reservedFor)."""
    built = copy.deepcopy(manifest()["ResourceClaim"])
    if node is None:
        return built
    built["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": node, "device": d} for d in devices]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]},
        },
        "reservedFor": [{"resource": "pods", "name": "dra-gpu-test", "uid": POD_UID}] if reserved else [],
    }
    return built


def write_case(folder: Path, listed: dict | None = None, items: list[dict] | None = None) -> Path:
    """The recording: the real slices as resourceslices.json, the built objects as cluster.json."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "resourceslices.json").write_text(json.dumps(slices() if listed is None else listed, indent=1))
    built = [*nodes(), pod(), claim(), *driver_pods()] if items is None else items
    (folder / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": built}, indent=1))
    return folder
