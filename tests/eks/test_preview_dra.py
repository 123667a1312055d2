"""The shipped DRA stack (eks-p4d-mig-dra): its golden plan, and its claims valid against the
resource.k8s.io/v1 JSON schema of Kubernetes 1.35 (tests/fixtures/kubernetes-json-schema, unchanged)."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.conftest import ROOT, golden_plan, inputs_by_name

STACK = "eks-p4d-mig-dra"
SCHEMAS = ROOT / "tests" / "fixtures" / "kubernetes-json-schema" / "v1.35.0-local"
RCT = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"

plan, test_plan_matches_golden = golden_plan(STACK)


def _validator(kind: str) -> Draft202012Validator:
    definitions = json.loads((SCHEMAS / "_definitions.json").read_text())
    registry = Registry().with_resource("/api/_definitions.json", Resource.from_contents(definitions))
    return Draft202012Validator(json.loads((SCHEMAS / f"{kind.lower()}-resource-v1.json").read_text()), registry=registry)


def _claims(plan: dict) -> dict[str, dict]:
    return {
        name: {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", **inputs}
        for name, inputs in inputs_by_name(plan, RCT).items()
    }


def test_claim_templates_are_valid(plan):
    claims = _claims(plan)
    assert sorted(claims) == ["p4d-mig-dra-embeddings-claim", "p4d-mig-dra-small-llm-claim"]
    validator = _validator("ResourceClaimTemplate")
    for name, claim in claims.items():
        assert not [e.message for e in validator.iter_errors(claim)], name


def test_schema_refuses_a_broken_claim(plan):
    """The schema is strict enough to fail: a request without a name, a count of the wrong type."""
    claim = _claims(plan)["p4d-mig-dra-small-llm-claim"]
    request = claim["spec"]["spec"]["devices"]["requests"][0]
    del request["name"]
    request["exactly"]["count"] = "one"
    assert len(list(_validator("ResourceClaimTemplate").iter_errors(claim))) == 2


def test_pods_claim_mig_devices_instead_of_gpus(plan):
    """Each pod names its template, the container uses the claim, and no nvidia.com/gpu is asked."""
    deployments = inputs_by_name(plan, "kubernetes:apps/v1:Deployment")
    pod = deployments["p4d-mig-dra-small-llm"]["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "small-llm-gpu"}]
    assert pod["containers"][0]["resources"] == {"claims": [{"name": "gpu"}]}
    request = _claims(plan)["p4d-mig-dra-small-llm-claim"]["spec"]["spec"]["devices"]["requests"][0]
    assert request["exactly"]["deviceClassName"] == "mig.nvidia.com"
    assert request["exactly"]["selectors"] == [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"}}]


@pytest.mark.parametrize("key, expected", [("nvidia.com/gpu.deploy.device-plugin", "false"), ("nvidia.com/mig.config", "all-balanced")])
def test_group_keeps_the_device_plugin_off(plan, key, expected):
    group = inputs_by_name(plan, "aws:eks/nodeGroup:NodeGroup")["p4d-mig-dra-p4d"]
    assert group["labels"][key] == expected


def test_driver_release_values(plan):
    """The pinned chart, the override its validation.yaml needs, the kubelet plugin on the DRA nodes only."""
    release = inputs_by_name(plan, "kubernetes:helm.sh/v3:Release")["p4d-mig-dra-dra-driver"]
    assert (release["chart"], release["version"]) == ("oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu", "0.4.1")
    values = release["values"]
    assert values["gpuResourcesEnabledOverride"] is True
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}}
    assert values["kubeletPlugin"]["nodeSelector"] == {"nvidia.com/gpu.deploy.device-plugin": "false"}
