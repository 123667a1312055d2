"""Karpenter's estimate of a node it has not launched (labels and allocatable), held against the
provider's own generated reference (tests/fixtures/karpenter, v1.14.1) over every type both it and
gpufleet's catalog hold: 1,330 types."""

from __future__ import annotations

import re

import pytest

from gpufleet.apis.quantity import quantity
from gpufleet.catalog import catalog
from gpufleet.simulate import node_capacity
from tests.conftest import ROOT

CAT = catalog.load()
KARPENTER, EKS = CAT.facts.karpenter, CAT.facts.eks
RESOURCES = ("cpu", "memory", "pods", "nvidia.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "vpc.amazonaws.com/efa")
_ROW = re.compile(r"^ \|([a-z][a-z0-9./-]*)\|([^|]*)\|$", re.M)

# Where moto's snapshot and Karpenter's generated data differ, named: the catalog's record of these
# types gives the default card 8 (i7ie) or 12 (i8ge) interfaces where Karpenter's gives 15 and 24, so
# pods (and the memory kube-reserved takes for them) differ; dl2q's Qualcomm accelerators are
# InferenceAcceleratorInfo, which the catalog does not read; moto's records of the i7i, i7ie, m9g and
# m9gd families give another sustained clock speed than the records Karpenter's table was made from.
_CLOCK = "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz"
KNOWN = {
    **{(t, r): "moto's record of the default network card" for t in ("i7ie.48xlarge", "i7ie.metal-48xl", "i8ge.48xlarge", "i8ge.metal-48xl") for r in ("pods", "memory")},
    **{("dl2q.24xlarge", f"karpenter.k8s.aws/instance-accelerator-{k}"): "InferenceAcceleratorInfo is not read" for k in ("name", "manufacturer", "count")},
    **{(t, _CLOCK): "moto's record of the sustained clock speed" for t in CAT.types if t.split(".")[0] in ("i7i", "i7ie", "m9g", "m9gd")},
}


def _reference() -> dict[str, tuple[dict, dict]]:
    text = (ROOT / "tests" / "fixtures" / "karpenter" / "instance-types.md").read_text()
    parts = re.split(r"^### `([^`]+)`\n", text, flags=re.M)
    found = {}
    for name, body in zip(parts[1::2], parts[2::2]):
        labels, _, resources = body.partition("#### Resources")
        found[name] = (dict(_ROW.findall(labels)), dict(_ROW.findall(resources)))
    return found


REFERENCE = _reference()
BOTH = sorted(t for t in CAT.types if t in REFERENCE)


def test_the_reference_covers_the_catalog():
    assert len(BOTH) >= 1300


@pytest.mark.parametrize("name", BOTH)
def test_karpenter_s_estimate_of_each_type(name):
    it = CAT.get(name)
    labels, resources = REFERENCE[name]
    mine_labels = node_capacity.karpenter_labels(it, KARPENTER, EKS)
    allocatable = node_capacity.karpenter_allocatable(it, KARPENTER, EKS)
    wrong = [(k, v, labels.get(k)) for k, v in mine_labels.items() if labels.get(k) != v and (name, k) not in KNOWN]
    left_out = [k for k in labels if k not in mine_labels and k.rsplit("/", 1)[-1] not in KARPENTER.labels.not_in_catalog and (name, k) not in KNOWN]
    for r in RESOURCES:
        theirs = quantity(r, resources[r]) if r in resources else None
        if allocatable.get(r) != theirs and (name, r) not in KNOWN:
            wrong.append((r, allocatable.get(r), theirs))
    assert (wrong, left_out) == ([], [])


def test_the_known_differences_are_still_differences():
    """A difference named as known that is gone is no longer a reason to skip it."""
    for (name, key), why in KNOWN.items():
        it = CAT.get(name)
        labels, resources = REFERENCE[name]
        if key in RESOURCES:
            assert node_capacity.karpenter_allocatable(it, KARPENTER, EKS).get(key) != quantity(key, resources[key]), why
        else:
            assert key in labels and labels[key] != node_capacity.karpenter_labels(it, KARPENTER, EKS).get(key), why


def test_the_provider_s_kube_reserved_case():
    """The worked case of the provider's kube-reserved test (suite_test.go L1165-L1187, m5.xlarge:
    80m and 893Mi), less the 7.5 % it assumes the hypervisor keeps."""
    allocatable = node_capacity.karpenter_allocatable(CAT.get("m5.xlarge"), KARPENTER, EKS)
    assert (4000 - allocatable["cpu"], 16384 - 1229 - 100 - allocatable["memory"] // 2**20) == (80, 893)
