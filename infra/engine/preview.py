"""An offline preview as `pulumi preview --policy-pack` runs one: the pack starts with the program,
analyses each resource as it registers, and judges the stack once the program ends. The CLI and the
bench both call this, so the bench measures what `gpufleet preview` does."""

from __future__ import annotations

from pathlib import Path

from gpufleet.analyzer.client import PolicyPack
from gpufleet.engine.runtime import PROJECT, Program, run_program
from gpufleet.engine.plan import build_plan, plan_resource
from gpufleet.analyzer.policy_config import PolicyConfig


def preview_plan(
    config: dict[str, str], stack: str, pack_dir: Path | None, given: dict[str, PolicyConfig], program: Program | None = None
) -> dict:
    """The JSON plan of the program (gpufleet's stack-file program, or `program`) under `config`;
    judged by the pack in `pack_dir` (with the policy config `given`) unless it is None. Raises
    EngineError (the program failed) or PolicyPackError."""
    project = program.project if program is not None else PROJECT
    pack = PolicyPack(pack_dir, project=project, stack=stack, config=config) if pack_dir is not None else None
    try:
        if pack is not None:
            pack.begin(given)
        submit = (lambda r: pack.submit(plan_resource(r))) if pack is not None else None
        plan = build_plan(run_program(config, stack, on_resource=submit, program=program), project)
        if pack is not None:
            plan["policy"] = pack.finish(plan["resources"]).as_plan_block()
        return plan
    finally:
        if pack is not None:
            pack.close()
