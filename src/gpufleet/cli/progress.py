"""Progress a person can see: on a terminal, a preview draws on stderr how many resources have
registered (one stack) or how many stacks are done (several), with rich's progress display, and
clears it when done. Without a terminal nothing is drawn; stdout is never touched."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from rich.console import Console

# rich.progress is imported only on a terminal (cold start: about 20 ms that a pipe never uses).


def _terminal() -> Console | None:
    console = Console(file=sys.stderr)
    return console if console.is_terminal else None


@contextlib.contextmanager
def resources(stack: str) -> Iterator[Callable[[], None] | None]:
    """A callback to call once per registered resource (None without a terminal)."""
    console = _terminal()
    if console is None:
        yield None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn(f"preview {stack}:"), TextColumn("{task.completed} resources registered"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(stack, total=None)
        yield lambda: progress.advance(task)


@contextlib.contextmanager
def stacks(count: int) -> Iterator[Callable[[], None]]:
    """A callback to call once per finished stack (a no-op without a terminal)."""
    console = _terminal()
    if console is None:
        yield lambda: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("stacks"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("stacks", total=count)
        yield lambda: progress.advance(task)


@contextlib.contextmanager
def downloads() -> Iterator[Callable[[str, int, int | None], None]]:
    """A callback (what is read, bytes so far, bytes in all if known) for long downloads: on a terminal
    a bar per download; without one, a line on stderr as each download starts (a log shows what the
    update waited on)."""
    console = _terminal()
    started: set[str] = set()
    if console is None:

        def said(label: str, done: int, total: int | None) -> None:
            if label not in started:
                started.add(label)
                print(f"reading {label}", file=sys.stderr)

        yield said
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn, TransferSpeedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        tasks: dict[str, object] = {}

        def shown(label: str, done: int, total: int | None) -> None:
            if label not in tasks:
                tasks[label] = progress.add_task("/".join(label.split("?")[0].split("/")[-2:]), total=total)
            progress.update(tasks[label], completed=done)  # type: ignore[arg-type]

        yield shown
