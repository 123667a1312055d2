"""The kubeconfig of a GKE cluster gpufleet creates, from the cluster's outputs (credentials from
gke-gcloud-auth-plugin, as `gcloud container clusters get-credentials` writes them)."""

from __future__ import annotations

import json

import pulumi


def kubeconfig(cluster_name: pulumi.Input[str], endpoint: pulumi.Input[str], ca_data: pulumi.Input[str]) -> pulumi.Output[str]:
    def render(values: list) -> str:
        name, server, ca = values
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": name, "cluster": {"server": f"https://{server}", "certificate-authority-data": ca}}],
                "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
                "current-context": name,
                "users": [
                    {
                        "name": name,
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1beta1",
                                "command": "gke-gcloud-auth-plugin",
                                "provideClusterInfo": True,
                            }
                        },
                    }
                ],
            }
        )

    return pulumi.Output.secret(pulumi.Output.all(cluster_name, endpoint, ca_data).apply(render))
