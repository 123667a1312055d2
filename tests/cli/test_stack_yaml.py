"""The fast stack-file reader (libyaml's parser, ruamel's YAML 1.2 resolver) reads a file exactly as
ruamel's round-trip reader does, or declines (None) and the file is read by ruamel."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpufleet.stack import files as stackfile, yaml_reader as stack_yaml
from tests.conftest import ROOT


def _ruamel(text: str):
    return stackfile._plain(YAML(typ="rt").load(text))


def _same(text: str) -> bool:
    """The fast reader declines, or reads what ruamel reads (as the program receives it: JSON)."""
    fast = stack_yaml.read(text)
    if fast is None:
        return True
    try:
        slow = _ruamel(text)
    except YAMLError:
        return False  # ruamel refuses what the fast reader accepted
    return json.dumps(fast, sort_keys=True) == json.dumps(slow, sort_keys=True) and type(fast) is type(slow)


@pytest.mark.parametrize("path", sorted((ROOT / "stacks").glob("Pulumi.*.yaml")), ids=lambda p: p.name)
def test_every_shipped_stack_is_read_fast_and_alike(path):
    text = path.read_text()
    assert stack_yaml.read(text) is not None
    assert _same(text)


# Scalars YAML 1.1 (libyaml's own resolver) and 1.2 (ruamel) read differently, and other corners.
TRICKY = [
    "on", "off", "yes", "no", "y", "n", "On", "NO", "0755", "017", "0o17", "0x1F", "1_000", "1e3", "1.5e3", "+1", "-1", "-0",
    ".inf", "-.inf", ".nan", ".5", "1.", "1.50", "~", "null", "Null", "", "True", "TRUE", "false", "2024-01-01",
    "2024-01-01T10:00:00Z", "1:30", "10.60.0.0/16", "p5.48xlarge", "us-east-1a", "-foo", "'quoted 1'", '"2"', "!!str 5",
    "!!int '5'", "[1, on, '3']", "{a: 1, b: no}", "|\n  block\n", ">\n  folded\n", "é", "0", "00", "-1.0",
]


@pytest.mark.parametrize("scalar", TRICKY)
def test_a_tricky_scalar_is_read_as_ruamel_reads_it_or_left_to_ruamel(scalar):
    assert _same(f"config:\n  gpufleet:x: {scalar}\n")


@pytest.mark.parametrize("scalar", ["0755", "1_000", "1e3", ".inf", "2024-01-01", "!!str 5", "017"])
def test_what_the_fast_reader_cannot_be_sure_of_is_left_to_ruamel(scalar):
    assert stack_yaml.read(f"a: {scalar}\n") is None


@pytest.mark.parametrize(
    "document",
    [
        "a: 1\na: 2\n",  # a duplicate key: ruamel refuses it with its message
        "base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n",  # a merge key
        "? [a, b]\n: c\n",  # a complex key
        "1: one\n",  # a key that is a number
        "a: [unclosed\n",  # a syntax error: ruamel's message and line
        "!!map {a: 1}\n",  # an explicit tag
    ],
)
def test_documents_the_readers_could_disagree_on_go_to_ruamel(document):
    assert stack_yaml.read(document) is None


def test_yaml_1_1_booleans_are_strings_as_in_1_2():
    assert stack_yaml.read("a: on\nb: no\n") == {"a": "on", "b": "no"} == _ruamel("a: on\nb: no\n")


def test_anchors_and_aliases_read_alike():
    text = "a: &x {k: [1, two, 3.5]}\nb: *x\n"
    assert stack_yaml.read(text) == {"a": {"k": [1, "two", 3.5]}, "b": {"k": [1, "two", 3.5]}}
    assert _same(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]) | st.sampled_from(list("0123456789.-+_:eExo ~")), max_size=12))
def test_any_plain_scalar_reads_alike(scalar):
    text = f"config:\n  k: {scalar}\n  l: [{scalar}]\n"
    assert _same(text)


def test_line_numbers_come_from_the_round_trip_reading(tmp_path):
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("config:\n  gpufleet:region: us-east-1\n  gpufleet:ecs:\n    clusterName: x\n    workloads:\n      - name: a\n")
    sf = stackfile.load(path)
    assert sf.pulumi_config()["gpufleet:region"] == "us-east-1"
    assert sf.line_of(("ecs", "workloads", 0, "name")) == 6


# --- bounds: a stack file reaches CI from pull requests --------------------------------------------


def _laughs(levels: int, width: int) -> str:
    """The "billion laughs" shape: each level an alias list of the level below."""
    lines = ["config:", "  aws:region: us-east-1", f"  a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join([*lines, f"  gpufleet:ecs: *a{levels - 1}"]) + "\n"


def _refused(tmp_path, text: str) -> str:
    path = tmp_path / "Pulumi.bomb.yaml"
    path.write_text(text)
    with pytest.raises(stackfile.StackFileError) as err:
        stackfile.load(path)
    return str(err.value)


def test_nested_aliases_are_refused_before_they_expand(tmp_path):
    import tracemalloc

    text = _laughs(9, 9)  # about 1 KB that expands to 9**9 values
    assert len(text) < 1200
    tracemalloc.start()
    message = _refused(tmp_path, text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert message.endswith("Pulumi.bomb.yaml:9: the document expands to more than 1,000,000 values once its aliases are expanded, the bound")
    assert peak < 20 * 1024 * 1024, peak  # the check walks what the file holds, not what it expands to


def test_aliases_that_expand_within_the_bound_are_read(tmp_path):
    path = tmp_path / "Pulumi.wide.yaml"
    path.write_text(_laughs(5, 9))  # 9**5 = 59,049 values
    assert len(json.dumps(stackfile.load(path).config["gpufleet:ecs"])) > 59_049 * 5


def test_an_alias_that_contains_itself_is_refused(tmp_path):
    assert _refused(tmp_path, "config:\n  gpufleet:ecs: &c\n    x: [*c]\n").endswith(
        "Pulumi.bomb.yaml:2: an alias refers to a value that contains it: the document never ends"
    )


@pytest.mark.parametrize(
    "value, line",
    [("[" * 300 + "]" * 300, 3), ("[" * 65 + "]" * 65, 3), ("".join(f"\n{'  ' * (i + 3)}k{i}:" for i in range(70)) + " 1", 65)],
    ids=["flow-300", "flow-65", "block-70"],
)
def test_values_nested_past_the_bound_are_refused(tmp_path, value, line):
    assert _refused(tmp_path, f"config:\n  gpufleet:ecs:\n    x: {value}\n").endswith(f"Pulumi.bomb.yaml:{line}: values nested more than 64 deep, the bound")


def test_values_nested_to_the_bound_are_read(tmp_path):
    path = tmp_path / "Pulumi.deep.yaml"
    path.write_text("config:\n  gpufleet:ecs:\n    x: " + "[" * 61 + "]" * 61 + "\n")  # config, gpufleet:ecs, x: 3 levels, 61 lists
    assert stackfile.load(path).config["gpufleet:ecs"]["x"] is not None


@pytest.mark.parametrize("digits", [101, 5000])
def test_a_number_past_the_bound_is_refused_where_it_stands(tmp_path, digits):
    assert _refused(tmp_path, f"config:\n  gpufleet:ecs:\n    desiredSize: {'1' * digits}\n").endswith(
        f"Pulumi.bomb.yaml:3: a number of {digits:,} characters; the bound is 100"
    )


def test_a_number_past_the_bound_is_refused_on_ruamels_path_too(tmp_path):
    # A tag sends the file to ruamel, whose int() stops at the interpreter's digit limit.
    assert _refused(tmp_path, f"config:\n  gpufleet:ecs: !!map\n    desiredSize: {'1' * 5000}\n").endswith(
        "Pulumi.bomb.yaml:3: a number of 5,000 characters; the bound is 100"
    )


@pytest.mark.parametrize(
    "text, refusal",
    [
        (_laughs(9, 9), "Pulumi.bomb.yaml:9: the document expands to more than 1,000,000 values once its aliases are expanded, the bound"),
        ("config:\n  gpufleet:ecs:\n    x: " + "[" * 65 + "]" * 65 + "\n", "Pulumi.bomb.yaml:3: values nested more than 64 deep, the bound"),
        ("config:\n  gpufleet:ecs:\n    x: " + "[" * 300 + "]" * 300 + "\n", "Pulumi.bomb.yaml:3: values nested more than 64 deep, the bound"),
        (f"config:\n  gpufleet:ecs:\n    desiredSize: {'1' * 101}\n", "Pulumi.bomb.yaml: a number of more than 100 digits, the bound"),
        # ruamel's values read the alias as null; its node graph shows the loop (as libyaml's does).
        ("config:\n  gpufleet:ecs: &x\n    x: *x\n", "Pulumi.bomb.yaml:2: an alias refers to a value that contains it: the document never ends"),
        ("config:\n  gpufleet:ecs: &x [*x]\n", "Pulumi.bomb.yaml:2: an alias refers to a value that contains it: the document never ends"),
    ],
    ids=["values", "depth-65", "depth-300", "digits-101", "self-mapping", "self-list"],
)
def test_the_bounds_hold_where_pyyaml_has_no_libyaml(tmp_path, monkeypatch, text, refusal):
    """PyYAML built without libyaml leaves every file to ruamel's reader: the same bounds refuse it
    there (issue 58: libyaml refused first in every other test, so this path went unchecked)."""
    import yaml

    monkeypatch.delattr(yaml, "CSafeLoader")
    assert stack_yaml.compose("config: {}\n") is None  # the fast reader is out of the way
    assert _refused(tmp_path, text).endswith(refusal)


def test_a_number_of_100_digits_is_read_where_pyyaml_has_no_libyaml(tmp_path, monkeypatch):
    import yaml

    monkeypatch.delattr(yaml, "CSafeLoader")
    path = tmp_path / "Pulumi.wide.yaml"
    path.write_text(f"config:\n  gpufleet:ecs:\n    desiredSize: {'9' * 100}\n")
    assert stackfile.load(path).config["gpufleet:ecs"]["desiredSize"] == 10**100 - 1


def test_a_file_past_the_size_bound_is_refused_unread(tmp_path):
    text = "config:\n  aws:region: us-east-1\n" + "# padding\n" * (stack_yaml.MAX_BYTES // 10 + 1)
    assert _refused(tmp_path, text).endswith(f"{len(text.encode()):,} bytes; a stack file is read up to 4,194,304 bytes")
