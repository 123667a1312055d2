"""Runs a Pulumi Python program as the CLI's Python language host does, in the program's own
interpreter and with its own SDK: the settings a language host gives a program (monitor
and engine addresses, project, stack, dry run, config from PULUMI_CONFIG), then the program's
`__main__` inside the SDK's stack. gpufleet serves the monitor and the engine. One setting is
gpufleet's, not the language host's: the cyclic collector runs as in gpufleet's own engine
(--gc-thresholds; engine/collector.py) and is frozen for the teardown, which changes what the
program costs, never what it does. So do the SDK patches a program of one's own gets (--patches:
gpufleet's patch room, whose HOSTED patches each pass their version gate against this interpreter's
packages, and the off switch GPUFLEET_SDK_PATCHES).

This file is run by path with the program's interpreter, so it imports nothing of gpufleet's package:
the patch room is loaded by path, under a name of its own, beside whatever gpufleet the program
itself imports. What gpufleet needs back (the program's own failure, or a missing SDK) it writes as
one JSON object to the file named by --report: the program's stdout and stderr are the program's,
passed to the user. The monitor's address may come on a pipe (--monitor fd:N), written once
gpufleet has opened the port, which it does while the SDK is imported here.
"""

import argparse
import asyncio
import contextlib
import gc
import importlib.util
import json
import logging
import os
import runpy
import sys
import traceback


def _report(path, **fields):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(fields, f)


def _where(err, root):
    """The innermost line of the program's own files in the traceback, or ''."""
    root = os.path.realpath(root)
    frames = [f for f in traceback.extract_tb(err.__traceback__) if os.path.realpath(f.filename).startswith(root + os.sep)]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""


def _patched(room):
    """gpufleet's patches for a program in its own interpreter, applied within; a room that does not
    load here (another Python, another SDK) leaves the SDK as it is, and says so: slower, never
    another plan."""
    stack = contextlib.ExitStack()
    try:
        spec = importlib.util.spec_from_file_location(
            "_gpufleet_patches", os.path.join(room, "__init__.py"), submodule_search_locations=[room]
        )
        patches = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = patches  # its dataclasses and `import_module` of its patches find it there
        spec.loader.exec_module(patches)
        stack.enter_context(patches.applied(patches.HOSTED))
    except Exception as err:  # noqa: BLE001 - speed only: the program runs either way
        stack.close()
        sys.stderr.write(
            f"gpufleet: the SDK runs as it is for this program: gpufleet's patches do not load in {sys.executable} ({type(err).__name__}: {err})\n"
        )
        return contextlib.nullcontext()
    return stack


def main():
    ap = argparse.ArgumentParser()
    for flag in ("--monitor", "--engine", "--project", "--stack", "--organization", "--pwd", "--report", "--root"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--search-path", help="where to write the program's sys.path (gpufleet reads its provider SDKs' output types there)")
    ap.add_argument("--gc-thresholds", help="the cyclic collector's thresholds while the program runs, as gpufleet's own engine sets them")
    ap.add_argument("--patches", help="gpufleet's patch room (engine/patches), applied around the program")
    ap.add_argument("program")
    args = ap.parse_args()
    if args.gc_thresholds:
        # Without it, the collector's full passes walk every class the provider SDKs define as their
        # service packages are imported: measured on the ecs-gpu stack, the interpreter's CPU went
        # from 1.6 to 1.3 s.
        gc.set_threshold(*(int(n) for n in args.gc_thresholds.split(",")))
    try:
        import pulumi
        import pulumi.runtime
    except ImportError as err:
        _report(args.report, kind="no-sdk", message=f"{type(err).__name__}: {err}", python=sys.executable)
        return 3

    if args.monitor.startswith("fd:"):  # the port is opened while the SDK is imported: its address comes once open
        with os.fdopen(int(args.monitor[3:]), encoding="utf-8") as told:
            args.monitor = args.engine = told.readline().strip()
        if not args.monitor:  # gpufleet stopped before it served the port; it stops this process too
            return 3
    secret_keys = getattr(pulumi.runtime, "get_config_secret_keys_env", lambda: None)()
    pulumi.runtime.set_all_config(pulumi.runtime.get_config_env(), secret_keys)
    pulumi.runtime.configure(
        pulumi.runtime.Settings(
            monitor=args.monitor,
            engine=args.engine,
            project=args.project,
            stack=args.stack,
            parallel=os.cpu_count() or 1,
            dry_run=True,
            organization=args.organization,
        )
    )
    sys.argv = [args.program]
    os.chdir(args.pwd)
    if args.search_path:
        with open(args.search_path, "w", encoding="utf-8") as f:
            json.dump([os.path.dirname(os.path.abspath(args.program)), *sys.path], f)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    # As the language host does: the SDK leaves futures unobserved on purpose when a program fails.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    try:
        with _patched(args.patches) if args.patches else contextlib.nullcontext():
            loop.run_until_complete(pulumi.runtime.run_in_stack(lambda: runpy.run_path(args.program, run_name="__main__")))
    except BaseException as err:  # noqa: BLE001 - the program's own failure, reported to gpufleet
        cause, seen = err, set()
        while id(cause) not in seen:  # the root cause, as Python would print the chain
            seen.add(id(cause))
            nxt = cause.__cause__ or (None if cause.__suppress_context__ else cause.__context__)
            if nxt is None:
                break
            cause = nxt
        _report(
            args.report,
            kind="raised",
            type=type(cause).__name__,
            message=str(cause),
            where=_where(cause, args.root) or _where(err, args.root),
        )
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    _report(args.report, kind="ok")
    return 0


if __name__ == "__main__":
    code = main()
    # The program has ended and reported. What is left is the interpreter's teardown, whose last
    # collections walk every object the SDKs made: 0.8 to 1 s on a loaded host for pulumi_aws's
    # ec2, eks and iam alone, 0.04 s frozen. Frozen objects are still released as the modules are
    # cleared; the threads' joins and the exit handlers run as always (Python never promised a
    # finalizer to an object left in a cycle at exit).
    gc.freeze()
    sys.exit(code)
