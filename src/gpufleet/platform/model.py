"""The base of every typed input model, and the violation record that checks return.

Models are frozen, reject unknown keys, do not coerce types ("2" is not 2), and read the camelCase
keys of Pulumi stack config while exposing snake_case attributes. Field-level rules (ranges,
patterns) live on the fields; rules that need the catalog or several fields are small check
functions returning `Violation`s, so every error of a stack is reported at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, cast

from pydantic import AfterValidator, BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError, field_validator
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, PydanticKnownError, SchemaValidator, core_schema

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.rules import images

K8S_NAME = r"^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$"  # a DNS label, short enough for derived names
INT32_MAX = 2**31 - 1  # AWS API `integer` members are 32-bit (botocore shapes of type integer)


class SpecModel(BaseModel):
    # Keys an earlier schema had here, and what replaced them: a stack written for it is told, not
    # only refused ("unknown key").
    MOVED: ClassVar[dict[str, str]] = {}

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        populate_by_name=True,
    )

    @field_validator("*", mode="after")
    @classmethod
    def _fits_the_api(cls, value):
        """Every count and size of the spec reaches an AWS API integer: past 2**31 - 1 the request is
        refused (and the engine's doubles would change it on the way)."""
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, int) and not isinstance(item, bool) and not -INT32_MAX - 1 <= item <= INT32_MAX:
                raise rule_error("int32", f"{item} is past what an AWS API integer holds (at most {INT32_MAX})")
        return value


@dataclass(frozen=True)
class Violation:
    """A broken rule: where (the field path, as config keys), the offending value, and why."""

    rule: str
    field: tuple[str | int, ...]
    value: object
    reason: str

    def under(self, *prefix: str | int) -> Violation:
        return Violation(self.rule, (*prefix, *self.field), self.value, self.reason)


def duplicate_names(names: list[str], where: tuple[str | int, ...], what: str) -> list[Violation]:
    """The one statement of "names are unique": a violation at `where[i].name` for every repeated name."""
    counts = Counter(names)
    return [
        Violation("names-unique", (*where, i, "name"), name, f"{what} names must be unique")
        for i, name in enumerate(names)
        if counts[name] > 1
    ]


def names_taken(names: list[str], taken: set[str], where: tuple[str | int, ...], message: str) -> list[Violation]:
    """Names of one list that another list already holds, where the two kinds share one namespace (a
    reference names either): a violation at `where[i].name` for each."""
    return [Violation("names-unique", (*where, i, "name"), name, message) for i, name in enumerate(names) if name in taken]


def pool_fleet_names(fleet) -> list[Violation]:
    """A Kubernetes pool fleet's (ACK, GKE, AKS) node pool and workload names, each unique."""
    return duplicate_names([p.name for p in fleet.node_pools], ("nodePools",), "node pool") + duplicate_names(
        [w.name for w in fleet.workloads], ("workloads",), "workload"
    )


def pool_checks(fleet, check_pool: Callable[[object, bool], tuple[list[Violation], int | None]]) -> tuple[list[Violation], dict[str, int]]:
    """A GKE or AKS fleet's names and each pool's own violations (under nodePools[i]), and the
    nvidia.com/gpu one node of each pool advertises where its GPUs are known.
    `check_pool(pool, operator_installs_driver)` judges one pool."""
    operator_installs_driver = fleet.gpu_operator is not None and fleet.gpu_operator.driver
    found = pool_fleet_names(fleet)
    per_node: dict[str, int] = {}
    for i, pool in enumerate(fleet.node_pools):
        problems, advertised = check_pool(pool, operator_installs_driver)
        found += [v.under("nodePools", i) for v in problems]
        if advertised is not None:
            per_node[pool.name] = advertised
    return found, per_node


def pool_workloads(
    fleet, advertised: Mapping[str, int], platform: str, request_problem: Callable[[object, object], str | None] | None = None
) -> list[Violation]:
    """A GKE or AKS fleet's workloads against the pools they name: the pool exists; the request is one
    the pool's nodes admit (`request_problem(workload, pool)`, rule `{platform}-shared-gpu-request`);
    and it fits what one node advertises (`advertised`: pool -> nvidia.com/gpu per node, for the pools
    whose GPUs are known)."""
    found: list[Violation] = []
    pools = {p.name: p for p in fleet.node_pools}
    for i, wl in enumerate(fleet.workloads):
        pool = pools.get(wl.node_pool)
        if pool is None:
            found.append(
                Violation(
                    "node-pool-exists", ("workloads", i, "nodePool"), wl.node_pool, f"no node pool of that name (pools: {', '.join(pools)})"
                )
            )
        elif request_problem is not None and (reason := request_problem(wl, pool)):
            found.append(Violation(f"{platform}-shared-gpu-request", ("workloads", i, "gpus"), wl.gpus, reason))
        elif pool.name in advertised and wl.gpus > advertised[pool.name]:
            per_node = advertised[pool.name]
            found.append(
                Violation(
                    f"{platform}-gpus-fit-node",
                    ("workloads", i, "gpus"),
                    wl.gpus,
                    f"a node of pool {pool.name} advertises {per_node} nvidia.com/gpu: the pods never schedule",
                )
            )
    return found


def size_order_error(min_size: int, desired_size: int, max_size: int) -> str | None:
    """The one statement of a group's size rule, for every model with min/desired/max sizes."""
    if not min_size <= desired_size <= max_size:
        return f"sizes must satisfy minSize <= desiredSize <= maxSize (got {min_size}, {desired_size}, {max_size})"
    return None


def rule_error(rule: str, message: str) -> PydanticCustomError:
    """A model validator's error with a stable kebab-case rule id (pydantic's own is `value_error`)."""
    return PydanticCustomError(rule, message.replace("{", "{{").replace("}", "}}"))


def _holds(rule: str, problem: Callable[[object], str | None]) -> AfterValidator:
    def check(value):
        reason = problem(value)
        if reason:
            raise rule_error(rule, reason)
        return value

    return AfterValidator(check)


# An image field: a reference the runtime pulls; on ECS, also one RegisterTaskDefinition takes.
ImageReference = Annotated[str, _holds("image-reference", images.reference_problem)]
EcsImageReference = Annotated[str, _holds("image-reference", images.ecs_image_problem)]


def validating_catalog() -> Catalog:
    """The catalog a validator reads. Validators run inside a model's construction, where no caller
    can hand one in (a user program builds args models itself), so they read the process's own,
    when a value is validated: importing a model loads nothing."""
    return catalog.load()


class CatalogChoice:
    """The metadata of a string field whose values are the catalog's: `Annotated[str,
    CatalogChoice(lambda cat: ...)]` validates, errs and writes its JSON schema as the Literal of
    those values would, reading them when a value is validated or the schema written."""

    def __init__(self, choices: Callable[[Catalog], Iterable[str]]) -> None:
        self._choices = choices
        # The literal's validator, built for one catalog (a process loads one; a test may swap it).
        self._built: tuple[Catalog, tuple[str, ...], SchemaValidator] | None = None

    def _literal(self) -> tuple[tuple[str, ...], SchemaValidator]:
        cat = validating_catalog()
        if self._built is None or self._built[0] is not cat:
            values = tuple(self._choices(cat))
            self._built = (cat, values, SchemaValidator(core_schema.literal_schema(list(values))))
        return self._built[1], self._built[2]

    def values(self) -> tuple[str, ...]:
        return self._literal()[0]

    def literal(self) -> Any:
        """The Literal type the field validates as (the generated docs name it)."""
        return Literal.__getitem__(self.values())

    def _validate(self, value: object) -> str:
        try:
            return self._literal()[1].validate_python(value, strict=True)
        except ValidationError as err:
            # pydantic's own literal_error (type, message, expected values), at the field's location.
            [error] = err.errors(include_url=False)
            raise PydanticKnownError(cast(Any, error["type"]), error.get("ctx")) from None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_plain_validator_function(self._validate)

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return handler(core_schema.literal_schema(list(self.values())))


def by_identity(resolve_args):
    """`resolve_args(args, ...)` computed once per args object: remembered by identity, holding the
    args so that their id is never reused while remembered (bounded). Args models are frozen, so a
    resolution stays true for as long as its args live."""
    kept: dict[int, tuple[object, object]] = {}

    def resolve(args, *rest):
        held = kept.get(id(args))
        if held is not None and held[0] is args:
            return held[1]
        resolved = resolve_args(args, *rest)
        if len(kept) >= 512:
            kept.pop(next(iter(kept)))
        kept[id(args)] = (args, resolved)
        return resolved

    resolve.kept = kept
    return resolve
