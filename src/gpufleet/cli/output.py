"""What every command shares: exit codes, the one-message input error, writing to a stdout whose
reader may go away, and the policy pack options read before anything slow starts."""

from __future__ import annotations

import json
import os
import sys

from gpufleet.errors import InputError  # noqa: F401 - the commands raise it from here

EXIT_OK, EXIT_VIOLATION, EXIT_INVALID, EXIT_CHANGED, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_NOT_PROVEN = 5  # `verify` only: something the plan holds could not be judged (design.md)
REPORT_TO = "the gpufleet issue tracker, with the command you ran"


def write(text: str) -> None:
    """Write to stdout; a reader that went away (`gpufleet preview --json | head`) is not an error:
    the rest of the output goes nowhere and the command still ends with its verdict's exit code."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()


def silence_stdout() -> None:
    # Python flushes stdout again at exit: point it at /dev/null so that flush cannot fail either.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def console():
    """A rich Console that, when stdout's reader goes away, goes quiet instead of exiting with 1
    (rich's default, and the code CI reads as a mandatory violation)."""
    from rich.console import Console

    class QuietOnBrokenPipe(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            silence_stdout()

    return QuietOnBrokenPipe()


def print_json(document, sort_keys: bool = True) -> None:
    # NaN and Infinity are no JSON tokens (RFC 8259 section 6): a reader such as jq refuses them,
    # so one reaching a document is a bug to report (exit 4), never a document to print.
    write(json.dumps(document, indent=2, sort_keys=sort_keys, allow_nan=False) + "\n")


def policy_inputs(args):
    """The pack directory and the parsed config file, checked before anything slow starts."""
    from gpufleet.analyzer.pack_dir import DEFAULT_PACK, read_pack_manifest
    from gpufleet.analyzer.policy_config import load_file

    pack_dir = args.policy_pack or DEFAULT_PACK
    read_pack_manifest(pack_dir)
    given = load_file(args.policy_config) if args.policy_config else {}
    return pack_dir, given


def exit_for(policy: dict) -> int:
    return EXIT_VIOLATION if any(v["level"] == "mandatory" for v in policy["violations"]) else EXIT_OK
