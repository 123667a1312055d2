"""Kubeconfigs of clusters gpufleet creates, from the cluster's outputs, with an exec credential
plugin (nothing secret is stored): `aws eks get-token` for EKS, gke-gcloud-auth-plugin for GKE."""

from __future__ import annotations

import json
from collections.abc import Callable

import pulumi


def exec_kubeconfig(
    cluster_name: pulumi.Input[str], server: pulumi.Input[str], ca_data: pulumi.Input[str], user_exec: Callable[[str], dict]
) -> pulumi.Output[str]:
    """A one-cluster kubeconfig whose user runs `user_exec(cluster name)` (a client.authentication.k8s.io exec block)."""

    def render(values: list) -> str:
        name, url, ca = values
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": name, "cluster": {"server": url, "certificate-authority-data": ca}}],
                "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
                "current-context": name,
                "users": [{"name": name, "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", **user_exec(name)}}}],
            }
        )

    return pulumi.Output.secret(pulumi.Output.all(cluster_name, server, ca_data).apply(render))


def kubeconfig(cluster_name: pulumi.Input[str], endpoint: pulumi.Input[str], ca_data: pulumi.Input[str], region: str) -> pulumi.Output[str]:
    """An EKS cluster's: its endpoint is a URL already; the token from `aws eks get-token`."""
    return exec_kubeconfig(
        cluster_name,
        endpoint,
        ca_data,
        lambda name: {"command": "aws", "args": ["eks", "get-token", "--cluster-name", name, "--region", region]},
    )
