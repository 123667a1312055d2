"""The offline previews of the shipped GKE stacks: golden plans, node pools in pulumi-gcp's input
shape whose requests the container.v1 discovery document accepts, the accelerator block (driver,
MIG partitions, sharing), the workloads' selectors, tolerations and GPU requests, the placement
and the summary's slices and shares per node."""

from __future__ import annotations

import inspect

import pulumi_gcp as gcp
import pytest
from pydantic.alias_generators import to_snake

from gpufleet.apis import gke as gke_api
from gpufleet.catalog import tokens
from tests.conftest import check_golden, inputs_by_name, plans_of, run_cli
from tests.gke.test_spec_errors_gke import SLICES

STACKS = ("gke-a100-mig", "gke-l4-timeshare", "gke-l4-dra")


plans = plans_of(STACKS)


@pytest.mark.parametrize("stack", STACKS)
def test_golden_plan(plans, stack):
    check_golden(plans[stack], stack)


def _params(args_class) -> set[str]:
    return set(inspect.signature(args_class.__init__).parameters) - {"__self__", "self"}


@pytest.mark.parametrize("stack", STACKS)
def test_node_pools_use_only_inputs_pulumi_gcp_takes_and_the_api_accepts(plans, stack):
    for name, inputs in inputs_by_name(plans[stack], tokens.GKE_NODE_POOL).items():
        assert {to_snake(k) for k in inputs} <= _params(gcp.container.NodePoolArgs), name
        assert {to_snake(k) for k in inputs["nodeConfig"]} <= _params(gcp.container.outputs.NodePoolNodeConfig), name
        for accelerator in inputs["nodeConfig"].get("guestAccelerators", []):
            assert {to_snake(k) for k in accelerator} <= _params(gcp.container.outputs.NodePoolNodeConfigGuestAccelerator)
        body, unmapped = gke_api.to_api(inputs)
        assert unmapped == [] and gke_api.problems(body) == [], (name, body)


def test_the_mig_pool_asks_for_partitions_and_gke_s_driver(plans):
    [pool] = inputs_by_name(plans["gke-a100-mig"], tokens.GKE_NODE_POOL).values()
    assert pool["name"] == "a100-mig" and pool["location"] == "us-central1" and pool["cluster"] == "training"
    assert pool["nodeLocations"] == ["us-central1-a", "us-central1-c"] and pool["nodeCount"] == 1
    assert pool["nodeConfig"]["guestAccelerators"] == [
        {"type": "nvidia-tesla-a100", "count": 2, "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"}, "gpuPartitionSize": "1g.5gb"}
    ]


def test_the_timeshare_pool_shares_each_gpu_and_autoscales_per_zone(plans):
    pools = inputs_by_name(plans["gke-l4-timeshare"], tokens.GKE_NODE_POOL)
    gpu = pools["inference-l4-shared"]
    assert gpu["nodeConfig"]["guestAccelerators"] == [
        {
            "type": "nvidia-l4",
            "count": 1,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"},
            "gpuSharingConfig": {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4},
        }
    ]
    # No initialNodeCount: a change of it recreates a pool; the autoscaler's minimum holds.
    assert gpu["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 4} and "initialNodeCount" not in gpu
    # The created cluster has a non-GPU pool: CoreDNS has nodes, and GKE taints the GPU nodes.
    assert pools["inference-system"]["nodeConfig"] == {"machineType": "e2-standard-4"}
    [cluster] = inputs_by_name(plans["gke-l4-timeshare"], tokens.GKE_CLUSTER).values()
    assert cluster["removeDefaultNodePool"] is True and cluster["deletionProtection"] is True


def _pod(plan: dict, name: str) -> dict:
    [inputs] = [r["inputs"] for r in plan["resources"] if r["type"].startswith("kubernetes:") and r["name"].endswith(name)]
    return inputs["spec"]["template"]["spec"]


def test_workloads_select_the_pool_tolerate_the_gpu_taint_and_request_equal_limits(plans):
    pod = _pod(plans["gke-a100-mig"], "eval")
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-nodepool": "a100-mig",
        "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
        "cloud.google.com/gke-gpu-partition-size": "1g.5gb",
    }
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    [container] = pod["containers"]
    assert container["resources"] == {"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "2"}}
    shared = _pod(plans["gke-l4-timeshare"], "llm-serve")
    assert shared["nodeSelector"]["cloud.google.com/gke-gpu-sharing-strategy"] == "time-sharing"
    assert shared["nodeSelector"]["cloud.google.com/gke-max-shared-clients-per-gpu"] == "4"


def test_placement_counts_slices_and_shares_per_node(plans):
    placement = plans["gke-a100-mig"]["placement"]
    assert [(g["nodeGroup"], g["allocatable"]) for g in placement["nodeGroups"]] == [("a100-mig", {"nvidia.com/gpu": "14"})]
    placed = {p["pod"]: p for p in placement["pods"]}
    # a2-highgpu-2g: 2 A100 x 7 1g.5gb slices = 14 per node; eval asks 2 slices per pod.
    assert placed["Job default/eval"]["nodeGroups"] == {"a100-mig": {"perNode": 7, "placed": 4}}
    assert placed["Deployment default/notebooks"]["nodeGroups"] == {"a100-mig": {"perNode": 14, "placed": 10}}
    shared = {p["pod"]: p for p in plans["gke-l4-timeshare"]["placement"]["pods"]}["Deployment default/llm-serve"]
    assert shared["status"] == "scheduled" and shared["nodeGroups"] == {"l4-shared": {"perNode": 4, "placed": 8}}


def test_summary_gives_gpus_and_slices_per_node_and_pool(plans):
    [mig] = plans["gke-a100-mig"]["summary"]["groups"]
    assert (mig["perInstance"], mig["model"], mig["partitionSize"], mig["gpuResourcesPerInstance"]) == (2, "A100 40GB", "1g.5gb", SLICES)
    # One node per zone, two zones.
    assert mig["instances"] == {"min": 2, "desired": 2, "max": 2} and mig["gpuResources"]["desired"] == 28
    [l4] = plans["gke-l4-timeshare"]["summary"]["groups"]
    assert l4["sharing"] == {"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4} and l4["gpuResources"] == {"min": 8, "desired": 8, "max": 32}


def test_human_preview_shows_the_slices():
    code, out, _ = run_cli("preview", "gke-a100-mig")
    assert code == 0
    # The cell may wrap at 80 columns (the cost column shares the width): its words, in order.
    table = out[out.index("Accelerators"):out.index("└", out.index("Accelerators"))]
    cell = " ".join(line.split("│")[3].strip() for line in table.splitlines() if line.startswith("│"))
    assert "= 14 1g.5gb slices" in cell and "40960 MiB each" in cell and "no violations" in out


def test_the_gpu_operator_replaces_gke_s_gpu_stack(stack_variant):
    import json

    def edit(c):
        c["gpufleet:gke"]["gpuOperator"] = {"driver": True}
        c["gpufleet:gke"]["nodePools"][0]["driver"] = "INSTALLATION_DISABLED"

    code, out, err = run_cli("preview", "--config-file", str(stack_variant(edit, "gke-l4-timeshare")), "--json")
    assert code == 0, err
    plan = json.loads(out)
    pool = inputs_by_name(plan, tokens.GKE_NODE_POOL)["inference-l4-shared"]
    # GKE's own device plugin stays off; node feature discovery finds the GPU nodes by label.
    assert pool["nodeConfig"]["labels"] == {"gke-no-default-nvidia-gpu-device-plugin": "true", "nvidia.com/gpu.present": "true"}
    assert pool["nodeConfig"]["guestAccelerators"][0]["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    [release] = inputs_by_name(plan, tokens.HELM_RELEASE).values()
    assert release["chart"] == "gpu-operator" and release["values"]["driver"] == {"enabled": True}
    assert release["values"]["daemonsets"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    # The operator's controllers run on the system pool, which GKE does not taint; its machine
    # type's CPU and memory are not in the catalog, which the pack says (advisory).
    pods = {p["pod"]: p for p in plan["placement"]["pods"]}
    controllers = [name for name in pods if name.startswith("Deployment gpu-operator/")]
    assert len(controllers) == 3 and all(pods[c]["nodeGroups"] == {"system-*": {"perNode": None, "placed": 1}} for c in controllers)
    assert {(v["policy"], v["level"]) for v in plan["policy"]["violations"]} == {("placement-unverified", "advisory")}
    assert all("not in the catalog for e2-standard-4 nodes" in v["message"] for v in plan["policy"]["violations"])


def test_gke_driver_and_operator_driver_are_one_driver(stack_variant):
    from tests.ecs.test_spec_errors import _errors

    err = _errors(stack_variant(lambda c: c["gpufleet:gke"].__setitem__("gpuOperator", {"driver": True}), "gke-l4-timeshare"))
    assert "GKE installs the driver (LATEST) and so does the GPU Operator: two drivers" in err and "[rule: gke-gpu-driver]" in err


def test_a_gpu_pool_is_replaced_delete_first_and_the_system_pool_create_first(plans):
    resources = {r["name"]: r for r in plans["gke-l4-timeshare"]["resources"]}
    # The pool's name is unique in the cluster (and GPU quota rarely holds two pools): delete first.
    assert resources["inference-l4-shared"].get("deleteBeforeReplace") is True
    system = resources["inference-system"]
    assert system["inputs"]["namePrefix"] == "system-" and "name" not in system["inputs"] and not system.get("deleteBeforeReplace")


def test_diff_names_the_gpu_and_sharing_change_and_the_replacement(tmp_path):
    import json

    from tests.conftest import ROOT

    before = tmp_path / "before.json"
    code, out, _ = run_cli("preview", "gke-l4-timeshare", "--json")
    before.write_text(out)
    text = (ROOT / "stacks" / "Pulumi.gke-l4-timeshare.yaml").read_text()
    variant = tmp_path / "Pulumi.gke-l4-timeshare.yaml"
    variant.write_text(text.replace("maxSharedClientsPerGpu: 4", "maxSharedClientsPerGpu: 2").replace("machineType: g2-standard-8", "machineType: g2-standard-24"))
    after = tmp_path / "after.json"
    code, out, err = run_cli("preview", "--config-file", str(variant), "--json")
    assert code == 0, err
    after.write_text(out)
    code, out, err = run_cli("diff", str(before), str(after))
    assert "gke l4-shared (g2-standard-24): instance type g2-standard-8 -> g2-standard-24; GPUs (desired) 2 -> 4; GPU driver and sharing LATEST, TIME_SHARING x4 -> LATEST, TIME_SHARING x2" in out
    assert "the GKE node pool is replaced (nodeConfig.guestAccelerators[0].count, nodeConfig.guestAccelerators[0].gpuSharingConfig.maxSharedClientsPerGpu, nodeConfig.machineType cannot change in place)" in out
    assert json.loads(after.read_text())["summary"]["groups"][0]["gpuResourcesPerInstance"] == 4  # 2 L4 x 2 clients


def test_the_dra_pool_is_made_as_gke_s_dra_guide_says_and_every_claim_is_allocated(plans):
    from gpufleet.catalog import catalog
    from gpufleet.gke.driver_installer import installer_manifest

    plan, gke = plans["gke-l4-dra"], catalog.load().facts.gke
    pool = inputs_by_name(plan, tokens.GKE_NODE_POOL)["inference-l4-dra"]
    [accelerator] = pool["nodeConfig"]["guestAccelerators"]
    assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": gke.dra.driver.value}
    assert gke.dra.node_labels.values.items() <= pool["nodeConfig"]["labels"].items()
    # GKE's driver installer as upstream writes it, and the DRA driver pointed at the driver it installs.
    [installer] = inputs_by_name(plan, "kubernetes:apps/v1:DaemonSet").values()
    assert installer["spec"] == installer_manifest(gke.dra.driver_installer.value)["spec"]
    [release] = inputs_by_name(plan, tokens.HELM_RELEASE).values()
    assert release["values"]["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia/"
    assert release["values"]["kubeletPlugin"]["priorityClassName"] == ""
    # The pods claim their L4s, and the simulated DynamicResources plugin allocates every claim.
    pods = {p["pod"]: p for p in plan["placement"]["pods"]}
    assert pods["Deployment default/llm-serve"]["status"] == pods["Deployment default/embeddings"]["status"] == "scheduled"
    claims = {r["type"].rsplit(":", 1)[1] for r in plan["resources"] if r["type"].startswith("kubernetes:resource.k8s.io/v1:")}
    assert claims == {"ResourceClaimTemplate", "ResourceClaim"}
    judged = {v["policy"] for v in plan["policy"]["violations"]}
    assert not judged & {"dra-claims-satisfiable", "dra-api-version", "rules-not-judged", "gke-gpu-driver"}
    assert [v for v in plan["policy"]["violations"] if v["level"] == "mandatory"] == []
