"""Which Azure provider SDK to depend on: pulumi-azure (classic) against pulumi-azure-native, measured
in one run on this machine. Each wheel is downloaded, then installed alone (no dependencies: both
need only the Pulumi SDK this environment has) into a fresh virtualenv; the script prints install
seconds, installed size and the import time of its containerservice module, and the ratios.

    python bench/provider_sdks.py          # needs the package index (pip download)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

SDKS = {"pulumi-azure==6.40.1": "pulumi_azure.containerservice", "pulumi-azure-native==3.29.0": "pulumi_azure_native.containerservice"}


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(requirement: str, module: str, work: Path) -> dict:
    wheels = work / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), requirement], check=True)
    wheel = next(wheels.glob(requirement.split("==")[0].replace("-", "_") + "-*.whl"))
    env = work / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    site = next((env / "lib").glob("python*/site-packages"))
    before = _size(site)
    # The Pulumi SDK and the rest come from this environment (after the venv's own packages on sys.path,
    # so the SDK installed here, not a copy of this environment's, is the one imported).
    (site / "base.pth").write_text("\n".join(p for p in sys.path if p.endswith("site-packages")))
    start = time.perf_counter()
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", str(wheel)], check=True)
    seconds = time.perf_counter() - start
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    imports = [float(subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout) for _ in range(3)]
    return {"install_s": seconds, "size_mb": (_size(site) - before) / 1e6, "import_s": statistics.median(imports)}


def main() -> None:
    results = {}
    for requirement, module in SDKS.items():
        with tempfile.TemporaryDirectory() as tmp:
            results[requirement] = measure(requirement, module, Path(tmp))
    print(f"{'sdk':32} {'install s':>10} {'size MB':>9} {'import s':>9}")
    for requirement, r in results.items():
        print(f"{requirement:32} {r['install_s']:10.1f} {r['size_mb']:9.0f} {r['import_s']:9.3f}")
    classic, native = results.values()
    print(
        f"native / classic: install {native['install_s'] / classic['install_s']:.2f}x, "
        f"size {native['size_mb'] / classic['size_mb']:.2f}x, import {native['import_s'] / classic['import_s']:.2f}x"
    )


if __name__ == "__main__":
    main()
