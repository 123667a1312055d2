"""An offline preview as `pulumi preview --policy-pack` runs one: the pack starts with the program,
analyses each resource as it registers, and judges the stack once the program ends. The CLI and the
bench both call this, so the bench measures what `gpufleet preview` does."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from gpufleet.analyzer.client import PolicyPack
from gpufleet.analyzer.pack_process import PackProcess
from gpufleet.analyzer.policy_config import PolicyConfig
from gpufleet.engine.plan import build_plan, plan_entries, plan_resource
from gpufleet.engine.program_host import Hosting, run_hosted
from gpufleet.engine.runtime import PROJECT, Program, run_program
from gpufleet.plans.index import from_plan, write_remediated


def preview_plan(
    config: dict[str, str],
    stack: str,
    pack_dir: Path | None,
    given: dict[str, PolicyConfig],
    program: Program | None = None,
    progress: Callable[[], None] | None = None,
    stages: dict[str, float] | None = None,
    started: PackProcess | None = None,
    hosted: Hosting | None = None,
) -> dict:
    """The JSON plan of the program (gpufleet's stack-file program, or `program`) under `config`;
    judged by the pack in `pack_dir` (with the policy config `given`) unless it is None. Raises
    EngineError (the program failed) or PolicyPackError. `progress` is called once per registered
    resource; `stages`, when given, receives the seconds of each stage (program, plan, pack: the
    pack's answers and stack verdict after the program ends), as the bench reports them. `started`
    is the pack's process if the caller started it already (it is stopped here either way).
    `hosted` runs `program` in its own interpreter, as the CLI would; without it the program runs in
    this process."""
    project = program.project if program is not None else PROJECT
    pack = PolicyPack(pack_dir, project=project, stack=stack, config=config, started=started) if pack_dir is not None else None
    stages = {} if stages is None else stages
    try:
        if pack is not None:
            pack.begin(given)

        def registered(resource) -> None:
            if pack is not None:
                [submitted] = from_plan({"resources": [plan_resource(resource)]})
                pack.submit(submitted)
            if progress is not None:
                progress()

        start = time.perf_counter()
        if hosted is not None and program is not None:
            run = run_hosted(program, hosted, config, stack, on_resource=registered)
        else:
            run = run_program(config, stack, on_resource=registered, program=program)
        stages["program"] = time.perf_counter() - start
        if pack is None:
            start = time.perf_counter()
            plan = build_plan(run, project)
            stages["plan"] = time.perf_counter() - start
            return plan
        # The pack judges the stack first: the plan takes the placement it judged by (one simulation).
        start = time.perf_counter()
        entries = plan_entries(run)
        result = pack.finish(from_plan({"resources": entries}))
        write_remediated(entries, result.remediated)  # the plan shows what will be created
        policy = result.as_plan_block()
        stages["pack"] = time.perf_counter() - start
        start = time.perf_counter()
        plan = build_plan(run, project, entries, pack.pack.placement())
        plan["policy"] = policy
        stages["plan"] = time.perf_counter() - start
        return plan
    finally:
        if pack is not None:
            pack.close()
