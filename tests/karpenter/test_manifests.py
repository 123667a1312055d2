"""What a pool's args derive, checked against moto's raw DescribeInstanceTypes records (not through
the catalog the derivation reads): the limits are maxNodes of the largest admitted type's
accelerators and vCPUs, for GPU and Neuron pools alike."""

from __future__ import annotations

from gpufleet.catalog import catalog
from gpufleet.catalog.generate.sources import MotoSnapshot
from gpufleet.karpenter import manifests
from gpufleet.karpenter.args import NodePoolArgs

RAW = MotoSnapshot().instance_types()


def _most(prefix: str, count) -> tuple[int, int]:
    """(the most accelerators, the most vCPUs) over the raw records of a family."""
    records = [r for name, r in RAW.items() if name.startswith(prefix)]
    return max(count(r) for r in records), max(r["VCpuInfo"]["DefaultVCpus"] for r in records)


def _pool(**terms) -> NodePoolArgs:
    return NodePoolArgs.model_validate({"name": "p", "maxNodes": 3, "amiVersion": "v20260724", **terms})


def test_a_gpu_pool_s_limits_are_its_largest_type_s_times_max_nodes():
    gpus, vcpus = _most("g5.", lambda r: sum(g["Count"] for g in r["GpuInfo"]["Gpus"]))
    assert gpus == 8 and vcpus == 192  # g5's counts differ by type: the largest bounds the pool
    assert manifests.limits(_pool(gpu={}, instanceFamilies=["g5"]), catalog.load()) == {"nvidia.com/gpu": 3 * gpus, "cpu": 3 * vcpus}


def test_a_neuron_pool_s_limits_count_its_devices():
    devices, vcpus = _most("inf2.", lambda r: sum(d["Count"] for d in r["NeuronInfo"]["NeuronDevices"]))
    pool = _pool(neuron={"names": ["inferentia2"]})
    assert sorted(it.name for it in manifests.admitted(pool, catalog.load())) == sorted(n for n in RAW if n.startswith("inf2."))
    assert manifests.limits(pool, catalog.load()) == {"aws.amazon.com/neuron": 3 * devices, "cpu": 3 * vcpus}
