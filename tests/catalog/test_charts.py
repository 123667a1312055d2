"""src/gpufleet/catalog/charts.py: the device-plugin DaemonSet pods the pinned charts render from a
release's values (their templates read as the chart's source says), and the NVIDIA plugin's
time-slicing config."""

from __future__ import annotations

from gpufleet.catalog import catalog, charts

CHARTS = catalog.load().facts.charts


def test_the_nvidia_plugin_pod_takes_the_releases_placement_and_resources():
    chart = CHARTS.nvidia_device_plugin
    given = {"tolerations": [{"operator": "Exists"}], "nodeSelector": {"gpu": "yes"}, "resources": {"limits": {"memory": "64Mi"}}}
    pod = charts.device_plugin_pod("nvidiaDevicePlugin", chart, given)
    assert pod["tolerations"] == [{"operator": "Exists"}] and pod["nodeSelector"] == {"gpu": "yes"}
    assert pod["containers"] == [{"name": "nvidia-device-plugin-ctr", "resources": {"limits": {"memory": "64Mi"}}}]
    bare = charts.device_plugin_pod("nvidiaDevicePlugin", chart, {"nodeSelector": {}, "affinity": None, "tolerations": []})
    assert "nodeSelector" not in bare and "affinity" not in bare and bare["tolerations"] == []
    assert charts.device_plugin_pod("nvidiaDevicePlugin", chart, {"devicePlugin": {"enabled": False}}) is None


def test_the_efa_plugin_always_tolerates_critical_addons_and_excludes_auto_mode_in_its_last_term():
    chart = CHARTS.efa_device_plugin
    always = [t.model_dump(exclude_none=True) for t in chart.always_tolerations]
    assert always and all(None not in t.values() for t in always)  # the curated tolerations, as the template writes them
    pod = charts.device_plugin_pod("efaDevicePlugin", chart, {"tolerations": [{"key": "gpu", "operator": "Exists"}]})
    assert pod["tolerations"] == [*always, {"key": "gpu", "operator": "Exists"}]
    labels = {"keys": ["a", "b"], "values": ["x"]}
    terms = charts.device_plugin_pod("efaDevicePlugin", chart, {"supportedInstanceLabels": labels})["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    auto = {"key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": ["auto"]}
    assert terms == [
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]},
        {"matchExpressions": [{"key": "b", "operator": "In", "values": ["x"]}, auto]},
    ]
    none = charts.device_plugin_pod("efaDevicePlugin", chart, {"supportedInstanceLabels": {"keys": []}})
    assert none["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == []


def test_time_slicing_replicas_default_to_one():
    config = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n"
    assert charts.nvidia_sharing({"config": {"map": {"default": config}}}, "nvidia.com/gpu") == {
        "resource": "nvidia.com/gpu", "replicas": 1, "failRequestsGreaterThanOne": False,
    }
