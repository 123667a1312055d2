"""Bad input: exit 2 and one message naming the file and line, the field, the value and the rule."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT, run_cli, spec_errors


_errors = spec_errors


def test_unknown_stack_names_the_known_ones():
    code, _, err = run_cli("preview", "no-such-stack")
    assert code == 2
    assert "unknown stack 'no-such-stack'" in err and "ecs-gpu" in err


def test_stack_and_config_file_are_exclusive():
    code, _, err = run_cli("preview", "ecs-gpu", "--config-file", "x.yaml")
    assert code == 2 and "exactly one of STACK or --config-file" in err


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text("config:\n  gpufleet:region: us-east-1\n  gpufleet:ecs: {clusterName: [\n")
    err = _errors(path)
    assert f"{path}:" in err and "not valid YAML" in err


def test_unknown_instance_type_suggests_real_names(stack_variant):
    path = stack_variant(lambda c: c["gpufleet:ecs"]["capacityProviders"][0].__setitem__("instanceType", "g5.12xlarg"))
    err = _errors(path)
    line = [l for l in err.splitlines() if "instanceType" in l][0]
    expected = 1 + next(i for i, text in enumerate(path.read_text().splitlines()) if "instanceType: g5.12xlarg" in text)
    assert f"{path}:{expected}:" in line
    assert "gpufleet:ecs.capacityProviders[0].instanceType = 'g5.12xlarg'" in line
    assert "did you mean g5.12xlarge" in line and "[rule: instance-type-known]" in line


def test_gpus_that_do_not_fit_point_at_the_container(stack_variant):
    def edit(c):
        c["gpufleet:ecs"]["workloads"][1]["containers"][1]["gpus"] = 3  # 2 + 3 > 4 A10G

    err = _errors(stack_variant(edit))
    line = [l for l in err.splitlines() if "[rule: ecs-gpus-fit-instance]" in l][0]
    assert "gpufleet:ecs.workloads[1].containers[1].gpus = 3" in line
    assert "5 GPUs requested but g5.12xlarge has 4 (4 x NVIDIA A10G" in line
    assert "1 problem" in err


def test_a_service_whose_task_fits_no_instance_is_not_also_pending(stack_variant):
    def edit(c):
        c["gpufleet:ecs"]["workloads"][0]["containers"][0]["gpus"] = 5  # llm-serve, a service of 4 tasks, on 4 A10G

    err = _errors(stack_variant(edit))
    assert "[rule: ecs-gpus-fit-instance]" in err and "1 problem" in err and "ecs-tasks-placeable" not in err


def test_wrong_key_and_wrong_type_are_all_reported_at_once(stack_variant):
    def edit(c):
        c["gpufleet:ecs"]["capacityProviders"][0]["minSise"] = 1
        c["gpufleet:ecs"]["capacityProviders"][1]["maxSize"] = "2"

    err = _errors(stack_variant(edit))
    assert "2 problems" in err
    assert "gpufleet:ecs.capacityProviders[0].minSise = 1: unknown key; did you mean minSize? [rule: unknown-key]" in err
    assert "gpufleet:ecs.capacityProviders[1].maxSize = '2': Input should be a valid integer [rule: int-type]" in err


@pytest.mark.parametrize(
    "instance_type, rule, words",
    [
        ("g5g.xlarge", "ecs-gpu-ami-supported", "no ECS GPU-optimized AMI"),
        ("m5.large", "ecs-gpu-ami-supported", "has neither a GPU nor a Neuron chip"),
        ("p2.xlarge", "instance-type-known", "retired"),
    ],
)
def test_instance_types_without_an_ecs_gpu_ami_are_rejected(stack_variant, instance_type, rule, words):
    path = stack_variant(lambda c: c["gpufleet:ecs"]["capacityProviders"][1].__setitem__("instanceType", instance_type))
    err = _errors(path)
    assert f"capacityProviders[1].instanceType = '{instance_type}'" in err
    assert f"[rule: {rule}]" in err and words in err


def test_type_not_offered_in_region(stack_variant):
    err = _errors(stack_variant(lambda c: c.__setitem__("gpufleet:region", "af-south-1")))
    assert "p4d.24xlarge is not offered in af-south-1 [rule: instance-type-offered]" in err


def test_unknown_region(stack_variant):
    err = _errors(stack_variant(lambda c: c.__setitem__("gpufleet:region", "us-east-9")))
    assert "gpufleet:region = 'us-east-9'" in err and "[rule: region-known]" in err


def test_workload_on_a_missing_capacity_provider(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["workloads"][0].__setitem__("capacityProvider", "nope")))
    assert "workloads[0].capacityProvider = 'nope': no capacity provider of that name (have: inference, training)" in err


def test_sizes_out_of_order(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["capacityProviders"][0].__setitem__("desiredSize", 9)))
    assert "minSize <= desiredSize <= maxSize (got 1, 9, 4)" in err


def test_user_set_visible_devices_is_rejected(stack_variant):
    def edit(c):
        c["gpufleet:ecs"]["workloads"][0]["containers"][0]["environment"]["NVIDIA_VISIBLE_DEVICES"] = "all"

    err = _errors(stack_variant(edit))
    assert "[rule: ecs-gpu-visible-devices]" in err


def test_a_key_an_earlier_schema_had_says_what_replaced_it(stack_variant):
    def edit(c):
        c["gpufleet:ecs"]["network"]["create"]["azCount"] = 2

    err = _errors(stack_variant(edit))
    assert "gpufleet:ecs.network.create.azCount = 2: unknown key: azCount is gone: name the zones in order under `zones`" in err


def test_a_key_near_no_other_lists_the_keys_of_its_place(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["network"]["create"].__setitem__("vpcName", "x")))
    assert "gpufleet:ecs.network.create.vpcName = 'x': unknown key (keys here: cidr, zones) [rule: unknown-key]" in err


def test_a_misspelt_key_of_an_eks_group_gets_the_nearest(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:eks"]["nodeGroups"][0].__setitem__("desiredSise", 2), stack="eks-p5-efa"))
    assert "gpufleet:eks.nodeGroups[0].desiredSise = 2: unknown key; did you mean desiredSize? [rule: unknown-key]" in err


def test_unknown_top_level_key(stack_variant):
    err = _errors(stack_variant(lambda c: c.__setitem__("gpufleet:ecss", {"a": 1})))
    assert "gpufleet:ecss = " in err and "unknown key" in err


def test_console_script_exit_code_without_traceback():
    result = subprocess.run(
        [sys.executable, "-m", "gpufleet.cli.main", "preview", "missing-stack"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: unknown stack 'missing-stack'") and "Traceback" not in result.stderr


def test_the_program_itself_rejects_bad_config_as_a_run_error():
    """Under the real CLI there is no pre-validation: the program must fail with the same issues."""
    from gpufleet.engine.runtime import EngineError, run_program

    with pytest.raises(EngineError) as err:
        run_program({"gpufleet:region": "us-east-1", "gpufleet:ecs": '{"clusterName": "x"}'}, "bad")
    assert "gpufleet:ecs.network = (missing): Field required [rule: required]" in str(err.value)


def test_capacity_provider_name_may_not_start_with_ecs(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"].__setitem__("clusterName", "ecs-prod")))
    assert "gpufleet:ecs.capacityProviders[0].name = 'inference'" in err
    assert "'ecs-prod-inference'" in err and "[rule: ecs-capacity-provider-name]" in err


# --- input that cannot break the tool -----------------------------------------------------------


def test_every_rule_id_is_kebab_case_and_no_object_is_dumped(stack_variant):
    def edit(c):
        group = c["gpufleet:ecs"]["capacityProviders"][0]
        group.update(minSize=3, desiredSize=2)  # a model validator's rule

    err = _errors(stack_variant(edit))
    [line] = [l for l in err.splitlines() if "[rule:" in l]
    assert "[rule: size-order]" in line and "minSize <= desiredSize <= maxSize" in line
    assert "gpufleet:ecs.capacityProviders[0] = {name, instanceType, amiVariant, minSize, desiredSize, ...}: sizes" in line


def test_a_json_string_that_does_not_parse_says_where(tmp_path):
    path = tmp_path / "Pulumi.json.yaml"
    path.write_text('config:\n  gpufleet:region: us-east-1\n  gpufleet:ecs: \'{"clusterName": "x",}\'\n')
    err = _errors(path)
    assert f"{path}:3: gpufleet:ecs = " in err
    assert "not valid JSON: Expecting property name enclosed in double quotes at line 1, column 21 [rule: config-json]" in err


def test_an_unquoted_version_gets_a_hint(stack_variant):
    def edit(c):
        c["gpufleet:eks"]["cluster"]["create"]["version"] = 1.30

    err = _errors(stack_variant(edit, "eks-trn1"))
    assert "gpufleet:eks.cluster.create.version = 1.3: Input should be a valid string" in err
    assert 'quote version-like values: "1.30"' in err and "[rule: string-type]" in err


@pytest.mark.parametrize("codec", ["utf-8-sig", "utf-16", "utf-32"])
def test_unicode_with_a_byte_order_mark_is_read(tmp_path, codec):
    from tests.conftest import preview_plan

    path = tmp_path / "Pulumi.ecs-gpu.yaml"
    path.write_bytes((ROOT / "stacks" / "Pulumi.ecs-gpu.yaml").read_text().encode(codec))
    assert preview_plan("--config-file", str(path), "--no-policy")["summary"]["resourceCount"] > 0


def test_a_latin_1_file_is_refused_with_the_byte_and_line(tmp_path):
    path = tmp_path / "Pulumi.latin.yaml"
    path.write_bytes(b"config:\n  gpufleet:region: us-east-1\n  # caf\xe9\n")
    err = _errors(path)
    assert f"{path}:3: not UTF-8: byte 0xe9 at offset" in err and "save the file as UTF-8" in err


def test_a_yaml_error_points_at_where_the_construct_starts(tmp_path):
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text("config:\n  gpufleet:region: us-east-1\n  gpufleet:ecs:\n    clusterName: x\n   network: {}\n")
    err = _errors(path)
    assert f"{path}:" in err and "not valid YAML" in err and "line" in err


def test_a_closed_stdout_is_quiet():
    command = f"{sys.executable} -m gpufleet.cli.main preview ecs-gpu --json | head -1; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "{\n" and done.stderr == ""
    command = f"{sys.executable} -m gpufleet.cli.main preview ecs-gpu | head -1; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""


def test_an_internal_error_is_exit_4_in_one_line(monkeypatch):
    import gpufleet.cli.catalog_view

    def broken(*_):
        raise KeyError("boom")

    monkeypatch.setattr(gpufleet.cli.catalog_view, "overview", broken)
    code, out, err = run_cli("catalog")
    assert code == 4 and out == ""
    assert err.startswith("error: internal error in gpufleet (KeyError at test_spec_errors.py:") and err.count("\n") == 1
    assert "GPUFLEET_DEBUG=1" in err and "Traceback" not in err
    monkeypatch.setenv("GPUFLEET_DEBUG", "1")
    assert "Traceback" in run_cli("catalog")[2]


def test_spot_capacity_of_a_type_sold_on_demand_only(stack_variant):
    from gpufleet.catalog.generate.sources import MotoSnapshot

    classes = MotoSnapshot().instance_types()["hpc7a.12xlarge"]["SupportedUsageClasses"]
    assert "spot" not in classes
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["capacityProviders"][1].update(instanceType="hpc7a.12xlarge")))
    assert (
        f"gpufleet:ecs.capacityProviders[1].purchase = 'spot': hpc7a.12xlarge is not offered as Spot (usage classes: {', '.join(classes)}) "
        "[rule: spot-supported]"
    ) in err


def test_a_task_per_chip_needs_neuron_chips(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["workloads"][0].__setitem__("service", {"perChip": True})))
    assert "gpufleet:ecs.workloads[0].service.perChip = true: g5.12xlarge has no Neuron chip to run a task on each of [rule: ecs-neuron-per-chip]" in err


def test_a_capacity_provider_name_of_128_characters_is_the_longest(stack_variant):
    from gpufleet.ecs.resolved import capacity_provider_name

    def named(length: int):
        def edit(c):
            ecs = c["gpufleet:ecs"]
            name = "p" * 40  # a provider's own name takes at most 40 characters; the cluster's makes up the rest
            ecs["clusterName"] = "c" * (length - len(capacity_provider_name("", name)))
            ecs["capacityProviders"][1]["name"] = name
            ecs["workloads"][2]["capacityProvider"] = name
            ecs["capacityProviders"][0]["instanceType"] = "g9.xlarge"  # keeps the stack invalid either way

        return edit

    assert "ecs-capacity-provider-name" not in _errors(stack_variant(named(128)))
    err = _errors(stack_variant(named(129)))
    assert "[rule: ecs-capacity-provider-name]" in err and f"would be named '{'c' * 88}-{'p' * 40}'" in err


def _gpu_container(c) -> dict:
    return c["gpufleet:ecs"]["workloads"][0]["containers"][0]


def test_driver_capabilities_the_gpu_ami_does_not_know(stack_variant):
    err = _errors(stack_variant(lambda c: _gpu_container(c).__setitem__("driverCapabilities", "video")))
    assert (
        "gpufleet:ecs.workloads[0].containers[0].driverCapabilities = 'video': NVIDIA_DRIVER_CAPABILITIES 'video' is not one of "
        "utility,compute, all [rule: ecs-gpu-driver-capabilities]"
    ) in err


def test_driver_capabilities_set_twice(stack_variant):
    def edit(c):
        _gpu_container(c)["driverCapabilities"] = "all"
        _gpu_container(c)["environment"]["NVIDIA_DRIVER_CAPABILITIES"] = "all"

    err = _errors(stack_variant(edit))
    assert (
        "gpufleet:ecs.workloads[0].containers[0].driverCapabilities = 'all': set NVIDIA_DRIVER_CAPABILITIES either in environment "
        "or as driverCapabilities, not both [rule: ecs-gpu-driver-capabilities]"
    ) in err


def test_a_created_vpc_names_its_zones_and_is_shown_two_that_offer_every_type(stack_variant):
    import re

    from gpufleet.catalog import catalog

    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["network"]["create"].pop("zones")))
    assert "gpufleet:ecs.network.create.zones = null: name the VPC's zones (for example [" in err and "[rule: vpc-zones-required]" in err
    suggested = re.search(r"for example \[([^\]]*)\]", err).group(1).split(", ")
    cat = catalog.load()
    assert len(suggested) == 2  # an ECS cluster's subnets in two zones
    for name in ("g5.12xlarge", "p4d.24xlarge"):
        assert set(suggested) <= set(cat.get(name).offerings["us-east-1"])


def _ecs(c) -> dict:
    return c["gpufleet:ecs"]


def test_managed_instance_providers_count_toward_the_providers_quota(stack_variant):
    from gpufleet.catalog import catalog

    limit = catalog.load().facts.quotas["ecsCapacityProvidersPerCluster"].value
    managed = 6

    def edit(c):
        base = dict(_ecs(c)["capacityProviders"][0])
        _ecs(c)["capacityProviders"] = [{**base, "name": f"cp{i}"} for i in range(limit + 1 - managed)]
        _ecs(c)["workloads"] = []
        providers = [{"name": f"mi{i}", "instanceTypes": ["g5.xlarge"], "storageGiB": 200} for i in range(managed)]
        _ecs(c).insert(list(_ecs(c)).index("workloads"), "managedInstanceProviders", providers)

    err = _errors(stack_variant(edit))
    assert (
        f"gpufleet:ecs.capacityProviders = '{limit + 1} capacity providers (managedInstanceProviders included)': "
        f"{limit + 1} capacity providers in one ECS cluster; AWS allows {limit}"
    ) in err


def test_mixed_gpu_options_point_at_the_last_container(stack_variant):
    def whole_last(c):
        _ecs(c)["workloads"][1]["containers"].append({"name": "whole", "image": "x:1", "cpu": 256, "memory": 512, "gpus": 1})

    err = _errors(stack_variant(whole_last, "ecs-mps"))
    assert "gpufleet:ecs.workloads[1].containers[2].gpus = 1: the task's GPU containers mix an MPS share and whole GPUs" in err
    assert "[rule: ecs-gpu-one-option]" in err

    def share_last(c):
        _ecs(c)["workloads"][1]["containers"].insert(0, {"name": "whole", "image": "x:1", "cpu": 256, "memory": 512, "gpus": 1})

    err = _errors(stack_variant(share_last, "ecs-mps"))
    from ruamel.yaml import YAML

    last = YAML(typ="safe").load((ROOT / "stacks" / "Pulumi.ecs-mps.yaml").read_text())["config"]["gpufleet:ecs"]["workloads"][1]["containers"][-1]
    # the share as the stack writes it: its memory
    assert f"gpufleet:ecs.workloads[1].containers[2].gpuShare = {last['gpuShare']['memoryMiB']}: the task's GPU containers mix" in err


def test_an_mps_share_on_a_fractional_type_names_the_share(stack_variant):
    err = _errors(stack_variant(lambda c: _ecs(c)["workloads"][0].__setitem__("capacityProvider", "slices"), "ecs-mps"))
    assert "gpufleet:ecs.workloads[0].containers[0].gpuShare = 22000: g6f.2xlarge has a fractional GPU: MPS sharing does not work on G6f" in err


def test_a_gpu_type_no_variant_supports_points_at_the_instance_type(stack_variant):
    """al2-kernel-5.10 exists for the GPU AMI only; on a GPU type the type is what to change."""
    def edit(c):
        _ecs(c)["capacityProviders"][0].update(instanceType="g5g.xlarge", amiVariant="al2-kernel-5.10")

    err = _errors(stack_variant(edit))
    assert "gpufleet:ecs.capacityProviders[0].instanceType = 'g5g.xlarge': g5g.xlarge: Graviton (arm64)" in err


def test_every_capacity_provider_is_judged_past_an_unknown_type(stack_variant):
    def edit(c):
        _ecs(c)["capacityProviders"][0]["instanceType"] = "g5.nope"
        _ecs(c)["capacityProviders"][1]["instanceType"] = "g5g.xlarge"

    err = _errors(stack_variant(edit))
    assert "capacityProviders[0].instanceType = 'g5.nope'" in err and "capacityProviders[1].instanceType = 'g5g.xlarge'" in err


def test_container_names_are_unique_in_a_workload(stack_variant):
    def edit(c):
        containers = _ecs(c)["workloads"][1]["containers"]
        containers[1]["name"] = containers[0]["name"]

    err = _errors(stack_variant(edit))
    assert "gpufleet:ecs.workloads[1].containers[1].name = 'embed': a workload's container names must be unique [rule: names-unique]" in err


def test_services_that_share_a_provider_are_judged_together(stack_variant):
    def edit(c):
        _ecs(c)["workloads"][0]["service"]["desiredCount"] = 10
        _ecs(c)["workloads"][1]["service"] = {"desiredCount": 4}

    from gpufleet.catalog import catalog

    err = _errors(stack_variant(edit))
    per_instance = catalog.load().get("g5.12xlarge").gpu.count  # the inference provider's type, maxSize 4
    assert (
        "gpufleet:ecs.workloads[1].service = 4: the services on inference reserve 26 GPUs in all (llm-serve 10 x 1, embed-rerank 4 x 4); "
        f"4 instances register {4 * per_instance} [rule: ecs-tasks-placeable]"
    ) in err


def test_every_provider_is_checked_after_one_of_an_unknown_type(stack_variant):
    def edit(c):
        providers = c["gpufleet:ecs"]["capacityProviders"]
        providers[0]["instanceType"] = "g5.12xlarg"
        providers[1]["amiVariant"] = "al2-kernel-5.10"  # a GPU-only variant (no Neuron AMI has it)
        providers[1]["instanceType"] = "g5g.xlarge"  # arm64 GPU: no ECS GPU AMI runs it

    err = _errors(stack_variant(edit))
    assert "gpufleet:ecs.capacityProviders[0].instanceType = 'g5.12xlarg': unknown instance type" in err
    # The GPU AMI cannot run the type: the type is what to change, not the variant.
    line = next(l for l in err.splitlines() if "[rule: ecs-gpu-ami-supported]" in l)
    assert "gpufleet:ecs.capacityProviders[1].instanceType = 'g5g.xlarge'" in line


def test_a_resolved_capacity_provider_is_named_as_its_args():
    from gpufleet.catalog import catalog
    from gpufleet.ecs.args import CapacityProviderArgs
    from gpufleet.ecs.resolved import resolve

    args = CapacityProviderArgs(name="g5", instance_type="g5.xlarge", min_size=0, desired_size=1, max_size=1)
    assert resolve(args, catalog.load()).name == "g5"


def test_a_created_vpc_with_no_zones_is_refused_at_the_field(stack_variant):
    """Found by the fuzz of issue 38: a Managed Instances stack with `zones: []` reached the VPC
    builder (exit 4); no check of its providers reads the zones first."""
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["network"]["create"].__setitem__("zones", []), stack="ecs-managed-gpu"))
    assert "gpufleet:ecs.network.create.zones = []: List should have at least 1 item after validation, not 0 [rule: too-short]" in err
