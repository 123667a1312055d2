"""The kubeconfig of an EKS cluster gpufleet creates, from the cluster's outputs (token from `aws eks get-token`)."""

from __future__ import annotations

import json

import pulumi


def kubeconfig(cluster_name: pulumi.Input[str], endpoint: pulumi.Input[str], ca_data: pulumi.Input[str], region: str) -> pulumi.Output[str]:
    def render(values: list) -> str:
        name, server, ca = values
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": ca}}],
                "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
                "current-context": name,
                "users": [
                    {
                        "name": name,
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1beta1",
                                "command": "aws",
                                "args": ["eks", "get-token", "--cluster-name", name, "--region", region],
                            }
                        },
                    }
                ],
            }
        )

    return pulumi.Output.secret(pulumi.Output.all(cluster_name, endpoint, ca_data).apply(render))
