"""src/gpufleet/cli/text_layout.py: tables and trees in rich's look, laid out without rich's measuring."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.table import Table
from rich.tree import Tree

from gpufleet.cli import report, text_layout
from gpufleet.cli.text_layout import TextTable, TextTree
from tests.conftest import preview_plan


def _text(renderable, width: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width)
    if isinstance(renderable, (TextTable, TextTree)):
        renderable.print(console)
    else:
        console.print(renderable)
    return [line.rstrip() for line in console.file.getvalue().splitlines()]


def _tables(stack: str, monkeypatch) -> list[TextTable]:
    made: list[TextTable] = []
    with monkeypatch.context() as patch:
        patch.setattr(TextTable, "print", lambda self, console: made.append(self))
        report.render_preview(preview_plan(stack), Console(file=io.StringIO(), width=200))
    return made


def _as_rich(table: TextTable) -> Table:
    theirs = Table(title=table.title, title_justify="left")
    for column in table.columns:
        theirs.add_column(column)
    for cells, bold in table.rows:
        theirs.add_row(*cells, style="bold" if bold else None)
    return theirs


@pytest.mark.parametrize("stack", ["ecs-mps", "eks-p5-efa", "ack-shared-gpu", "ecs-neuron"])
def test_a_table_that_fits_is_laid_out_as_rich_lays_it_out(stack, monkeypatch):
    tables = _tables(stack, monkeypatch)
    assert len(tables) >= 2 and sum(len(t.rows) for t in tables) >= 4
    for table in tables:
        assert _text(table, 250) == _text(_as_rich(table), 250)


def test_a_tree_is_drawn_with_richs_guides():
    ours, theirs = TextTree("root"), Tree("root")
    for name, kids in (("a", ["a1", "a2"]), ("b", []), ("c", ["c1"])):
        mine, rich_node = ours.add(name), theirs.add(name)
        for kid in kids:
            grand, rich_grand = mine.add(kid), rich_node.add(kid)
            grand.add("leaf")
            rich_grand.add("leaf")
    assert _text(ours, 80) == _text(theirs, 80)
    assert _text(ours, 80)[:4] == ["root", "├── a", "│   ├── a1", "│   │   └── leaf"]


def test_a_long_label_wraps_under_its_first_line():
    tree = TextTree("root")
    parent = tree.add("aws:ecs/clusterCapacityProviders:ClusterCapacityProviders  ml-shared-gpu")
    parent.add("child")
    tree.add("last")
    assert _text(tree, 40) == [
        "root",
        "├── aws:ecs/clusterCapacityProviders:Clu",
        "│   sterCapacityProviders  ml-shared-gpu",
        "│   └── child",
        "└── last",
    ]


def test_a_deep_tree_is_drawn_without_recursion():
    tree = node = TextTree("root")
    for i in range(3000):
        node = node.add(f"n{i}")
    lines = _text(tree, 100_000)
    assert len(lines) == 3001 and lines[-1].endswith("└── n2999")


def test_a_narrow_console_wraps_the_widest_column_first_and_keeps_words():
    table = TextTable("Placement", ["pod or task", "replicas", "lands on"])
    table.add_row("task chat", "6", "ml-shared-gpu-shared: 8 per instance, 1 instance(s) needed")
    table.add_row("task small-llm", "4", "ml-shared-gpu-slices: 1 per instance")
    assert table.widths(200) == [14, 8, 58]
    widths = table.widths(60)
    assert sum(widths) + 3 * 3 + 1 == 60 and widths[:2] == [14, 8]  # only the widest narrowed
    lines = _text(table, 60)
    assert max(len(line) for line in lines) == 60
    body = [line for line in lines if line.startswith("│")]
    third = [line.split("│")[3].strip() for line in body]
    assert " ".join(w for w in third if w) == "ml-shared-gpu-shared: 8 per instance, 1 instance(s) needed ml-shared-gpu-slices: 1 per instance"
    assert all(len(w) <= widths[2] for w in third)


def test_a_console_narrower_than_the_words_breaks_them():
    table = TextTable("t", ["name"])
    table.add_row("g6e.12xlarge")
    assert table.widths(10) == [6]
    assert [line.split("│")[1].strip() for line in _text(table, 10) if line.startswith("│")] == ["g6e.12", "xlarge"]


def test_headers_sit_on_their_last_line_and_totals_are_bold():
    table = TextTable("Accelerators", ["group", "GPUs\nmin/des/max"])
    table.add_row("shared", "4/4/12")
    table.add_row("total", "4/4/12", bold=True)
    text = table.render(80)
    lines = text.plain.splitlines()
    assert lines[2].split("┃")[1].strip() == "" and lines[3].split("┃")[1].strip() == "group"
    bold = {text.plain[span.start:span.end].strip() for span in text.spans if span.style == "bold"}
    assert {"group", "min/des/max", "total", "4/4/12"} <= bold and "shared" not in bold


def test_a_row_of_the_wrong_length_is_refused():
    table = TextTable("Workloads", ["workload", "capacity provider"])
    with pytest.raises(ValueError, match="a row of 1 cells in a table of 2 columns"):
        table.add_row("chat")


def test_a_column_at_its_longest_word_is_not_narrowed_while_another_can_be():
    table = TextTable("t", ["a", "b"])
    table.add_row("x" * 20, "aa bb cc dd ee")
    assert table.widths(200) == [20, 14]
    assert table.widths(3 * 2 + 1 + 31) == [20, 11]  # b narrowed, a's one word kept whole


def test_a_console_narrower_than_a_character_a_column_leaves_the_table_wider():
    table = TextTable("t", ["name"])
    table.add_row("g6e.12xlarge")
    assert table.widths(4) == [1]
    pair = TextTable("t", ["a", "b"])
    pair.add_row("x" * 10, "y" * 10)
    assert pair.widths(10) == [1, 2]  # 3 characters of room: one each at least, the rest to the widest
    assert pair.widths(8) == [1, 1]  # 1 character of room: still one each
    wide = TextTable("t", ["a", "b", "", "d"])  # 13 characters of borders and padding
    wide.add_row("one", "two", "", "four")
    assert wide.widths(10) == [1, 1, 0, 1]
    lines = _text(wide, 10)[1:]
    # Wider than the console: every line still whole (not wrapped by rich), all as wide.
    assert {len(line) for line in lines} == {16} and all(line[0] in "┏┃┡│└" and line[-1] in "┓┃┩│┘" for line in lines)


def test_the_longest_word_folds_first_and_only_until_the_others_fit():
    table = TextTable("t", ["a", "b", "c"])
    table.add_row("x" * 30, "y" * 16, "aaa bbb ccc ddd eee")
    # 40 characters of room, a share of 13: the 30-character word folds, the 16-character one fits.
    assert table.widths(50) == [13, 16, 11]
    # 28 of room, a share of 9: folding the longest to 9 leaves exactly 28 of words: b stays whole.
    assert table.widths(38) == [9, 16, 3]


def test_a_deep_label_keeps_eight_characters_a_line():
    tree = node = TextTree("r")
    for name in ("a", "b", "c"):
        node = node.add(name)
    node.add("abcdefghijkl")
    lines = _text(tree, 16)  # the label starts at column 16: no room left
    assert lines[-2:] == ["            └── abcdefgh", "                ijkl"]


def test_styles_reach_a_terminal_bold_and_nothing_else():
    console = Console(file=io.StringIO(), width=80, force_terminal=True, color_system="standard")
    table = TextTable("Accelerators", ["group", "GPUs"])
    table.add_row("shared", "4/4/12")
    tree = TextTree("gpufleet/ecs  (3 resources)", bold=True)
    tree.add("gpufleet:ecs:GpuCluster  ml", bold=True).add("aws:ecs/cluster:Cluster  ml")
    table.print(console)
    tree.print(console)
    out = console.file.getvalue()
    codes = set(re.findall(r"\x1b\[[0-9;]*m", out))
    assert codes <= {"\x1b[1m", "\x1b[3m", "\x1b[0m"} and "\x1b[1m" in codes  # no highlighting of numbers
    assert "\n\n" not in out  # no blank line after a table or the tree
    plain = tree.render(80)
    bold = [plain.plain[s.start:s.end] for s in plain.spans if s.style == "bold"]
    assert bold == ["gpufleet/ecs  (3 resources)\n", "gpufleet:ecs:GpuCluster  ml\n"]  # not the custom resource
    assert not TextTree("plain").render(80).spans


def test_a_name_too_long_for_its_column_is_folded_not_broken_at_its_hyphens():
    table = TextTable("t", ["lands on"])
    table.add_row("ml-shared-gpu-shared: 8")
    assert table.widths(16) == [12]
    assert [line.split("│")[1].strip() for line in _text(table, 16) if line.startswith("│")] == ["ml-shared-gp", "u-shared: 8"]


@pytest.mark.parametrize("enabled", [True, False])
def test_the_report_is_laid_out_without_the_collector_and_leaves_it_as_it_was(monkeypatch, enabled):
    import gc

    seen = []
    monkeypatch.setattr(TextTable, "print", lambda self, console: seen.append(gc.isenabled()))
    plan = preview_plan("ecs-mps")
    (gc.enable if enabled else gc.disable)()
    try:
        report.render_preview(plan, Console(file=io.StringIO(), width=120))
        assert seen and not any(seen)
        assert gc.isenabled() is enabled
        monkeypatch.setattr(TextTable, "print", lambda self, console: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            report.render_preview(plan, Console(file=io.StringIO(), width=120))
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_a_name_that_must_fold_anyway_does_not_squeeze_the_other_columns():
    """A 50-character name with no place to break: kept whole, it would leave "lands on" 9
    characters wide; folded, the two columns share the console."""
    table = TextTable("Placement", ["pod or task", "lands on"])
    table.add_row("DaemonSet nvidia-device-plugin-p5-train-device-plugins-nvidia", "system-*: 19 per node, 2 placed")
    assert table.widths(47) == [20, 20]
    keep = TextTable("Placement", ["pod or task", "lands on"])  # a name that fits keeps its column
    keep.add_row("kube-system/coredns", "system-*: 19 per node, 2 placed")
    assert keep.widths(47) == [19, 21]


def test_a_line_breaks_after_a_slash_and_keeps_the_names_between_whole():
    """The EKS plugins' DaemonSets are named namespace/name: the name breaks after its slash, and
    a header's min/des/max after one of its, before any word is broken."""
    table = TextTable("Placement", ["pod or task", "GPUs\nmin/des/max"])
    table.add_row("DaemonSet nvidia-device-plugin/p5-train-device-plugins-nvidia", "0/0/32")
    assert table.widths(47) == [30, 10]
    lines = _text(table, 47)
    assert [line.split("│")[1].strip() for line in lines if line.startswith("│")] == ["DaemonSet", "nvidia-device-plugin/", "p5-train-device-plugins-nvidia"]
    assert [line.split("┃")[2].strip() for line in lines if line.startswith("┃")] == ["GPUs", "min/des/", "max"]


def test_the_neuron_stacks_accelerators_keep_every_instance_type_whole(monkeypatch):
    """Six columns in 80 characters: only the slashes and spaces give way."""
    [accelerators] = [t for t in _tables("ecs-neuron", monkeypatch) if t.title == "Accelerators"]
    text = "\n".join(_text(accelerators, 80))
    assert max(len(line) for line in text.splitlines()) <= 80
    for instance_type in ("inf2.24xlarge", "trn1.32xlarge", "Inferentia2", "NeuronCores"):
        assert instance_type in text


def test_alibaba_instance_types_break_after_ecs_and_keep_their_family_whole(monkeypatch):
    """ACK's six columns in 80 characters: ecs.gn6i-c24g1.24xlarge gives way after "ecs.", not
    inside its family or size; other dots (versions, p5.48xlarge) never break."""
    [pools] = [t for t in _tables("ack-shared-gpu", monkeypatch) if t.title == "ACK shared-GPU pools"]
    lines = _text(pools, 80)
    assert max(len(line) for line in lines) <= 80
    cells = [line.split("│")[2].strip() for line in lines if line.startswith("│")]
    assert cells[:2] == ["ecs.", "gn6v-c8g1.8xlarge"] and "gn6i-c24g1.24xlarge" in cells
    unbroken = ("gn6i-c24g1.24xlarge", "p5.48xlarge", "1.4.2", "registry.example.ecs.io", "vecs.big")
    assert [text_layout._longest_word(f"ecs.{word}") for word in unbroken] == [len(word) for word in unbroken]
    assert text_layout._longest_word("registry.example.ecs.io") == len("registry.example.ecs.io")


def test_the_workloads_and_placement_tables_count_one_in_the_singular(monkeypatch):
    [workloads] = [t for t in _tables("ecs-managed-gpu", monkeypatch) if t.title == "Workloads"]
    per_task = {cells[0]: cells[2] for cells, _ in workloads.rows}
    assert per_task["llm-serve"] == "1 GPU" and per_task["neuron-serve"] == "1 chip (2 NeuronCores)"
    [workloads] = [t for t in _tables("ecs-neuron", monkeypatch) if t.title == "Workloads"]
    assert {cells[0]: cells[2] for cells, _ in workloads.rows}["embed-batch"] == "6 chips (12 NeuronCores)"
    [placement] = [t for t in _tables("ecs-gpu", monkeypatch) if t.title == "Placement"]
    lands = {cells[0]: cells[2] for cells, _ in placement.rows}
    assert lands["task llm-serve"] == "ml-gpu-inference: 4 per instance, 1 instance needed"
