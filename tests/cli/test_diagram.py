"""The Mermaid pictures: `preview --format mermaid` and the diagram in `diff --format markdown`,
parsed back into nodes and edges and checked against the plans they draw."""

from __future__ import annotations

import re

from gpufleet.cli.diagram import fleet, node_id
from gpufleet.plans.groups import accelerated_groups
from gpufleet.plans.index import from_plan
from tests.conftest import run_cli, shipped_plan
from tests.cli.test_diff import _diff, _plan_of

NODE = re.compile(r"^\s*(\w+)(\[|\(\[)\"(.*?)\"(\]|\]\))(?::::(\w+))?$")
EDGE = re.compile(r"^\s*(\w+) (-->|-\.->)\|\"?(.*?)\"?\| (\w+)$")
SUBGRAPH = re.compile(r"^\s*subgraph (\w+)\[\"?(.*?)\"?\]$")


def parse(text: str) -> tuple[dict[str, dict], list[tuple[str, str, str, str]], dict[str, list[str]]]:
    """(nodes by id: label lines and class, edges (from, arrow, label, to), subgraph -> node ids)."""
    nodes, edges, groups, current = {}, [], {}, None
    lines = text.strip().splitlines()
    assert lines[0] == "flowchart LR"
    for line in lines[1:]:
        if m := SUBGRAPH.match(line):
            current = m.group(1)
            groups[current] = []
        elif line.strip() == "end":
            current = None
        elif m := EDGE.match(line):
            edges.append((m.group(1), m.group(2), m.group(3), m.group(4)))
        elif m := NODE.match(line):
            nodes[m.group(1)] = {"label": m.group(3).split("<br/>"), "class": m.group(5)}
            if current:
                groups[current].append(m.group(1))
        else:
            assert line.strip().startswith("classDef "), f"a line the picture should not have: {line!r}"
    assert current is None, "a subgraph is left open"
    for a, _, _, b in edges:
        assert a in nodes and b in nodes, f"an edge to an undefined node: {a} -> {b}"
    return nodes, edges, groups


def test_preview_draws_the_eks_fleet_its_groups_and_where_pods_land():
    plan = shipped_plan("eks-p5-efa")
    code, out, err = run_cli("preview", "eks-p5-efa", "--format", "mermaid")
    assert code == 0, err
    nodes, edges, subgraphs = parse(out)
    [(cluster, members)] = subgraphs.items()
    assert nodes.get(cluster) is None and "p5-train" in out.splitlines()[1]
    groups = accelerated_groups(from_plan(plan))
    assert sorted(members) == sorted(node_id("group", u) for u in groups)
    p5 = next(g for g in groups.values() if g.name == "p5")
    assert nodes[node_id("group", p5.urn)]["label"] == ["eks p5", "p5.48xlarge x2", "16 GPUs, 64 EFA interfaces", "$ unknown (capacity-block)"]
    # Every placed pod is linked to each group it lands on, with the count the plan gives.
    by_name = {g.name: node_id("group", g.urn) for g in groups.values()}
    drawn = {(a, b, text) for a, _, text, b in edges}
    for pod in plan["placement"]["pods"]:
        wid = node_id("pod", pod.get("urn", "") + pod["pod"])
        assert nodes[wid]["label"] == [pod["pod"], pod["status"]]
        for name, p in pod["nodeGroups"].items():
            assert (wid, by_name[name], f"{p['placed']} placed") in drawn
    assert len(edges) == sum(len(p["nodeGroups"]) for p in plan["placement"]["pods"])


def test_preview_draws_ecs_tasks_on_their_capacity_providers_spot_included():
    plan = shipped_plan("ecs-gpu")
    code, out, _ = run_cli("preview", "ecs-gpu", "--format", "mermaid")
    assert code == 0
    nodes, edges, _ = parse(out)
    groups = {g.name: g for g in accelerated_groups(from_plan(plan)).values()}
    # The Spot training group names its template in a mixed instances policy: it is drawn too.
    assert nodes[node_id("group", groups["ml-gpu-training"].urn)]["label"] == ["ecs ml-gpu-training", "p4d.24xlarge x0", "no accelerators", "$0.00/h"]
    for task in plan["placement"]["tasks"]:
        wid = node_id("task", task["urn"] + task["task"])
        assert (wid, "-->", f"{task['perInstance']} per instance", node_id("group", groups[task["capacityProvider"]].urn)) in edges


def test_a_pending_pod_is_marked():
    # A stack whose pods stay Pending is refused before it has a plan (exit 2), so the plan is edited.
    plan = shipped_plan("eks-p5-efa")
    plan["placement"]["pods"][0]["status"] = "pending"
    plan["placement"]["pods"][0]["nodeGroups"] = {}
    nodes, _, _ = parse(fleet(plan))
    pod = plan["placement"]["pods"][0]
    assert nodes[node_id("pod", pod["urn"] + pod["pod"])]["class"] == "pending"


def test_the_diff_picture_marks_replacements_and_links_what_drags_them(tmp_path):
    base = shipped_plan("eks-p5-efa")
    head = _plan_of(tmp_path, "eks-p5-efa", lambda c: c["gpufleet:eks"]["network"]["create"].__setitem__("cidr", "10.61.0.0/16"))
    code, out, _ = _diff(tmp_path, base, head, "--format", "markdown")
    assert code == 3
    text = out.split("```mermaid\n", 1)[1].split("```", 1)[0]
    nodes, edges, subgraphs = parse(text)
    groups = {g.name: g for g in accelerated_groups(from_plan(head)).values()}
    key = lambda urn: urn.split("::", 1)[1]  # noqa: E731
    p5 = node_id("a", key(groups["p5"].urn))
    assert set(subgraphs) == {"before", "after"} and p5 in subgraphs["after"]
    assert nodes[p5]["class"] == "replaced" and (node_id("b", key(groups["p5"].urn)), "-->", "replaced", p5) in edges
    causes = {nodes[a]["label"][0] for a, arrow, prop, b in edges if arrow == "-.->" and b == p5 and prop == "subnetIds"}
    assert causes == {"Subnet p5-train-private-us-east-1a (replaced)"}


def test_the_diff_picture_says_a_roll_and_a_scale(tmp_path):
    base = shipped_plan("eks-trn1")
    head = _plan_of(tmp_path, "eks-trn1", lambda c: c["gpufleet:eks"]["nodeGroups"][0].update(desiredSize=4, maxSize=4))
    _, out, _ = _diff(tmp_path, base, head, "--format", "markdown")
    nodes, edges, _ = parse(out.split("```mermaid\n", 1)[1].split("```", 1)[0])
    verbs = {nodes[b]["label"][0]: verb for _, arrow, verb, b in edges if arrow == "-->"}
    assert verbs["eks trn1"] == "changed" and nodes[[b for *_, b in edges if nodes[b]["label"][0] == "eks trn1"][0]]["label"][2].startswith("64 Neuron chips")
    assert all(v in {"same", "changed"} for k, v in verbs.items())
