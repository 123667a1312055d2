"""gpufleet.library: one flat import of every component, each platform's module imported only when
one of its names is used, so a program of one cloud does not load the others' provider SDKs."""

from __future__ import annotations

import importlib
import json

import pytest

import gpufleet.library as library
from tests.conftest import fresh_python

_LOADED = """
import json, sys
from gpufleet.library import EksFleet, NodeGroupArgs
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("pulumi_alicloud", "pulumi_gcp", "pulumi_azure", "pulumi_aws"))))
"""


def test_an_eks_program_imports_no_other_clouds_sdk():
    run = fresh_python(_LOADED)
    assert run.returncode == 0, run.stderr
    loaded = {m.split(".")[0] for m in json.loads(run.stdout)}
    assert loaded == {"pulumi_aws"}


@pytest.mark.parametrize("name", library.__all__)
def test_each_name_is_its_platform_modules_own(name):
    platform = library._modules()[name]
    assert getattr(library, name) is getattr(importlib.import_module(f"gpufleet.library.{platform}"), name)


def test_the_reexports_are_the_listed_names_and_an_unknown_one_is_refused():
    assert set(library._modules()) == set(library.__all__)
    with pytest.raises(AttributeError, match="no attribute 'EksFleets'"):
        _ = library.EksFleets
