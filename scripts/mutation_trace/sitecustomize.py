"""Put first on PYTHONPATH by scripts/mutation_runner.py for its traced unmutated run only: every
Python process a test starts (a policy pack, the CLI, a worker of `preview --all`) records which
lines of the module under mutation it runs, and for which test. The runner writes the running test's
tag into a shared page before each test and fixture; a pack started once for a whole session thus
still tells which test made it run a line. Lines are written as they are first seen, so a process
that is terminated (as packs are) has already said everything."""

import os

_SPEC = os.environ.get("GPUFLEET_MUTATION_TRACE")
if _SPEC:
    import json
    import mmap
    import sys
    import threading

    _config = json.loads(_SPEC)
    _real = _config["file"]
    with open(_config["tag"], "rb") as _fh:
        _page = mmap.mmap(_fh.fileno(), 64, access=mmap.ACCESS_READ)
    _out = os.open(os.path.join(_config["out"], str(os.getpid())), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    _files: dict = {}
    _seen: set = set()

    def _note(line: int) -> None:
        key = (_page[:64], line)
        if key not in _seen:
            _seen.add(key)
            os.write(_out, b"L %s %d\n" % (key[0].rstrip(b"\0"), line))

    def _local(frame, event, arg):
        if event == "line":
            _note(frame.f_lineno)
        return _local

    def _global(frame, event, arg):
        name = frame.f_code.co_filename
        ours = _files.get(name)
        if ours is None:
            ours = _files[name] = os.path.realpath(name) == _real
        if not ours:
            return None
        _note(frame.f_lineno)
        return _local

    # The tag when the process was started (a pack is started by a fixture and may read the page
    # only once that fixture has returned): the runner puts it in the environment too.
    os.write(_out, b"S %s\n" % os.environ.get("GPUFLEET_MUTATION_TAG", "").encode())
    sys.settrace(_global)
    threading.settrace(_global)
