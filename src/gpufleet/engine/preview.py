"""An offline preview as `pulumi preview --policy-pack` runs one: the pack starts with the program,
analyses each resource as it registers, and judges the stack once the program ends. The CLI and the
bench both call this, so the bench measures what `gpufleet preview` does."""

from __future__ import annotations

import contextlib
import importlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gpufleet.engine import PROJECT
from gpufleet.engine.program_host import Hosting, Started
from gpufleet.engine.recorded import Program, RecordedResource

if TYPE_CHECKING:
    from gpufleet.analyzer.client import PolicyPack
    from gpufleet.analyzer.pack_process import PackProcess
    from gpufleet.analyzer.policy_config import PolicyConfig

# What the plan is built with once the program ends: imported while a hosted program runs, where
# the program's own interpreter does the program's work (about half a second of gpufleet's start).
_PLAN_MODULES = "gpufleet.engine.plan"


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
    stages = {} if stages is None else stages
    # A program of one's own starts before the pack: its interpreter's start and its SDK's import
    # are the preview's longest path; the pack starts meanwhile.
    start = time.perf_counter()
    launched = Started(program, hosted, config, stack) if hosted is not None and program is not None else None
    with launched or contextlib.nullcontext():
        pack = _pack(pack_dir, project, stack, config, started)
        try:
            submit = _submitter(pack) if pack is not None else None
            if pack is not None:
                pack.begin(given)

            def registered(resource: RecordedResource) -> None:
                if submit is not None:
                    submit(resource)
                if progress is not None:
                    progress()

            if launched is not None:
                run = launched.run(on_resource=registered, meanwhile=lambda: importlib.import_module(_PLAN_MODULES))
            else:
                start = time.perf_counter()
                from gpufleet.engine.runtime import run_program

                run = run_program(config, stack, on_resource=registered, program=program)
            stages["program"] = time.perf_counter() - start
            from gpufleet.engine.plan import build_plan, plan_entries

            if pack is None:
                start = time.perf_counter()
                plan = build_plan(run, project)
                stages["plan"] = time.perf_counter() - start
                return plan
            from gpufleet.plans.index import from_plan, write_remediated

            # The pack judges the stack first: the plan takes the placement it judged by (one simulation).
            start = time.perf_counter()
            entries = plan_entries(run)
            typed = from_plan({"resources": entries})
            result = pack.finish(typed)
            placement = pack.pack.placement()
            # Done with: its process and its relay end (or, kept, wait for the next stack) before the
            # plan is built, while gpufleet's own process still grows (the process tree's peak RSS
            # at bench/cdk.py's N=1: 282 MB when they ended after the plan, 272 MB ended here).
            pack.close()
            if result.remediated:  # the plan shows what will be created, read again from the entries
                write_remediated(entries, result.remediated)
                typed = from_plan({"resources": entries})
            policy = result.as_plan_block()
            stages["pack"] = time.perf_counter() - start
            start = time.perf_counter()
            plan = build_plan(run, project, entries, placement, typed)
            plan["policy"] = policy
            stages["plan"] = time.perf_counter() - start
            return plan
        finally:
            if pack is not None:
                pack.close()


def _pack(pack_dir: Path | None, project: str, stack: str, config: dict[str, str], started: PackProcess | None) -> PolicyPack | None:
    if pack_dir is None:
        return None
    from gpufleet.analyzer.client import PolicyPack

    return PolicyPack(pack_dir, project=project, stack=stack, config=config, started=started)


def _submitter(pack: PolicyPack) -> Callable[[RecordedResource], None]:
    """The pack analyses each resource as it registers, as `pulumi preview --policy-pack` does."""
    from gpufleet.engine.plan import plan_resource
    from gpufleet.plans.index import from_plan

    def submit(resource: RecordedResource) -> None:
        [submitted] = from_plan({"resources": [plan_resource(resource)]})
        pack.submit(submitted)

    return submit
