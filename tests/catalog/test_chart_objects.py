"""src/gpufleet/catalog/chart_objects.py: names, labels and selectors rendered as the pinned charts'
helpers render them (each expectation worked from the template lines curated.yaml cites)."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog, chart_objects, charts


@pytest.fixture(scope="module")
def cat():
    return catalog.load()


def _nvidia(cat):
    return chart_objects.named_chart("nvidia-device-plugin", cat)


def _daemonsets(cat, ref: str, release: str, namespace: str, given: dict | None = None):
    chart = chart_objects.named_chart(ref, cat)
    return chart_objects.daemonsets(chart.names, chart.version, release, namespace, charts.merge(chart.defaults, given), None)


def test_cut_trims_one_trailing_dash():
    assert chart_objects.cut("a" * 62 + "-b") == "a" * 62
    assert chart_objects.cut("a" * 70) == "a" * 63
    assert chart_objects.cut("short-") == "short"


@pytest.mark.parametrize(
    ("release", "values", "fullname"),
    [
        # printf "%s-%s" .Release.Name $name
        ("gpu", {}, "gpu-nvidia-device-plugin"),
        # contains $name .Release.Name: the release name alone
        ("my-nvidia-device-plugin-x", {}, "my-nvidia-device-plugin-x"),
        ("gpu", {"nameOverride": "ndp"}, "gpu-ndp"),
        ("gpu", {"fullnameOverride": "plugin"}, "plugin"),
        ("a" * 50, {}, ("a" * 50 + "-nvidia-device-plugin")[:63]),
    ],
)
def test_fullname_as_the_helper(cat, release, values, fullname):
    chart = _nvidia(cat)
    assert chart_objects.fullname(chart.names, release, charts.merge(chart.defaults, values)) == fullname


def test_nvidia_chart_renders_the_plugin_and_the_mps_control_daemon_alike_but_for_name_and_node_selector(cat):
    plugin, mps = _daemonsets(cat, "nvidia-device-plugin", "gpu", "nvidia-device-plugin")
    assert (plugin.name, mps.name) == ("gpu-nvidia-device-plugin", "gpu-nvidia-device-plugin-mps-control-daemon")
    selector = {"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/instance": "gpu"}
    assert plugin.selector == mps.selector == selector
    assert plugin.labels == {
        **selector,
        "helm.sh/chart": "nvidia-device-plugin-0.20.0",
        "app.kubernetes.io/version": "0.20.0",
        "app.kubernetes.io/managed-by": "Helm",
    }
    assert plugin.node_selector == {} and mps.node_selector == {"nvidia.com/mps.capable": "true"}


def test_mps_daemon_keeps_the_values_node_selector_and_gfd_renders_only_when_enabled(cat):
    given = {"nodeSelector": {"pool": "gpu"}, "gfd": {"enabled": True}}
    chart = _nvidia(cat)
    pod = charts.device_plugin_pod("nvidiaDevicePlugin", cat.facts.charts.nvidia_device_plugin, given)
    found = chart_objects.daemonsets(chart.names, chart.version, "gpu", "ns", charts.merge(chart.defaults, given), pod)
    assert [d.name for d in found] == [
        "gpu-nvidia-device-plugin",
        "gpu-nvidia-device-plugin-mps-control-daemon",
        "gpu-nvidia-device-plugin-gpu-feature-discovery",
    ]
    assert found[1].node_selector == {"nvidia.com/mps.capable": "true", "pool": "gpu"}
    assert found[0].affinity == pod["affinity"]


def test_device_plugin_off_renders_no_daemonset(cat):
    assert _daemonsets(cat, "nvidia-device-plugin", "gpu", "ns", {"devicePlugin": {"enabled": False}}) == []


def test_selector_labels_override_replaces_the_selector(cat):
    [plugin, _] = _daemonsets(cat, "nvidia-device-plugin", "gpu", "ns", {"selectorLabelsOverride": {"app": "ndp"}})
    assert plugin.selector == {"app": "ndp"}
    assert plugin.labels["app"] == "ndp" and plugin.labels["app.kubernetes.io/instance"] == "gpu"


def test_efa_daemonset_is_selected_by_its_fullname(cat):
    [ds] = _daemonsets(cat, "aws-efa-k8s-device-plugin", "efa", "kube-system")
    assert ds.name == "efa-aws-efa-k8s-device-plugin" and ds.namespace == "kube-system"
    assert ds.selector == {"name": "efa-aws-efa-k8s-device-plugin"}
    assert ds.labels["helm.sh/chart"] == "aws-efa-k8s-device-plugin-v0.5.30" and ds.labels["app.kubernetes.io/version"] == "v0.5.20"


def test_neuron_daemonset_is_named_by_its_overrides_not_the_release(cat):
    [ds] = _daemonsets(cat, cat.facts.charts.neuron_helm_chart.chart, "x" * 60, "default")
    assert (ds.name, ds.namespace) == ("neuron-device-plugin", "kube-system")
    assert ds.selector == {
        "name": "neuron-device-plugin-ds",
        "app.kubernetes.io/name": "neuron-device-plugin",
        "app.kubernetes.io/instance": "x" * 60,
    }


def test_karpenter_objects_and_their_namespaces(cat):
    chart = chart_objects.named_chart(cat.facts.karpenter.chart.chart, cat)
    found = {(o.kind, o.name, o.namespace) for o in chart_objects.release_objects(chart, "k", "kube-system", {})}
    assert ("Service", "k-karpenter", "kube-system") in found
    assert ("ClusterRole", "k-karpenter-admin", None) in found
    assert ("Role", "k-karpenter-dns", "kube-system") in found


def test_a_chart_whose_names_were_not_read_is_not_named(cat):
    assert chart_objects.named_chart("kube-prometheus-stack", cat) is None
    assert chart_objects.named_chart(cat.facts.charts.gpu_operator.chart, cat) is None
