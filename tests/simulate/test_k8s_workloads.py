"""src/gpufleet/simulate/k8s_workloads.py: the pod templates read from Kubernetes objects (every
workload kind, the Kubeflow MPIJob), EKS's add-ons and their configuration values, and the charts'
device plugins: where each pod spec is, how many replicas, and what a pod requests."""

from __future__ import annotations

import functools

import pytest

from gpufleet.catalog import catalog
from gpufleet.simulate import k8s_workloads as kw

FACTS = catalog.load().facts
_operator_pods = functools.partial(kw.gpu_operator_pods, state_label=FACTS.dra.device_plugin_off)
SPEC = {"containers": [{"name": "main", "image": "x:1"}]}


def test_only_kubernetes_tokens_have_a_kind():
    assert kw.kind_of("kubernetes:apps/v1:Deployment") == "Deployment"
    assert kw.kind_of("kubernetes:core/v1:Pod") == "Pod"
    assert kw.kind_of("aws:eks/nodeGroup:NodeGroup") is None
    assert kw.pod_specs("aws:ecs/service:Service", {"spec": {"template": {"spec": SPEC}}}) == []


@pytest.mark.parametrize(
    ("token", "spec", "expected"),
    [
        ("kubernetes:core/v1:Pod", SPEC, [("spec", 1, SPEC)]),
        ("kubernetes:apps/v1:Deployment", {"replicas": 3.0, "template": {"spec": SPEC}}, [("spec.template.spec", 3, SPEC)]),
        ("kubernetes:apps/v1:Deployment", {"template": {"spec": SPEC}}, [("spec.template.spec", 1, SPEC)]),
        ("kubernetes:apps/v1:StatefulSet", {"replicas": 0, "template": {"spec": SPEC}}, [("spec.template.spec", 0, SPEC)]),
        ("kubernetes:apps/v1:ReplicaSet", {"replicas": 2, "template": {"spec": SPEC}}, [("spec.template.spec", 2, SPEC)]),
        ("kubernetes:core/v1:ReplicationController", {"replicas": 2, "template": {"spec": SPEC}}, [("spec.template.spec", 2, SPEC)]),
        ("kubernetes:apps/v1:Deployment", {"replicas": 2.5, "template": {"spec": SPEC}}, [("spec.template.spec", 1, SPEC)]),
        ("kubernetes:apps/v1:Deployment", {"replicas": True, "template": {"spec": SPEC}}, [("spec.template.spec", 1, SPEC)]),
        ("kubernetes:apps/v1:Deployment", {"replicas": "3", "template": {"spec": SPEC}}, [("spec.template.spec", 1, SPEC)]),
        ("kubernetes:apps/v1:DaemonSet", {"template": {"spec": SPEC}}, [("spec.template.spec", None, SPEC)]),
        ("kubernetes:batch/v1:Job", {"parallelism": 4, "replicas": 9, "template": {"spec": SPEC}}, [("spec.template.spec", 4, SPEC)]),
        ("kubernetes:batch/v1:Job", {"template": {"spec": SPEC}}, [("spec.template.spec", 1, SPEC)]),
        (
            "kubernetes:batch/v1:CronJob",
            {"jobTemplate": {"spec": {"parallelism": 2, "template": {"spec": SPEC}}}},
            [("spec.jobTemplate.spec.template.spec", 2, SPEC)],
        ),
        (
            "kubernetes:batch/v1:CronJob",
            {"jobTemplate": {"spec": {"template": {"spec": SPEC}}}},
            [("spec.jobTemplate.spec.template.spec", 1, SPEC)],
        ),
        ("kubernetes:batch/v1:CronJob", {"jobTemplate": {}}, []),
        ("kubernetes:core/v1:ConfigMap", {"template": {"spec": SPEC}}, []),
        ("kubernetes:apps/v1:Deployment", {"template": {}}, []),
        ("kubernetes:apps/v1:Deployment", {"template": {"spec": "x"}}, []),
    ],
)
def test_where_the_pod_spec_is_and_how_many(token, spec, expected):
    assert kw.pod_specs(token, {"spec": spec}) == expected


def test_an_object_without_a_spec_runs_no_pods():
    assert kw.pod_specs("kubernetes:core/v1:Pod", {}) == []
    assert kw.pod_specs("kubernetes:core/v1:Pod", {"spec": "x"}) == []


def test_an_mpijob_has_a_launcher_and_workers():
    spec = {"mpiReplicaSpecs": {"Launcher": {"template": {"spec": SPEC}}, "Worker": {"replicas": 8.0, "template": {"spec": SPEC}}}}
    assert kw.pod_specs("kubernetes:kubeflow.org/v2beta1:MPIJob", {"spec": spec}) == [
        ("spec.mpiReplicaSpecs.Launcher.template.spec", 1, SPEC),
        ("spec.mpiReplicaSpecs.Worker.template.spec", 8, SPEC),
    ]
    workers = {"mpiReplicaSpecs": {"Worker": {"template": {"spec": SPEC}}}}
    assert kw.pod_specs("kubernetes:kubeflow.org/v2beta1:MPIJob", {"spec": workers}) == [
        ("spec.mpiReplicaSpecs.Worker.template.spec", 0, SPEC)
    ]
    pods = kw.object_pods("kubernetes:kubeflow.org/v2beta1:MPIJob", "nccl", {"metadata": {"namespace": "ml"}, "spec": spec})
    assert [(p.owner, p.replicas) for p in pods] == [("MPIJob ml/nccl (Launcher)", 1), ("MPIJob ml/nccl (Worker)", 8)]


def test_object_pods_are_named_by_kind_namespace_and_name():
    [pod] = kw.object_pods("kubernetes:apps/v1:Deployment", "resource-name", {"spec": {"template": {"spec": SPEC}}}, urn="urn:x")
    assert (pod.owner, pod.urn) == ("Deployment default/resource-name", "urn:x")
    [pod] = kw.object_pods(
        "kubernetes:apps/v1:Deployment",
        "resource-name",
        {"metadata": {"name": "web", "namespace": "prod"}, "spec": {"template": {"spec": SPEC}}},
    )
    assert pod.owner == "Deployment prod/web"


def test_a_pods_request_sums_its_containers_and_covers_each_init_container():
    spec = {
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
            {"name": "b", "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "2"}, "requests": {"cpu": "500m"}}},
            "not a container",
        ],
        "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "3", "memory": "512Mi"}}}, "x"],
    }
    assert kw.pod_requests(spec) == {"cpu": 3000, "memory": 2**30, "nvidia.com/gpu": 1}
    assert kw.pod_requests({"initContainers": [{"resources": {"requests": {"cpu": "1"}}}]}) == {"cpu": 1000}
    assert kw.pod_requests({"initContainers": [{"resources": {"requests": {"cpu": "0"}}}]}) == {"cpu": 0}


def test_an_unreadable_quantity_is_a_note_not_a_request():
    notes: list[str] = []
    assert kw.pod_requests({"containers": [{"name": "a", "resources": {"requests": {"cpu": "lots", "memory": "1Mi"}}}]}, notes) == {
        "memory": 2**20
    }
    assert notes == ["container 'a': cpu: 'lots' is not a quantity"]
    [pod] = kw.object_pods(
        "kubernetes:core/v1:Pod", "p", {"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "lots"}}}]}}
    )
    assert pod.notes == ("container 'a': cpu: 'lots' is not a quantity",)


def test_a_pod_templates_selector_affinity_and_tolerations():
    term = {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}
    spec = {
        **SPEC,
        "nodeSelector": {"pool": 1},
        "tolerations": [{"operator": "Exists"}, "bad"],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term, "bad"]}}},
    }
    pod = kw.pod_template("Deployment default/x", 2, spec, source="s", advertises=["nvidia.com/gpu"])
    assert (pod.node_selector, pod.affinity_terms, pod.tolerations) == ({"pool": "1"}, (term,), ({"operator": "Exists"},))
    assert (pod.replicas, pod.source, pod.advertises) == (2, "s", ("nvidia.com/gpu",))
    plain = kw.pod_template("Pod default/y", 1, {**SPEC, "nodeSelector": ["not", "a", "map"]})
    assert (plain.node_selector, plain.affinity_terms, plain.tolerations) == ({}, None, ())


def test_eks_add_ons_and_their_configuration_values():
    addons = FACTS.eks.default_addons
    coredns = addons["coredns"]
    pods = {p.owner: p for p in kw.addon_pods(addons)}
    assert pods[f"Deployment {coredns.namespace}/coredns"].replicas == coredns.replicas
    daemon = next(name for name, a in addons.items() if a.kind == "DaemonSet")
    assert pods[f"DaemonSet {addons[daemon].namespace}/{daemon}"].replicas is None
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "role", "operator": "Exists"}]}]
            }
        }
    }
    given = {
        "coredns": {
            "replicaCount": 5,
            "nodeSelector": {"role": "system"},
            "tolerations": [],
            "affinity": affinity,
            "resources": {"requests": {"cpu": "250m"}},
        },
        daemon: {"replicaCount": 7},
    }
    configured = {p.owner: p for p in kw.addon_pods(addons, given, urn="urn:a")}
    dns = configured[f"Deployment {coredns.namespace}/coredns"]
    assert (dns.replicas, dns.node_selector, dns.tolerations, dns.requests["cpu"], dns.urn) == (5, {"role": "system"}, (), 250, "urn:a")
    assert dns.affinity_terms == tuple(affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"])
    assert dns.source.startswith("EKS add-on coredns: ")
    assert configured[f"DaemonSet {addons[daemon].namespace}/{daemon}"].replicas is None  # a DaemonSet has no replica count
    unchanged = {p.owner: p for p in kw.addon_pods(addons, {"coredns": {"replicaCount": "many"}})}
    assert unchanged[f"Deployment {coredns.namespace}/coredns"].replicas == coredns.replicas


def test_the_gpu_operators_device_plugin_and_its_switch():
    chart = FACTS.charts.gpu_operator
    [plugin, *_] = _operator_pods(chart, None, "gpu-operator", "urn:o", "nvidia.com/gpu")
    assert plugin.replicas is None and plugin.advertises == ("nvidia.com/gpu",) and plugin.urn == "urn:o"
    from gpufleet.catalog import charts

    tolerations = charts.at(charts.defaults(chart), chart.tolerations_path)
    assert tolerations and plugin.tolerations == tuple(tolerations)  # the operands' tolerations, from the chart's values
    assert plugin.owner == f"DaemonSet {chart.namespace}/nvidia-device-plugin-daemonset ({chart.chart} {chart.version})"
    assert [p.owner for p in _operator_pods(chart, {"devicePlugin": {"enabled": False}}, "gpu-operator", None, "nvidia.com/gpu")] == [
        f"Deployment {chart.namespace}/gpu-operator ({chart.chart} {chart.version})",
        f"Deployment {chart.namespace}/gpu-operator-node-feature-discovery-master ({chart.chart} {chart.version})",
        f"Deployment {chart.namespace}/gpu-operator-node-feature-discovery-gc ({chart.chart} {chart.version})",
    ]
    selector = {"example.com/gpu": "true"}
    [plugin, *_] = _operator_pods(
        chart, {"node-feature-discovery": {"worker": {"nodeSelector": selector}}}, "r", None, "nvidia.com/gpu"
    )
    assert plugin.node_selector == selector


def test_the_gpu_operators_device_plugin_keeps_off_a_node_whose_state_label_says_so():
    """The operator writes nvidia.com/gpu.deploy.device-plugin=true only where the label is missing
    or empty, and its DaemonSet selects "true": a group labelled "false" (DRA's) gets no plugin."""
    from gpufleet.simulate.k8s_filters import affinity_matches

    [plugin, *_] = _operator_pods(FACTS.charts.gpu_operator, None, "gpu-operator", None, "nvidia.com/gpu")
    key = FACTS.dra.device_plugin_off.key
    cat = catalog.load()
    landing = {value: affinity_matches(plugin, {} if value is None else {key: value}, cat) for value in (None, "", "true", "false", "paused")}
    assert landing == {None: True, "": True, "true": True, "false": False, "paused": False}


def test_the_gpu_operators_controllers_come_from_its_values_and_its_subchart_s_defaults():
    """The operator's Deployment and node feature discovery's master and garbage collector: one
    replica each, their selectors, tolerations and requests as the chart renders them."""
    chart = FACTS.charts.gpu_operator
    operator, master, gc = _operator_pods(chart, None, "ml", "urn:o", "nvidia.com/gpu")[1:]
    control_plane = {"key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "", "effect": "NoSchedule"}
    assert (operator.replicas, operator.node_selector, operator.tolerations) == (1, {"kubernetes.io/os": "linux"}, (control_plane,))
    assert operator.requests["cpu"] == 200 and operator.requests["memory"] == 100 * 2**20
    assert master.owner.startswith("Deployment gpu-operator/ml-node-feature-discovery-master ")
    assert (master.replicas, master.node_selector, master.tolerations, master.requests["cpu"]) == (1, {}, (control_plane,), 100)
    assert (gc.replicas, gc.tolerations, gc.requests["cpu"], gc.advertises) == (1, (), 10, ())
    # A release named after the subchart keeps its name; values switch each off or scale it.
    assert _operator_pods(chart, None, "node-feature-discovery", None, "r")[2].owner.startswith(
        "Deployment gpu-operator/node-feature-discovery-master "
    )
    owners = [p.owner.split()[1] for p in _operator_pods(chart, {"nfd": {"enabled": False}}, "ml", None, "r")]
    assert owners == ["gpu-operator/nvidia-device-plugin-daemonset", "gpu-operator/gpu-operator"]
    given = {"node-feature-discovery": {"gc": {"enable": False}, "master": {"replicaCount": 3, "tolerations": []}}}
    [_, _, master] = _operator_pods(chart, given, "ml", None, "r")
    assert (master.replicas, master.tolerations) == (3, ())
    [_, _, gc] = _operator_pods(chart, {"node-feature-discovery": {"master": {"enable": False}}}, "ml", None, "r")
    assert gc.owner.startswith("Deployment gpu-operator/ml-node-feature-discovery-gc ")
    # A replicaCount given as null falls back to the template's default of one.
    assert _operator_pods(chart, {"node-feature-discovery": {"master": {"replicaCount": None}}}, "ml", None, "r")[2].replicas == 1
    # Names are cut at 63 characters, without a trailing hyphen (the helper's trunc and trimSuffix).
    assert _operator_pods(chart, None, "r" * 61, None, "r")[2].owner.split()[1] == f"gpu-operator/{'r' * 61}-n-master"


def test_a_device_plugin_release_is_named_by_its_chart():
    chart = FACTS.charts.nvidia_device_plugin
    [plugin] = kw.device_plugin_pods("nvidiaDevicePlugin", chart, None, "nvdp", "urn:p", ("nvidia.com/gpu",))
    assert plugin.owner == f"DaemonSet {chart.namespace}/nvdp ({chart.chart.rsplit('/', 1)[-1]} {chart.version})"
    assert plugin.advertises == ("nvidia.com/gpu",) and plugin.replicas is None

    neuron = FACTS.charts.neuron_helm_chart
    [plugin] = kw.device_plugin_pods("neuronHelmChart", neuron, None, "neuron", None, ("aws.amazon.com/neuron",))
    assert plugin.owner == f"DaemonSet {neuron.namespace}/neuron ({neuron.chart.rsplit('/', 1)[-1]} {neuron.version})"
    assert "/" in neuron.chart and "/" not in plugin.owner.split("(")[1]  # an OCI address is named by its last part


def test_the_resources_each_plugin_advertises():
    eks, charts = FACTS.eks, FACTS.charts
    assert kw.advertised(charts.efa_device_plugin, None, eks) == (eks.efa_resource,)
    assert kw.advertised(charts.neuron_helm_chart, None, eks) == (eks.accelerator_resources.neuron, eks.neuron_core_resource)


def test_a_controllers_affinity_is_read_from_the_values_and_a_manifest_runs_its_pods():
    chart = FACTS.charts.gpu_operator
    required = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "role", "operator": "In", "values": ["ops"]}]}]
            }
        }
    }
    operator = _operator_pods(chart, {"operator": {"affinity": required}}, "ml", None, "nvidia.com/gpu")[1]
    assert operator.affinity_terms == tuple(required["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"])
    mpi = FACTS.charts.mpi_operator.operator
    [pod] = kw.manifest_pods(mpi, "urn:m")
    assert pod.owner == f"{mpi.kind} {mpi.namespace}/{mpi.name}" and pod.replicas == mpi.replicas and pod.urn == "urn:m"


# RuntimeClass admission (kubernetes/kubernetes plugin/pkg/admission/runtimeclass/admission.go).
_GVISOR = {
    "metadata": {"name": "gvisor"},
    "handler": "runsc",
    "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
    "scheduling": {"nodeSelector": {"sandbox": "gvisor"}, "tolerations": [{"key": "sandbox", "operator": "Exists"}]},
}


def _deployment(**spec) -> dict:
    return {
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], **spec}}},
    }


def test_a_runtime_class_adds_its_overhead_selector_and_tolerations():
    [pod] = kw.object_pods(
        "kubernetes:apps/v1:Deployment", "web", _deployment(runtimeClassName="gvisor"), runtime_classes={"gvisor": _GVISOR}
    )
    assert pod.requests["cpu"] == 1250 and pod.requests["memory"] == 120 * 1024**2
    assert pod.node_selector == {"sandbox": "gvisor"} and {"key": "sandbox", "operator": "Exists"} in pod.tolerations
    assert not pod.notes


def test_a_runtime_class_the_plan_does_not_hold_is_a_note():
    [pod] = kw.object_pods(
        "kubernetes:apps/v1:Deployment", "web", _deployment(runtimeClassName="kata"), runtime_classes={"gvisor": _GVISOR}
    )
    assert (
        pod.requests["cpu"] == 1000 and "RuntimeClass 'kata' is not in the plan: its overhead and scheduling are not counted" in pod.notes
    )


@pytest.mark.parametrize(
    "spec, said",
    [
        ({"nodeSelector": {"sandbox": "kata"}}, "its nodeSelector conflicts on sandbox"),
        ({"overhead": {"cpu": "1"}}, "its overhead is not the class's podFixed"),
    ],
)
def test_a_pod_the_admission_plugin_refuses_is_a_note(spec, said):
    [pod] = kw.object_pods(
        "kubernetes:apps/v1:Deployment", "web", _deployment(runtimeClassName="gvisor", **spec), runtime_classes={"gvisor": _GVISOR}
    )
    assert any(said in n for n in pod.notes), pod.notes


# --- the NVIDIA DRA driver charts' own workloads (catalog dra.charts) --------------------------------

SIGS, NVIDIA = FACTS.dra.charts  # dra-driver-nvidia-gpu 0.4.1, nvidia-dra-driver-gpu 25.8.1
ON = {"gpuResourcesEnabledOverride": True}


def _by_owner(pods):
    return {p.owner: p for p in pods}


def test_the_sigs_charts_defaults_render_the_kubelet_plugin_and_the_controller():
    # values.yaml @v0.4.1: gpus and computeDomains on (L77-L81), webhook off (L145), controller.replicas 1 (L198)
    pods = _by_owner(kw.dra_driver_pods(SIGS, ON, "dra", "urn:r", "0.4.1"))
    assert list(pods) == [
        "DaemonSet dra/dra-driver-nvidia-gpu-kubelet-plugin (dra-driver-nvidia-gpu 0.4.1)",
        "Deployment dra/dra-driver-nvidia-gpu-controller (dra-driver-nvidia-gpu 0.4.1)",
    ]
    plugin, controller = pods.values()
    assert plugin.replicas is None and plugin.notes == ()
    assert plugin.tolerations == ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
    assert len(plugin.affinity_terms or ()) == 5  # L288-L321: NFD's three PCI labels, Tegra's CPU vendor, the GPU Operator's
    assert controller.replicas == 1
    assert {t["key"] for t in controller.tolerations} == {
        "node-role.kubernetes.io/control-plane",
        "node-role.kubernetes.io/master",
        "CriticalAddonsOnly",
    }
    assert controller.affinity_terms is None  # only preferred terms (L227-L242)


def test_the_release_values_place_and_size_the_pods():
    given = {
        **ON,
        "resources": {"computeDomains": {"enabled": False}},
        "webhook": {"enabled": True, "replicas": 2.0, "containers": {"webhook": {"resources": {"requests": {"cpu": "100m"}}}}},
        "kubeletPlugin": {
            "nodeSelector": {"nvidia.com/gpu.deploy.device-plugin": "false"},
            "containers": {"gpus": {"resources": {"requests": {"cpu": "200m", "memory": "256Mi"}}}},
        },
    }
    pods = _by_owner(kw.dra_driver_pods(SIGS, given, "dra", None, "0.4.1"))
    assert list(pods) == [
        "DaemonSet dra/dra-driver-nvidia-gpu-kubelet-plugin (dra-driver-nvidia-gpu 0.4.1)",
        "Deployment dra/dra-driver-nvidia-gpu-webhook (dra-driver-nvidia-gpu 0.4.1)",
    ]
    plugin, webhook = pods.values()
    assert plugin.node_selector == {"nvidia.com/gpu.deploy.device-plugin": "false"}
    assert plugin.requests == {"cpu": 200, "memory": 256 * 2**20}
    assert webhook.replicas == 2 and webhook.requests == {"cpu": 100}


def test_nvidias_chart_has_no_default_plugin_tolerations_and_a_control_plane_controller():
    pods = kw.dra_driver_pods(NVIDIA, {**ON, "namespaceOverride": "nv", "nameOverride": "dra"}, "ignored", None, "v25.8.1")
    plugin, controller = pods
    assert plugin.owner == "DaemonSet nv/dra-kubelet-plugin (nvidia-dra-driver-gpu v25.8.1)"
    assert plugin.tolerations == ()  # values.yaml @v25.8.1 L203
    assert controller.replicas == 1  # controller.yaml L25
    assert controller.affinity_terms == ({"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]},)


def test_a_value_gpufleet_does_not_read_is_a_note():
    given = {**ON, "nvidiaDriverRoot": "/run/nvidia/driver", "kubeletPlugin": {"priorityClassName": "x", "tolerations": []}}
    [plugin, _] = kw.dra_driver_pods(NVIDIA, given, "dra", None, "25.8.1")
    assert plugin.notes == (
        "the release sets values gpufleet does not read for its pods: kubeletPlugin.priorityClassName, nvidiaDriverRoot",
    )


def test_gpus_without_the_override_are_refused_by_helm():
    [plugin, _] = kw.dra_driver_pods(NVIDIA, {}, "dra", None, "25.8.1")
    assert plugin.notes[0].startswith(
        "Helm refuses to render the release: resources.gpus.enabled is on without gpuResourcesEnabledOverride"
    )


def test_another_chart_version_is_read_from_the_held_values():
    [plugin, _] = kw.dra_driver_pods(NVIDIA, ON, "dra", None, "v25.3.0")
    assert plugin.owner == "DaemonSet dra/nvidia-dra-driver-gpu-kubelet-plugin (nvidia-dra-driver-gpu v25.3.0)"
    assert plugin.notes == (
        "the release pins chart version v25.3.0; its pods are read from the values of 25.8.1, the version gpufleet has",
    )


def test_the_publisher_is_the_kubelet_plugin_while_a_switch_renders_it():
    assert kw.dra_publisher(NVIDIA, ON) is not None
    assert kw.dra_publisher(NVIDIA, {"resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": False}}}) is None


def test_with_gpus_on_the_kubelet_plugin_serves_the_gpus_instead_of_a_device_plugin():
    [plugin, controller] = kw.dra_driver_pods(NVIDIA, ON, "dra", None, "25.8.1", "nvidia.com/gpu")
    assert plugin.serves_instead == ("nvidia.com/gpu",) and controller.serves_instead == ()
    off = {**ON, "resources": {"gpus": {"enabled": False}}}
    [plugin, _] = kw.dra_driver_pods(NVIDIA, off, "dra", None, "25.8.1", "nvidia.com/gpu")
    assert plugin.serves_instead == ()  # ComputeDomains only: the GPUs are not its
