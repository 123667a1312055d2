"""src/gpufleet/policies/karpenter.py: each NodePool rule with a violating and a clean pool, judged by the pack
over gRPC. The foreign program's NodePools are judged in tests/corpus."""

from __future__ import annotations

from gpufleet.catalog import catalog, tokens
from tests.policy_helpers import findings, resource

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}


def _pool(name: str, requirements: list[dict], taints=(), limits=None) -> dict:
    spec = {
        "template": {
            "spec": {
                "requirements": requirements,
                "taints": list(taints),
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            }
        }
    }
    if limits is not None:
        spec["limits"] = limits
    return resource(
        tokens.KARPENTER_NODE_POOL, name, {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}
    )


def _said(result, policy: str, name: str) -> list[str]:
    """A finding's own words: the message after the policy's description."""
    return [m.split("\n", 1)[-1] for m in findings(result, policy, name)]


def _family(*families: str) -> dict:
    return {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": list(families)}


def test_requirements_that_admit_no_type(judge):
    result = judge(
        [
            _pool("none", [_family("g5"), {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["8"]}]),
            _pool("some", [_family("g5"), {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gte", "values": ["8"]}]),
            _pool(
                "unjudged",
                [
                    _family("g5"),
                    {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["8"]},
                    # The one label of the provider's the catalog does not derive (curated notInCatalog).
                    {"key": "karpenter.k8s.aws/instance-network-bandwidth", "operator": "Gt", "values": ["100"]},
                ],
            ),
            _pool("newer", [_family("g9z")]),  # a family the catalog's EC2 data does not hold: a typo, or newer than the data
        ]
    )
    policy = "karpenter-nodepool-admits-a-type"
    assert _said(result, policy, "none") == [
        "NodePool 'none': its requirements admit no instance type: Karpenter never launches a node for it, and its pods stay Pending"
    ]
    assert _said(result, policy, "some") == _said(result, policy, "unjudged") == _said(result, policy, "newer") == []
    assert _said(result, "rules-not-judged", "newer") == [
        "karpenter-nodepool-admits-a-type was not judged: Karpenter NodePool 'newer': requirements name g9z, which the catalog's EC2 data does not hold (a typo, or newer than the data): not judged"
    ]
    assert {f.level for f in result.findings if f.policy == policy} == {"mandatory"}


def test_an_accelerator_pool_carries_its_taint_and_limits(judge):
    result = judge(
        [
            _pool("bare", [_family("g6e")]),
            _pool("kept", [_family("g6e")], taints=[GPU_TAINT], limits={"nvidia.com/gpu": 16}),
            _pool("mixed", [_family("g6e", "m7i")]),  # not every type is a GPU type: neither rule applies
            _pool("neuron", [_family("inf2")], taints=[{"key": "aws.amazon.com/neuron", "effect": "NoSchedule"}]),
            _pool(
                "other-taint", [_family("g6e")], taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}], limits={"cpu": 100}
            ),
            _pool("preferred", [_family("g6e")], taints=[{"key": "nvidia.com/gpu", "effect": "PreferNoSchedule"}], limits={"cpu": 100}),
            _pool("evicting", [_family("g6e")], taints=[{"key": "nvidia.com/gpu", "effect": "NoExecute"}], limits={"cpu": 100}),
        ]
    )
    assert _said(result, "karpenter-accelerator-pool-tainted", "bare") == [
        "NodePool 'bare': every type it admits has nvidia accelerators but it has no nvidia.com/gpu:NoSchedule taint: any Pending pod may make Karpenter launch one of them"
    ]
    assert _said(result, "karpenter-accelerator-pool-limited", "bare") == [
        "NodePool 'bare': every type it admits has nvidia accelerators but it sets no limits: set spec.limits (nvidia.com/gpu, cpu) to bound what it may launch"
    ]
    assert _said(result, "karpenter-accelerator-pool-limited", "neuron") == [
        "NodePool 'neuron': every type it admits has neuron accelerators but it sets no limits: set spec.limits (aws.amazon.com/neuron, cpu) to bound what it may launch"
    ]
    for name in ("kept", "mixed"):
        assert _said(result, "karpenter-accelerator-pool-tainted", name) == _said(result, "karpenter-accelerator-pool-limited", name) == []
    assert (
        _said(result, "karpenter-accelerator-pool-tainted", "neuron")
        == _said(result, "karpenter-accelerator-pool-tainted", "evicting")
        == []
    )
    # Another key, or an effect that only prefers, keeps no other pod off.
    assert (
        _said(result, "karpenter-accelerator-pool-tainted", "other-taint") != []
        and _said(result, "karpenter-accelerator-pool-tainted", "preferred") != []
    )
    assert {f.level for f in result.findings if f.policy.startswith("karpenter-accelerator")} == {"advisory"}


def _node_class(name: str, **spec) -> dict:
    inputs = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "node", **spec},
    }
    return resource(tokens.KARPENTER_EC2_NODE_CLASS, f"{name}-class", inputs)


def _reserved_pool(name: str, node_class: str, capacity_types=("reserved",)) -> dict:
    pool = _pool(
        name,
        [_family("p5"), {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(capacity_types)}],
        taints=[GPU_TAINT],
        limits={"nvidia.com/gpu": 16},
    )
    pool["inputs"]["spec"]["template"]["spec"]["nodeClassRef"]["name"] = node_class
    return pool


def test_reserved_capacity_needs_reservations_the_node_class_selects(judge):
    result = judge(
        [
            _node_class("plain"),
            _node_class("blocks", capacityReservationSelectorTerms=[{"id": "cr-0123456789abcdef0"}]),
            _reserved_pool("none-selected", "plain"),
            _reserved_pool("selected", "blocks"),
            _reserved_pool("falls-back", "plain", ("reserved", "on-demand")),
            _reserved_pool("elsewhere", "not-in-this-stack"),
        ]
    )
    policy = "karpenter-reserved-has-reservations"
    assert _said(result, policy, "none-selected") == [
        "NodePool 'none-selected': it allows only reserved capacity, and its EC2NodeClass selects no capacity reservation "
        "(capacityReservationSelectorTerms): Karpenter has no offering to launch, and its pods stay Pending"
    ]
    assert {f.level for f in result.findings if f.policy == policy} == {"mandatory"}
    for name in ("selected", "falls-back", "elsewhere"):
        assert _said(result, policy, name) == [], name
    assert sorted(_said(result, "rules-not-judged", "elsewhere")) == [
        "karpenter-nodepool-offered was not judged: NodePool 'elsewhere': no region known before apply (aws:region, AWS_REGION or one AWS provider's region)",
        "karpenter-reserved-has-reservations was not judged: NodePool 'elsewhere' allows only reserved capacity, and its EC2NodeClass 'not-in-this-stack' is not in this stack",
    ]


def _aliased_pool(name: str, family: str, alias: str) -> list[dict]:
    pool = _pool(name, [_family(family)], taints=[GPU_TAINT], limits={"nvidia.com/gpu": 8})
    pool["inputs"]["spec"]["template"]["spec"]["nodeClassRef"]["name"] = name
    node_class = _node_class(name)
    node_class["inputs"]["spec"]["amiSelectorTerms"] = [{"alias": alias}]
    return [pool, node_class]


def test_the_node_class_s_ami_runs_the_pool_s_accelerators(judge):
    """Karpenter 1.14.1's AMI families: AL2's accelerated AMI is x86_64 only, so Graviton GPU types
    (g5g) get no AMI under al2@latest; AL2023 and Bottlerocket have an arm64 NVIDIA variant."""
    result = judge(
        [
            *_aliased_pool("al2-arm", "g5g", "al2@latest"),
            *_aliased_pool("al2023-arm", "g5g", "al2023@latest"),
            *_aliased_pool("br-arm", "g5g", "bottlerocket@latest"),
            *_aliased_pool("al2-x86", "g5", "al2@latest"),
        ]
    )
    policy = "karpenter-ami-runs-accelerator"
    assert _said(result, policy, "al2-arm") == [
        "NodePool 'al2-arm': its EC2NodeClass's AMI alias family al2 has no AMI variant for the accelerators of the types it admits: "
        "Karpenter finds no AMI for them and launches none; use an alias family with the accelerator's variant (al2023 or bottlerocket)"
    ]
    for name in ("al2023-arm", "br-arm", "al2-x86"):
        assert _said(result, policy, name) == [], name
    assert {f.level for f in result.findings if f.policy == policy} == {"mandatory"}


def test_objects_are_valid_against_their_crd(judge):
    """The CRD's schema at Karpenter 1.14.1, as the API server holds it; a value known only after
    apply (the node role's ARN, the subnets) is not judged."""
    bad = _pool("bad", [{"key": "karpenter.k8s.aws/instance-family", "operator": "Within", "values": ["g5"]}])
    bad["inputs"]["spec"]["disruption"] = {"consolidationPolicy": "WhenEmpty"}  # consolidateAfter is required with it
    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    node_class = _node_class("default", role=unknown, subnetSelectorTerms=unknown, securityGroupSelectorTerms=[{"id": unknown}])
    result = judge([bad, _pool("good", [_family("g5")], taints=[GPU_TAINT], limits={"nvidia.com/gpu": 4}), node_class])
    said = _said(result, "karpenter-crd-schema", "bad")
    assert said == [
        "NodePool 'bad': spec.disruption: 'consolidateAfter' is a required property (its CRD's schema, Karpenter 1.14.1; its 12 CEL rules are not evaluated)",
        "NodePool 'bad': spec.template.spec.requirements[0].operator: 'Within' is not one of ['Gte', 'Lte', 'In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] "
        "(its CRD's schema, Karpenter 1.14.1; its 12 CEL rules are not evaluated)",
    ]
    assert _said(result, "karpenter-crd-schema", "good") == _said(result, "karpenter-crd-schema", "default-class") == []
    assert {f.level for f in result.findings if f.policy == "karpenter-crd-schema"} == {"mandatory"}


def test_label_keys_the_crds_cel_rules_restrict(judge):
    """The NodePool CRD's CEL rules on label keys, read from the pinned CRD (karpenter.sh_nodepools.yaml
    L223-L231, L292-L300): the API server refuses such a pool at apply."""
    bad = _pool("restricted", [_family("g5"), {"key": "kubernetes.io/hostname", "operator": "Exists"}], taints=[GPU_TAINT], limits={"cpu": 8})
    bad["inputs"]["spec"]["template"]["metadata"] = {"labels": {"karpenter.sh/nodepool": "other", "team": "ml"}}
    good = _pool("allowed", [_family("g5"), {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}], taints=[GPU_TAINT])
    good["inputs"]["spec"]["template"]["metadata"] = {"labels": {"karpenter.k8s.aws/instance-family": "g5"}}
    result = judge([bad, good])
    rule = "the API server refuses the NodePool (its CRD's CEL rule at {}, Karpenter 1.14.1) (its CRD's schema, Karpenter 1.14.1; its 12 CEL rules are not evaluated)"
    assert _said(result, "karpenter-crd-schema", "restricted") == [
        "NodePool 'restricted': spec.template.metadata.labels['karpenter.sh/nodepool']: label \"karpenter.sh/nodepool\" is restricted: "
        + rule.format(".spec.template.metadata.labels"),
        "NodePool 'restricted': spec.template.spec.requirements[1].key: label \"kubernetes.io/hostname\" is restricted: "
        + rule.format(".spec.template.spec.requirements[].key"),
    ]
    assert _said(result, "karpenter-crd-schema", "allowed") == []


def test_values_past_the_int64_karpenter_reads_them_into(judge):
    """Each fits the CRD's pattern; Karpenter parses it into an int64 (Go's time.ParseDuration,
    resource.Quantity): a finding on the resource and its field, not a failed Analyze."""
    huge = _pool("huge", [_family("g6e")], taints=[GPU_TAINT], limits={"cpu": "1e400", "memory": "9" * 400, "nvidia.com/gpu": "1e999999999"})
    huge["inputs"]["spec"]["disruption"] = {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "2562048h"}
    huge["inputs"]["spec"]["template"]["spec"]["expireAfter"] = "99999999999999999999s"
    edge = _pool("edge", [_family("g6e")], taints=[GPU_TAINT], limits={"cpu": "9223372036854775807m", "nvidia.com/gpu": 8})
    edge["inputs"]["spec"]["disruption"] = {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "2562047h"}
    edge["inputs"]["spec"]["template"]["spec"]["expireAfter"] = "Never"
    # The simulation reads this node class's kubelet for the pools' allocatable: refused values are gaps there.
    node_class = _node_class(
        "default", subnetSelectorTerms=[{"id": "subnet-1"}], securityGroupSelectorTerms=[{"id": "sg-1"}],
        kubelet={"evictionHard": {"memory.available": "1e400"}, "kubeReserved": {"memory": "1e19"}},
    )
    result = judge([huge, edge, node_class])
    assert sorted(_said(result, "karpenter-values-in-range", "default-class")) == [
        "EC2NodeClass 'default-class': spec.kubelet.evictionHard.memory.available: memory.available: '1e400' is out of range: Kubernetes counts it in an int64, at most 9223372036854775807",
        "EC2NodeClass 'default-class': spec.kubelet.kubeReserved.memory: memory: '1e19' is out of range: Kubernetes counts it in an int64, at most 9223372036854775807",
    ]
    duration = "is no duration Go's time.ParseDuration reads (at most 2562047h47m16.854775807s, an int64 of nanoseconds): Karpenter cannot read the NodePool"
    int64 = "is out of range: Kubernetes counts it in an int64, at most 9223372036854775807"
    assert sorted(_said(result, "karpenter-values-in-range", "huge")) == sorted([
        f"NodePool 'huge': spec.limits.cpu: cpu: '1e400' {int64} thousandths (9223372036854775.807)",
        f"NodePool 'huge': spec.limits.memory: memory: '{'9' * 39}... (402 characters) {int64}",
        f"NodePool 'huge': spec.limits.nvidia.com/gpu: nvidia.com/gpu: '1e999999999' {int64}",
        f"NodePool 'huge': spec.disruption.consolidateAfter: '2562048h' {duration}",
        f"NodePool 'huge': spec.template.spec.expireAfter: '99999999999999999999s' {duration}",
    ])
    assert _said(result, "karpenter-values-in-range", "edge") == []
    assert {f.level for f in result.findings if f.policy == "karpenter-values-in-range"} == {"mandatory"}


def _job(name: str, annotations: dict | None = None) -> dict:
    template = {
        "spec": {
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [
                {"name": "c", "image": "x:1", "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}
            ],
        }
    }
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return resource(
        "kubernetes:batch/v1:Job",
        name,
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"parallelism": 1, "template": template}},
    )


def test_batch_pods_on_a_consolidating_pool_say_do_not_disrupt(judge):
    gpu = _pool("gpu", [_family("g5")], taints=[GPU_TAINT], limits={"nvidia.com/gpu": 8})  # the CRD's default: WhenEmptyOrUnderutilized
    policy = "karpenter-batch-pods-not-disrupted"
    result = judge([gpu, _job("train"), _job("kept", {"karpenter.sh/do-not-disrupt": "true"})])
    [message] = _said(result, policy, "train")
    assert message.startswith("Job default/train on NodePool gpu: its pods run on a pool that consolidates with WhenEmptyOrUnderutilized")
    assert _said(result, policy, "kept") == []
    assert {f.level for f in result.findings if f.policy == policy} == {"advisory"}
    quiet = _pool("gpu", [_family("g5")], taints=[GPU_TAINT], limits={"nvidia.com/gpu": 8})
    quiet["inputs"]["spec"]["disruption"] = {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"}
    assert _said(judge([quiet, _job("train")]), policy, "train") == []


def test_efa_pods_no_pool_can_give_efa_stay_pending(judge):
    """A pod asking for EFA interfaces that no NodePool's types (or its node class's layout) give is
    never provisioned: the placement's mandatory verdict, on a cluster of the plan."""
    cluster = resource("aws:eks/cluster:Cluster", "ml", {"name": "ml", "version": "1.35"})
    node_class = resource(
        tokens.KARPENTER_EC2_NODE_CLASS,
        "default",
        {"metadata": {"name": "default"}, "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}]}},
    )
    efa = _job("allreduce")
    container = efa["inputs"]["spec"]["template"]["spec"]["containers"][0]
    container["resources"] = {
        "requests": {"nvidia.com/gpu": "1", "vpc.amazonaws.com/efa": "1"},
        "limits": {"nvidia.com/gpu": "1", "vpc.amazonaws.com/efa": "1"},
    }
    policy = "k8s-pods-schedulable"
    g5 = _pool(
        "gpu",
        [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g5.xlarge", "g5.2xlarge"]}],
        taints=[GPU_TAINT],
        limits={"nvidia.com/gpu": 8},
    )
    result = judge([cluster, node_class, g5, efa])
    [message] = _said(result, policy, "allreduce")
    assert "NodePool gpu: none of its 2 instance types holds the pod" in message and "Insufficient vpc.amazonaws.com/efa" in message
    assert {f.level for f in result.findings if f.policy == policy} == {"mandatory"}
    p5 = _pool("gpu", [_family("p5")], taints=[GPU_TAINT], limits={"nvidia.com/gpu": 8})
    assert "Insufficient vpc.amazonaws.com/efa" not in " ".join(_said(judge([cluster, node_class, p5, efa]), policy, "allreduce"))


def _pool_yaml(name: str, *requirements: str) -> str:
    """A NodePool document on the default EC2NodeClass, as a ConfigGroup's YAML holds it."""
    lines = "".join(f"        - {{{r}}}\n" for r in requirements)
    return f"""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
{lines}"""


G5 = "key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]"
NODE_POOLS_YAML = "---\n".join(
    [
        _pool_yaml("gpu", G5, "key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [h100]"),
        _pool_yaml("open", G5),
        """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
""",
    ]
)


def test_node_pools_of_a_config_group_are_judged_as_its_own(judge):
    """A yaml/v2 ConfigGroup is expanded by the provider, so a plan holds its YAML, not its objects:
    the pack reads the NodePools there, and says so of a ConfigFile whose YAML the plan does not hold."""
    group = resource("kubernetes:yaml/v2:ConfigGroup", "karpenter-pools", {"yaml": [NODE_POOLS_YAML]})
    result = judge([group])
    [message] = _said(result, "karpenter-nodepool-admits-a-type", "karpenter-pools")
    assert message.startswith("NodePool 'gpu': its requirements admit no instance type")
    [tainted] = _said(result, "karpenter-accelerator-pool-tainted", "karpenter-pools")
    assert tainted.startswith("NodePool 'open': every type it admits has nvidia accelerators but it has no nvidia.com/gpu:NoSchedule taint")
    release = resource("kubernetes:helm.sh/v3:Release", "karpenter", {"chart": "oci://public.ecr.aws/karpenter/karpenter", "values": {}})
    config_file = resource("kubernetes:yaml/v2:ConfigFile", "pools", {"file": "pools.yaml"})
    from gpufleet.plans import placement as plan_placement

    gaps = plan_placement.placement(plan_placement.from_plan({"resources": [release, config_file]})).gaps
    assert "ConfigFile 'pools' ('pools.yaml'): its YAML is not in the plan: Karpenter objects there are not read" in gaps


def test_a_pod_a_fargate_profile_selects_is_not_judged_pending(judge):
    """Karpenter's controller on Fargate (eks-ml-starter's layout): no node of the plan takes it, but
    a Fargate profile of the plan selects its namespace, so its verdict is advisory, saying why."""
    cluster = resource("aws:eks/cluster:Cluster", "ml", {"name": "ml", "version": "1.35"})
    profile = resource(
        "aws:eks/fargateProfile:FargateProfile",
        "system",
        {"clusterName": "ml", "selectors": [{"namespace": "karpenter", "labels": {"app.kubernetes.io/name": "karpenter"}}]},
    )
    release = resource(
        "kubernetes:helm.sh/v3:Release",
        "karpenter",
        # At the chart version whose values gpufleet holds: another would make the verdict advisory by itself.
        {"chart": "oci://public.ecr.aws/karpenter/karpenter", "version": catalog.load().facts.karpenter.chart.version, "namespace": "karpenter", "values": {}},
    )
    result = judge([cluster, profile, release])
    assert _said(result, "k8s-pods-schedulable", "karpenter") == []
    [said] = _said(result, "placement-unverified", "karpenter")
    assert "Fargate profiles of the plan select namespace karpenter: system (labels {'app.kubernetes.io/name': 'karpenter'})" in said
    assert _said(judge([cluster, release]), "k8s-pods-schedulable", "karpenter")  # without the profile, the verdict is the simulation's
