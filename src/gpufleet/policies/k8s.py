"""Kubernetes rules: extended resources, GPU pods and their taints, device plugins on tainted nodes,
MIG. Pod specs are read from any workload kind (Pod, Deployment, Job, DaemonSet, StatefulSet,
CronJob, Kubeflow MPIJob); taints come from the stack's EKS node groups.
"""

from __future__ import annotations

from collections.abc import Mapping

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.catalog import catalog, chart_objects, charts, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.policies.eks_nodes import has_efa, node_group_type
from gpufleet.policies.inputs import depended_on, get, items, plain, present, truthy
from gpufleet.policies.registry import Policies
from gpufleet.rules import aks as aks_rules
from gpufleet.rules import eks as eks_rules
from gpufleet.rules import helm as helm_rules
from gpufleet.rules import k8s as k8s_rules

POLICIES = Policies(__name__)


def pod_specs(resource_type: str, props) -> list[tuple[str, Mapping]]:
    """(where, pod spec) of every pod template of a Kubernetes workload."""
    if not resource_type.startswith("kubernetes:"):
        return []
    kind = resource_type.rsplit(":", 1)[-1]
    spec = get(props, "spec")
    if kind == "Pod":
        return [("spec", spec)] if isinstance(spec, Mapping) else []
    if kind == "CronJob":
        template = get(spec, "jobTemplate", "spec", "template", "spec")
        return [("spec.jobTemplate.spec.template.spec", template)] if isinstance(template, Mapping) else []
    if kind == "MPIJob":
        found = []
        for role in ("Launcher", "Worker"):
            template = get(spec, "mpiReplicaSpecs", role, "template", "spec")
            if isinstance(template, Mapping):
                found.append((f"spec.mpiReplicaSpecs.{role}.template.spec", template))
        return found
    template = get(spec, "template", "spec")
    return [("spec.template.spec", template)] if isinstance(template, Mapping) else []


def containers(pod: Mapping) -> list[Mapping]:
    return [c for key in ("containers", "initContainers") for c in items(pod.get(key)) if isinstance(c, Mapping)]


def workload_pods(args: ResourceValidationArgs) -> list[tuple[str, Mapping]]:
    """The pod templates a pod rule judges (its `subject`); a resource with none is not applicable."""
    specs = pod_specs(args.resource_type, args.props)
    if not specs:
        args.not_applicable("no pod template")
    return specs


def _wants(pod: Mapping, resource: str) -> bool:
    for c in containers(pod):
        for part in ("requests", "limits"):
            if any(name == resource or name.startswith(resource) for name in (get(c, "resources", part) or {})):
                return True
    return False


@POLICIES.resource("k8s-extended-resources-requests-equal-limits", subject=workload_pods)
def _validate_requests_equal_limits(args: ResourceValidationArgs, report: ReportViolation, specs: list) -> None:
    eks = catalog.load().facts.eks
    for where, pod in specs:
        for c in containers(pod):
            for problem in k8s_rules.requests_equal_limits(c.get("name", "?"), get(c, "resources") or {}, eks):
                report(f"{where}: {problem}", None)


def _node_groups(args: StackValidationArgs, cat: Catalog):
    """(node group, accelerator, taints, EFA?) of every EKS node group of the stack."""
    found = []
    for group in args.resources:
        if group.resource_type != tokens.EKS_NODE_GROUP:
            continue
        it = node_group_type(group, cat)
        kind = eks_rules.accelerator(it) if it is not None else None
        taints = [t for t in items(get(group.props, "taints")) if isinstance(t, Mapping)]
        efa = any(has_efa(template) for template in depended_on(group, tokens.LAUNCH_TEMPLATE))
        found.append((group, kind, taints, efa, it))
    return found


def operator_installs_driver(args: StackValidationArgs, cat: Catalog) -> bool:
    """Does a GPU Operator release of the stack install the driver (its chart does unless told not to)?"""
    for r in args.resources:
        if r.resource_type == tokens.HELM_RELEASE and get(r.props, "chart") == cat.facts.charts.gpu_operator.chart:
            enabled = get(r.props, "values", "driver", "enabled")
            return enabled is None or truthy(enabled)
    return False


def _gpu_pool_taints(args: StackValidationArgs, cat: Catalog) -> list[list[Mapping]]:
    """The taints of the stack's GKE and AKS GPU node pools (GKE adds its own GPU taint)."""
    facts = cat.facts
    found = []
    for r in args.resources:
        if r.resource_type == tokens.GKE_NODE_POOL and (
            get(r.props, "nodeConfig", "guestAccelerators") or get(r.props, "nodeConfig", "machineType") in facts.gke.machine_types
        ):
            own = [t for t in items(get(r.props, "nodeConfig", "taints")) if isinstance(t, Mapping)]
            taint = facts.gke.gpu_taint
            found.append([*own, {"key": taint.key, "value": taint.value, "effect": taint.effect}])
        elif r.resource_type == tokens.AKS_NODE_POOL and get(r.props, "vmSize") in facts.aks.vm_sizes:
            found.append([t for t in (aks_rules.parse_taint(x) for x in items(get(r.props, "nodeTaints")) if isinstance(x, str)) if t])
    return found


def _untolerated_gpu_pods(args: StackValidationArgs, cat: Catalog):
    """(resource, where, accelerator resource, kind, taints not tolerated, gap) for each pod template
    that tolerates none of the taints of the node groups with its accelerator. `gap` is None when the
    plan holds the cluster and those node groups; otherwise it names what the plan does not hold, and
    the taints judged are the ones the convention puts on such nodes."""
    eks = cat.facts.eks
    groups = _node_groups(args, cat)
    pools = _gpu_pool_taints(args, cat)
    creates_cluster = any(r.resource_type in tokens.CLUSTERS for r in args.resources)
    for r in args.resources:
        for where, pod in pod_specs(r.resource_type, r.props):
            tolerations = [t for t in items(pod.get("tolerations")) if isinstance(t, Mapping)]
            for kind, resource in eks.accelerator_resources.by_kind().items():
                if not _wants(pod, resource):
                    continue
                candidates = [taints for _, k, taints, _, _ in groups if k == kind] + (pools if kind == "nvidia" else [])
                gap = None
                if not candidates:
                    gap = f"the plan holds no node group with {kind} devices"
                    candidates = [[eks.accelerator_taints.of(kind)]]
                elif not creates_cluster:
                    gap = "the plan joins an existing cluster, whose other node groups it does not hold"
                if all(k8s_rules.untolerated(tolerations, taints, eks) for taints in candidates):
                    yield r, where, resource, kind, k8s_rules.untolerated(tolerations, candidates[0], eks), gap


@POLICIES.stack("k8s-gpu-pod-tolerates-taint")
def _validate_pod_tolerates(args: StackValidationArgs, report: ReportViolation) -> None:
    for r, where, resource, kind, missing, gap in _untolerated_gpu_pods(args, catalog.load()):
        if gap is None:
            report(
                f"{where} requests {resource} but tolerates no {kind} node group's taints "
                f"(e.g. {', '.join(map(k8s_rules.describe_taint, missing))}): it never schedules",
                r.urn,
            )


@POLICIES.stack("k8s-gpu-pod-tolerates-taint-unseen")
def _validate_pod_tolerates_unseen(args: StackValidationArgs, report: ReportViolation) -> None:
    for r, where, resource, kind, missing, gap in _untolerated_gpu_pods(args, catalog.load()):
        if gap is not None:
            report(
                f"{where} requests {resource} but does not tolerate {', '.join(map(k8s_rules.describe_taint, missing))}; "
                f"not judged for certain: {gap}. If its {kind} nodes carry that taint (the convention), it never schedules",
                r.urn,
            )


@POLICIES.stack("k8s-device-plugin-tolerates-taints")
def _validate_device_plugin_tolerates(args: StackValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    eks = cat.facts.eks
    plugins = {c.chart: (key, c) for key, c in cat.facts.charts.plugins().items()}
    groups = _node_groups(args, cat)
    for release in args.resources:
        key, chart = (
            plugins.get(get(release.props, "chart"), (None, None)) if release.resource_type == tokens.HELM_RELEASE else (None, None)
        )
        if chart is None or key is None:  # both None or neither: a plugin's key is a str
            continue
        tolerations = charts.release_tolerations(key, chart, plain(get(release.props, "values")))
        for group, kind, taints, efa, _ in groups:
            if efa if chart.serves == "efa" else kind == chart.serves:
                missing = k8s_rules.untolerated(tolerations, taints, eks)
                if missing:
                    report(
                        f"release {release.name!r} ({chart.chart}) does not tolerate "
                        f"{', '.join(map(k8s_rules.describe_taint, missing))} of node group {group.name!r}: the plugin "
                        "never runs there and its resources are never advertised",
                        release.urn,
                    )


@POLICIES.stack("eks-mig-supported")
def _validate_mig(args: StackValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    nvidia_chart = cat.facts.charts.nvidia_device_plugin.chart
    models = cat.facts.mig_capable_gpu_models.values
    groups = _node_groups(args, cat)
    for release in args.resources:
        if release.resource_type != tokens.HELM_RELEASE or get(release.props, "chart") != nvidia_chart:
            continue
        strategy = get(release.props, "values", "migStrategy")
        if strategy in (None, "none"):
            continue
        for group, kind, _, _, it in groups:
            if kind == "nvidia":
                reason = k8s_rules.mig_supported(it, models)
                if reason:
                    report(f"release {release.name!r} sets migStrategy {strategy}; node group {group.name!r}: {reason}", release.urn)


def _release_name_unknown(resource) -> str | None:
    if present(resource.props, "name") and get(resource.props, "name") is None:
        return "its release name is known only after apply"
    return None


@POLICIES.resource("helm-release-names-fit", on=(tokens.HELM_RELEASE, tokens.HELM_CHART_V4), unjudged=_release_name_unknown)
def _validate_helm_names(args: ResourceValidationArgs, report: ReportViolation) -> None:
    release = helm_rules.release_name(args.resource_type, args.name, get(args.props, "name"))
    if release is None:
        return
    chart = chart_objects.named_chart(get(args.props, "chart"), catalog.load())
    # Names are rendered from the pinned chart's templates only: another version's are not judged.
    if chart is not None and get(args.props, "version") in (None, chart.version):
        namespace = str(get(args.props, "namespace") or "default")
        rendered = chart_objects.release_objects(chart, release.pattern, namespace, plain(get(args.props, "values")))
    else:
        rendered = None
    for problem in helm_rules.release_problems(release, rendered):
        report(f"Helm release {release.shown()!r}: {problem}", None)
