"""src/gpufleet/simulate/k8s_shapes.py: Kubernetes quantities read in every suffix the API takes
(apimachinery's resource.Quantity: binary Ki..Ei, decimal n..E, exponents), rounded up as the API
server rounds, and shown back in the units people write."""

from __future__ import annotations

import pytest

from gpufleet.apis.quantity import QuantityError, quantity
from gpufleet.simulate.k8s_shapes import Placement, PodTemplate, show


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1Ki", 1024), ("1Mi", 1024**2), ("1Gi", 1024**3), ("1Ti", 1024**4), ("1Pi", 1024**5), ("1Ei", 1024**6),
        ("1", 1), ("1k", 10**3), ("1M", 10**6), ("1G", 10**9), ("1T", 10**12), ("1P", 10**15), ("1E", 10**18),
        ("1000m", 1), ("1500m", 2), ("1000000u", 1), ("1000000000n", 1), ("1u", 1),  # rounded up
        ("2e3", 2000), ("1.5Gi", 3 * 2**29), (".5Ki", 512), ("+4", 4),
        # The wire's doubles, read as the JSON text Kubernetes unmarshals (their shortest repr): any
        # fraction rounds up, and binary float noise is not in that text.
        (2.000001, 3), (2.0000001, 3), (0.1 + 0.2, 1),
    ],
)
def test_every_suffix_in_base_units(text, expected):
    assert quantity("memory", text) == expected


@pytest.mark.parametrize(("text", "expected"), [("1", 1000), ("250m", 250), ("0.1", 100), ("1u", 1), (2, 2000)])
def test_cpu_in_millicores(text, expected):
    assert quantity("cpu", text) == expected


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        ("cpu", 1500, "1500m"), ("cpu", 2000, "2"), ("cpu", 999, "999m"), ("cpu", 999000, "999"),
        ("memory", 2**30, "1Gi"), ("memory", 3 * 2**30, "3Gi"), ("memory", 2**29, "512Mi"), ("memory", 2**20 + 1, "2Mi"),
        ("hugepages-2Mi", 2 * 2**30, "2Gi"), ("ephemeral-storage", 100 * 2**20, "100Mi"),
        ("nvidia.com/gpu", 8, "8"), ("pods", 110, "110"),
    ],
)
def test_shown_as_people_write_them(resource, amount, text):
    assert show(resource, amount) == text


def test_a_placement_is_unverified_when_it_carries_notes():
    pod = PodTemplate(owner="Deployment default/app", replicas=1)
    assert not Placement(pod, "scheduled").unverified
    assert Placement(pod, "scheduled", notes=["memory is tight"]).unverified is True


def test_malformed_quantities():
    for bad in ("1Kb", "1 Gi", "--1", "Gi"):
        with pytest.raises(QuantityError, match="is not a quantity"):
            quantity("memory", bad)


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_a_number_that_is_no_quantity_is_an_error_not_a_crash(bad):
    with pytest.raises(QuantityError):
        quantity("cpu", bad)


def test_a_large_number_is_read_exactly_as_given():
    """Up to the int64 Kubernetes counts in (apis/quantity.py); past it, refused by name."""
    assert quantity("memory", 4.611686018427388e18) == 4611686018427388000
    with pytest.raises(QuantityError, match="out of range"):
        quantity("memory", 2.5506902573942166e23)
