"""Preview many stacks in one run (`gpufleet preview STACK STACK…`, `--all`, `--shard K/N`): worker
processes sized to the machine's cores, each importing gpufleet once, starting gpufleet's pack once
(analyzer/pack_process.py: a session of its own per stack) and previewing many stacks; one report
per stack in the order given, a summary, and the worst exit code."""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import multiprocessing
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING

from gpufleet import process_groups
from gpufleet.analyzer import pack_process
from gpufleet.cli import progress
from gpufleet.cli.output import InputError, print_json, write

if TYPE_CHECKING:
    from multiprocessing.connection import Connection


def parse_shard(text: str) -> tuple[int, int]:
    """K/N, 1 <= K <= N: the K-th of N shards."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise InputError(f"--shard {text!r}: give K/N, e.g. 2/4") from None
    if not 1 <= k <= n:
        raise InputError(f"--shard {text!r}: K must be 1..N")
    return k, n


def select(names: list[str], shard: str | None) -> list[str]:
    """The stacks of the shard: every N-th of the sorted names from the K-th, so the N shards are
    disjoint and cover every stack, whatever order the names came in."""
    names = sorted(set(names))
    if shard is None:
        return names
    k, n = parse_shard(shard)
    return names[k - 1 :: n]


def _worker_started(line: Connection) -> None:
    """A worker's start: it ends once gpufleet's line closes, and keeps its pack for stack after stack until it exits."""
    process_groups.ended_with_parent(line)
    kept = contextlib.ExitStack()
    kept.enter_context(pack_process.kept_running())
    # A spawned worker leaves through sys.exit, which runs what atexit holds.
    atexit.register(kept.close)


def _one(command: Callable[[list[str]], int], name: str, flags: list[str]) -> tuple[int, str, str]:
    """One stack's preview in this process, its output captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = command(["preview", name, *flags])
    return code, out.getvalue(), err.getvalue()


def _in_workers(
    command: Callable[[list[str]], int], names: list[str], flags: list[str], workers: int, done: Callable[[], None]
) -> list[tuple[int, str, str]]:
    # spawn, not fork: the engine and the pack client run gRPC threads, which fork does not copy.
    with process_groups.workers_line() as line:
        pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_started, initargs=(line,)
        )
        try:
            futures = [pool.submit(_one, command, name, flags) for name in names]
            for _ in as_completed(futures):
                done()
            results = [f.result() for f in futures]
        except BaseException:
            # Stopped (a signal) or a failure: the previews running are not waited for; the line
            # closes (a signal closed it already), and each worker ends itself and what it started.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()  # the workers leave by the pool's own way out, their kept packs stopped first
    return results


def run(command: Callable[[list[str]], int], names: list[str], flags: list[str], jobs: int, as_json: bool) -> int:
    """`command` is the CLI's own entry (a module-level function, so a spawned worker can import it)."""
    if not names:
        raise InputError("no stacks to preview (the shard is empty, or stacks/ has none)")
    workers = max(1, min(jobs, len(names)))
    with progress.stacks(len(names)) as done:
        if workers == 1:
            results = []
            with pack_process.kept_running():
                for name in names:
                    results.append(_one(command, name, flags))
                    done()
        else:
            results = _in_workers(command, names, flags, workers, done)
    codes = {name: code for name, (code, _, _) in zip(names, results)}
    if as_json:
        plans = {
            name: (json.loads(out) if code in (0, 1) and out.strip() else {"error": err.strip()})
            for name, (code, out, err) in zip(names, results)
        }
        print_json({"stacks": plans, "exitCodes": codes})
    else:
        for name, (code, out, err) in zip(names, results):
            write(f"==> {name} (exit {code})\n{out}")
            if err:
                sys.stderr.write(err)
        worst = max(codes.values())
        write(f"==> {len(names)} stacks: " + ", ".join(f"{name} {code}" for name, code in codes.items()) + f"; worst exit {worst}\n")
    return max(codes.values())
