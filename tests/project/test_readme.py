"""README.md is the front door: its tour's preview excerpt is lines of the real output, in order,
every guide it links to exists (the diff excerpt is tests/cli/test_diff.py's), and its test command
is the one CI runs."""

from __future__ import annotations

import re

from tests.conftest import ROOT, run_cli

README = (ROOT / "README.md").read_text()


def _excerpt(marker: str) -> list[str]:
    return README.split(f"<!-- {marker}:", 1)[1].split("```text\n", 1)[1].split("```", 1)[0].splitlines()


def _in_order(out: str, marker: str) -> None:
    lines = out.splitlines()
    at = 0
    for line in _excerpt(marker):
        assert line in lines[at:], line
        at = lines.index(line, at) + 1


def test_the_preview_excerpt_is_the_real_output_in_order():
    code, out, err = run_cli("preview", "ecs-gpu")
    assert code == 0, err
    _in_order(out, "preview-ecs-gpu")


def test_the_verify_excerpt_is_the_real_output_on_real_nodes():
    """The tour's `gpufleet verify` excerpt: the stack's plan against a public study's real
    `kubectl get nodes -o json` (tests/fixtures/verify/SOURCE.md), unchanged."""
    code, out, err = run_cli("verify", "eks-p3dn-efa", "--from", str(ROOT / "tests" / "fixtures" / "verify" / "performance-study"))
    assert code == 5, err  # nodes only: the plan's plugins and pods are not proven
    _in_order(out, "verify-eks-p3dn-efa")


def test_every_link_of_the_readme_and_the_guides_opens():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(((?:\.\./|[\w-]+/)*[\w.-]+\.(?:md|py|yaml|json|txt))(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).exists(), (page.name, target)


def test_the_readme_is_a_front_door():
    assert len(README.encode()) < 10_500


def test_ci_runs_the_readme_s_test_command_in_one_worker_per_core():
    """.ci/run ends with the README's test command, word for word, so a contributor's run is CI's; it
    runs the suite in parallel (pytest-xdist, the `test` extra), by the machine's cores."""
    [setup] = re.findall(r"```bash\n(.*?)```", README, re.S)
    test = setup.splitlines()[-1]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == test
    assert test.split()[1:5] == ["-m", "pytest", "-n", "auto"]
