"""src/gpufleet/plans/releases.py: per device-plugin release of a plan, the DaemonSets its pinned
chart renders (the shipped eks-p3dn-efa plan, read from its golden file)."""

from __future__ import annotations

import copy
import json
from fnmatch import fnmatchcase

from gpufleet.catalog import catalog, tokens
from gpufleet.plans.index import Index, from_plan
from gpufleet.plans.releases import matches, release_daemonsets
from tests.conftest import ROOT

PLAN = json.loads((ROOT / "tests" / "golden" / "eks-p3dn-efa.plan.json").read_text())


def _by_release(plan: dict) -> dict[str, list]:
    found = release_daemonsets(Index(from_plan(plan)), catalog.load())
    return {urn.rsplit("::", 1)[-1]: daemonsets for urn, daemonsets in found.items()}


def test_each_release_s_daemonsets_as_the_chart_renders_them():
    found = _by_release(PLAN)
    assert sorted(found) == ["perfstudy-device-plugins-efa", "perfstudy-device-plugins-nvidia"]
    [efa] = found["perfstudy-device-plugins-efa"]
    assert efa.name == "perfstudy-device-plugins-efa-????????-aws-efa-k8s-device-plugin" and efa.namespace == "kube-system"
    assert efa.selector == {"name": efa.name}
    plugin, mps = found["perfstudy-device-plugins-nvidia"]
    assert plugin.name == "perfstudy-device-plugins-nvidia-????????-nvidia-device-plugin"
    # The MPS control daemon's name is cut to 63 characters, and it runs only on MPS-capable nodes.
    assert mps.name == "perfstudy-device-plugins-nvidia-????????-nvidia-device-plugin-m"
    assert plugin.selector == mps.selector
    assert mps.node_selector == {"nvidia.com/mps.capable": "true"} and plugin.node_selector == {}
    assert plugin.affinity is not None  # the chart's GPU-node affinity, from its values


def test_a_live_name_matches_its_pattern_and_not_the_other_daemonset_s():
    plugin, mps = _by_release(PLAN)["perfstudy-device-plugins-nvidia"]
    live = "perfstudy-device-plugins-nvidia-3f9c2a1b-nvidia-device-plugin"
    assert fnmatchcase(live, plugin.name) and not fnmatchcase(live, mps.name)
    assert fnmatchcase("perfstudy-device-plugins-nvidia-3f9c2a1b", plugin.selector["app.kubernetes.io/instance"])


def test_a_named_release_and_a_release_of_another_version():
    plan = copy.deepcopy(PLAN)
    for r in plan["resources"]:
        if r["type"] == tokens.HELM_RELEASE and r["name"].endswith("-nvidia"):
            r["inputs"]["name"] = "ndp"
        elif r["type"] == tokens.HELM_RELEASE:
            r["inputs"]["version"] = "v0.5.7"
    found = _by_release(plan)
    assert list(found) == ["perfstudy-device-plugins-nvidia"]
    assert [d.name for d in found["perfstudy-device-plugins-nvidia"]] == [
        "ndp-nvidia-device-plugin",
        "ndp-nvidia-device-plugin-mps-control-daemon",
    ]


def _live(name: str, namespace: str, selector: dict) -> dict:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"selector": {"matchLabels": selector}}}


def test_a_live_daemonset_matches_only_the_one_the_chart_renders():
    plugin, mps = _by_release(PLAN)["perfstudy-device-plugins-nvidia"]
    assert (plugin.suffix, mps.suffix) == ("", "-mps-control-daemon")
    selector = {"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/instance": "perfstudy-device-plugins-nvidia-3f9c2a1b"}
    live_plugin = _live("perfstudy-device-plugins-nvidia-3f9c2a1b-nvidia-device-plugin", "nvidia-device-plugin", selector)
    live_mps = _live("perfstudy-device-plugins-nvidia-3f9c2a1b-nvidia-device-plugin-m", "nvidia-device-plugin", selector)
    assert matches(plugin, live_plugin) and not matches(plugin, live_mps)
    assert matches(mps, live_mps) and not matches(mps, live_plugin)
    assert not matches(plugin, _live(live_plugin["metadata"]["name"], "kube-system", selector))
    assert not matches(
        plugin, _live(live_plugin["metadata"]["name"], "nvidia-device-plugin", {**selector, "app.kubernetes.io/instance": "other"})
    )
