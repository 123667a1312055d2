"""Pods that claim GPUs through DRA, placed from any program's plan (issue 57): the DeviceClasses a
driver chart installs, ResourceClaimTemplates and named ResourceClaims, the slices the catalog
derives for each GPU node, and kube-scheduler's words where a claim cannot be had. The happy plan
is pulumi/examples aws-ts-eks-gpu-dra's shape (tests/corpus_ts/third_party/aws-ts-eks-gpu-dra:
p4d.24xlarge, mig.config all-balanced, nvidia-dra-driver-gpu v25.8.1, MIG templates); each test
changes one thing."""

from __future__ import annotations

from gpufleet.plans import placement as plan_placement
from tests.dra_plans import plan, pod, res, template


def _placed(resources: list[dict]) -> tuple[dict, list[str]]:
    placed = plan_placement.placement(plan_placement.from_plan({"resources": resources})).as_dict()
    return {p["pod"]: p for p in placed["pods"]}, placed["gaps"]


def test_a_mig_claim_lands_where_the_layout_has_the_profile():
    pods, _ = _placed(plan())
    large = pods["Pod default/large"]
    assert large["status"] == "scheduled"
    assert large["nodeGroups"]["gpu"]["placed"] == 1
    assert not any(n.startswith("DRA") for n in large.get("notes", []))


def test_devices_held_by_earlier_pods_count():
    # all-balanced gives each of p4d's 8 A100-40GB one 3g.20gb (gpu-operator v25.10.1 0400_configmap.yaml L421-L428): 8 per node.
    pods, _ = _placed([*plan(), pod("many", {"resourceClaimTemplateName": "mig-3g"}, "Deployment", 8)])
    many = pods["Deployment default/many"]
    assert many["nodeGroups"]["gpu"]["placed"] == 7
    assert many["pending"] == 1
    assert many["message"] == "0/1 nodes are available: 1 cannot allocate all claims."


def test_per_node_counts_the_layout():
    pods, _ = _placed([*plan(nodes=2), pod("small", {"resourceClaimTemplateName": "mig-1g"}, "Deployment", 16)])
    small = pods["Deployment default/small"]
    assert small["nodeGroups"]["gpu"] == {"perNode": 16, "placed": 16}
    assert small["status"] == "scheduled"


def test_a_profile_the_layout_lacks_stays_pending_in_the_schedulers_words():
    pods, _ = _placed([*plan(), template("mig-7g", "7g.40gb"), pod("invalid", {"resourceClaimTemplateName": "mig-7g"})])
    invalid = pods["Pod default/invalid"]
    assert invalid["status"] == "pending"
    assert invalid["message"] == "0/1 nodes are available: 1 cannot allocate all claims."


def test_a_missing_device_class_is_prefilters_refusal():
    pods, _ = _placed([*plan(), template("vfio", "1g.5gb", cls="vfio.gpu.nvidia.com"), pod("v", {"resourceClaimTemplateName": "vfio"})])
    # v25.8.1 installs no vfio class (templates/ holds none at that tag)
    assert pods["Pod default/v"]["message"] == "0/1 nodes are available: request mig: device class vfio.gpu.nvidia.com does not exist."


def test_without_the_driver_no_node_publishes_devices():
    resources = [r for r in plan() if r["name"] != "dra"]
    pods, _ = _placed(resources)
    assert pods["Pod default/large"]["status"] == "pending"


def test_the_plugin_does_not_run_on_nodes_without_the_nvidia_labels():
    pods, _ = _placed(plan(labels={"nvidia.com/mig.config": "all-balanced"}))
    assert pods["Pod default/large"]["message"] == "0/1 nodes are available: 1 cannot allocate all claims."


def test_a_layout_gpufleet_does_not_carry_is_a_gap_never_a_guess():
    pods, gaps = _placed(plan(labels={"nvidia.com/gpu.present": "true", "nvidia.com/mig.config": "custom-layout"}))
    large = pods["Pod default/large"]
    assert large["status"] == "scheduled"
    assert any("custom-layout" in n for n in large["notes"])
    assert any("custom-layout" in g for g in gaps)


def test_a_selector_on_an_nvml_attribute_is_not_judged():
    resources = plan(labels={"nvidia.com/gpu.present": "true"})
    a100 = template("a100", "x", cls="gpu.nvidia.com")
    a100["inputs"]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')"}}
    ]
    pods, _ = _placed([*resources, a100, pod("a", {"resourceClaimTemplateName": "a100"})])
    notes = pods["Pod default/a"]["notes"]
    assert any("productName" in n and "not judged" in n for n in notes)


def test_whole_gpus_without_a_mig_layout():
    # count as the engine's wire carries every number: a double
    resources = plan(labels={"nvidia.com/gpu.present": "true"})
    whole = template("whole", "x", cls="gpu.nvidia.com")
    whole["inputs"]["spec"]["spec"]["devices"]["requests"][0]["exactly"] = {"deviceClassName": "gpu.nvidia.com", "count": 4.0}
    pods, _ = _placed([*resources, whole, pod("w", {"resourceClaimTemplateName": "whole"}, "Deployment", 3)])
    w = pods["Deployment default/w"]
    assert w["nodeGroups"]["gpu"] == {"perNode": 2, "placed": 2}
    assert w["pending"] == 1


def test_a_shared_claim_is_allocated_once_on_one_node():
    claim = res(
        "kubernetes:resource.k8s.io/v1:ResourceClaim",
        "shared",
        {
            "metadata": {"name": "shared", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 8}}]}},
        },
    )
    resources = [
        *plan(nodes=2, labels={"nvidia.com/gpu.present": "true"}),
        claim,
        pod("s", {"resourceClaimName": "shared"}, "Deployment", 3),
    ]
    pods, _ = _placed(resources)
    s = pods["Deployment default/s"]
    assert s["status"] == "scheduled"
    assert s["nodeGroups"]["gpu"]["placed"] == 3
    other = pod("t", {"resourceClaimTemplateName": "mig-3g"})
    pods, _ = _placed([*resources, pod("o", {"resourceClaimName": "shared"}, "Deployment", 1), other])
    assert pods["Deployment default/o"]["status"] == "scheduled"


def test_v1beta1_objects_are_named_gaps():
    pods, gaps = _placed([*plan(), template("old", "1g.5gb", version="v1beta1"), pod("old", {"resourceClaimTemplateName": "old"})])
    assert any("v1beta1" in g for g in gaps)
    assert any("not in the plan" in n for n in pods["Pod default/old"]["notes"])


def test_a_chart_version_gpufleet_did_not_read_is_a_gap():
    _, gaps = _placed(plan(version="v25.3.0"))
    assert any("25.3.0" in g and "DeviceClasses" in g for g in gaps)


def test_a_compute_domain_claim_is_not_judged():
    resources = plan(labels={"nvidia.com/gpu.present": "true"})
    resources[2]["inputs"]["values"]["resources"]["computeDomains"]["enabled"] = True
    channel = template("channel", "x", cls="compute-domain-default-channel.nvidia.com")
    channel["inputs"]["spec"]["spec"]["devices"]["requests"][0]["exactly"] = {
        "deviceClassName": "compute-domain-default-channel.nvidia.com"
    }
    pods, _ = _placed([*resources, channel, pod("cd", {"resourceClaimTemplateName": "channel"})])
    cd = pods["Pod default/cd"]
    assert cd["status"] == "scheduled"
    assert any("compute-domain.nvidia.com" in n and "not judged" in n for n in cd["notes"])


PLUGIN = "DaemonSet default/nvidia-dra-driver-gpu-kubelet-plugin (nvidia-dra-driver-gpu v25.8.1)"


def test_the_drivers_own_pods_are_placed_and_leave_no_gap():
    pods, gaps = _placed(plan())
    plugin = pods[PLUGIN]
    assert plugin["status"] == "daemon"
    assert plugin["nodeGroups"]["gpu"]["placed"] == 1
    assert "templates/kubeletplugin.yaml" in plugin["source"]
    assert gaps == []


def test_only_nodes_the_kubelet_plugin_runs_on_publish_devices():
    """The release's kubeletPlugin.nodeSelector keeps the plugin off the group: its nodes publish
    nothing, and the claim cannot be allocated."""
    resources = plan()
    resources[2]["inputs"]["values"]["kubeletPlugin"]["nodeSelector"] = {"dra": "on"}
    pods, _ = _placed(resources)
    assert "gpu" not in pods[PLUGIN]["nodeGroups"]
    assert pods["Pod default/large"]["message"] == "0/1 nodes are available: 1 cannot allocate all claims."


def test_compute_domains_render_a_controller_that_wants_a_control_plane_node():
    # nvidia-dra-driver-gpu @v25.8.1 values.yaml L172-L192: it tolerates and requires node-role.kubernetes.io/control-plane
    resources = plan()
    resources[2]["inputs"]["values"]["resources"]["computeDomains"]["enabled"] = True
    pods, _ = _placed(resources)
    controller = pods["Deployment default/nvidia-dra-driver-gpu-controller (nvidia-dra-driver-gpu v25.8.1)"]
    assert controller["status"] == "pending"
    assert controller["message"].startswith("0/1 nodes are available: 1 node(s) had untolerated taint")


def test_another_driver_version_places_its_pods_from_the_held_values():
    pods, _ = _placed(plan(version="v25.3.0"))
    plugin = pods["DaemonSet default/nvidia-dra-driver-gpu-kubelet-plugin (nvidia-dra-driver-gpu v25.3.0)"]
    assert plugin["status"] == "daemon"
    assert any("read from the values of 25.8.1" in n for n in plugin["notes"])
