"""The engine's own provider, package `pulumi` (pulumi/pulumi pkg/resource/deploy/builtins.go,
builtinProvider): its functions `pulumi:pulumi:getResource`, `readStackOutputs` and
`readStackResourceOutputs`, and its resources `pulumi:pulumi:StackReference` and `pulumi:index:Stash`,
answered as it answers them in a preview, from what this run registered and read. What lives in
another stack's state (a stack reference) is in a backend the offline engine does not read: unknown,
and named."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from gpufleet.catalog import tokens
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.errors import GpufleetError

GET_RESOURCE = tokens.GET_RESOURCE
READ_STACK_OUTPUTS = tokens.READ_STACK_OUTPUTS
READ_STACK_RESOURCE_OUTPUTS = tokens.READ_STACK_RESOURCE_OUTPUTS
STACK_REFERENCE = tokens.STACK_REFERENCE
STASH = tokens.STASH


@dataclass(frozen=True)
class State:
    """What the builtins provider reads of a resource registered or read in this run (its `news` and
    `reads`): `outputs` None where offline they cannot be known (a component its provider builds)."""

    id: str
    provider: str
    outputs: dict | None


class BuiltinError(GpufleetError):
    """The engine's builtins provider fails the call; the program sees the error (message as the engine's)."""


class Unanswered(GpufleetError):
    """The answer is in a backend the offline engine does not read: answered unknown, the reason named."""


class Builtins:
    def __init__(self) -> None:
        self.states: dict[str, State] = {}
        self.remote_components: list[str] = []  # URNs of components whose provider's Construct is not run
        self._lock = threading.Lock()

    def registered(self, urn: str, state: State, remote_component: bool = False) -> None:
        with self._lock:
            self.states[urn] = state
            if remote_component:
                self.remote_components.append(urn)

    def outputs_registered(self, urn: str, outputs: dict) -> None:
        """A component's outputs are its state's once it registers them (the engine's
        RegisterResourceOutputs step)."""
        with self._lock:
            state = self.states.get(urn)
            if state is not None and state.outputs is not None:
                self.states[urn] = State(state.id, state.provider, outputs)

    def invoke(self, token: str, args: dict) -> tuple[dict, str | None]:
        """builtinProvider.Invoke: the answer, and what offline is not known of it."""
        if token == GET_RESOURCE:
            return self._get_resource(args)
        if token in (READ_STACK_OUTPUTS, READ_STACK_RESOURCE_OUTPUTS):
            key = "name" if token == READ_STACK_OUTPUTS else "stackName"
            name = args.get(key)
            if not isinstance(name, str):
                raise BuiltinError(f"{token}: {key} = {name!r}: a stack name (a string) is required")
            raise Unanswered(f"the outputs of stack {name!r} are in its backend, which the offline engine does not read")
        raise BuiltinError(f"unrecognized function name: '{token}'")

    def _get_resource(self, args: dict) -> tuple[dict, str | None]:
        """builtinProvider.getResource: a resource this run registered or read, {urn, id, provider,
        state} with its outputs as the preview has them."""
        urn = args.get("urn")
        if not isinstance(urn, str):
            raise BuiltinError(f"{GET_RESOURCE}: urn = {urn!r}: a URN (a string) is required")
        with self._lock:
            state = self.states.get(urn)
            built_by_provider = state is None and any(_within(urn, component) for component in self.remote_components)
        if state is None and not built_by_provider:
            raise BuiltinError(f"unknown resource {urn}")
        if state is None or state.outputs is None:
            # A resource a component's provider creates (or the component itself): its state exists
            # only once the provider's Construct has run, which offline it does not. An empty state
            # is every output unknown, as the SDKs read a property missing in a preview.
            return (
                {"urn": urn, "id": state.id if state else "", "provider": state.provider if state else "", "state": {}},
                f"{urn} is built by a component's provider, which the offline engine does not run; its state answered unknown",
            )
        return {"urn": urn, "id": state.id, "provider": state.provider, "state": state.outputs}, None

    def read(self, type_: str, name: str, properties: dict) -> tuple[dict, str | None]:
        """ReadResource of a builtin resource: its state, and what offline is not known of it."""
        if type_ == STACK_REFERENCE:
            stack = properties.get("name", name)
            return (
                {"name": stack, "outputs": UNKNOWN, "secretOutputNames": UNKNOWN},
                f"stack reference {name!r}: the outputs of stack {stack!r} are in its backend, which the offline engine does not read; "
                "answered unknown, as a preview answers before the value exists",
            )
        if type_ == STASH:
            return dict(properties), None
        return {}, None

    @staticmethod
    def created(type_: str, inputs: dict) -> dict | None:
        """builtinProvider.Create in a preview: its resources' outputs (None for any other type)."""
        if type_ == STASH:
            return {"input": inputs.get("input"), "output": inputs.get("input")}
        if type_ == STACK_REFERENCE:
            return {"name": inputs.get("name"), "outputs": UNKNOWN, "secretOutputNames": UNKNOWN}
        return None


def _within(urn: str, component: str) -> bool:
    """Whether `urn` names a descendant of `component`: its type chain extends the component's (the
    engine's NewURN qualifies a child's type by its parent's)."""
    try:
        prefix, qualified = urn.rsplit("::", 2)[0], urn.split("::")[2]
        c_prefix, c_qualified = component.rsplit("::", 2)[0], component.split("::")[2]
    except IndexError:
        return False
    return prefix == c_prefix and qualified.startswith(c_qualified + "$")
