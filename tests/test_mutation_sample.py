"""A fixed, seeded sample of mutants of the rule modules must all be killed (scripts/mutation.py runs
the full set; this sample keeps CI within minutes). Mutants are applied in place, one at a time, and
cosmic-ray restores each file before the next."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from tests.conftest import ROOT

SAMPLE = ["--module", "ecs_gpu_sharing", "--module", "managed_instances", "--sample", "5", "--seed", "2026"]


def _digests() -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((ROOT / "components").rglob("*.py"))}


def test_the_seeded_sample_of_mutants_is_killed():
    before = _digests()
    run = subprocess.run([sys.executable, "scripts/mutation.py", *SAMPLE], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ecs_gpu_sharing: 5/5 killed" in run.stdout and "managed_instances: 5/5 killed" in run.stdout
    assert _digests() == before, "a mutant was left in place"
