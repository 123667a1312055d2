"""A create in preview echoes the inputs as outputs, except where the provider's Python SDK types an
output otherwise than its input: there the program's SDK would stop reading the echo (a list where it
declares a map), and `pulumi preview` shows the value unknown; so does the offline engine, and names it."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.engine.output_types import OutputTypes
from tests.conftest import prepared, run_cli
from tests.engine.test_program_host import _program

# A provider SDK in the shape the Pulumi codegen writes (azure-native's ManagedCluster identity, cut
# down): `identity.userAssignedIdentities` a list of ids going in, a map coming out.
SDK = {
    "pulumi-plugin.json": '{"resource": true, "name": "fakecloud", "version": "1.0.0"}',
    "__init__.py": '''
        def _register(resource_modules):
            pass

        _register(resource_modules="""[{"pkg": "fakecloud", "mod": "compute", "fqn": "pulumi_fakecloud.compute", "classes": {"fakecloud:compute:Cluster": "Cluster"}}]""")
    ''',
    "compute/__init__.py": "from .cluster import *\n",
    "compute/_enums.py": "from enum import Enum\n\nclass IdentityType(str, Enum):\n    USER_ASSIGNED = 'UserAssigned'\n",
    "compute/cluster.py": """
        import builtins as _builtins
        import pulumi
        from typing import Any, Mapping, Optional, Sequence
        from . import outputs


        class Cluster(pulumi.CustomResource):
            def __init__(__self__, resource_name, identity=None, tags=None, opts=None):
                super().__init__("fakecloud:compute:Cluster", resource_name, {"identity": identity, "tags": tags, "name": None}, opts)

            @_builtins.property
            @pulumi.getter
            def identity(self) -> pulumi.Output[Optional['outputs.ClusterIdentityResponse']]:
                return pulumi.get(self, "identity")

            @_builtins.property
            @pulumi.getter
            def tags(self) -> pulumi.Output[Optional[Mapping[str, _builtins.str]]]:
                return pulumi.get(self, "tags")

            @_builtins.property
            @pulumi.getter
            def name(self) -> pulumi.Output[_builtins.str]:
                return pulumi.get(self, "name")
    """,
    "compute/outputs.py": """
        import builtins as _builtins
        import pulumi
        from typing import Any, Mapping, Optional, Sequence
        from . import outputs
        from ._enums import *


        @pulumi.output_type
        class ClusterIdentityResponse(dict):
            def __init__(__self__, *, type: _builtins.str, user_assigned_identities: Optional[Mapping[str, 'outputs.UserAssignedIdentityResponse']] = None):
                pulumi.set(__self__, "type", type)
                if user_assigned_identities is not None:
                    pulumi.set(__self__, "user_assigned_identities", user_assigned_identities)

            @_builtins.property
            @pulumi.getter
            def type(self) -> 'IdentityType':
                return pulumi.get(self, "type")

            @_builtins.property
            @pulumi.getter(name="userAssignedIdentities")
            def user_assigned_identities(self) -> Optional[Mapping[str, 'outputs.UserAssignedIdentityResponse']]:
                return pulumi.get(self, "user_assigned_identities")


        @pulumi.output_type
        class UserAssignedIdentityResponse(dict):
            def __init__(__self__, *, client_id: _builtins.str):
                pulumi.set(__self__, "client_id", client_id)

            @_builtins.property
            @pulumi.getter(name="clientId")
            def client_id(self) -> _builtins.str:
                return pulumi.get(self, "client_id")
    """,
}

PROGRAM = """
from pulumi_fakecloud.compute import Cluster

ids = ["/subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id1"]
cluster = Cluster("aks", identity={"type": "UserAssigned", "userAssignedIdentities": ids}, tags={"team": "ml"})
pulumi.export("type", cluster.identity.apply(lambda i: i.type))
pulumi.export("tags", cluster.tags)
"""


@pytest.fixture
def sdk(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    for name, text in SDK.items():
        file = site / "pulumi_fakecloud" / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(textwrap.dedent(text))
    return site


def test_an_output_typed_otherwise_than_its_input_is_unknown_and_named(sdk, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(sdk))  # the program's interpreter finds the provider SDK there
    folder = _program(tmp_path, PROGRAM)
    code, out, err = run_cli("preview", "--program", str(folder), "--python", sys.executable, "--no-policy", "--json")
    assert code == 0 and "Traceback" not in err, err
    plan = json.loads(out)
    [cluster] = [r for r in plan["resources"] if r["name"] == "aks"]
    assert cluster["inputs"]["identity"]["userAssignedIdentities"][0].endswith("/id1")  # the plan keeps what the program gave
    # What is typed alike is still echoed; an object holding an unknown is unknown to the program as
    # a whole, as in any preview (the SDK's contains_unknowns).
    assert plan["outputs"] == {"type": UNKNOWN, "tags": {"team": "ml"}}
    assert (
        "fakecloud:compute:Cluster 'aks': the provider's outputs identity.userAssignedIdentities are typed otherwise than the inputs "
        "of the same name; answered unknown, as a preview answers before the provider computes them"
    ) in plan["placement"]["gaps"]


def test_the_types_are_read_from_the_sdk_s_getters(sdk):
    types = OutputTypes(lambda: [str(sdk)])
    echoed = {"identity": {"type": "UserAssigned", "userAssignedIdentities": ["id1"]}, "tags": {"a": "b"}, "name": {"not": "a string"}}
    typed, mismatched = types.typed("fakecloud:compute:Cluster", echoed)
    assert typed == {"identity": {"type": "UserAssigned", "userAssignedIdentities": UNKNOWN}, "tags": {"a": "b"}, "name": UNKNOWN}
    assert mismatched == ["identity.userAssignedIdentities", "name"]
    # A map of the declared shape is left as it is; a type no SDK on the path registers is not judged.
    fitting = {"identity": {"type": "UserAssigned", "userAssignedIdentities": {"id1": {"clientId": "c"}}}}
    assert types.typed("fakecloud:compute:Cluster", fitting) == (fitting, [])
    assert types.typed("othercloud:index:Thing", {"x": [1]}) == ({"x": [1]}, [])


def test_azure_native_s_user_assigned_identities(tmp_path):
    """The case from the corpus's left-out azure-py-aks-managed-identity, on the SDK itself."""
    python = prepared("corpus", "venv", "bin", "python")
    folder = tmp_path / "aks"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: aks\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  azure-native:location: westus2\n")
    (folder / "__main__.py").write_text(
        textwrap.dedent(
            """
            import pulumi
            from pulumi_azure_native import containerservice

            ids = ["/subscriptions/0/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id1"]
            cluster = containerservice.ManagedCluster(
                "aks",
                resource_group_name="rg",
                dns_prefix="aks",
                identity=containerservice.ManagedClusterIdentityArgs(type="UserAssigned", user_assigned_identities=ids),
            )
            pulumi.export("dnsPrefix", cluster.dns_prefix)
            """
        )
    )
    code, out, err = run_cli("preview", "--program", str(folder), "--python", str(python), "--no-policy", "--json")
    assert code == 0 and "Traceback" not in err, err
    plan = json.loads(out)
    assert plan["outputs"] == {"dnsPrefix": "aks"}
    assert any("identity.userAssignedIdentities are typed otherwise" in g for g in plan["placement"]["gaps"])
