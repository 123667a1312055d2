"""A recorded fleet (`gpufleet verify --from DIR`): the JSON that `kubectl get nodes,pods,daemonsets
-A -o json`, `kubectl get resourceslices -o json`, `kubectl get resourceclaims -A -o json`, `aws ecs
describe-container-instances` and `aws ecs describe-tasks` print, and the NCCL launcher's log
(`kubectl logs`), one file each. Markdown files (a recording's SOURCE.md) are notes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from gpufleet.catalog import bounds
from gpufleet.verify import dra_checks, shapes
from gpufleet.verify.fleet import EcsFleet, KubeFleet, Observed
from gpufleet.verify.verdict import BadInput

KINDS = ("Node", "Pod", "DaemonSet", *dra_checks.KINDS)
_LISTED = {"containerInstances": "container-instances", "tasks": "tasks"}
LOGS = (".log", ".txt")
MOST_BYTES = 256 * 1024 * 1024  # a recording larger than this is refused, not read into memory
# Arrays and objects in one recording: kubectl's JSON of a large cluster writes hundreds of bytes of
# text per object, so MOST_BYTES of it holds fewer than this; at about 60 bytes each in Python, the
# bound keeps a parsed recording under about 250 MB.
MOST_CONTAINERS = 4_000_000
EXPECTED = (
    "the JSON of `kubectl get nodes,pods,daemonsets -A -o json` (a List of Node, Pod and DaemonSet objects), "
    "of `kubectl get resourceslices -o json` or `kubectl get resourceclaims -A -o json` (resource.k8s.io/v1), "
    "of `aws ecs describe-container-instances` or `aws ecs describe-tasks`, or an NCCL launcher log (*.log, *.txt)"
)


def read(folder: Path) -> Observed:
    if not folder.is_dir():
        raise BadInput(f"--from {folder}: not a folder (expected a folder holding {EXPECTED})")
    kube: dict[str, list] = {}  # Kubernetes objects by kind (ResourceSlices read into records)
    ecs: dict[str, list[dict]] = {}
    observed = Observed(where=f"recorded {folder}")
    files = [p for p in _entries(folder) if p.suffix != ".md"]
    if not files:
        raise BadInput(f"--from {folder}: no recording in it (expected {EXPECTED})")
    for path in files:
        if path.suffix in LOGS:
            if observed.nccl_log is not None:
                raise BadInput(f"{path}: a second log (first: {observed.nccl_log_source}); expected one NCCL launcher log")
            observed.nccl_log = _read_bytes(path).decode("utf-8", errors="replace")
            observed.nccl_log_source = str(path)
        elif path.suffix == ".json":
            _read_json(path, kube, ecs, observed)
        else:
            raise BadInput(f"{path}: not a recording verify reads (expected {EXPECTED})")
    if kube:
        observed.kube = KubeFleet(
            kube.get("Node"), kube.get("Pod"), kube.get("DaemonSet"), kube.get("ResourceSlice"), kube.get("ResourceClaim")
        )
    if ecs:
        observed.ecs = EcsFleet(ecs.get("containerInstances"), ecs.get("tasks"))
    return observed


def _entries(folder: Path) -> list[Path]:
    """The folder's regular files (a symlink to one included), sorted. Everything else is refused,
    all of it in one error naming each entry and why: a recording skipped in silence would leave the
    verdict resting on less than the folder seems to hold."""
    try:
        entries = sorted(folder.iterdir())
    except OSError as err:
        raise BadInput(f"--from {folder}: cannot be listed ({err.strerror})") from None
    refused = [f"{path} is {why}" for path in entries if (why := _not_read(path)) is not None]
    if refused:
        raise BadInput(f"--from {folder}: " + "; ".join(refused) + "; verify reads the regular files in the folder itself")
    return entries


# What stat's file types are called in the refusal; a regular file is read and a folder has its own words.
_SPECIAL = {
    stat.S_ISFIFO: "a FIFO (named pipe)",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


def _not_read(path: Path) -> str | None:
    """Why verify will not read the entry, or None. Only stat is asked (never open), so a FIFO
    cannot block the read."""
    try:
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            target = os.readlink(path)
            try:
                mode = path.stat().st_mode
            except OSError as err:
                return f"a symlink to {target}, which cannot be followed ({err.strerror})"
            why = _kind(mode)
            return None if why is None else f"a symlink to {target}, {why}"
    except OSError as err:
        return f"not readable ({err.strerror})"
    return _kind(mode)


def _kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder: verify does not descend into folders"
    named = next((name for test, name in _SPECIAL.items() if test(mode)), "a special file")
    return f"{named}, not a regular file"


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, at most MOST_BYTES. Opened without blocking and checked again on the open
    file: what was a regular file when listed may have been replaced by a FIFO since."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        raise BadInput(f"{path}: cannot be read ({err.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        why = _kind(info.st_mode)
        if why is not None:
            raise BadInput(f"{path}: {why}; verify reads regular files")
        if info.st_size > MOST_BYTES:
            raise BadInput(f"{path}: {info.st_size} bytes, more than a recording verify reads ({MOST_BYTES})")
        data = f.read(MOST_BYTES + 1)  # one byte more tells a file that grew since
    if len(data) > MOST_BYTES:
        raise BadInput(f"{path}: more than {MOST_BYTES} bytes, more than a recording verify reads")
    return data


def take(kind: str, item: dict, where: str, kube: dict) -> None:
    """One object read (recorded or live), its shape checked; a ResourceSlice read by the
    allocator's parser."""
    shapes.check(kind, item, where)
    kube.setdefault(kind, []).append(dra_checks.read_slice(item, where) if kind == "ResourceSlice" else item)


def _read_json(path: Path, kube: dict, ecs: dict, observed: Observed) -> None:
    data = _read_bytes(path)
    # Each JSON array or object costs Python about 60 bytes or more: a file of empty lists under the
    # size bound would take gigabytes. Counting the brackets (those in strings too) bounds them first.
    containers = data.count(b"[") + data.count(b"{")
    if containers > MOST_CONTAINERS:
        raise BadInput(f"{path}: {containers} JSON arrays and objects, more than a recording verify reads ({MOST_CONTAINERS})")
    try:
        document = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise BadInput(f"{path}: not JSON ({err}); expected {EXPECTED}") from None
    except RecursionError:
        raise BadInput(f"{path}: JSON nested more deeply than a recording is; expected {EXPECTED}") from None
    if not isinstance(document, dict):
        raise BadInput(f"{path}: a JSON {type(document).__name__}, expected {EXPECTED}")
    if bounds.depth(document) > bounds.MAX_DEPTH:
        raise BadInput(f"{path}: JSON nested more than {bounds.MAX_DEPTH} deep, the bound a plan has too")
    kind = document.get("kind")
    if isinstance(document.get("items"), list) and isinstance(kind, str) and kind.endswith("List"):
        listed = kind.removesuffix("List") or None  # NodeList's items carry no kind; a List's do
        if listed in KINDS:
            kube.setdefault(listed, [])  # the API's own list of a kind, empty: read, and none there
        ignored: dict[str, int] = {}
        for i, item in enumerate(document["items"]):
            item_kind = item.get("kind", listed) if isinstance(item, dict) else None
            unread = dra_checks.unread_version(item_kind, item)
            if item_kind in KINDS and unread is None:
                take(item_kind, item, f"{path}: items[{i}]", kube)
            else:
                key = f"{item_kind} ({unread})" if unread else str(item_kind)
                ignored[key] = ignored.get(key, 0) + 1
        if ignored:
            observed.gaps.append(f"{path.name}: not compared: " + ", ".join(f"{n} {k}" for k, n in sorted(ignored.items())))
        return
    if kind in KINDS:
        unread = dra_checks.unread_version(kind, document)
        if unread is not None:
            observed.gaps.append(f"{path.name}: not compared: 1 {kind} ({unread})")
            return
        take(kind, document, str(path), kube)
        return
    for key, listing in (("containerInstanceArns", "list-container-instances"), ("taskArns", "list-tasks")):
        if key in document:
            raise BadInput(
                f"{path}: the output of `aws ecs {listing}` ({key}: ARNs, not the objects); verify reads "
                f"`aws ecs {listing.replace('list-', 'describe-')}` of those ARNs"
            )
    for key in ("containerInstances", "tasks"):
        if isinstance(document.get(key), list):
            for i, item in enumerate(document[key]):
                if isinstance(item, str):  # what the list-* commands print, in the describe-* field
                    raise BadInput(
                        f"{path}: {key}[{i}] is the string {item[:120]!r}, an ARN, not the object `aws ecs describe-{_LISTED[key]}` prints"
                    )
                shapes.check(key, item, f"{path}: {key}[{i}]")
            ecs.setdefault(key, []).extend(document[key])
            return
    what = f"a {kind} object" if isinstance(kind, str) else f"a JSON object with keys {', '.join(sorted(document)[:6]) or 'none'}"
    raise BadInput(f"{path}: {what}, not a recording verify reads; expected {EXPECTED}")
