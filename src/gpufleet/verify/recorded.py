"""A recorded fleet (`gpufleet verify --from DIR`): the JSON that `kubectl get nodes,pods,daemonsets
-A -o json`, `aws ecs describe-container-instances` and `aws ecs describe-tasks` print, and the NCCL
launcher's log (`kubectl logs`), one file each. Markdown files (a recording's SOURCE.md) are notes."""

from __future__ import annotations

import json
from pathlib import Path

from gpufleet.verify.fleet import EcsFleet, KubeFleet, Observed
from gpufleet.verify.verdict import BadInput

KINDS = ("Node", "Pod", "DaemonSet")
LOGS = (".log", ".txt")
MOST_BYTES = 256 * 1024 * 1024  # a recording larger than this is refused, not read into memory
EXPECTED = (
    "the JSON of `kubectl get nodes,pods,daemonsets -A -o json` (a List of Node, Pod and DaemonSet objects), "
    "of `aws ecs describe-container-instances` or `aws ecs describe-tasks`, or an NCCL launcher log (*.log, *.txt)"
)


def read(folder: Path) -> Observed:
    if not folder.is_dir():
        raise BadInput(f"--from {folder}: not a folder (expected a folder holding {EXPECTED})")
    kube: dict[str, list[dict]] = {}
    ecs: dict[str, list[dict]] = {}
    observed = Observed(where=f"recorded {folder}")
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix != ".md")
    if not files:
        raise BadInput(f"--from {folder}: no recording in it (expected {EXPECTED})")
    for path in files:
        if path.stat().st_size > MOST_BYTES:
            raise BadInput(f"{path}: {path.stat().st_size} bytes, more than a recording verify reads ({MOST_BYTES})")
        if path.suffix in LOGS:
            if observed.nccl_log is not None:
                raise BadInput(f"{path}: a second log (first: {observed.nccl_log_source}); expected one NCCL launcher log")
            observed.nccl_log = path.read_text(errors="replace")
            observed.nccl_log_source = str(path)
        elif path.suffix == ".json":
            _read_json(path, kube, ecs, observed)
        else:
            raise BadInput(f"{path}: not a recording verify reads (expected {EXPECTED})")
    if kube:
        observed.kube = KubeFleet(kube.get("Node"), kube.get("Pod"), kube.get("DaemonSet"))
    if ecs:
        observed.ecs = EcsFleet(ecs.get("containerInstances"), ecs.get("tasks"))
    return observed


def _read_json(path: Path, kube: dict, ecs: dict, observed: Observed) -> None:
    try:
        document = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as err:
        raise BadInput(f"{path}: not JSON ({err}); expected {EXPECTED}") from None
    if not isinstance(document, dict):
        raise BadInput(f"{path}: a JSON {type(document).__name__}, expected {EXPECTED}")
    kind = document.get("kind")
    if isinstance(document.get("items"), list) and isinstance(kind, str) and kind.endswith("List"):
        listed = kind.removesuffix("List") or None  # NodeList's items carry no kind; a List's do
        ignored: dict[str, int] = {}
        for item in document["items"]:
            item_kind = item.get("kind", listed) if isinstance(item, dict) else None
            if item_kind in KINDS:
                kube.setdefault(item_kind, []).append(item)
            else:
                ignored[str(item_kind)] = ignored.get(str(item_kind), 0) + 1
        if ignored:
            observed.gaps.append(f"{path.name}: not compared: " + ", ".join(f"{n} {k}" for k, n in sorted(ignored.items())))
        return
    if kind in KINDS:
        kube.setdefault(kind, []).append(document)
        return
    for key in ("containerInstances", "tasks"):
        if isinstance(document.get(key), list):
            ecs.setdefault(key, []).extend(document[key])
            return
    what = f"a {kind} object" if isinstance(kind, str) else f"a JSON object with keys {', '.join(sorted(document)[:6]) or 'none'}"
    raise BadInput(f"{path}: {what}, not a recording verify reads; expected {EXPECTED}")
