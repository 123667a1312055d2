"""Mutation testing over gpufleet's rule modules: cosmic-ray's operators make the mutants, each is
written in place one at a time, and the tests that judge the module run against it
(scripts/mutation_runner.py: a warm pytest session forks a child per mutant and runs the tests that
executed the mutated line in the unmutated run, in-process or in a process they started; a mutation outside a function body goes to a fresh process).

    python scripts/mutation.py --jobs 2             # every module below, every mutant (hours: see README)
    python scripts/mutation.py --module ecs_gpu_sharing --module managed_instances
    python scripts/mutation.py --sample 12 --seed 7 # a fixed, seeded sample per module (CI)
    python scripts/mutation.py --slips --jobs 2     # only the slips cosmic-ray does not make

Each module is judged by a process of its own. With --jobs N, N of them run at once, each in a copy
of the working tree of its own (mutants are written into the files, and one module's tests import
the others); without it they run one after another in the checkout itself.

Prints the score per module and every survivor (file:line, operator, the line), and exits 1 when a
survivor is not listed in tests/mutation/equivalent.txt with the reason it cannot change behaviour.
A listed mutant is not run when its key names it alone (a survivor costs every test that reaches its line); --run-equivalent
runs them too, to find entries that a newer test kills.

Why cosmic-ray rather than mutmut: cosmic-ray mutates the files where they are and its mutants can
be judged by any test run, so it works with gpufleet's layout (the editable install's finder maps `gpufleet` onto
src/gpufleet), which mutmut 3's copied `mutants/` tree and trampolines do not import. Mutations inside
type annotations are skipped: with `from __future__ import annotations` they are strings, so
`str | None` turned into `str & None` cannot change behaviour.

cosmic-ray replaces an operator with every other of its kind: a comparison seven ways, a binary
operator eleven. Over these modules that is 8,850 mutants, most of them redundant: a test that
tells `<` from `<=` (the boundary) and from `>=` (the negation) tells it from the rest. REPLACEMENTS
keeps, per operator, its negation and its boundary shifts, and one arithmetic replacement (mutmut's
choice), about 4,500 mutants; every other cosmic-ray operator (not added or removed, numbers off by
one, and/or swapped, loops run zero times, break/continue, True/False, decorators, exceptions) is
kept whole. Beside them, the slips cosmic-ray does not make (scripts/mutation_slips.py): `all` for
`any` and `min` for `max`, each way, and one element dropped from a literal tuple, list or set.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from mutation_slips import Slip, slips  # noqa: E402  (scripts/ is not a package)
# Every process that imports a mutant reads its source: a cached .pyc of another mutant of the same
# size, written in the same second, would be taken for it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
sys.dont_write_bytecode = True
EQUIVALENT = ROOT / "tests" / "mutation" / "equivalent.txt"
# Each module's seconds in the last run that recorded them (--write-seconds): the queue of --jobs
# takes the longest first, so that no long module starts last while the other copies sit idle.
SECONDS = ROOT / "tests" / "mutation" / "seconds.txt"
PYTEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider"]
PYTEST = f"{sys.executable} -m pytest {' '.join(PYTEST_ARGS)}"

# module name -> (file, the tests that judge it): the table tests of its rules, the spec's errors
# and the pack's findings for them, the doors a user sees. Which test files execute a module was
# measured by tracing the suite; the runner picks, per mutant, those of them that may run the mutated
# line, and a survivor has run all of those (keep lists to the doors that judge the module).
_PLACEMENT = ["tests/plans/test_placement_doors.py", "tests/policies/test_policies_placement.py"]
_K8S = ["tests/simulate/test_k8s_scheduler.py", "tests/plans/test_placement_doors.py", "tests/policies/test_policies_k8s.py"]
_SHARED_RULES = [
    "tests/rules/test_predicates.py", "tests/catalog/test_catalog.py", "tests/ecs/test_spec_errors.py", "tests/policies/test_policies_ecs.py",
    "tests/ecs/test_spec_errors_neuron.py", "tests/policies/test_policies_neuron.py", "tests/eks/test_spec_errors_eks.py",
]
_KARPENTER = [
    "tests/simulate/test_karpenter_provisioning.py", "tests/simulate/test_karpenter_capacity.py", "tests/policies/test_policies_karpenter.py",
    "tests/apis/test_karpenter_crd.py", "tests/plans/test_foreign_shapes.py", "tests/karpenter",
]
MODULES: dict[str, tuple[str, list[str]]] = {
    # src/gpufleet/catalog/: the catalog, its rule modules and the placement simulator
    "ack_rules": ("src/gpufleet/rules/ack.py", ["tests/rules/test_ack_rules.py", "tests/ack/test_spec_errors_ack.py", "tests/policies/test_policies_ack.py", "tests/ack/test_preview_ack.py"]),
    "aks_api": ("src/gpufleet/apis/aks.py", ["tests/rules/test_gke_rules.py", "tests/policies/test_policies_aks.py", "tests/aks/test_preview_aks.py"]),
    "aks_rules": ("src/gpufleet/rules/aks.py", ["tests/rules/test_gke_rules.py", "tests/aks/test_spec_errors_aks.py", "tests/policies/test_policies_aks.py"]),
    "api_rules": ("src/gpufleet/apis/aws_rules.py", ["tests/apis/test_api_rules.py", "tests/apis/test_aws_accepts.py"]),
    "api_values": ("src/gpufleet/apis/values.py", ["tests/rules/test_gke_rules.py", "tests/aks/test_preview_aks.py", "tests/gke/test_preview_gke.py"]),
    "aws_api": ("src/gpufleet/apis/aws.py", ["tests/apis/test_aws_api.py", "tests/apis/test_api_rules.py", "tests/apis/test_aws_accepts.py"]),
    "catalog": ("src/gpufleet/catalog/catalog.py", ["tests/catalog/test_catalog.py", "tests/ecs/test_spec_errors.py", "tests/policies/test_policies_ecs.py"]),
    "charts": ("src/gpufleet/catalog/charts.py", ["tests/catalog/test_charts.py", "tests/k8s/test_gpu_operator.py", "tests/policies/test_policies_k8s.py", "tests/eks/test_preview_eks.py"]),
    "ecs_gpu_sharing": ("src/gpufleet/rules/ecs_gpu_sharing.py", ["tests/rules/test_ecs_gpu_sharing.py"]),
    "ecs_placement": ("src/gpufleet/simulate/ecs_placement.py", ["tests/simulate/test_ecs_placement.py", "tests/policies/test_policies_ecs.py"]),
    "ecs_scheduler": ("src/gpufleet/simulate/ecs_scheduler.py", ["tests/simulate/test_ecs_scheduler.py", "tests/plans/test_placement_read_back.py", "tests/rules/test_ecs_gpu_sharing.py", *_PLACEMENT]),
    # efa's layouts are judged through every EKS door: the layout table, the spec's errors and the pack.
    "efa": ("src/gpufleet/rules/efa.py", ["tests/rules/test_efa.py", "tests/eks/test_spec_errors_eks.py", "tests/policies/test_policies_eks.py"]),
    "eks_rules": ("src/gpufleet/rules/eks.py", ["tests/eks/test_spec_errors_eks.py", "tests/policies/test_policies_eks.py", "tests/eks/test_preview_eks.py"]),
    "facts": ("src/gpufleet/catalog/facts.py", ["tests/catalog/test_facts.py", "tests/catalog/test_catalog.py"]),
    "fleet_view": ("src/gpufleet/plans/groups.py", ["tests/plans/test_fleet_view.py"]),
    "generate": ("src/gpufleet/catalog/generate/__init__.py", ["tests/catalog/test_fact_sources.py", "tests/catalog/test_catalog.py"]),
    "gke_api": ("src/gpufleet/apis/gke.py", ["tests/rules/test_gke_rules.py", "tests/gke/test_preview_gke.py"]),
    "gke_rules": ("src/gpufleet/rules/gke.py", ["tests/rules/test_gke_rules.py", "tests/plans/test_fleet_view.py", "tests/plans/test_placement_read_back.py", "tests/gke/test_spec_errors_gke.py", "tests/policies/test_policies_gke.py"]),
    "k8s_filters": ("src/gpufleet/simulate/k8s_filters.py", ["tests/simulate/test_k8s_filters.py", *_K8S]),
    "k8s_rules": ("src/gpufleet/rules/k8s.py", ["tests/rules/test_k8s_rules.py", "tests/simulate/test_k8s_filters.py", *_K8S, "tests/eks/test_spec_errors_eks.py"]),
    "k8s_scheduler": ("src/gpufleet/simulate/k8s_scheduler.py", _K8S),
    "k8s_shapes": ("src/gpufleet/simulate/k8s_shapes.py", ["tests/simulate/test_k8s_shapes.py", *_K8S]),
    "k8s_workloads": ("src/gpufleet/simulate/k8s_workloads.py", ["tests/simulate/test_k8s_workloads.py", *_K8S]),
    "managed_instances": ("src/gpufleet/rules/managed_instances.py", ["tests/rules/test_ecs_managed_instances.py", "tests/policies/test_policies_neuron.py"]),
    "node_capacity": ("src/gpufleet/simulate/node_capacity.py", ["tests/simulate/test_node_capacity.py", "tests/simulate/test_ecs_scheduler.py", "tests/plans/test_placement_doors.py"]),
    "plan_index": ("src/gpufleet/plans/index.py", ["tests/plans/test_placement_read_back.py", "tests/plans/test_plan_view.py", *_PLACEMENT]),
    "plan_placement": ("src/gpufleet/plans/placement.py", ["tests/plans/test_placement_read_back.py", *_PLACEMENT]),
    "plan_pods": ("src/gpufleet/plans/pods.py", ["tests/plans/test_placement_read_back.py", *_PLACEMENT]),
    "plan_tasks": ("src/gpufleet/plans/tasks.py", ["tests/plans/test_placement_read_back.py", *_PLACEMENT, "tests/rules/test_ecs_gpu_sharing.py"]),
    # the shared rules of GPUs, Neuron chips, ECS AMIs and offerings: the ECS, Neuron and EKS doors (spec errors and the pack)
    **{name: (f"src/gpufleet/rules/{module}.py", _SHARED_RULES) for name, module in (
        ("gpu_rules", "gpus"), ("neuron_rules", "neuron"), ("ami_rules", "ecs_amis"), ("offering_rules", "offerings"),
    )},
    "quotas": ("src/gpufleet/rules/quotas.py", ["tests/apis/test_api_rules.py"]),
    # Karpenter and the component libraries: the provisioning simulation, its plan reader, the pack's NodePool rules
    **{name: (path, _KARPENTER) for name, path in (
        ("karpenter_sim", "src/gpufleet/simulate/karpenter.py"), ("karpenter_rules", "src/gpufleet/rules/karpenter.py"),
        ("plan_karpenter", "src/gpufleet/plans/karpenter.py"), ("karpenter_pools", "src/gpufleet/simulate/karpenter_pools.py"), ("karpenter_api", "src/gpufleet/apis/karpenter.py"),
        ("karpenter_manifests", "src/gpufleet/karpenter/manifests.py"), ("karpenter_checks", "src/gpufleet/karpenter/checks.py"),
    )},
    # gpufleet verify: the NCCL gate's rules, the log reader and the fleet comparisons
    **{name: (path, ["tests/verify", "tests/k8s/test_nccl_gate.py"]) for name, path in (
        ("nccl_rules", "src/gpufleet/rules/nccl.py"), ("verify_nccl_log", "src/gpufleet/verify/nccl_log.py"), ("verify_nccl_gate", "src/gpufleet/verify/nccl_gate.py"),
        ("verify_kube", "src/gpufleet/verify/kube_checks.py"), ("verify_ecs", "src/gpufleet/verify/ecs_checks.py"), ("verify_recorded", "src/gpufleet/verify/recorded.py"),
    )},
    # cost: the rules, the plan's cost block, the snapshot's generator and fleet-budget
    **{name: (path, ["tests/rules/test_cost_rules.py", "tests/plans/test_cost.py", "tests/catalog/test_price_snapshot.py", "tests/policies/test_policies_budget.py", "tests/plans/test_fargate.py"]) for name, path in (
        ("cost_rules", "src/gpufleet/rules/cost.py"), ("plan_cost", "src/gpufleet/plans/cost.py"),
        ("price_generator", "src/gpufleet/catalog/generate/prices.py"), ("policies_budget", "src/gpufleet/policies/budget.py"),
    )},
    # the price snapshot, its sources' readers, `gpufleet prices update` and the command that shows coverage
    **{name: (path, tests) for name, path, tests in (
        ("prices", "src/gpufleet/catalog/prices.py", ["tests/catalog/test_price_snapshot.py", "tests/rules/test_cost_rules.py", "tests/catalog/test_price_update.py", "tests/cli/test_prices.py"]),
        ("price_files", "src/gpufleet/catalog/generate/price_files.py", ["tests/catalog/test_price_snapshot.py", "tests/catalog/test_price_update.py"]),
        ("price_fetch", "src/gpufleet/catalog/generate/price_fetch.py", ["tests/catalog/test_price_update.py", "tests/cli/test_prices.py"]),
        ("price_update", "src/gpufleet/catalog/generate/price_update.py", ["tests/catalog/test_price_update.py", "tests/cli/test_prices.py"]),
        ("prices_command", "src/gpufleet/cli/prices_command.py", ["tests/cli/test_prices.py"]),
    )},
    "plan_awsx": ("src/gpufleet/plans/awsx.py", ["tests/plans/test_awsx.py", "tests/plans/test_foreign_shapes.py"]),
    "images": ("src/gpufleet/rules/images.py", ["tests/rules/test_images.py"]),
    "lifecycle": ("src/gpufleet/rules/lifecycle.py", ["tests/rules/test_lifecycle.py", "tests/ecs/test_preview.py"]),
    "policies_lifecycle": ("src/gpufleet/policies/lifecycle.py", ["tests/rules/test_lifecycle.py", "tests/ecs/test_preview.py"]),
    "replacement": ("src/gpufleet/plans/replacement.py", ["tests/cli/test_diff_plans.py", "tests/catalog/test_facts.py", "tests/cli/test_diff.py"]),
    "sources": ("src/gpufleet/catalog/generate/sources.py", ["tests/catalog/test_fact_sources.py", "tests/catalog/test_catalog.py", "tests/engine/test_engine.py"]),
    # src/gpufleet/*/checks.py: each cloud's spec rules
    "ack_checks": ("src/gpufleet/ack/checks.py", ["tests/ack/test_spec_errors_ack.py", "tests/policies/test_policy_parity.py"]),
    "aks_checks": ("src/gpufleet/aks/checks.py", ["tests/aks/test_spec_errors_aks.py", "tests/rules/test_gke_rules.py"]),
    # ECS's spec checks reach the API rules (quotas, essential containers) and the spec-time placement.
    # and what each platform derives once (resolved.py), which its checks and builders read.
    **{name: (path, [
        "tests/ecs/test_spec_errors.py", "tests/ecs/test_spec_errors_neuron.py", "tests/rules/test_ecs_gpu_sharing.py", "tests/rules/test_ecs_managed_instances.py",
        "tests/apis/test_api_rules.py", "tests/plans/test_placement_doors.py", "tests/simulate/test_ecs_scheduler.py",
    ]) for name, path in (("ecs_checks", "src/gpufleet/ecs/checks.py"), ("ecs_resolved", "src/gpufleet/ecs/resolved.py"))},
    "eks_checks": ("src/gpufleet/eks/checks.py", ["tests/eks/test_spec_errors_eks.py", "tests/apis/test_api_rules.py"]),
    "eks_resolved": ("src/gpufleet/eks/resolved.py", ["tests/eks/test_spec_errors_eks.py", "tests/eks/test_preview_eks.py", "tests/plans/test_placement_doors.py"]),
    "gke_checks": ("src/gpufleet/gke/checks.py", ["tests/gke/test_spec_errors_gke.py", "tests/rules/test_gke_rules.py"]),
    # each cloud's placement before its plan exists (the spec door of the simulator)
    "eks_placement": ("src/gpufleet/eks/placement.py", ["tests/plans/test_placement_doors.py", "tests/eks/test_spec_errors_eks.py", "tests/k8s/test_gpu_operator.py"]),
    "aks_placement": ("src/gpufleet/aks/placement.py", ["tests/plans/test_placement_doors.py", "tests/aks/test_spec_errors_aks.py", "tests/aks/test_preview_aks.py"]),
    "gke_placement": ("src/gpufleet/gke/placement.py", ["tests/plans/test_placement_doors.py", "tests/gke/test_spec_errors_gke.py", "tests/gke/test_preview_gke.py"]),
    # the offline engine's registrations: paced, and the SDK work nothing reads skipped
    "paced_registration": ("src/gpufleet/engine/patches/paced_registration.py", ["tests/engine/test_paced_registration.py"]),
    "sdk_patches": ("src/gpufleet/engine/patches/__init__.py", ["tests/engine/test_patches.py"]),
    # policies/: the pack (its rules run in the pack's process, which reads the mutant from disk)
    "policies_ack": ("src/gpufleet/policies/ack.py", ["tests/policies/test_policies_ack.py", "tests/policies/test_policy_parity.py"]),
    "policies_aks": ("src/gpufleet/policies/aks.py", ["tests/policies/test_policies_aks.py"]),
    "policies_api": ("src/gpufleet/policies/api.py", ["tests/apis/test_api_rules.py", "tests/apis/test_aws_accepts.py"]),
    "policies_ecs": ("src/gpufleet/policies/ecs.py", ["tests/policies/test_policies_ecs.py", "tests/policies/test_policy_parity.py"]),
    "policies_ecs_managed": ("src/gpufleet/policies/ecs_managed.py", ["tests/rules/test_ecs_managed_instances.py"]),
    "policies_ecs_sharing": ("src/gpufleet/policies/ecs_sharing.py", ["tests/rules/test_ecs_gpu_sharing.py"]),
    "policies_ecs_task": ("src/gpufleet/policies/ecs_task.py", ["tests/policies/test_policies_ecs.py", "tests/policies/test_policies_neuron.py"]),
    "policies_eks": ("src/gpufleet/policies/eks.py", ["tests/policies/test_policies_eks.py"]),
    "policies_eks_nodes": ("src/gpufleet/policies/eks_nodes.py", ["tests/policies/test_policies_eks.py"]),
    "policies_gke": ("src/gpufleet/policies/gke.py", ["tests/policies/test_policies_gke.py"]),
    "policies_inputs": ("src/gpufleet/policies/inputs.py", ["tests/policies/test_policy_inputs.py", "tests/policies/test_policies_ecs.py", "tests/policies/test_policies_eks.py"]),
    "policies_k8s": ("src/gpufleet/policies/k8s.py", ["tests/policies/test_policies_k8s.py", "tests/policies/test_policies_eks.py", "tests/policies/test_policies_gke.py", "tests/policies/test_policies_aks.py"]),
    "policies_neuron": ("src/gpufleet/policies/neuron.py", ["tests/policies/test_policies_neuron.py"]),
    "policies_placement": ("src/gpufleet/policies/placement.py", [*_PLACEMENT, "tests/engine/test_servicer_memo.py"]),
    "policies_security": ("src/gpufleet/policies/security.py", ["tests/policies/test_policies_security.py"]),
    "policies_servicer_memo": ("src/gpufleet/engine/patches/servicer_memo.py", ["tests/engine/test_servicer_memo.py"]),
    # the pack applies ConfigureStack's config: judged by a config too large for the environment
    "policies_stack_config": ("src/gpufleet/engine/patches/stack_config.py", ["tests/policies/test_policies_ack.py"]),
    "policies_stack_once": ("src/gpufleet/engine/patches/stack_once.py", ["tests/engine/test_stack_once.py"]),
    "policies_updates": ("src/gpufleet/policies/updates.py", ["tests/policies/test_policies_updates.py", "tests/cli/test_diff.py"]),
    # the diff a reviewer reads, and the preview's report
    "text_layout": ("src/gpufleet/cli/text_layout.py", ["tests/cli/test_text_layout.py"]),
    "wording": ("src/gpufleet/catalog/wording.py", ["tests/rules/test_predicates.py", "tests/cli/test_text_layout.py", "tests/policies/test_policies_updates.py"]),
    "diff": ("src/gpufleet/cli/diff.py", ["tests/cli/test_diff_plans.py", "tests/plans/test_fleet_view.py", "tests/cli/test_diff.py"]),
    "diff_render": ("src/gpufleet/cli/diff_render.py", ["tests/cli/test_diff_render.py", "tests/cli/test_diff.py"]),
    "property_changes": ("src/gpufleet/cli/property_changes.py", ["tests/cli/test_diff_plans.py", "tests/cli/test_diff.py"]),
}


# The replacements kept of cosmic-ray's operator families (see the module's docstring).
REPLACEMENTS = {
    "ReplaceComparisonOperator": {
        "Eq_NotEq", "NotEq_Eq", "Is_IsNot", "IsNot_Is",
        "Lt_LtE", "Lt_GtE", "LtE_Lt", "LtE_Gt", "Gt_GtE", "Gt_LtE", "GtE_Gt", "GtE_Lt",
    },
    "ReplaceBinaryOperator": {
        "Add_Sub", "Sub_Add", "Mul_Div", "Div_Mul", "FloorDiv_Div", "Mod_FloorDiv", "Pow_Mul",
        "LShift_RShift", "RShift_LShift", "BitOr_BitAnd", "BitAnd_BitOr", "BitXor_BitAnd",
    },
    "ReplaceUnaryOperator": {"Delete_Not", "USub_UAdd", "Delete_USub"},
}


def kept(operator: str) -> bool:
    """Whether scripts/mutation.py judges cosmic-ray's operator `core/Family_From_To`."""
    family, _, replacement = operator.removeprefix("core/").partition("_")
    return family not in REPLACEMENTS or replacement in REPLACEMENTS[family]


@dataclass(frozen=True)
class Survivor:
    path: str
    line: int
    operator: str
    source: str

    @property
    def key(self) -> str:
        """How equivalent.txt names a survivor: stable while the line's text stays the same."""
        return f"{self.path} | {self.operator} | {self.source}"


def _annotation_spans(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    spans = []
    for node in ast.walk(ast.parse(path.read_text())):
        annotations = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            annotations += [a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a is not None]
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for a in annotations:
            if a is not None:
                spans.append(((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)))
    return spans


def _inside(position: tuple[int, int], spans) -> bool:
    return any(start <= tuple(position) <= end for start, end in spans)


def _mutants(name: str, sample: int | None, seed: int, only_slips: bool = False):
    """cosmic-ray's mutants of a module (its operators, every occurrence) and the slips, those inside
    annotations left out, and the seeded sample of them when asked."""
    from cosmic_ray.work_db import WorkDB, use_db

    relative, tests = MODULES[name]
    with tempfile.TemporaryDirectory() as tmp:
        config, session = Path(tmp) / "config.toml", Path(tmp) / "session.sqlite"
        config.write_text(
            "[cosmic-ray]\n"
            f'module-path = "{relative}"\n'
            "timeout = 300.0\n"
            "excluded-modules = []\n"
            f'test-command = "{PYTEST} {" ".join(tests)}"\n'
            "[cosmic-ray.distributor]\n"
            'name = "local"\n'
        )
        subprocess.run([Path(sys.executable).with_name("cosmic-ray"), "init", str(config), str(session)], cwd=ROOT, check=True)
        spans = _annotation_spans(ROOT / relative)
        with use_db(str(session), WorkDB.Mode.open) as db:
            keep = [
                w.mutations[0] for w in db.work_items
                if kept(w.mutations[0].operator_name) and not any(_inside(m.start_pos, spans) for m in w.mutations)
            ]
    keep = [] if only_slips else keep
    keep += slips((ROOT / relative).read_text(), lambda position: _inside(position, spans))
    if sample is not None:
        keep = random.Random(f"{seed}:{name}").sample(keep, min(sample, len(keep)))
    return keep


def run_module(name: str, sample: int | None, seed: int, skip: frozenset[str] = frozenset(), only_slips: bool = False) -> tuple[int, int, list[Survivor], dict[str, int]]:
    """Mutate one module; returns (killed, run, survivors, how many each way judged). A mutant whose
    key is in `skip` (listed in equivalent.txt), and is the only mutant of that key, is counted a
    survivor without running: a survivor runs every test that reaches its line, the costliest verdict
    there is."""
    from cosmic_ray.mutating import use_mutation
    from cosmic_ray.plugins import get_operator

    from mutation_runner import KILLED, SURVIVED, WarmTests

    relative, tests = MODULES[name]
    mutants = _mutants(name, sample, seed, only_slips)
    if not mutants:
        return 0, 0, [], {"fork": 0, "fresh": 0, "listed": 0, "baseline_seconds": 0}
    lines = (ROOT / relative).read_text().splitlines()
    # A key names every mutant of one operator on one line: only a key that names one mutant alone
    # is skipped, so a listed `x + 1` never hides an `x - 1` that a test kills.
    keys = Counter(Survivor(relative, m.start_pos[0], m.operator_name, lines[m.start_pos[0] - 1].strip()).key for m in mutants)
    skip = frozenset(k for k in skip if keys[k] == 1)

    def judge_all(warm: WarmTests):
        killed, run, survivors, ways = 0, 0, [], {"fork": 0, "fresh": 0, "listed": 0, "baseline_seconds": round(warm.baseline_seconds)}
        for i, m in enumerate(mutants, 1):
            if i % 25 == 0:
                print(f"  {name}: {i}/{len(mutants)} mutants judged, {len(survivors)} survived so far", file=sys.__stderr__, flush=True)
            survivor = Survivor(relative, m.start_pos[0], m.operator_name, lines[m.start_pos[0] - 1].strip())
            try:
                if isinstance(m, Slip):
                    mutation = _written(ROOT / relative, m.mutated)
                else:
                    mutation = use_mutation(ROOT / relative, get_operator(m.operator_name)(**(m.operator_args or {})), m.occurrence)
                original, mutated = mutation.__enter__()
            except AttributeError:
                # cosmic-ray 8's ExceptionReplacer cannot rewrite some except clauses (parso nodes
                # without a value): the mutant is never made, the file is untouched. Counted apart.
                ways["unmade"] = ways.get("unmade", 0) + 1
                print(f"  {name}: cosmic-ray could not make {survivor.path}:{survivor.line} {survivor.operator}", file=sys.__stderr__, flush=True)
                continue
            try:
                if mutated is None:
                    continue
                if survivor.key in skip:
                    outcome, how = SURVIVED, "listed"
                else:
                    outcome, how = warm.judge(original, mutated, m.start_pos[0])
            finally:
                mutation.__exit__(None, None, None)  # the unmutated file back in place
            ways[how] += 1
            run += 1
            if outcome == KILLED:
                killed += 1
            else:
                survivors.append(survivor)
        return killed, run, survivors, ways

    return WarmTests.run(ROOT, relative, tests, PYTEST_ARGS, judge_all)


@contextlib.contextmanager
def _written(path: Path, mutated: str):
    """A slip's mutant on disk for the span of the block, the original back after (as cosmic-ray's
    use_mutation does): yields (original, mutated)."""
    original = path.read_text()
    path.write_text(mutated)
    try:
        yield original, mutated
    finally:
        path.write_text(original)


def equivalent() -> set[str]:
    """The survivors a reader checked cannot change behaviour: `path | operator | line  # reason`."""
    if not EQUIVALENT.exists():
        return set()
    found = set()
    for line in EQUIVALENT.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            found.add(line.rsplit("  # ", 1)[0].strip())  # the last "  # ": a mutated line may carry a comment of its own
    return found


def recorded_seconds() -> dict[str, float]:
    """`module seconds` lines of SECONDS."""
    if not SECONDS.exists():
        return {}
    found = {}
    for line in SECONDS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, seconds = line.split()
            found[name] = float(seconds)
    return found


def longest_first(names: list[str], seconds: dict[str, float]) -> list[str]:
    """The order modules are judged in: by recorded seconds, longest first; modules without a
    record (new ones, short as a rule) last, in name order."""
    return sorted(names, key=lambda n: (n not in seconds, -seconds.get(n, 0.0), n))


def write_seconds(measured: dict[str, float]) -> None:
    """Records this run's seconds over the earlier records (modules it did not judge keep theirs)."""
    merged = {**recorded_seconds(), **measured}
    lines = ["# module seconds: each module's time in the last run that recorded it (scripts/mutation.py --write-seconds)"]
    lines += [f"{name} {merged[name]:.0f}" for name in sorted(merged)]
    SECONDS.write_text("\n".join(lines) + "\n")


def _copy(into: Path) -> Path:
    """A copy of the working tree that imports as gpufleet itself: the editable install maps the
    package onto this checkout, so the copy puts its own src/ first on PYTHONPATH (the pack's
    processes inherit it). Returns the folder to put on PYTHONPATH."""
    shutil.copytree(ROOT, into, ignore=shutil.ignore_patterns(".git", ".venv", TEST_ENV.name, "__pycache__", "*.egg-info", ".pytest_cache", LOCK.name), symlinks=True)
    # What scripts/prepare-tests installed (gigabytes of virtualenvs and node_modules) is only read: the copy links to it.
    if TEST_ENV.exists():
        (into / TEST_ENV.name).symlink_to(TEST_ENV.resolve())
    return into / "src"


LOCK = ROOT / ".mutation-run.lock"
TEST_ENV = ROOT / ".test-env"


@contextlib.contextmanager
def _checkout_lock():
    """One run at a time writes mutants into this checkout: a second would judge the first's mutants
    (and restore files under it). A lock left by a run that no longer exists is taken over."""
    while True:
        try:
            fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            break
        except FileExistsError:
            try:
                pid = int(LOCK.read_text() or 0)
                os.kill(pid, 0)
            except (ValueError, ProcessLookupError, FileNotFoundError):
                LOCK.unlink(missing_ok=True)  # its run is gone
                continue
            sys.exit(f"another mutation run (pid {pid}) is writing mutants into {ROOT}; wait for it, or use --jobs to judge in copies")
    try:
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        yield
    finally:
        LOCK.unlink(missing_ok=True)


def _judge_all(names: list[str], jobs: int, extra: list[str], report) -> None:
    """Each module judged by a worker process of its own: in the checkout one at a time, or in
    `jobs` copies at once; `report(name, result)` is called as each one ends."""
    todo: queue.Queue[str] = queue.Queue()
    for name in names:
        todo.put(name)
    lock = threading.Lock()

    def work(root: Path, env: dict[str, str]) -> None:
        while True:
            try:
                name = todo.get_nowait()
            except queue.Empty:
                return
            with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
                run = subprocess.run([sys.executable, str(root / "scripts" / "mutation.py"), "--worker", name, "--out", out.name, *extra], cwd=root, env=env)
                text = Path(out.name).read_text()
            with lock:
                report(name, json.loads(text) if run.returncode == 0 and text else {"error": f"worker exit {run.returncode}"})

    if jobs <= 1:
        work(ROOT, dict(os.environ))
        return
    with tempfile.TemporaryDirectory(prefix="gpufleet-mutation-") as tmp:
        threads = []
        for i in range(jobs):
            shim = _copy(Path(tmp) / f"copy{i}")
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(shim), os.environ.get("PYTHONPATH")]))}
            threads.append(threading.Thread(target=work, args=(shim.parent, env)))
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", choices=sorted(MODULES), help="a module to mutate (repeat); all when absent")
    parser.add_argument("--sample", type=int, help="mutants per module, drawn with --seed (all when absent)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="modules judged at once, each in a copy of the working tree")
    parser.add_argument("--run-equivalent", action="store_true", help="judge the mutants equivalent.txt lists too (to find entries a test now kills)")
    parser.add_argument("--slips", action="store_true", help="judge only the slips of scripts/mutation_slips.py (all/any, min/max, a dropped literal element)")
    parser.add_argument("--write-seconds", action="store_true", help=f"record each judged module's seconds in {SECONDS.relative_to(ROOT)} (the order of later runs)")
    parser.add_argument("--worker", choices=sorted(MODULES), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.chdir(ROOT)  # the tests are named from the repository's root
    # A run stopped with SIGTERM unwinds, so the mutant on disk is put back (cosmic-ray's restore).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    extra = [*(["--sample", str(args.sample)] if args.sample is not None else []), "--seed", str(args.seed), *(["--run-equivalent"] if args.run_equivalent else []), *(["--slips"] if args.slips else [])]
    if args.worker:
        start = time.monotonic()
        killed, run, survivors, ways = run_module(args.worker, args.sample, args.seed, frozenset() if args.run_equivalent else frozenset(equivalent()), args.slips)
        Path(args.out).write_text(json.dumps({
            "killed": killed, "run": run, "seconds": time.monotonic() - start, "ways": ways,
            "survivors": [s.__dict__ for s in survivors],
        }))
        return 0
    known = equivalent()
    names = longest_first(args.module or sorted(MODULES), recorded_seconds())
    unexplained, failed, scores, seconds = [], [], {}, {}

    def report(name: str, result: dict) -> None:
        if "error" in result:
            print(f"{name}: {result['error']}", flush=True)
            failed.append(name)
            return
        survivors = [Survivor(**s) for s in result["survivors"]]
        killed, run = result["killed"], result["run"]
        seconds[name] = result["seconds"]
        scores[name] = score = 100.0 * (killed + sum(s.key in known for s in survivors)) / run if run else 100.0
        print(
            f"{name}: {killed}/{run} killed, {len(survivors)} survived, score {score:.1f}% (equivalent mutants count as killed); "
            f"{result['seconds']:.0f} s, {result['ways']['fork']} judged in a forked child, {result['ways']['fresh']} in a fresh process, "
            f"{result['ways']['listed']} listed equivalent and not run "
            f"(the traced unmutated run: {result['ways']['baseline_seconds']} s)",
            flush=True,
        )
        for s in survivors:
            listed = s.key in known
            print(f"  {'equivalent' if listed else 'SURVIVED  '} {s.path}:{s.line} {s.operator}: {s.source}", flush=True)
            if not listed:
                unexplained.append(s)
        if args.sample is None and not args.slips:  # every mutant ran: an entry of this module nothing matched is out of date
            seen = {s.key for s in survivors}
            for key in sorted(k for k in known if k.startswith(f"{MODULES[name][0]} | ") and k not in seen):
                print(f"  stale entry of {EQUIVALENT.relative_to(ROOT)} (no surviving mutant matches it): {key}", flush=True)

    start = time.monotonic()
    if args.jobs <= 1:
        with _checkout_lock():
            _judge_all(names, args.jobs, extra, report)
    else:
        _judge_all(names, args.jobs, extra, report)
    if args.write_seconds and args.sample is None and not args.slips:
        write_seconds(seconds)
    if len(names) > 1:
        below = sorted(n for n, score in scores.items() if score < 90.0)
        print(f"{len(scores)} modules in {time.monotonic() - start:.0f} s; {len(unexplained)} survivors unexplained; "
              f"below 90%: {', '.join(below) or 'none'}" + (f"; not judged: {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if unexplained or failed else 0


if __name__ == "__main__":
    sys.exit(main())
