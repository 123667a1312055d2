"""The recorded fleets `gpufleet verify` is tested on, built from real material
(tests/fixtures/verify/SOURCE.md): a real EKS GPU node's JSON (performance-study, p3dn.24xlarge),
with identifiers edited and, for p5 nodes, the allocatable a real p5.48xlarge reports; the NCCL logs
of real runs; the ECS describe output of the AWS CLI's example. What no public recording holds
(DaemonSet status, Pod objects, a p5 run's provider lines) is written here in the API's shape, each
marked so; SOURCE.md lists every edit.

Each case is a folder as `gpufleet verify --from DIR` reads it, and `KubeApi` serves the same
objects at the Kubernetes API's paths, so the official client reads them as from a cluster."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from urllib.parse import parse_qs

import yaml

from tests.conftest import ROOT
from tests.recorded_http import RecordedHttp

FIXTURES = ROOT / "tests" / "fixtures" / "verify"
SOURCES = FIXTURES / "sources"
STUDY = FIXTURES / "performance-study" / "nodes-8.json"
GATE_MARKER = "gpufleet-efa-check"


def study_nodes() -> list[dict]:
    return json.loads(STUDY.read_text())["items"]


def p5_allocatable() -> dict[str, str]:
    """The Allocatable block of a real p5.48xlarge node (awsome-distributed-training's stable
    diffusion README, `kubectl describe node`), read from the file."""
    text = (SOURCES / "adt-stable-diffusion-README.md").read_text()
    block = text.split("Allocatable:", 1)[1].split("```", 1)[0]
    return dict(re.findall(r"^\s+([\w./-]+):\s+(\S+)\s*$", block, re.M))


def _node(template: dict, name: str, group: str, instance_type: str, allocatable: dict[str, str]) -> dict:
    """The real node with its identifiers edited (name, host, group, type labels, instance id) and
    the allocatable (and capacity) of its type."""
    node = copy.deepcopy(template)
    meta = node["metadata"]
    meta["name"] = name
    meta["uid"] = f"uid-{name}"
    labels = meta["labels"]
    for key in ("kubernetes.io/hostname",):
        labels[key] = name
    for key in ("eks.amazonaws.com/nodegroup", "alpha.eksctl.io/nodegroup-name"):
        labels[key] = group
    for key in ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"):
        labels[key] = instance_type
    node["spec"]["providerID"] = f"aws:///us-east-1a/i-{abs(hash(name)) % 16**17:017x}"
    node["status"]["allocatable"] = dict(allocatable)
    node["status"]["capacity"] = dict(allocatable)
    return node


def p5_fleet_nodes(gpus_on_second: str | None = None) -> list[dict]:
    """eks-p5-efa's nodes: two p5.48xlarge of group p5 and two system nodes (the real node's
    allocatable without its accelerators, which an m6i.large has none of)."""
    template = study_nodes()[0]
    p5 = p5_allocatable()
    system = {k: v for k, v in template["status"]["allocatable"].items() if "/" not in k and not k.startswith("hugepages")}
    nodes = [_node(template, f"ip-10-60-0-{i}.ec2.internal", "p5", "p5.48xlarge", p5) for i in (11, 12)]
    nodes += [_node(template, f"ip-10-60-1-{i}.ec2.internal", "system-20261127", "m6i.large", system) for i in (21, 22)]
    if gpus_on_second is not None:
        nodes[1]["status"]["allocatable"]["nvidia.com/gpu"] = gpus_on_second
    return nodes


# --- written here: no public recording of these exists (SOURCE.md) --------------------------------

def daemonset(namespace: str, name: str, nodes: list[str], ready: int | None = None, chart: str | None = None,
              selector: dict[str, str] | None = None) -> dict:
    """A DaemonSet as the API returns it, its status counting the nodes it runs on; `selector`, its
    spec.selector.matchLabels (and its pods' labels)."""
    ready = len(nodes) if ready is None else ready
    labels = {"app.kubernetes.io/name": chart} if chart else {"k8s-app": name}
    found = {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-ds-{name}", "labels": labels},
        "status": {"desiredNumberScheduled": len(nodes), "currentNumberScheduled": len(nodes), "numberReady": ready,
                   "numberAvailable": ready, "numberUnavailable": len(nodes) - ready, "numberMisscheduled": 0, "updatedNumberScheduled": len(nodes)},
    }
    if selector is not None:
        found["spec"] = {"selector": {"matchLabels": dict(selector)}, "template": {"metadata": {"labels": dict(selector)}}}
    return found


# The device plugins' DaemonSets as their pinned charts' templates name and select them, for a
# release the provider names "<resource name>-<8 random hex characters>" (rules/helm.py):
# NVIDIA/k8s-device-plugin v0.20.0 (1b826acc) deployments/helm/nvidia-device-plugin/templates/
# _helpers.tpl L14-L25 (fullname "<release>-nvidia-device-plugin"), L72-L78 (selectorLabels: name and
# instance); daemonset-device-plugin.yml L16-L31; daemonset-mps-control-daemon.yml L16-L31 (its name
# "<fullname>-mps-control-daemon" cut to 63 characters, less a trailing dash), L210-L215 (nodeSelector
# nvidia.com/mps.capable "true"); aws/eks-charts stable/aws-efa-k8s-device-plugin/templates/
# daemonset.yaml L1-L10 (name fullname "<release>-aws-efa-k8s-device-plugin", selector name: fullname).
NVIDIA_RELEASE = "p5-train-device-plugins-nvidia-3f9c2a1b"
NVIDIA_PLUGIN = f"{NVIDIA_RELEASE}-nvidia-device-plugin"
NVIDIA_MPS = f"{NVIDIA_PLUGIN}-mps-control-daemon"[:63]
EFA_PLUGIN = "p5-train-device-plugins-efa-8d41e07c-aws-efa-k8s-device-plugin"


# The selector of the plugin's static manifest (NVIDIA/k8s-device-plugin deployments/static/
# nvidia-device-plugin.yml @b3d00543 L22-L24), with its DaemonSet's name (L19).
STATIC_SELECTOR = {"name": "nvidia-device-plugin-ds"}
STATIC_NAME = "nvidia-device-plugin-daemonset"


def nvidia_selector(release: str = NVIDIA_RELEASE) -> dict[str, str]:
    return {"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/instance": release}


def pod(namespace: str, name: str, node: str | None, phase: str = "Running", ready: bool = True, owner: dict | None = None,
        unschedulable: str | None = None, labels: dict | None = None) -> dict:
    conditions = [{"type": "Ready", "status": "True" if ready and phase == "Running" else "False"}]
    if unschedulable is not None:
        conditions.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": unschedulable})
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}, "ownerReferences": [owner] if owner else []},
        "spec": {"nodeName": node} if node else {},
        "status": {"phase": phase, "conditions": conditions},
    }


def _daemon_pods(ds: dict, nodes: list[str], ready: int) -> list[dict]:
    owner = {"kind": "DaemonSet", "name": ds["metadata"]["name"], "uid": ds["metadata"]["uid"]}
    return [pod(ds["metadata"]["namespace"], f"{ds['metadata']['name']}-{i:05d}", n, ready=i < ready, owner=owner,
                phase="Running") for i, n in enumerate(nodes)]


def p5_cluster(nodes: list[dict], efa_plugin: bool = True, nvidia_ready: int | None = None, worker_pending: str | None = None,
               plugin_selector: dict[str, str] | None = None, mps_nodes: tuple[str, ...] | None = ()) -> list[dict]:
    """eks-p5-efa's cluster as `kubectl get nodes,pods,daemonsets -A -o json` lists it. The NVIDIA
    chart's MPS control daemon is there on no node (none is labelled MPS-capable) unless `mps_nodes`
    names some; None leaves it out. `plugin_selector`: the NVIDIA plugin's, if not its chart's."""
    p5 = [n["metadata"]["name"] for n in nodes if n["metadata"]["labels"]["eks.amazonaws.com/nodegroup"] == "p5"]
    system = [n["metadata"]["name"] for n in nodes if n["metadata"]["labels"]["eks.amazonaws.com/nodegroup"] != "p5"]
    everyone = p5 + system
    sets = [
        (daemonset("nvidia-device-plugin", NVIDIA_PLUGIN, p5, nvidia_ready, "nvidia-device-plugin", plugin_selector or nvidia_selector()), p5),
        (daemonset("kube-system", "aws-node", everyone), everyone),
        (daemonset("kube-system", "eks-node-monitoring-agent", everyone), everyone),
        (daemonset("kube-system", "dcgm-server", p5), p5),
    ]
    if mps_nodes is not None:
        sets.append((daemonset("nvidia-device-plugin", NVIDIA_MPS, list(mps_nodes), chart="nvidia-device-plugin", selector=nvidia_selector()), list(mps_nodes)))
    if efa_plugin:
        sets.append((daemonset("kube-system", EFA_PLUGIN, p5, chart="aws-efa-k8s-device-plugin", selector={"name": EFA_PLUGIN}), p5))
    items: list[dict] = [*nodes]
    for ds, on in sets:
        items.append(ds)
        items += _daemon_pods(ds, on, ds["status"]["numberReady"])
    items += [pod("kube-system", f"coredns-5d5f9c6b8-{s}", system[i % len(system)]) for i, s in enumerate(("abcde", "fghij"))]
    items.append(pod("mpi-operator", "mpi-operator-7c9f8d6b5-qwert", system[0]))
    items.append(pod("default", "nccl-tests-p5-launcher-zx9kq", system[1], phase="Succeeded", ready=False,
                     labels={"training.kubeflow.org/job-name": "nccl-tests-p5", "training.kubeflow.org/job-role": "launcher"}))
    for i in range(2):
        if worker_pending is not None and i == 1:
            items.append(pod("default", f"nccl-tests-p5-worker-{i}", None, phase="Pending", ready=False, unschedulable=worker_pending))
        else:
            items.append(pod("default", f"nccl-tests-p5-worker-{i}", p5[i]))
    return items


def study_failed_scheduling() -> str:
    """The live scheduler's message for a GPU pod no node could take (the study's recorded event)."""
    return json.loads((SOURCES / "performance-study-failedscheduling-event.json").read_text())["message"]


# --- NCCL logs -------------------------------------------------------------------------------------

def _lines(path: Path, first: int, last: int) -> str:
    return "\n".join(path.read_text().splitlines()[first - 1:last]) + "\n"


def socket_fallback_log() -> str:
    """aws-do-eks's run without EFA ("Using network Socket"), lines 169-208 of its README, unchanged."""
    return _lines(SOURCES / "doeks-karpenter-README.md", 169, 208)


def g4dn_efa_log() -> str:
    """aws-do-eks's complete EFA run on g4dn.metal, lines 469-562 of its README, unchanged."""
    return _lines(SOURCES / "doeks-eks-efa-README.md", 469, 562)


def p5_table() -> str:
    """A real 2 x p5.48xlarge all-reduce table to 16 GiB (awsome-distributed-training, lines 192-225)."""
    return _lines(SOURCES / "adt-nccl-tests-README.md", 192, 225)


def p5_run_log(busbw_at_2g: str | None = None, efa_found: tuple[int, int] = (32, 32)) -> str:
    """The p5 run as gpufleet's job logs it: its workers' EFA pre-check lines and the provider and
    network lines of aws-ofi-nccl 1.19 (written here: no public p5 log has them, SOURCE.md), then the
    real table; `busbw_at_2g` edits the 2 GiB row's out-of-place busbw (the below-the-floor case)."""
    head = "".join(f"[1,{i}]<stdout>:{GATE_MARKER}: nccl-tests-p5-worker-{i} found {n} of 32 EFA devices\n" for i, n in enumerate(efa_found))
    head += "".join(
        f"[1,{i}]<stdout>:nccl-tests-p5-worker-{i}:31:31 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 32 nics)\n"
        f"[1,{i}]<stdout>:nccl-tests-p5-worker-{i}:31:31 [0] NCCL INFO Using network Libfabric\n" for i in range(2)
    )
    table = p5_table()
    if busbw_at_2g is not None:
        table = table.replace("236.65  443.72", f"236.65  {busbw_at_2g}")
        assert busbw_at_2g in table
    return head + table


# --- a case on disk, and a cluster that serves it ------------------------------------------------

def write_case(folder: Path, items: list[dict] | None = None, log: str | None = None, ecs: dict[str, dict] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if items is not None:
        (folder / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1))
    if log is not None:
        (folder / "launcher.log").write_text(log)
    for name, document in (ecs or {}).items():
        (folder / f"{name}.json").write_text(json.dumps(document, indent=1))
    return folder


class KubeApi(RecordedHttp):
    """The Kubernetes API's list, get and log paths, answered from recorded objects: the official
    client talks to it through a kubeconfig as to a cluster (`with KubeApi(items, logs) as api:`
    api.kubeconfig is the file, api.requests what was asked)."""

    def __init__(self, items: list[dict], logs: dict[str, str] | None = None, mpijobs: list[dict] | None = None):
        self.items, self.logs, self.mpijobs, self.requests = items, logs or {}, mpijobs or [], []

    def answer(self, url) -> tuple[int, object, str]:
        self.requests.append(url.path)
        return self.answer_path(url.path, parse_qs(url.query))

    def write_kubeconfig(self, path: Path, context: str = "recorded") -> Path:
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": context,
            "clusters": [{"name": "recorded", "cluster": {"server": f"http://127.0.0.1:{self.port}"}}],
            "users": [{"name": "reader", "user": {"token": "not-a-secret"}}],
            "contexts": [{"name": context, "context": {"cluster": "recorded", "user": "reader"}}],
        }
        path.write_text(json.dumps(config))
        return path

    def _of(self, kind: str) -> list[dict]:
        return [i for i in self.items if i.get("kind") == kind]

    def answer_path(self, path: str, query: dict) -> tuple[int, object, str]:
        lists = {"/api/v1/nodes": ("Node", "NodeList"), "/api/v1/pods": ("Pod", "PodList"), "/apis/apps/v1/daemonsets": ("DaemonSet", "DaemonSetList"),
                 "/apis/resource.k8s.io/v1/resourceslices": ("ResourceSlice", "ResourceSliceList"),
                 "/apis/resource.k8s.io/v1/resourceclaims": ("ResourceClaim", "ResourceClaimList")}
        if path in lists:
            kind, list_kind = lists[path]
            return 200, {"kind": list_kind, "apiVersion": "v1", "items": self._of(kind)}, "application/json"
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)/pods/([^/]+)/log", path):
            text = self.logs.get(m[2])
            return (200, text, "text/plain") if text is not None else (404, {"kind": "Status", "code": 404}, "application/json")
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)/pods", path):
            selector = dict(s.split("=", 1) for s in (query.get("labelSelector") or [""])[0].split(",") if "=" in s)
            found = [p for p in self._of("Pod") if p["metadata"]["namespace"] == m[1]
                     and all(p["metadata"].get("labels", {}).get(k) == v for k, v in selector.items())]
            return 200, {"kind": "PodList", "apiVersion": "v1", "items": found}, "application/json"
        if m := re.fullmatch(r"/apis/kubeflow.org/v2beta1/namespaces/([^/]+)/mpijobs/([^/]+)", path):
            job = next((j for j in self.mpijobs if j["metadata"]["name"] == m[2]), None)
            return (200, job, "application/json") if job else (404, {"kind": "Status", "code": 404}, "application/json")
        return 404, {"kind": "Status", "code": 404}, "application/json"


# --- ECS -------------------------------------------------------------------------------------------

def _cli_output(name: str, index: int = 0) -> dict:
    """The `index`-th Output:: JSON of an AWS CLI example page, read from the file."""
    block = (SOURCES / name).read_text().split("Output::")[index + 1]
    text = "\n".join(line[4:] if line.startswith("    ") else line for line in block.splitlines()).strip()
    return json.JSONDecoder().raw_decode(text)[0]


# The GPU resource an instance registers: a STRINGSET of GPU ids (the shape of
# stitchfix/flotilla-os#123's recorded fragment; SOURCE.md).
def gpu_resource(count: int) -> dict:
    return {"name": "GPU", "type": "STRINGSET", "doubleValue": 0.0, "longValue": 0, "integerValue": 0,
            "stringSetValue": [f"GPU-2c8b9806-28af-3530-70e8-4d719a1492b{i}" for i in range(count)]}


def container_instance(i: int, provider: str, instance_type: str, gpus: int, attributes: dict[str, str] | None = None) -> dict:
    """The AWS CLI example's container instance, its identifiers edited, registered by `provider`'s
    Auto Scaling group with the type attribute and `gpus` GPU ids."""
    ci = copy.deepcopy(_cli_output("aws-cli-describe-container-instances.rst")["containerInstances"][0])
    ci["containerInstanceArn"] = ci["containerInstanceArn"].replace("11111EXAMPLE", f"{i:05d}EXAMPLE")
    ci["ec2InstanceId"] = f"i-0a1b2c3d4e5f6{i:04d}"
    ci["capacityProviderName"] = provider
    ci["attributes"] = [{"name": k, "value": v} for k, v in {"ecs.instance-type": instance_type, **(attributes or {})}.items()]
    if gpus:
        ci["registeredResources"].append(gpu_resource(gpus))
    return ci


def service_task(i: int, service: str, provider: str, status: str = "RUNNING") -> dict:
    """The AWS CLI example's first task, its identifiers edited, of `service` on `provider`."""
    task = copy.deepcopy(_cli_output("aws-cli-describe-tasks.rst")["tasks"][0])
    task["taskArn"] = re.sub(r"/[^/]+$", f"/{i:032x}", task["taskArn"])
    task["group"], task["lastStatus"], task["capacityProviderName"] = f"service:{service}", status, provider
    return task


# --- pods from public recordings (SOURCE.md): container states -------------------------------------

def crashloop_pod() -> dict:
    """HolmesGPT's recorded `kubectl get pod -o yaml` of a pod in CrashLoopBackOff (7 restarts), from
    its third line (the first two are HolmesGPT's own metadata), unchanged."""
    text = (SOURCES / "holmesgpt-crashloop-pod-yaml.txt").read_text()
    return yaml.safe_load("\n".join(text.splitlines()[2:]))


def _describe_field(text: str, name: str) -> str:
    return re.search(rf"^\s*{name}:\s+(.*?)\s*$", text, re.M)[1]


def imagepull_pod(latest_event: bool = False) -> dict:
    """A Pod object built from HolmesGPT's recorded `kubectl describe pod` (a pod that cannot pull its
    image): its name, namespace, node, phase, the container's waiting state, restart count and the
    Conditions table, as the describe prints them. `latest_event`: the waiting state is the one the
    last event gives (the kubelet's `ImagePullBackOff`, "Back-off pulling image ..."), not the State
    block's `ErrImagePull` printed a few seconds before. The fixture stores quotes as `\\"`."""
    text = (SOURCES / "holmesgpt-imagepullbackoff-describe.txt").read_text().replace('\\"', '"')
    container = re.search(r"^Containers:\n  ([\w-]+):", text, re.M)[1]
    if latest_event:
        back_off = re.findall(r"^\s+Normal\s+BackOff\s+.*?kubelet\s+(.*)$", text, re.M)[-1]
        waiting = {"reason": re.findall(r"Error: (\w+)$", text, re.M)[-1], "message": back_off}
    else:
        waiting = {"reason": _describe_field(text, "Reason")}
    table = text.split("Conditions:\n", 1)[1].split("Volumes:", 1)[0].splitlines()[1:]
    conditions = [{"type": t, "status": s} for t, s in (line.split() for line in table if line.strip())]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": _describe_field(text, "Name"), "namespace": _describe_field(text, "Namespace")},
        "spec": {"nodeName": _describe_field(text, "Node").split("/")[0]},
        "status": {
            "phase": _describe_field(text, "Status"), "conditions": conditions,
            "containerStatuses": [{"name": container, "ready": _describe_field(text, "Ready") == "True",
                                   "restartCount": int(_describe_field(text, "Restart Count")), "state": {"waiting": waiting}}],
        },
    }


def launcher_row(status: str) -> tuple[str, str, int]:
    """(name, STATUS, RESTARTS) of aws-do-eks's recorded launcher pod in a `kubectl get pods` row:
    CrashLoopBackOff, Running, then Completed (eks-gpu-efa README, lines 131-145)."""
    text = (SOURCES / "doeks-eks-gpu-efa-README.md").read_text()
    name, _, shown, restarts = re.search(rf"^\s+(efa-info-test-launcher-\w+)\s+(\d/\d)\s+({status})\s+(\d+)", text, re.M).groups()
    return name, shown, int(restarts)


def as_pod_of(recorded: dict, namespace: str, name: str, node: str, owner: dict | None = None, labels: dict | None = None) -> dict:
    """A recorded pod made another workload's: its name, namespace, owner, labels and node edited,
    its containers' state kept."""
    edited = copy.deepcopy(recorded)
    edited["metadata"] = {"name": name, "namespace": namespace, "labels": labels or {}, "ownerReferences": [owner] if owner else []}
    edited.setdefault("spec", {})["nodeName"] = node
    return edited


def replace_item(items: list[dict], name: str, new: dict) -> list[dict]:
    at = next(i for i, item in enumerate(items) if item["metadata"]["name"] == name)
    return [*items[:at], new, *items[at + 1:]]


def event_list() -> dict:
    """The study's one recorded Event (the exporter's line, unchanged) in the EventList `kubectl get
    events -o json` prints: a recording that holds no node."""
    event = json.loads((SOURCES / "performance-study-failedscheduling-event.json").read_text())
    return {"apiVersion": "v1", "kind": "EventList", "items": [event]}
