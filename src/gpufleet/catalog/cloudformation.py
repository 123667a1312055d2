"""Karpenter's getting-started CloudFormation template (data/karpenter/, shipped unchanged with its
SOURCE.md), read as the facts gpufleet's Karpenter component builds from: the node role's managed
policies, the controller's policy documents, the interruption queue and its policy, the EventBridge
rules. `!Sub` strings are substituted as CloudFormation does, from the values the caller gives."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from gpufleet.catalog.catalog import DATA, shipped_yaml

TEMPLATE = DATA / "karpenter" / "cloudformation.yaml"
SOURCE = "github.com/aws/karpenter-provider-aws website/content/en/docs/getting-started/getting-started-with-karpenter/cloudformation.yaml @bde00654 (v1.14.1)"


@dataclass(frozen=True)
class Intrinsic:
    """A CloudFormation intrinsic as written: Sub, GetAtt or Ref, and its argument."""

    function: str
    argument: str


INTRINSICS = {f"!{function}": functools.partial(Intrinsic, function) for function in ("Sub", "GetAtt", "Ref")}


@functools.cache
def resources() -> Mapping[str, Mapping]:
    return shipped_yaml(TEMPLATE, INTRINSICS)["Resources"]


def substitute(text: str, values: Mapping[str, str]) -> str:
    """`!Sub`: every ${Name} replaced by its value; a name not given is an error, never left in."""

    def one(match: re.Match) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"{SOURCE}: ${{{name}}} has no value")
        return values[name]

    return re.sub(r"\$\{([^}]+)\}", one, text)


def resolve(value, values: Mapping[str, str]):
    """A property with its intrinsics resolved (GetAtt X.Y and Ref X read as the values of "X.Y" and "X")."""
    if isinstance(value, Intrinsic):
        return substitute(value.argument, values) if value.function == "Sub" else values[value.argument]
    if isinstance(value, Mapping):
        return {k: resolve(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, values) for v in value]
    return value


def of_type(type_: str) -> dict[str, Mapping]:
    """The template's resources of one CloudFormation type, by logical name, in the template's order."""
    return {name: r["Properties"] for name, r in resources().items() if r["Type"].strip("'\"") == type_}


def policy_documents(values: Mapping[str, str]) -> dict[str, str]:
    """The controller's managed policies (AWS::IAM::ManagedPolicy), by logical name: JSON documents."""
    return {name: json.dumps(json.loads(resolve(p["PolicyDocument"], values))) for name, p in of_type("AWS::IAM::ManagedPolicy").items()}


def node_role_name(cluster_name: str) -> str:
    """The nodes' role name the template gives a cluster (KarpenterNodeRole-<cluster>)."""
    return resolve(of_type("AWS::IAM::Role")["KarpenterNodeRole"]["RoleName"], {"ClusterName": cluster_name})
