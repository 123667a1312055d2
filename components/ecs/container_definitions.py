"""Render a workload's containers as the ECS `containerDefinitions` document (pure, no Pulumi)."""

from __future__ import annotations

from components.ecs.args import ContainerArgs, WorkloadArgs


def container_definition(c: ContainerArgs) -> dict:
    env = dict(c.environment)
    definition: dict = {
        "name": c.name,
        "image": c.image,
        "essential": c.essential,
        "memory": c.memory,
        "cpu": c.cpu,
    }
    if c.command:
        definition["command"] = list(c.command)
    if c.gpus:
        # ECS pins whole GPUs to the container and sets NVIDIA_VISIBLE_DEVICES, but not the
        # driver capabilities the NVIDIA runtime needs for images not built on CUDA base images.
        definition["resourceRequirements"] = [{"type": "GPU", "value": str(c.gpus)}]
        env.setdefault("NVIDIA_DRIVER_CAPABILITIES", c.driver_capabilities)
    definition["environment"] = [{"name": k, "value": env[k]} for k in sorted(env)]
    return definition


def container_definitions(workload: WorkloadArgs) -> list[dict]:
    return [container_definition(c) for c in workload.containers]
