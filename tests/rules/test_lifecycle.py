"""What has an end (src/gpufleet/rules/lifecycle.py): AL2 AMI types past the last Kubernetes version
with AMIs, AMI families and Kubernetes versions past their support, each judged against one day."""

from __future__ import annotations

from datetime import date

import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import lifecycle
from tests.conftest import FROZEN_TODAY, run_cli
from tests.policy_helpers import findings, resource

FACTS = catalog.load().facts
K8S = FACTS.lifecycle.kubernetes


@pytest.mark.parametrize(
    "ami_type, version, refused",
    [
        ("AL2_x86_64_GPU", "1.32", False),
        ("AL2_x86_64_GPU", "1.33", True),  # EKS publishes no AL2 AMI after 1.32
        ("AL2_x86_64_GPU", "1.33.4", True),
        ("AL2_ARM_64", "1.35", True),
        ("AL2023_x86_64_NVIDIA", "1.35", False),
        ("AL2_x86_64_GPU", None, False),  # the version is not known: not judged
        ("AL2_x86_64_GPU", "latest", False),
    ],
)
def test_an_al2_ami_type_has_no_ami_after_1_32(ami_type, version, refused):
    reason = lifecycle.eks_ami_type_problem(ami_type, version, FACTS)
    assert (reason is not None) is refused
    if refused:
        assert reason.startswith(f"EKS publishes no {ami_type} AMI for Kubernetes 1.3") and "1.32 is the last version with one" in reason


@pytest.mark.parametrize("day, advised", [("2025-11-25", False), ("2025-11-26", True)])
def test_an_al2_ami_type_is_past_its_end_of_support_from_its_day(day, advised):
    reason = lifecycle.eks_ami_type_advisory("AL2_x86_64_GPU", date.fromisoformat(day), FACTS)
    assert (reason is not None) is advised
    assert lifecycle.eks_ami_type_advisory("AL2023_x86_64_NVIDIA", date.fromisoformat(day), FACTS) is None


@pytest.mark.parametrize("day, advised", [("2026-06-29", False), ("2026-06-30", True)])
def test_the_ecs_al2_amis_end_with_amazon_linux_2(day, advised):
    on = date.fromisoformat(day)
    assert (lifecycle.ecs_ami_advisory("gpu", "al2", on, FACTS) is not None) is advised
    assert (lifecycle.ecs_ami_advisory("neuron", "al2", on, FACTS) is not None) is advised
    assert lifecycle.ecs_ami_advisory("gpu", "al2023", on, FACTS) is None


@pytest.mark.parametrize(
    "cloud, version, day, refused, advised",
    [
        ("eks", "1.33", "2026-07-28", False, None),
        ("eks", "1.33", "2026-07-29", False, "EKS's standard support for Kubernetes 1.33 ended on 2026-07-29 (judged on 2026-07-29); extended support until 2027-07-29"),
        ("eks", "1.28", "2025-11-25", False, "extended support until 2025-11-26"),
        ("eks", "1.28", "2025-11-26", True, None),  # past extended support EKS creates no cluster: the problem says it
        ("gke", "1.33.5-gke.1200", "2026-08-03", False, "GKE's standard support for Kubernetes 1.33 ended on 2026-08-03"),
        ("gke", "1.33", "2026-08-02", False, None),
        ("aks", "1.33", "2026-07-31", False, "AKS's standard support for Kubernetes 1.33 ended on 2026-07-31 (judged on 2026-07-31); Long Term Support (Premium tier) until 2027-07-31"),
        ("aks", "1.28", "2026-03-01", False, "and its Long Term Support (Premium tier) on 2026-02-28"),  # AKS does not refuse: LTS is the cluster's setting
        ("eks", "1.40", "2026-11-26", False, "Kubernetes 1.40 is newer than EKS's curated calendar (1.28 to 1.35): its support is not judged"),
        ("aks", "1.20", "2026-11-26", False, "Kubernetes 1.20 is older than AKS's curated calendar"),
    ],
)
def test_kubernetes_versions_by_their_clouds_calendars(cloud, version, day, refused, advised):
    calendar, on = getattr(K8S, cloud), date.fromisoformat(day)
    assert (lifecycle.kubernetes_version_problem(calendar, cloud.upper(), version, on) is not None) is refused
    advisory = lifecycle.kubernetes_version_advisory(calendar, cloud.upper(), version, on)
    assert (advisory is None) if advised is None else (advised in advisory), advisory


def test_the_day_is_the_machines_unless_fixed(monkeypatch):
    assert lifecycle.today() == date.fromisoformat(FROZEN_TODAY)  # the suite's fixed day
    monkeypatch.delenv(lifecycle.TODAY)
    assert lifecycle.today() == date.today()
    monkeypatch.setenv(lifecycle.TODAY, "tomorrow")
    with pytest.raises(lifecycle.TodayError, match="GPUFLEET_TODAY = 'tomorrow': not a date"):
        lifecycle.today()
    code, _, err = run_cli("preview", "ecs-gpu")
    assert code == 2 and err == "error: GPUFLEET_TODAY = 'tomorrow': not a date (YYYY-MM-DD)\n"


@pytest.mark.parametrize(
    "edit, rule, field",
    [
        (lambda c: c["gpufleet:eks"]["nodeGroups"][0].__setitem__("amiType", "AL2_x86_64_GPU"), "eks-ami-type-available", "gpufleet:eks.nodeGroups[0].amiType = 'AL2_x86_64_GPU'"),
        (lambda c: c["gpufleet:eks"]["cluster"]["create"].__setitem__("version", "1.28"), "kubernetes-version-supported", "gpufleet:eks.cluster.create.version = '1.28'"),
    ],
)
def test_the_stack_file_refuses_what_eks_refuses(stack_variant, edit, rule, field):
    code, _, err = run_cli("preview", "--config-file", str(stack_variant(edit, stack="eks-g5-timeslice")))
    assert code == 2 and field in err and f"[rule: {rule}]" in err, err


def test_the_pack_judges_any_programs_versions_and_ami_families(judge):
    cluster = resource("aws:eks/cluster:Cluster", "old", {"name": "old", "version": "1.33"})
    result = judge(
        [
            cluster,
            resource("aws:eks/nodeGroup:NodeGroup", "al2", {"amiType": "AL2_x86_64_GPU", "clusterName": "old"}, clusterName=[cluster]),
            resource("aws:eks/nodeGroup:NodeGroup", "al2-own", {"amiType": "AL2_x86_64_GPU", "version": "1.32"}),
            resource("aws:eks/cluster:Cluster", "ancient", {"name": "ancient", "version": "1.28"}),
            resource("gcp:container/nodePool:NodePool", "pool", {"version": "1.31.2-gke.100"}),
            resource("azure:containerservice/kubernetesCluster:KubernetesCluster", "aks", {"kubernetesVersion": "1.33"}),
            resource("gcp:container/cluster:Cluster", "gke", {"minMasterVersion": "1.32.4-gke.100"}),
            resource("azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool", "aks-pool", {"orchestratorVersion": "1.31"}),
        ]
    )
    [ami] = findings(result, "eks-ami-type-available")
    assert "node group 'al2': EKS publishes no AL2_x86_64_GPU AMI for Kubernetes 1.33" in ami
    assert findings(result, "kubernetes-version-supported", "ancient") and not findings(result, "kubernetes-version-supported", "old")
    assert "extended support until 2027-07-29" in findings(result, "lifecycle-end-of-support", "old")[0]
    assert any("AL2_x86_64_GPU reached its end of support on 2025-11-26" in m for m in findings(result, "lifecycle-end-of-support", "al2-own"))
    assert "GKE's standard support for Kubernetes 1.31 ended on 2026-01-16" in findings(result, "lifecycle-end-of-support", "pool")[0]
    assert "AKS's standard support for Kubernetes 1.33 ended on 2026-07-31" in findings(result, "lifecycle-end-of-support", "aks")[0]
    assert "GKE's standard support for Kubernetes 1.32 ended on 2026-04-11" in findings(result, "lifecycle-end-of-support", "gke")[0]
    assert "AKS's standard support for Kubernetes 1.31 ended on 2025-11-01" in findings(result, "lifecycle-end-of-support", "aks-pool")[0]
    levels = {f.policy: f.level for f in result.findings}
    assert levels["eks-ami-type-available"] == levels["kubernetes-version-supported"] == "mandatory"
    assert levels["lifecycle-end-of-support"] == "advisory"
