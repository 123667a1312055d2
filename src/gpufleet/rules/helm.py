"""Helm names that fit: a release's name as Helm accepts it, and the names its chart renders within
Kubernetes' limits, no two objects of one kind and namespace sharing one. The stack spec and the
policy pack call these.

Sources:
- Helm v3.21.4 pkg/chartutil/validate_name.go L36 (the release-name pattern), L61 (maxReleaseNameLen
  53), L85 (ValidateReleaseName).
- pulumi/pulumi-kubernetes v4.32.0 provider/pkg/provider/helm_release.go L785-L792: a helm.sh/v3
  Release without `name` is named "<resource name>-" + resource.NewUniqueHex (pulumi/pulumi
  sdk/go/common/resource/resource_id.go L67-L82: 8 random hex characters by default);
  provider/pkg/provider/helm/v4/chart.go L175-L177: a helm.sh/v4 Chart without `name` is named its
  resource name.
- Kubernetes names: kubernetes/kubernetes pkg/apis/core/validation/validation.go @a7264f95
  (ValidateServiceName = NameIsDNS1035Label, ValidateNamespaceName = NameIsDNSLabel: 63) and
  pkg/apis/apps/validation/validation.go @2dd1588c (ValidateDaemonSetName, ValidateDeploymentName
  = NameIsDNSSubdomain: 253, as most kinds); a DaemonSet's pods take generated names that
  k8s.io/apiserver pkg/storage/names/generate.go cuts to 63 itself.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from gpufleet.catalog import tokens
from gpufleet.catalog.chart_objects import RenderedObject

RELEASE_NAME_MAX = 53
RELEASE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
PROVIDER_RANDOM = 8  # hex characters the provider appends, after a dash
RANDOM_MARK = "?"  # one unknown character of a provider-named release
LABEL_MAX = 63
SUBDOMAIN_MAX = 253
LABEL_KINDS = {"Service": "a DNS-1035 label", "Namespace": "a DNS-1123 label"}


@dataclass(frozen=True)
class ReleaseName:
    """A Helm release's name: `given` (the `name` input, else the resource name) and how many random
    characters the provider appends after a dash (0: none)."""

    given: str
    random: int = 0

    @property
    def pattern(self) -> str:
        """The name with each random character as RANDOM_MARK (a glob of its exact length)."""
        return f"{self.given}-{RANDOM_MARK * self.random}" if self.random else self.given

    def shown(self) -> str:
        return f"{self.given}-<{self.random} random hex>" if self.random else self.given


def release_name(token: str, resource_name: str, name_input: object) -> ReleaseName | None:
    """The name Helm gets for a release resource; None when its `name` input is not known (an output)."""
    if isinstance(name_input, str) and name_input and name_input != tokens.UNKNOWN:
        return ReleaseName(name_input)
    if name_input is not None:
        return None
    return ReleaseName(resource_name, PROVIDER_RANDOM if token == tokens.HELM_RELEASE else 0)


def release_problem(release: ReleaseName) -> str | None:
    """Why Helm refuses the release name (ValidateReleaseName), or None."""
    length = len(release.pattern)
    if length > RELEASE_NAME_MAX:
        return f"its name is {length} characters; Helm takes at most {RELEASE_NAME_MAX}"
    if not RELEASE_NAME.match(release.pattern.replace(RANDOM_MARK, "0")):
        return f"its name is not a DNS-1123 subdomain ({RELEASE_NAME.pattern})"
    return None


def name_limit(kind: str) -> int:
    return LABEL_MAX if kind in LABEL_KINDS else SUBDOMAIN_MAX


def object_problems(rendered: Iterable[RenderedObject]) -> list[str]:
    """Each rendered name over its kind's limit, and each name two objects of one kind and namespace share."""
    problems = []
    seen: dict[tuple[str, str | None, str], list[RenderedObject]] = defaultdict(list)
    for obj in rendered:
        limit = name_limit(obj.kind)
        if len(obj.name) > limit:
            what = LABEL_KINDS.get(obj.kind, "a DNS-1123 subdomain")
            problems.append(
                f"its {obj.kind} {obj.name!r} is {len(obj.name)} characters; the name must be {what} of at most {limit} ({obj.source})"
            )
        seen[(obj.kind, obj.namespace, obj.name)].append(obj)
    for (kind, _, name), same in seen.items():
        if len(same) > 1:
            where = "; ".join(o.source.split(" (")[0] for o in same)
            problems.append(f"{len(same)} of its {kind}s share the name {name!r} (the chart cuts their names to 63 characters: {where})")
    return problems


def release_problems(release: ReleaseName, rendered: Iterable[RenderedObject] | None) -> list[str]:
    """Everything that stops the release installing by its names: Helm's release-name rule, then
    (where its chart's templates are known) the names they render."""
    found = [p for p in [release_problem(release)] if p]
    return found + (object_problems(rendered) if rendered is not None and not found else [])
