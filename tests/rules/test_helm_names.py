"""src/gpufleet/rules/helm.py: Helm's release-name rule, Kubernetes' name limits per kind, and two
objects of one kind sharing a name."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog, chart_objects, tokens
from gpufleet.catalog.chart_objects import RenderedObject
from gpufleet.rules import helm


def _nvidia_problems(resource_name: str) -> list[str]:
    """The problems of a provider-named helm.sh/v3 release of the pinned NVIDIA chart."""
    release = helm.release_name(tokens.HELM_RELEASE, resource_name, None)
    chart = chart_objects.named_chart("nvidia-device-plugin", catalog.load())
    return helm.release_problems(release, chart_objects.release_objects(chart, release.pattern, "nvidia-device-plugin", {}))


def test_provider_names_a_v3_release_after_its_resource_with_8_random_characters():
    release = helm.release_name(tokens.HELM_RELEASE, "plugins", None)
    assert release.pattern == "plugins-????????" and release.shown() == "plugins-<8 random hex>"
    assert helm.release_name(tokens.HELM_CHART_V4, "plugins", None).pattern == "plugins"
    assert helm.release_name(tokens.HELM_RELEASE, "plugins", "given").pattern == "given"
    assert helm.release_name(tokens.HELM_RELEASE, "plugins", tokens.UNKNOWN) is None


@pytest.mark.parametrize(("length", "fits"), [(44, True), (45, False)])
def test_release_name_at_most_53_with_the_random_suffix(length, fits):
    release = helm.release_name(tokens.HELM_RELEASE, "r" * length, None)
    problem = helm.release_problem(release)
    assert (problem is None) is fits
    if not fits:
        assert problem == "its name is 54 characters; Helm takes at most 53"


def test_release_name_must_be_a_dns_subdomain():
    assert "not a DNS-1123 subdomain" in helm.release_problem(helm.ReleaseName("Plugins"))
    assert helm.release_problem(helm.ReleaseName("a" * 53)) is None


@pytest.mark.parametrize(("length", "collides"), [(31, False), (32, True)])
def test_nvidia_daemonsets_collide_once_the_fullname_reaches_62(length, collides):
    # release = name + 9; fullname = release + "-nvidia-device-plugin" cut to 63; the MPS daemon's
    # name is fullname + "-mps-control-daemon" cut to 63, then trimmed of its dash: at 62 they meet.
    problems = _nvidia_problems("n" * length)
    assert bool(problems) is collides
    if collides:
        assert "2 of its DaemonSets share the name" in problems[0]
        assert "templates/daemonset-device-plugin.yml @1b826acc L16-L31; " in problems[0]
        assert "templates/daemonset-mps-control-daemon.yml @1b826acc L16-L31)" in problems[0]


def test_the_issue_s_release_collides():
    assert _nvidia_problems("performance-study-gpu-device-plugins-nvidia")


@pytest.mark.parametrize(
    ("kind", "length", "fits"),
    [("Service", 63, True), ("Service", 64, False), ("Namespace", 64, False), ("DaemonSet", 253, True), ("ConfigMap", 254, False)],
)
def test_each_kind_s_name_limit(kind, length, fits):
    problems = helm.object_problems([RenderedObject(kind, "s" * length, "ns", "t.yaml L1")])
    assert (problems == []) is fits


def test_same_name_in_other_namespaces_or_kinds_is_no_collision():
    objs = [RenderedObject("Role", "k", "a", "x"), RenderedObject("Role", "k", "b", "y"), RenderedObject("RoleBinding", "k", "a", "z")]
    assert helm.object_problems(objs) == []
    assert helm.object_problems([*objs, RenderedObject("Role", "k", "a", "w")]) != []


def test_object_names_are_judged_only_once_helm_takes_the_release():
    objs = [RenderedObject("Service", "s" * 70, "ns", "t")]
    assert len(helm.release_problems(helm.ReleaseName("R"), objs)) == 1
    assert len(helm.release_problems(helm.ReleaseName("r"), objs)) == 1
