"""A live ECS cluster, read with boto3: its container instances and tasks as `aws ecs
describe-container-instances` and `describe-tasks` return them (the JSON a recording holds)."""

from __future__ import annotations

from gpufleet.verify.fleet import EcsFleet, Observed
from gpufleet.verify.verdict import BadInput

BATCH = 100  # the most ARNs one describe call takes (ECS API reference)


def _all(client, operation: str, key: str, **kwargs) -> list[str]:
    found: list[str] = []
    for page in client.get_paginator(operation).paginate(**kwargs):
        found += page.get(key) or []
    return found


def read(cluster: str, region: str, session=None) -> Observed:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    session = session or boto3.session.Session()
    client = session.client("ecs", region_name=region)
    try:
        arns = _all(client, "list_container_instances", "containerInstanceArns", cluster=cluster)
        instances = [
            ci
            for i in range(0, len(arns), BATCH)
            for ci in client.describe_container_instances(cluster=cluster, containerInstances=arns[i : i + BATCH])["containerInstances"]
        ]
        task_arns = _all(client, "list_tasks", "taskArns", cluster=cluster)
        tasks = [
            t
            for i in range(0, len(task_arns), BATCH)
            for t in client.describe_tasks(cluster=cluster, tasks=task_arns[i : i + BATCH])["tasks"]
        ]
    except NoCredentialsError:
        raise BadInput(f"--region {region} --cluster {cluster}: no AWS credentials to read the cluster with") from None
    except ClientError as err:
        error = err.response.get("Error", {})
        raise BadInput(f"--cluster {cluster} in {region}: {error.get('Code')}: {error.get('Message')}") from None
    except BotoCoreError as err:
        raise BadInput(f"--cluster {cluster} in {region}: {err}") from None
    return Observed(ecs=EcsFleet(instances, tasks), where=f"ECS cluster {cluster} in {region}")
