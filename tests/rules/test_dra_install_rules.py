"""rules/dra.py: each rule holds, and fails where its source says it does."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import dra

FACTS = catalog.load().facts.dra


@pytest.mark.parametrize(
    "version, refused",
    [("1.33", True), ("v1.33.9", True), ("1.34", False), ("1.35", False), ("1.36-eks-abc", False), (None, True), ("latest", True)],
)
def test_api_version_needs_1_34(version, refused):
    """resource.k8s.io/v1 from 1.34 (dra-driver-nvidia-gpu v0.4.1 docs/prerequisites.md L10-L11, L51); never guessed."""
    reason = dra.api_version_problem("resource.k8s.io/v1", version, FACTS)
    assert (reason is not None) == refused
    if refused:
        assert "1.34 or later" in reason


def test_api_version_other_than_gpufleets_is_not_judged_here():
    assert dra.api_version_problem("resource.k8s.io/v1beta1", "1.32", FACTS) is None


@pytest.mark.parametrize("plugin, driver, refused", [(True, True, True), (True, False, False), (False, True, False)])
def test_one_allocator(plugin, driver, refused):
    reason = dra.two_allocators_problem(plugin, driver, FACTS)
    assert (reason is not None) == refused
    if refused:
        assert "nvidia.com/gpu.deploy.device-plugin=false" in reason and "validation.yaml L33-L43" in reason


@pytest.mark.parametrize(
    "provisioner, version, refused",
    [
        # gpufleet pins Karpenter 1.14.1 (catalog/data/charts/karpenter-crd-1.14.1): refused; 1.15 is where the EKS guide allows it.
        ("karpenter", "1.14.1", True),
        ("karpenter", "1.15.0", False),
        ("karpenter", None, True),
        ("karpenter", "latest", True),
        ("auto-mode", "1.35", True),
        ("auto-mode", "1.36", False),
    ],
)
def test_provisioner_versioned(provisioner, version, refused):
    verdict = dra.provisioner_problem(provisioner, version, FACTS)
    assert (verdict is not None) == refused
    if verdict is not None:
        assert "device-management.html" in verdict.message and "karpenter#1231" in verdict.message
        # An unknown version is not a refusal built on a guess: it says it cannot judge, advisory.
        unknown = version in (None, "latest")
        assert ("cannot judge" in verdict.message) == unknown and verdict.mandatory == (not unknown)


def test_gb200_needs_a_compute_domain():
    assert "ml-eks-nvidia-ultraserver" in (dra.compute_domain_problem("p6e-gb200.36xlarge", False, FACTS) or "")
    assert dra.compute_domain_problem("p6e-gb200.36xlarge", True, FACTS) is None
    assert dra.compute_domain_problem("p5.48xlarge", False, FACTS) is None


@pytest.mark.parametrize(
    "instance_type, profile, refused",
    [
        ("p4d.24xlarge", "1g.5gb", False),
        ("p4d.24xlarge", "1g.10gb", False),
        ("p4d.24xlarge", "7g.80gb", True),
        ("g5.2xlarge", "1g.5gb", True),
    ],
)
def test_mig_profile_of_the_gpu(instance_type, profile, refused):
    reason = dra.mig_profile_problem(catalog.load().get(instance_type), profile, FACTS)
    assert (reason is not None) == refused
