"""Bad DRA input on an EKS stack (eks-p4d-mig-dra): exit 2 naming the field, the value and the rule."""

from __future__ import annotations

from tests.conftest import refused_cases

STACK = "eks-p4d-mig-dra"

# Each row: (stack, the field set, its value, what the error says).
test_refused = refused_cases(
    {
        # resource.k8s.io/v1 is served from 1.34 (dra-driver-nvidia-gpu v0.4.1 docs/prerequisites.md L10-L11, L51).
        "api_version_older_cluster": (
            STACK,
            "gpufleet:eks.cluster.create.version",
            "1.33",
            [
                "gpufleet:eks.cluster.create.version = '1.33': node group p4d: Kubernetes 1.33 does not serve resource.k8s.io/v1",
                "[rule: dra-api-version]",
            ],
        ),
        # A label that brings the device plugin back onto the DRA nodes: two allocators for one GPU.
        "device_plugin_label_on": (
            STACK,
            "gpufleet:eks.nodeGroups[0].labels",
            {"nvidia.com/mig.config": "all-balanced", "nvidia.com/gpu.deploy.device-plugin": "true"},
            [
                "gpufleet:eks.nodeGroups[0].labels.nvidia.com/gpu.deploy.device-plugin = 'true'",
                "both the NVIDIA device plugin and the DRA driver would allocate its GPUs",
                "[rule: dra-one-allocator]",
            ],
        ),
        # 1g.6gb is an A30 profile, not an A100-40GB one (NVIDIA MIG user guide, supported-mig-profiles).
        "mig_profile_of_another_gpu": (
            STACK,
            "gpufleet:eks.workloads[0].migProfile",
            "1g.6gb",
            ["gpufleet:eks.workloads[0].migProfile = '1g.6gb': 1g.6gb is not a MIG profile of A100 (40960 MiB)", "[rule: dra-mig-profile]"],
        ),
        # Without the mig.config label the MIG manager lays out nothing: no MIG device exists to claim.
        "mig_without_layout": (
            STACK,
            "gpufleet:eks.nodeGroups[0].labels",
            {},
            [
                "gpufleet:eks.workloads[0].migProfile = '1g.5gb': node group p4d must carry the nvidia.com/mig.config label",
                "[rule: dra-mig-layout]",
            ],
        ),
        # Claims need the DRA driver: on a device-plugin group there are no resource.k8s.io devices.
        "claim_on_device_plugin_group": (
            STACK,
            "gpufleet:eks.nodeGroups[0].allocation",
            "device-plugin",
            [
                "gpufleet:eks.workloads[0].migProfile = '1g.5gb': node group p4d serves nvidia.com/gpu: claims need its allocation: dra",
                "[rule: dra-claims]",
            ],
        ),
        "allocation_unknown": (
            STACK,
            "gpufleet:eks.nodeGroups[0].allocation",
            "dynamic",
            ["gpufleet:eks.nodeGroups[0].allocation = 'dynamic': Input should be 'device-plugin' or 'dra'"],
        ),
    }
)


def test_claims_on_a_karpenter_pool_are_refused(stack_variant):
    """DRA on Karpenter: refused for the Karpenter gpufleet pins (1.14.1; the EKS guide allows 1.15+)."""
    from tests.conftest import spec_errors

    def edit(c):
        eks = c["gpufleet:eks"]
        eks["nodePools"] = [{"name": "gpu", "gpu": {"count": 1}, "instanceFamilies": ["g6e"], "maxNodes": 2, "amiVersion": "v20260724"}]
        eks["workloads"][0]["nodePool"] = "gpu"

    err = spec_errors(stack_variant(edit, STACK))
    assert "gpufleet:eks.workloads[0].migProfile = '1g.5gb': Karpenter 1.14.1 does not provision nodes for DRA claims" in err
    assert "[rule: dra-provisioner]" in err
