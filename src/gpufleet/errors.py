"""The one exception tree (httpx's `_exceptions.py` is the model): every error gpufleet raises on
purpose derives from GpufleetError, and the CLI tells them apart by these bases alone.

- InputError: the input is invalid (a stack file, a plan, a flag, a recording, a price file): one
  message naming the file or field, the value and the rule; exit 2.
- NotJudged: gpufleet could not judge what it was given (the policy pack did not answer, the
  program could not run offline): it fails closed, exit 2, never a silent pass.
- Anything else derived from GpufleetError is a lookup a caller answers (a provider function with
  no offline answer) or a fault in gpufleet's own data: exit 4 if it ever reaches the CLI.
- Stopped: gpufleet was stopped by a signal (SIGTERM, SIGINT) and ended what it started; exit 2.
"""

from __future__ import annotations

import signal


class GpufleetError(Exception):
    """Every error gpufleet raises on purpose."""


class InputError(GpufleetError, ValueError):
    """Bad input: printed as one message naming the field, the value and the rule; exit 2."""


class NotJudged(GpufleetError, RuntimeError):
    """What was asked could not be judged (the pack or the program did not answer): exit 2, fail closed."""


class Stopped(BaseException):
    """gpufleet was stopped by a signal. A BaseException, as KeyboardInterrupt is, so that no
    `except Exception` on the way up takes it for a failure of what was running."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name
