"""Cold start: a provider SDK's service package (`pulumi_aws.ec2`, 180 modules) imports every
module it has in its `__init__`, about 0.3 s for ec2 alone, where a stack uses a dozen of them;
pulumi_kubernetes's group/version packages do the same (`core.v1`, 50 modules, about 0.1 s).

In the offline engine's process, such a package is loaded lean instead: a name is looked up in the
module the generator exports it from (`LaunchTemplate` from `launch_template`, Kubernetes's
`Deployment` from `Deployment`, `...Args` from `_inputs`, enums from `_enums`), and anything else
(a name off that convention, `__all__`, a star import, a name the package does not have) runs the
package's own `__init__` once, so every name resolves, or fails, as it would.

The offline engine applies it around a preview (gpufleet.engine.patches): a program that imports
gpufleet's components under `pulumi up` gets the SDK as it is. A package whose own `__init__` ran
(a name off the convention) is then the module its `__init__` made, class and all: pulumi_aws's
`config` swaps its module's class for one whose properties read the config (`aws.config.region`)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import re
import sys
import types

# The provider SDKs whose packages are loaded lean: how deep those packages sit (a service below
# the SDK; a Kubernetes API group's version below its group) and how a class's module is named
# (pulumi-language-python's snake case; pulumigen's class name itself).
SDKS = {
    "pulumi_aws": (2, "snake"),
    "pulumi_gcp": (2, "snake"),
    "pulumi_azure": (2, "snake"),
    "pulumi_alicloud": (2, "snake"),
    "pulumi_kubernetes": (3, "class"),
}

# Word boundaries as the generator draws them: HAVip is ha_vip, GetLBIPRanges get_lbip_ranges.
_CAPITALIZED = re.compile(r"(.)([A-Z][a-z]+)")
_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")

# The packages a name off the convention made load whole (their own __init__ ran).
WHOLE: set[str] = set()


def _snake(name: str) -> str:
    return _LOWER_UPPER.sub(r"\1_\2", _CAPITALIZED.sub(r"\1_\2", name)).lower()


def _modules_of(name: str, style: str) -> list[str]:
    """The modules a name of a package is generated into, most likely first."""
    module = _snake if style == "snake" else str
    if name.endswith(("Args", "ArgsDict")):  # nested input types; a resource's own (XInitArgs where XArgs is taken)
        return ["_inputs", module(name.removesuffix("Dict").removesuffix("Args").removesuffix("Init"))]
    if name.endswith("Result"):  # a function's result (GetAmiIdsResult of get_ami_ids)
        return [module(name.removeprefix("Awaitable").removesuffix("Result")), module(name)]
    if name[:1].isupper():  # output types live in `outputs`, which the package does not star-import
        return [module(name), "_enums"]
    return [name.removesuffix("_output"), name]  # a function (get_ami_ids, get_ami_ids_output) is its own module


class _LeanPackage(types.ModuleType):
    def __setattr__(self, name, value):
        # The import system binds each submodule loaded to its package. The package's own
        # `from .get_ami_ids import *` binds the function over its module, and so does this.
        if isinstance(value, types.ModuleType) and value.__name__ == f"{self.__name__}.{name}" and name in vars(value):
            value = vars(value)[name]
        super().__setattr__(name, value)


class _LeanPackageLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, fullname: str, path: str, style: str):
        super().__init__(fullname, path)
        self.style = style

    def exec_module(self, module) -> None:
        module.__class__ = _LeanPackage
        loaded = False

        def full() -> None:
            nonlocal loaded
            if not loaded:
                loaded = True
                WHOLE.add(module.__name__)
                super(_LeanPackageLoader, self).exec_module(module)

        def __getattr__(name: str):
            if not name.startswith("__"):
                for candidate in _modules_of(name, self.style):
                    try:
                        found = importlib.import_module(f"{module.__name__}.{candidate}")
                    except ModuleNotFoundError:
                        continue
                    # Only what the module exports is the package's. A function's module bears
                    # its name (the package binds the function over it); a module that does not
                    # export the name is the submodule asked for (`from . import outputs`).
                    exported = vars(found).get("__all__", vars(found))
                    if name in exported or candidate == name:
                        value = vars(found)[name] if name in exported else found
                        setattr(module, name, value)
                        return value
            full()
            # The package is whole now: it answers as its own __init__ made it (its module class,
            # its own __getattr__ if it has one), this lookup included.
            if module.__class__ is _LeanPackage:
                module.__class__ = types.ModuleType  # type: ignore[assignment]
            if module.__dict__.get("__getattr__") is __getattr__:
                del module.__getattr__
            return getattr(module, name)

        module.__getattr__ = __getattr__


class _LeanFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        parts = fullname.split(".")
        depth, style = SDKS.get(parts[0], (0, ""))
        if len(parts) != depth:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.submodule_search_locations is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _LeanPackageLoader(spec.loader.name, spec.loader.path, style)
        return spec


_FINDER = _LeanFinder()


def _waiting() -> dict[str, importlib.machinery.ModuleSpec]:
    """Service packages an SDK's own `__init__` registered for a lazy load (pulumi._utils.lazy_import)
    before the gate opened, and that nothing has read yet: they load with the loader their spec
    holds. (Their spec is read past the lazy module's own attribute lookup, which would load it.)"""
    found = {}
    for name, module in list(sys.modules.items()):
        parts = name.split(".")
        depth, _ = SDKS.get(parts[0], (0, ""))
        if len(parts) != depth or type(module).__name__ != "_LazyModule":
            continue
        spec = types.ModuleType.__getattribute__(module, "__spec__")
        if type(spec.loader) is importlib.machinery.SourceFileLoader:
            found[name] = spec
    return found


@contextlib.contextmanager
def lean_imports():
    """Within: the SDKs' service packages imported for the first time load lean, and so do those an
    SDK registered for a lazy load before (importing pulumi_aws registers its 200 services); those
    loaded already stay as they are; those loaded lean stay lean (and whole where a name made them so)."""
    if _FINDER in sys.meta_path:
        yield
        return
    waiting = _waiting()
    for name, spec in waiting.items():
        spec.loader = _LeanPackageLoader(name, spec.origin, SDKS[name.split(".")[0]][1])
    sys.meta_path.insert(0, _FINDER)
    try:
        yield
    finally:
        sys.meta_path.remove(_FINDER)
        for name, spec in waiting.items():
            if type(sys.modules.get(name)).__name__ == "_LazyModule":  # still unread: as the SDK registered it
                spec.loader = importlib.machinery.SourceFileLoader(name, spec.origin)
