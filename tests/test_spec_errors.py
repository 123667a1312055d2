"""Bad input: exit 2 and one message naming the file and line, the field, the value and the rule."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT, run_cli


def _errors(path) -> str:
    code, out, err = run_cli("preview", "--config-file", str(path))
    assert code == 2, (out, err)
    assert out == ""
    assert "Traceback" not in err
    return err


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


def test_wrong_key_and_wrong_type_are_all_reported_at_once(stack_variant):
    def edit(c):
        c["gpufleet:ecs"]["capacityProviders"][0]["minSise"] = 1
        c["gpufleet:ecs"]["capacityProviders"][1]["maxSize"] = "2"

    err = _errors(stack_variant(edit))
    assert "2 problems" in err
    assert "gpufleet:ecs.capacityProviders[0].minSise = 1: unknown key [rule: extra_forbidden]" in err
    assert "gpufleet:ecs.capacityProviders[1].maxSize = '2': Input should be a valid integer [rule: int_type]" in err


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


def test_unknown_top_level_key(stack_variant):
    err = _errors(stack_variant(lambda c: c.__setitem__("gpufleet:ecss", {"a": 1})))
    assert "gpufleet:ecss = " in err and "unknown key" in err


def test_console_script_exit_code_without_traceback():
    result = subprocess.run(
        [sys.executable, "-m", "infra.cli", "preview", "missing-stack"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: unknown stack 'missing-stack'") and "Traceback" not in result.stderr


def test_the_program_itself_rejects_bad_config_as_a_run_error():
    """Under the real CLI there is no pre-validation: the program must fail with the same issues."""
    from infra.engine import EngineError, run_program

    with pytest.raises(EngineError) as err:
        run_program({"gpufleet:region": "us-east-1", "gpufleet:ecs": '{"clusterName": "x"}'}, "bad")
    assert "gpufleet:ecs.network = (missing): Field required [rule: missing]" in str(err.value)


def test_capacity_provider_name_may_not_start_with_ecs(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"].__setitem__("clusterName", "ecs-prod")))
    assert "gpufleet:ecs.capacityProviders[0].name = 'inference'" in err
    assert "'ecs-prod-inference'" in err and "[rule: ecs-capacity-provider-name]" in err
