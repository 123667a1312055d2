"""Real, public Pulumi programs (tests/corpus/third_party, each unchanged but for the stack config its
README asks for, with a SOURCE.md), previewed as a new user would: `gpufleet preview --program DIR
--python VENV`, in one virtualenv holding their packages (requirements.txt). Each preview has no
hang, no traceback and no exit 2 for want of an offline answer; its exit code and its mandatory
findings are the ones reviewed by hand in expected.yaml, each explained there; and `check` on the
saved plan gives the preview's verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import prepared, run_cli
from tests.corpus.review import assert_as_reviewed, assert_reviewed_and_sourced

pytestmark = pytest.mark.slow  # previews of every program, in the virtualenv scripts/prepare-tests makes

HERE = Path(__file__).parent
PROGRAMS = sorted(p.name for p in (HERE / "third_party").iterdir() if (p / "Pulumi.yaml").is_file())
EXPECTED = yaml.safe_load((HERE / "expected.yaml").read_text())


@pytest.fixture(scope="module")
def corpus_python() -> Path:
    """The corpus's virtualenv, made by scripts/prepare-tests from requirements*.txt."""
    return prepared("corpus", "venv", "bin", "python")


def test_every_program_is_reviewed_and_sourced():
    assert_reviewed_and_sourced(HERE, PROGRAMS, EXPECTED)


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_public_program_previews_as_reviewed(corpus_python, name, tmp_path, monkeypatch):
    expected = EXPECTED[name]
    for key, value in (expected.get("env") or {}).items():  # what a program reads from its environment
        monkeypatch.setenv(key, value)
    code, out, err = run_cli(
        "preview", "--program", str(HERE / "third_party" / name), "--python", str(corpus_python), "--json", "--timeout", "300"
    )
    assert_as_reviewed(expected, code, out, err, tmp_path, name)


def test_a_foreign_program_s_node_pools_are_judged_by_the_pack(corpus_python, tmp_path):
    """eks-ml-starter with the pools a user configures (`starter:node_pools`, as its README says): a
    GPU pool whose requirements no type meets is a mandatory finding on the program's own NodePool;
    one that names a family the catalog's EC2 data does not hold is said not judged (it may be newer)."""
    import shutil

    program = tmp_path / "eks-ml-starter"
    shutil.copytree(HERE / "third_party" / "eks-ml-starter", program)
    config = yaml.safe_load((program / "Pulumi.dev.yaml").read_text())
    config["config"]["starter:node_pools"] = [
        {"name": "general", "capacity_type": "on-demand", "instance_category": ["t"]},
        {"name": "gpu", "capacity_type": "on-demand", "instance_family": ["g5"], "instance_category": ["p"]},  # g5 is not of category p
        {"name": "newer", "capacity_type": "on-demand", "instance_family": ["g9z"]},  # not in the catalog's EC2 data
    ]
    (program / "Pulumi.dev.yaml").write_text(yaml.safe_dump(config))
    code, out, err = run_cli("preview", "--program", str(program), "--python", str(corpus_python), "--json", "--timeout", "300")
    assert code == 1, err[-3000:]
    violations = json.loads(out)["policy"]["violations"]
    found = [(v["policy"], v["level"], v["urn"].rsplit("::", 1)[-1]) for v in violations if v["policy"].startswith("karpenter-")]
    assert found == [("karpenter-nodepool-admits-a-type", "mandatory", "starter-dev-cls-gpu-npl")]
    [unjudged] = [v for v in violations if v["policy"] == "rules-not-judged" and v["urn"].endswith("::starter-dev-cls-newer-npl")]
    assert unjudged["level"] == "advisory" and "g9z, which the catalog's EC2 data does not hold" in unjudged["message"]


def _under_a_budget(corpus_python, tmp_path, name: str) -> tuple[dict, list[dict]]:
    """The public program previewed with a $1 monthly ceiling: its plan, and what fleet-budget said
    it could not judge."""
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"fleet-budget": {"maxMonthlyAtMax": 1}}))
    code, out, err = run_cli(
        "preview",
        "--program",
        str(HERE / "third_party" / name),
        "--python",
        str(corpus_python),
        "--json",
        "--timeout",
        "300",
        "--policy-config",
        str(config),
    )
    assert code == 0, err[-3000:]
    plan = json.loads(out)
    assert not [v for v in plan["policy"]["violations"] if v["policy"] == "fleet-budget"]  # no verdict on a guess
    return plan, [
        v for v in plan["policy"]["violations"] if v["policy"] == "rules-not-judged" and "fleet-budget was not judged" in v["message"]
    ]


def test_fleet_budget_names_what_it_cannot_price_in_a_foreign_program(corpus_python, tmp_path):
    """aws-py-eks (a public program) under a budget: its node group names no instance type (EKS picks
    one) in a region the snapshot has no rows for, so fleet-budget prices nothing, says so under
    rules-not-judged on the program's own node group, and passes no ceiling on a guess."""
    plan, [unjudged] = _under_a_budget(corpus_python, tmp_path, "aws-py-eks")
    assert unjudged["urn"].endswith("aws:eks/nodeGroup:NodeGroup::eks-node-group") and "has no price" in unjudged["message"]
    [group] = plan["cost"]["groups"]
    assert group["pricePerHour"] is None and not plan["cost"]["complete"]


def test_fleet_budget_names_the_node_groups_pulumi_eks_makes(corpus_python, tmp_path):
    """eks-managed-nodegroups-py (pulumi-eks ManagedNodeGroups): the plan holds the components, not
    the instances; the placement derives their nodes and fleet-budget names each, counting none."""
    _, unjudged = _under_a_budget(corpus_python, tmp_path, "eks-managed-nodegroups-py")
    named = sorted(v["message"].split(": ", 1)[1].split(" (", 1)[0] for v in unjudged)
    assert named == ["example-managed-ng0", "example-managed-ng1", "example-managed-ng2"]
