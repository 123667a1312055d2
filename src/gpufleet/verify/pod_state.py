"""A pod as its containers say it is, read from the Pod object the API returns (`kubectl get pods -o
json`, or the client's list): the waiting reasons the kubelet gives a container that will not start,
its restarts, its readiness condition, and, for a Job's pods and the MPI launcher, how it ended."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

# The kubelet's waiting reasons that do not clear by waiting (a pull, create or start that failed and
# is backed off), kubernetes/kubernetes: pkg/kubelet/images/types.go (0a2f5b12: ImagePullBackOff,
# ImageInspectError, ErrImagePull, ErrImageNeverPull, RegistryUnavailable, InvalidImageName),
# pkg/kubelet/container/sync_result.go (008b3652: CrashLoopBackOff, RunContainerError,
# CreatePodSandboxError, ConfigPodSandboxError), pkg/kubelet/kuberuntime/kuberuntime_container.go
# (CreateContainerConfigError, PreCreateHookError, CreateContainerError, PreStartHookError).
# ContainerCreating and PodInitializing are a container still starting.
FAILING_WAITS = frozenset(
    {
        "ImagePullBackOff",
        "ImageInspectError",
        "ErrImagePull",
        "ErrImageNeverPull",
        "RegistryUnavailable",
        "InvalidImageName",
        "CrashLoopBackOff",
        "RunContainerError",
        "CreatePodSandboxError",
        "ConfigPodSandboxError",
        "CreateContainerConfigError",
        "PreCreateHookError",
        "CreateContainerError",
        "PreStartHookError",
    }
)
READY, DONE, FAILING, UNSCHEDULED, STARTING = "ready", "done", "failing", "unscheduled", "starting"


@dataclass(frozen=True)
class PodState:
    name: str
    node: str | None
    state: str  # ready | done | failing | unscheduled | starting
    problems: tuple[str, ...] = ()  # each container's failing reason, a Failed pod's reason, an unready pod's condition
    restarts: int = 0
    scheduler: str | None = None  # the live scheduler's message for an unscheduled pod
    reasons: frozenset[str] = frozenset()  # the kubelet's reasons behind `problems` (CrashLoopBackOff, Failed)

    def said(self) -> str:
        """The pod in a line: its name, what is wrong, its restarts."""
        restarts = f"{self.restarts} restart(s)" if self.restarts else ""
        return f"pod {self.name}: " + "; ".join([*self.problems, restarts] if restarts else self.problems or [self.state])


def _statuses(pod: Mapping) -> list[Mapping]:
    status = pod.get("status") or {}
    return [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]


def _condition(pod: Mapping, kind: str) -> Mapping | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def _container(container: Mapping) -> str:
    return f"container {container['name']}" if container.get("name") else "a container"


def _waiting(container: Mapping) -> tuple[str, str] | None:
    """(the kubelet's reason, the container's line) for a container that will not start."""
    waiting = (container.get("state") or {}).get("waiting") or {}
    reason = waiting.get("reason")
    if reason not in FAILING_WAITS:
        return None
    message = waiting.get("message")
    return reason, f"{_container(container)} {reason}" + (f" ({message})" if message else "")


def _terminated(container: Mapping) -> str | None:
    ended = (container.get("state") or {}).get("terminated") or {}
    code = ended.get("exitCode")
    if not ended or code == 0:
        return None
    return f"{_container(container)} terminated {ended.get('reason') or 'with an error'} (exit code {code})"


def read(pod: Mapping) -> PodState:
    status = pod.get("status") or {}
    name = str((pod.get("metadata") or {}).get("name"))
    node = (pod.get("spec") or {}).get("nodeName")
    containers = _statuses(pod)
    restarts = sum(int(c.get("restartCount") or 0) for c in containers)
    phase = status.get("phase")
    if phase == "Succeeded":
        return PodState(name, node, DONE, restarts=restarts)
    waits = [w for c in containers if (w := _waiting(c))]
    if phase == "Failed":
        why = status.get("reason") or "Failed"
        problems = [f"Failed: {why}" + (f" ({status['message']})" if status.get("message") else "")]
        problems += [t for c in containers if (t := _terminated(c))]
        return PodState(name, node, FAILING, tuple(problems), restarts, reasons=frozenset({"Failed"}))
    if waits:
        return PodState(name, node, FAILING, tuple(w for _, w in waits), restarts, reasons=frozenset(r for r, _ in waits))
    scheduled = _condition(pod, "PodScheduled")
    if phase == "Pending" and scheduled is not None and scheduled.get("status") == "False":
        message = scheduled.get("message") or scheduled.get("reason") or "not scheduled"
        return PodState(name, node, UNSCHEDULED, restarts=restarts, scheduler=message)
    ready = _condition(pod, "Ready")
    if phase == "Running" and ready is not None and ready.get("status") == "True":
        return PodState(name, node, READY, restarts=restarts)
    unready: tuple[str, ...] = ()
    if ready is not None and ready.get("status") == "False" and (ready.get("reason") or ready.get("message")):
        unready = (f"not Ready: {': '.join(str(x) for x in (ready.get('reason'), ready.get('message')) if x)}",)
    return PodState(name, node, STARTING, unready, restarts)


def restarting_launcher(state: PodState) -> PodState:
    """An MPI launcher backed off while its workers start is still starting: "It is normal for the
    launcher pod to restart a few times until the worker pods are fully running" (aws-samples/aws-do-eks
    wd/conf/terraform/eks-gpu-efa/README.md L123, f721602f, which records it CrashLoopBackOff, then
    Running, then Completed). Only a Failed launcher has failed."""
    if state.state == FAILING and state.reasons == {"CrashLoopBackOff"}:
        return replace(state, state=STARTING)
    return state
