"""A live cluster, read with the official Kubernetes client through a kubeconfig context: its nodes,
pods and DaemonSets, and its resource.k8s.io/v1 ResourceSlices and ResourceClaims (the client's
ResourceV1Api), as the API returns them (the same JSON a recording holds), and for the fabric gate
the NCCL MPIJob's launcher log, found or started, waited for within a bound."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from gpufleet.verify import recorded
from gpufleet.verify.fleet import KubeFleet, Observed
from gpufleet.verify.verdict import BadInput

REQUEST_SECONDS = 30  # one API call; a cluster that does not answer is named, not waited on forever
LOG_BYTES = 256 * 1024 * 1024  # the most of a launcher's log read (as for a recorded one)
MPIJOB = ("kubeflow.org", "v2beta1", "mpijobs")
# The MPI operator's pod labels (kubeflow training-operator's JobNameLabel and JobRoleLabel).
JOB_NAME, JOB_ROLE = "training.kubeflow.org/job-name", "training.kubeflow.org/job-role"


def _kubeconfig(path: Path | None) -> str:
    if path is not None:
        return str(path)
    from kubernetes.config.kube_config import KUBE_CONFIG_DEFAULT_LOCATION

    return os.environ.get("KUBECONFIG", KUBE_CONFIG_DEFAULT_LOCATION)


def client_for(context: str, kubeconfig: Path | None = None):
    """An API client for the context; a kubeconfig without it, or no kubeconfig, is bad input."""
    from kubernetes import config
    from kubernetes.config.config_exception import ConfigException

    where = _kubeconfig(kubeconfig)
    first = where.split(os.pathsep)[0]
    if not Path(first).expanduser().is_file():
        raise BadInput(f"kubeconfig {where}: no such file (expected a kubeconfig holding context {context!r}; --kubeconfig or KUBECONFIG)")
    try:
        contexts, _ = config.list_kube_config_contexts(config_file=where)
    except (ConfigException, ValueError, OSError) as err:
        raise BadInput(f"kubeconfig {where}: not a kubeconfig ({err})") from None
    names = [c.get("name") for c in contexts or []]
    if context not in names:
        raise BadInput(f"kubeconfig {where}: no context {context!r} (it has: {', '.join(map(str, names)) or 'none'})")
    try:
        return config.new_client_from_config(config_file=where, context=context)
    except (ConfigException, ValueError) as err:
        raise BadInput(f"kubeconfig {where}: context {context!r} cannot be used ({err})") from None


def _get(call, what: str, *args, **kwargs):
    """A raw JSON answer (as a recording holds it), or BadInput naming what could not be read."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    try:
        response = call(*args, _preload_content=False, _request_timeout=REQUEST_SECONDS, **kwargs)
        return json.loads(response.data)
    except ApiException as err:
        if err.status == 404:
            return None
        raise BadInput(f"{what}: the API answered {err.status} {err.reason}") from None
    except (HTTPError, OSError, ValueError) as err:
        raise BadInput(f"{what}: the cluster could not be read ({type(err).__name__}: {err})") from None


def read(api_client, context: str) -> Observed:
    from kubernetes import client

    core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    nodes = _get(core.list_node, f"context {context!r}: nodes") or {}
    pods = _get(core.list_pod_for_all_namespaces, f"context {context!r}: pods") or {}
    daemonsets = _get(apps.list_daemon_set_for_all_namespaces, f"context {context!r}: DaemonSets") or {}
    fleet = KubeFleet(nodes.get("items"), pods.get("items"), daemonsets.get("items"))
    fleet.slices, fleet.claims = _dra(client.ResourceV1Api(api_client), context)
    return Observed(kube=fleet, where=f"kubeconfig context {context}")


def _dra(resource, context: str) -> tuple[list | None, list | None]:
    """The cluster's ResourceSlices and ResourceClaims, each shape-checked as a recording's is;
    None for a kind the cluster does not serve (resource.k8s.io/v1 before Kubernetes 1.34)."""
    read: dict[str, list] = {}
    for kind, call in (("ResourceSlice", resource.list_resource_slice), ("ResourceClaim", resource.list_resource_claim_for_all_namespaces)):
        answer = _get(call, f"context {context!r}: {kind}s")
        if answer is None:
            continue
        read[kind] = []
        for i, item in enumerate(answer.get("items") or []):
            recorded.take(kind, item, f"context {context!r}: {kind}s items[{i}]", read)
    return read.get("ResourceSlice"), read.get("ResourceClaim")


def launcher_log(api_client, job: dict, wait_seconds: float, poll_seconds: float = 5.0) -> tuple[str | None, str]:
    """(the launcher's log, where it came from), or (None, why not). The plan's MPIJob is found in the
    cluster or created from the plan's inputs; then its launcher pod is waited for until it ends."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    custom, core = client.CustomObjectsApi(api_client), client.CoreV1Api(api_client)
    name, namespace = job["metadata"]["name"], job["metadata"].get("namespace", "default")
    found = _get(custom.get_namespaced_custom_object, f"MPIJob {namespace}/{name}", *MPIJOB[:2], namespace, MPIJOB[2], name)
    if found is None:
        body = {"apiVersion": f"{MPIJOB[0]}/{MPIJOB[1]}", "kind": "MPIJob", **job}
        try:
            custom.create_namespaced_custom_object(*MPIJOB[:2], namespace, MPIJOB[2], body, _request_timeout=REQUEST_SECONDS)
        except ApiException as err:
            raise BadInput(
                f"MPIJob {namespace}/{name}: not in the cluster, and creating it was refused ({err.status} {err.reason})"
            ) from None
    selector = f"{JOB_NAME}={name},{JOB_ROLE}=launcher"
    deadline = time.monotonic() + wait_seconds
    while True:
        pods = (_get(core.list_namespaced_pod, f"pods of MPIJob {namespace}/{name}", namespace, label_selector=selector) or {}).get(
            "items"
        ) or []
        ended = [p for p in pods if (p.get("status") or {}).get("phase") in ("Succeeded", "Failed")]
        if ended:
            pod = ended[-1]["metadata"]["name"]
            try:
                # Raw: the client's own decoding turns a log into the repr of its bytes.
                response = core.read_namespaced_pod_log(
                    pod, namespace, limit_bytes=LOG_BYTES, _preload_content=False, _request_timeout=REQUEST_SECONDS
                )
                text = response.data.decode("utf-8", errors="replace")
            except ApiException as err:
                return None, f"the launcher pod {namespace}/{pod} ended, its log could not be read ({err.status} {err.reason})"
            return text, f"pod {namespace}/{pod} (MPIJob {name}'s launcher)"
        if time.monotonic() >= deadline:
            phases = ", ".join(f"{p['metadata']['name']} {(p.get('status') or {}).get('phase')}" for p in pods) or "no launcher pod"
            return None, f"MPIJob {namespace}/{name}: its launcher had not ended after {wait_seconds:g} s ({phases})"
        time.sleep(min(poll_seconds, max(0.0, deadline - time.monotonic())))
