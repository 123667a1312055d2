"""The catalog is passed in below the entry points, and nothing loads it at import time.

Importing a module of gpufleet loads no catalog: a library user's program and the pack's process
pay for it when they use it, and a test that swaps it is not beaten by a copy taken at import. Below the entry points a function takes the catalog it reads
(`cat: Catalog`) from its caller: only the functions ENTRY_POINTS names (and the pack's registered
policy functions) call `catalog.load()`, so one more call below them fails here, and porting one
shrinks the list.
"""

from __future__ import annotations

import ast
import json

from tests.conftest import fresh_python
from tests.project.test_layout import tree

# Every module, imported in one fresh interpreter whose catalog cannot be loaded: what fails to
# import names itself with its error.
_IMPORT_ALL = """
import importlib, json, sys, traceback
import gpufleet.catalog.catalog as catalog

def refused():
    raise AssertionError("the catalog was loaded at import time")

catalog.load = refused
failed = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except BaseException:
        failed[name] = traceback.format_exc(limit=-3)
print(json.dumps(failed))
"""


def test_no_module_loads_the_catalog_when_imported():
    modules = sorted(m for m in tree() if not m.endswith("__main__"))
    run = fresh_python(_IMPORT_ALL, json.dumps(modules), timeout=600)
    assert run.returncode == 0, run.stderr
    failed = json.loads(run.stdout.strip().splitlines()[-1])
    assert failed == {}, "\n".join(f"{name}:\n{error}" for name, error in failed.items())


def test_importing_a_model_does_not_read_its_catalog_values():
    """The catalog's values of a field (an EKS AMI type, a taint effect) are read when a value is
    validated or the schema written, and a value outside them errs as pydantic's Literal would."""
    run = fresh_python(
        "import json\n"
        "import gpufleet.catalog.catalog as catalog\n"
        "from gpufleet.eks.args import TaintArgs\n"
        "loaded = catalog.load.cache_info().currsize\n"
        "from pydantic import ValidationError\n"
        "try:\n"
        "    TaintArgs.model_validate({'key': 'k', 'effect': 'Never'})\n"
        "except ValidationError as err:\n"
        "    [e] = err.errors(include_url=False)\n"
        "print(json.dumps([loaded, e['type'], e['msg']]))\n"
    )
    assert run.returncode == 0, run.stderr
    loaded, kind, message = json.loads(run.stdout.strip().splitlines()[-1])
    assert loaded == 0
    assert kind == "literal_error"
    assert message == (
        "Input should be 'NoSchedule', 'NoExecute', 'PreferNoSchedule', 'NO_SCHEDULE', 'NO_EXECUTE' or 'PREFER_NO_SCHEDULE'"
    )


# Where catalog.load() may be called, by module and function: the entry points, each loading it once
# for what it calls. The pack's rule modules are not listed: there a function that POLICIES registers
# (a policy, or the subject or unjudged function it names; pulumi_policy calls them) may load it, and
# no other (_registered).
ENTRY_POINTS: dict[str, set[str]] = {
    # The CLI's commands.
    "gpufleet.cli.main": {"cmd_catalog"},
    "gpufleet.cli.verify_command": {"cmd_verify"},
    "gpufleet.cli.prices_command": {"cmd_prices"},
    "gpufleet.verify.nccl_floors": {"main"},  # the docs table's generator (python -m)
    # The stack-file program: the spec it validates, the components it builds.
    "gpufleet.stack.spec": {"_validate"},
    "gpufleet.stack.program": {"main"},
    # The offline engine.
    "gpufleet.engine.monitor": {"Monitor._facts"},  # made on first use (the hosted path opens its port first)
    # The pack's process.
    "gpufleet.policies.serve": {"serve"},
    # The components a user's program constructs, and the library's functions it calls: each loads
    # the catalog where its caller passes none (the fleets pass theirs to the components they build).
    "gpufleet.ack.ack_fleet": {"AckFleet.__init__"},
    "gpufleet.ack.gpu_sharing": {"GpuSharing.__init__"},
    "gpufleet.ack.node_pool": {"SharedGpuNodePool.__init__", "workload_selector"},
    "gpufleet.ack.shared_gpu_workload": {"SharedGpuWorkload.__init__"},
    "gpufleet.aks.aks_fleet": {"AksFleet.__init__"},
    "gpufleet.aks.node_pool": {"AksGpuNodePool.__init__"},
    "gpufleet.ecs.capacity_provider": {"GpuCapacityProvider.__init__"},
    "gpufleet.ecs.gpu_cluster": {"GpuCluster.__init__"},
    "gpufleet.eks.eks_fleet": {"EksFleet.__init__"},
    "gpufleet.eks.node_group": {"AcceleratedNodeGroup.__init__"},
    "gpufleet.eks.resolved": {"served_groups"},
    "gpufleet.eks.system_node_group": {"SystemNodeGroup.__init__"},
    "gpufleet.gke.gke_fleet": {"GkeFleet.__init__"},
    "gpufleet.gke.node_pool": {"GkeGpuNodePool.__init__"},
    "gpufleet.gke.driver_installer": {"GkeDriverInstaller.__init__"},
    "gpufleet.k8s.device_plugins": {"DevicePlugins.__init__"},
    "gpufleet.k8s.dra_driver": {"DraDriver.__init__"},
    "gpufleet.k8s.gpu_operator": {"GpuOperator.__init__"},
    "gpufleet.k8s.gpu_workload": {"GpuWorkload.__init__"},
    "gpufleet.k8s.nccl_test": {"NcclTest.__init__"},
    "gpufleet.karpenter.controller": {"Karpenter.__init__"},
    "gpufleet.karpenter.node_pool": {"KarpenterNodePool.__init__"},
    # Validators run inside a model's construction, where no caller can pass a catalog in.
    "gpufleet.platform.model": {"validating_catalog"},
    # Ported with issue 51's plan-view work: these modules load it themselves, or load it for
    # callers of theirs that pass none yet (the diff and its picture, the engine's plan, the
    # placement's and the updates' policies).
    "gpufleet.cli.diff": {"_groups", "_karpenter_drift", "_refused_deletes"},
    "gpufleet.plans.placement": {"placement"},
    "gpufleet.plans.replacement": {"_autonames", "forces_new"},
    "gpufleet.policies.placement": {"_validate_batch_pods"},
    # The pack's reading of a stack's DRA install, once for the four policies that judge it.
    "gpufleet.policies.dra": {"_read"},
    "gpufleet.plans.groups": {"_given"},
    "gpufleet.plans.cost": {"plan_cost"},
    "gpufleet.simulate.k8s_scheduler": {"given"},
}
PACK = "gpufleet.policies."


def _is_load(node: ast.AST, direct: bool) -> bool:
    """A call of catalog.load() (or of `load` imported from gpufleet.catalog.catalog)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr == "load" and isinstance(func.value, ast.Name) and func.value.id == "catalog"
    return direct and isinstance(func, ast.Name) and func.id == "load"


def loaders(files: dict[str, str]) -> dict[str, set[str]]:
    """{module: the functions (qualified names; <module> at the top) that call catalog.load()}."""
    found: dict[str, set[str]] = {}
    for module, source in files.items():
        if module.startswith("gpufleet.catalog."):
            continue  # the catalog room defines it
        tree_ = ast.parse(source)
        direct = any(
            isinstance(n, ast.ImportFrom) and n.module == "gpufleet.catalog.catalog" and any(a.name == "load" for a in n.names)
            for n in ast.walk(tree_)
        )

        def visit(node: ast.AST, where: list[str]) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(child, [*where, child.name])
                    continue
                if _is_load(child, direct):
                    found.setdefault(module, set()).add(".".join(where) or "<module>")
                visit(child, where)

        visit(tree_, [])
    return found


def _registered(files: dict[str, str]) -> set[tuple[str, str]]:
    """(module, function) of every function POLICIES registers: a decorated policy, and the subject
    and unjudged functions a decorator names (resolved through the module's imports)."""
    found = set()
    for module, source in files.items():
        if not module.startswith(PACK):
            continue
        tree_ = ast.parse(source)
        imported = {
            a.asname or a.name: n.module for n in ast.walk(tree_) if isinstance(n, ast.ImportFrom) and n.module for a in n.names
        }
        for node in ast.walk(tree_):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)):
                    continue
                if not (isinstance(decorator.func.value, ast.Name) and decorator.func.value.id == "POLICIES"):
                    continue
                found.add((module, node.name))
                for keyword in decorator.keywords:
                    if keyword.arg in ("subject", "unjudged") and isinstance(keyword.value, ast.Name):
                        name = keyword.value.id
                        found.add((imported.get(name, module), name))
    return found


def misplaced(files: dict[str, str]) -> list[str]:
    """Each call of catalog.load() outside the entry points, and each entry that no longer loads."""
    registered = _registered(files)
    problems = []
    found = loaders(files)
    for module in sorted(set(found) | set(ENTRY_POINTS)):
        allowed = ENTRY_POINTS.get(module, set())
        for where in sorted(found.get(module, set())):
            if where in allowed or (module.startswith(PACK) and (module, where) in registered):
                continue
            problems.append(f"{module}: {where} calls catalog.load(); take the catalog from the caller (cat: Catalog)")
        for where in sorted(allowed - found.get(module, set())):
            problems.append(f"{module}: {where} no longer loads the catalog; drop it from ENTRY_POINTS")
    return problems


def test_only_the_entry_points_load_the_catalog():
    assert misplaced(tree()) == []


def test_a_load_planted_below_the_entry_points_is_caught():
    files = tree()
    files["gpufleet.rules.efa"] += "\n\ndef planted():\n    return catalog.load()\n"
    files["gpufleet.simulate.k8s_scheduler"] += "\nfrom gpufleet.catalog.catalog import load\nload()\n"
    # In the pack, only a function POLICIES registers may load it: a helper there may not.
    files["gpufleet.policies.k8s"] += "\n\ndef _helper(args):\n    return catalog.load()\n"
    assert misplaced(files) == [
        "gpufleet.policies.k8s: _helper calls catalog.load(); take the catalog from the caller (cat: Catalog)",
        "gpufleet.rules.efa: planted calls catalog.load(); take the catalog from the caller (cat: Catalog)",
        "gpufleet.simulate.k8s_scheduler: <module> calls catalog.load(); take the catalog from the caller (cat: Catalog)",
    ]


def test_a_ported_entry_must_leave_the_list():
    files = tree()
    files["gpufleet.stack.program"] = files["gpufleet.stack.program"].replace("catalog.load()", "None")
    assert misplaced(files) == ["gpufleet.stack.program: main no longer loads the catalog; drop it from ENTRY_POINTS"]
