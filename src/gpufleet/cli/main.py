"""The `gpufleet` command (contract: design.md). Exit codes: 0 done, 1 mandatory policy violation,
2 invalid input (one message naming the field, the value and the rule; never a traceback) or a
policy pack that could not run (fail closed)."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

from gpufleet.cli.output import (
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_OK,
    REPORT_TO,
    InputError,
    console,
    exit_for,
    policy_inputs,
    print_json,
    silence_stdout,
    write,
)
from gpufleet.engine.collector import young_collections_only


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpufleet", description="Accelerated ML compute as typed Pulumi components.")
    sub = parser.add_subparsers(dest="command", required=True)

    preview = sub.add_parser("preview", help="preview a stack offline: resource tree and accelerator summary")
    preview.add_argument("stack", nargs="*", help="stack name(s): stacks/Pulumi.<STACK>.yaml; several are previewed in worker processes")
    preview.add_argument("--all", action="store_true", help="preview every stack of stacks/")
    preview.add_argument("--shard", metavar="K/N", help="with --all or several stacks: only the K-th of N deterministic shards")
    preview.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes for several stacks (default: the cores)")
    preview.add_argument(
        "--stacks-dir",
        type=Path,
        metavar="DIR",
        help="the folder of Pulumi.<STACK>.yaml files that STACK, --all and --shard read (default: gpufleet's shipped stacks/)",
    )
    preview.add_argument("--config-file", type=Path, help="any Pulumi stack config file (instead of STACK)")
    preview.add_argument(
        "--program",
        type=Path,
        metavar="DIR",
        help="a Pulumi Python program of your own (its Pulumi.yaml and, as STACK or the only one there, a stack's config)",
    )
    preview.add_argument(
        "--python",
        type=Path,
        metavar="PATH",
        help="with --program: the interpreter to run it with (default: the virtualenv its Pulumi.yaml names)",
    )
    preview.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="with --program: stop a program that has not finished by then, exit 2 (default: 300)",
    )
    preview.add_argument(
        "--answers",
        type=Path,
        metavar="FILE",
        help='with --program: provider function outputs for given inputs, {"TOKEN": [{"inputs": {...}, "outputs": {...}}]}',
    )
    preview.add_argument("--json", action="store_true", help="print only the JSON plan on stdout")
    preview.add_argument(
        "--format",
        choices=("text", "mermaid"),
        default="text",
        help="mermaid: the fleet as a Mermaid flowchart (clusters, groups, the workloads placed on them)",
    )
    _policy_flags(preview)
    preview.add_argument("--no-policy", action="store_true", help="skip the policy pack")

    check = sub.add_parser("check", help="judge a saved plan (gpufleet's or `pulumi preview --json`) with the policy pack")
    check.add_argument("plan", type=Path, metavar="PLAN.json")
    _policy_flags(check)
    check.add_argument("--json", action="store_true", help="print only the plan's policy block on stdout")

    cat = sub.add_parser("catalog", help="what gpufleet knows of instance types (EC2 data + curated facts)")
    cat.add_argument("instance_types", nargs="*", metavar="INSTANCE_TYPE")
    cat.add_argument("--json", action="store_true", help="print JSON on stdout")

    sub.add_parser("schema", help="JSON Schema of the stack file, for editors")

    diff = sub.add_parser("diff", help="what changes between two plans (gpufleet's or `pulumi preview --json`), for reviewers")
    diff.add_argument("base", type=Path, metavar="BASE.json")
    diff.add_argument(
        "head",
        type=Path,
        metavar="HEAD.json",
        nargs="?",
        help="absent: BASE.json is one `pulumi preview --json` of a deployed stack, read with the engine's verdict per step",
    )
    diff.add_argument("--json", action="store_true", help="print the diff as JSON on stdout")
    diff.add_argument(
        "--format", choices=("text", "markdown"), default="text", help="text for a terminal, markdown for a pull-request comment"
    )
    _policy_flags(diff)

    from gpufleet.cli.verify_command import add_parser as add_verify

    add_verify(sub)
    from gpufleet.cli.prices_command import add_parser as add_prices

    add_prices(sub)
    return parser


def _policy_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy-pack", type=Path, metavar="DIR", help="CrossGuard pack to run (default: the repo's policies/)")
    parser.add_argument(
        "--policy-config", type=Path, metavar="FILE", help="policy config JSON, as `pulumi preview --policy-pack-config` takes"
    )


def _load_stack(args):
    from gpufleet.stack import files as stackfile

    if (args.stack is None) == (args.config_file is None):
        raise InputError("give exactly one of STACK or --config-file PATH")
    if args.config_file is not None and args.stacks_dir is not None:
        raise InputError("--stacks-dir is where STACK is read from: not with --config-file")
    path = stackfile.stack_path(args.stack, _stacks_dir(args)) if args.stack else args.config_file
    return stackfile.load(path, args.stack)


def _stacks_dir(args) -> Path:
    from gpufleet.stack import files as stackfile

    folder = getattr(args, "stacks_dir", None)
    if folder is None:
        return stackfile.STACKS
    if not folder.is_dir():
        raise InputError(f"--stacks-dir {folder}: not a folder")
    return folder


def _spec_error_message(sf, err) -> str:
    lines = [f"{sf.path}: invalid stack config ({len(err.issues)} problem{'s' if len(err.issues) > 1 else ''}):"]
    for issue in err.issues:
        line = sf.line_of(issue.field)
        lines.append(f"  {sf.path}{':' + str(line) if line else ''}: {issue.render()}")
    return "\n".join(lines)


def cmd_preview(args) -> int:
    if args.no_policy and (args.policy_pack or args.policy_config):
        raise InputError("--no-policy skips the pack: it cannot be combined with --policy-pack or --policy-config")
    if args.program is None and (args.python is not None or args.timeout is not None or args.answers is not None):
        raise InputError("--python, --timeout and --answers are for a program of your own: they go with --program DIR")
    many = args.all or args.shard is not None or len(args.stack) > 1
    if many:
        return _preview_many(args)
    args.stack = args.stack[0] if args.stack else None
    if args.program is not None:
        return _preview_program(args)
    sf = _load_stack(args)
    config = sf.pulumi_config()
    pack_dir, given = (None, {}) if args.no_policy else policy_inputs(args)
    _validate_spec(sf, config)  # an invalid spec is exit 2 before any process starts
    # The pack starts before the engine and the program are imported: its own start (about a
    # second) overlaps theirs. It is stopped on every way out.
    started = None if pack_dir is None else _start_pack(pack_dir, sf.stack, config)
    try:
        return _preview_stack(args, sf, config, pack_dir, given, started)
    finally:
        if started is not None:
            started.stop()


def _start_pack(pack_dir: Path, stack: str, config: dict[str, str]):
    from gpufleet.analyzer import pack_process
    from gpufleet.engine import PROJECT

    return pack_process.start(pack_dir, project=PROJECT, stack=stack, config=config)


def _validate_spec(sf, config: dict[str, str]) -> None:
    from gpufleet.stack.spec import SpecError, decode_config, load_spec

    try:
        # The program validates too; doing it here first gives errors their YAML line numbers.
        load_spec(decode_config(config))
    except SpecError as err:
        raise InputError(_spec_error_message(sf, err)) from None


def _preview_stack(args, sf, config: dict[str, str], pack_dir: Path | None, given: dict, started) -> int:
    from gpufleet.cli import progress
    from gpufleet.engine.preview import preview_plan
    from gpufleet.engine.runtime import EngineError

    try:
        with progress.resources(sf.stack) as registered:
            plan = preview_plan(config, sf.stack, pack_dir, given, progress=registered, started=started)
    except EngineError as err:
        raise InputError(f"{sf.path}: offline preview failed: {err}") from None
    return _show_plan(args, plan)


def _preview_many(args) -> int:
    from gpufleet.cli import many
    from gpufleet.stack import files as stackfile

    if args.config_file is not None or args.program is not None:
        raise InputError("several stacks, --all and --shard preview stacks/ by name: not with --config-file or --program")
    if args.all and args.stack:
        raise InputError("give stack names or --all, not both")
    folder = _stacks_dir(args)
    names = many.select(stackfile.stack_names(folder) if args.all else args.stack, args.shard)
    for name in names:
        stackfile.stack_path(name, folder)  # an unknown name is exit 2 before any worker starts
    flags = ["--json"] if args.json else ["--format", args.format]
    if args.stacks_dir is not None:
        flags += ["--stacks-dir", str(folder)]
    if args.no_policy:
        flags.append("--no-policy")
    if args.policy_pack is not None:
        flags += ["--policy-pack", str(args.policy_pack)]
    if args.policy_config is not None:
        flags += ["--policy-config", str(args.policy_config)]
    return many.run(main, names, flags, args.jobs, args.json)


def _show_plan(args, plan: dict) -> int:
    if args.json:
        print_json(plan)
    elif args.format == "mermaid":
        from gpufleet.cli.diagram import fleet

        write(fleet(plan))
    else:
        from gpufleet.cli.report import render_preview

        render_preview(plan, console())
    return exit_for(plan["policy"])


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 1 <= value <= 86_400:  # nan fails too
        raise argparse.ArgumentTypeError(f"{text!r}: a number of seconds from 1 to 86400")
    return value


def _preview_program(args) -> int:
    """A program of one's own under the same engine and pack: its resources are judged as they
    register, as with gpufleet's own program."""
    from gpufleet.engine import user_program
    from gpufleet.engine.answers import load_given
    from gpufleet.engine.preview import preview_plan
    from gpufleet.engine.program_host import DEFAULT_TIMEOUT, Hosting
    from gpufleet.engine.recorded import EngineError  # not runtime's: the in-process engine (the SDK's mocks) is not this path's

    if args.config_file is not None:
        raise InputError("--program reads the program's own stack config: name the stack as STACK, not --config-file")
    loaded = user_program.load(args.program, args.stack, args.python)
    if loaded.interpreter_from.startswith("gpufleet's"):
        print(f"note: the program runs with {loaded.interpreter_from}: {loaded.interpreter}; --python names another", file=sys.stderr)
    pack_dir, given = (None, {}) if args.no_policy else policy_inputs(args)
    try:
        hosting = Hosting(loaded.interpreter, args.timeout or DEFAULT_TIMEOUT, load_given(args.answers) if args.answers else {})
        plan = preview_plan(loaded.config, loaded.stack, pack_dir, given, loaded.program, hosted=hosting)
    except EngineError as err:
        raise InputError(f"{args.program} (stack {loaded.stack}): offline preview failed: {err}") from None
    return _show_plan(args, plan)


def cmd_check(args) -> int:
    from gpufleet.analyzer.client import PolicyPack
    from gpufleet.cli import plan_file

    pack_dir, given = policy_inputs(args)
    saved = plan_file.load(args.plan)
    with PolicyPack(pack_dir, project=saved.project, stack=saved.stack) as pack:
        policy = plan_file.judged(pack, given, saved.resources).as_plan_block()
    if args.json:
        print_json(policy)
    else:
        from gpufleet.cli.report import render_findings

        out = console()
        out.print(f"[bold]{args.plan}[/bold] ({saved.kind}, {len(saved.resources)} resources)", soft_wrap=True)
        render_findings(policy, out)
    return exit_for(policy)


def cmd_catalog(args) -> int:
    from gpufleet.catalog import catalog
    from gpufleet.catalog.catalog import UnknownInstanceType
    from gpufleet.cli.catalog_view import describe, overview

    cat = catalog.load()
    if args.instance_types:
        records = []
        for name in args.instance_types:
            try:
                records.append(describe(cat, cat.get(name)))
            except UnknownInstanceType as err:
                raise InputError(f"INSTANCE_TYPE = {name!r}: {err} [rule: instance-type-known]") from None
    else:
        records = overview(cat)
    if args.json:
        print_json(records)
    else:
        from gpufleet.cli.catalog_view import render

        render(records, cat.source, console())
    return EXIT_OK


def cmd_schema(args) -> int:
    from gpufleet.stack.schema import stack_file_schema

    print_json(stack_file_schema(), sort_keys=False)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    # A command's objects (modules, the spec, the plan) live as long as it runs: the collector's full
    # passes over them are wasted (engine/collector.py); an in-process caller gets it back as it was.
    with young_collections_only():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    from gpufleet import process_groups
    from gpufleet.errors import NotJudged, Stopped
    from gpufleet.rules import lifecycle

    args = _parser().parse_args(argv)
    from gpufleet.cli.diff_command import cmd_diff
    from gpufleet.cli.prices_command import cmd_prices
    from gpufleet.cli.verify_command import cmd_verify

    handler = {
        "preview": cmd_preview,
        "check": cmd_check,
        "catalog": cmd_catalog,
        "schema": cmd_schema,
        "diff": cmd_diff,
        "verify": cmd_verify,
        "prices": cmd_prices,
    }[args.command]
    try:
        lifecycle.today()  # a GPUFLEET_TODAY that is no date stops here, before a worker or the pack reads it
        with process_groups.stopped_on_signals():
            return handler(args)
    except Stopped as stop:
        # design.md's exit codes are the whole contract and hold no 128+N: a preview stopped from
        # outside judged nothing, which fails closed as a program that hangs past --timeout does.
        print(f"error: gpufleet was stopped by {stop.name}; the processes it started were ended; nothing was judged", file=sys.stderr)
        return EXIT_INVALID
    # Bad input, and a pack or program that could not judge (fail closed): one message, exit 2, never
    # "no violations". Every other exception is a bug (exit 4).
    except (InputError, NotJudged) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_INVALID
    except BrokenPipeError:  # stdout closed while a table was printed: quiet
        silence_stdout()
        return EXIT_OK
    except Exception as err:  # noqa: BLE001 - a bug: one line and exit 4, never 1 (a policy verdict to CI)
        return _internal_error(err)


def run() -> None:
    """The `gpufleet` command (and `python -m gpufleet.cli.main`): main(), then the process ends
    without the interpreter's teardown.
    A preview leaves about a hundred MB of SDK objects whose one-by-one release (and the module
    teardown) costs 0.3 s of a 1.4 s cold preview; everything main() started (the policy pack, the
    worker processes) is stopped before it returns, so only the buffered output is left to flush."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # a reader that closed its end: nothing more to say
        pass
    os._exit(code)


def _internal_error(err: BaseException) -> int:
    frame = traceback.extract_tb(err.__traceback__)[-1] if err.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    if os.environ.get("GPUFLEET_DEBUG"):
        traceback.print_exception(err, file=sys.stderr)
    print(
        f"error: internal error in gpufleet ({type(err).__name__}{where}: {err}); please report it to {REPORT_TO} "
        "(GPUFLEET_DEBUG=1 prints the traceback)",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


if __name__ == "__main__":
    run()
