"""The stack spec's NodePool rules: each bad value of the shipped Karpenter stack stops the preview
at exit 2, naming the field, the value and the rule; the provisioning outcomes the placement
refuses (a reservation's count, a pool's limits, a controller replica with no second node)."""

from __future__ import annotations

from gpufleet.simulate import karpenter
from gpufleet.stack import files
from gpufleet.stack.spec import decode_config, load_spec
from tests.conftest import ROOT, refused_cases, spec_errors

STACK = "eks-karpenter-gpu"
POOL = "gpufleet:eks.nodePools"

test_refused = refused_cases({
    "a model none of the families carries": (STACK, f"{POOL}[0].gpu", {"names": ["h100"]}, (
        f'{POOL}[0].instanceFamilies = ["g6e", "g5"]: its requirements admit no instance type', "[rule: karpenter-nodepool-admits-a-type]")),
    "a family the EC2 data lacks": (STACK, f"{POOL}[0].instanceFamilies", ["g9z"], (
        f"{POOL}[0].instanceFamilies[0] = 'g9z': no instance type of the catalog's EC2 data is of this family", "[rule: instance-type-known]")),
    "a type the EC2 data lacks": (STACK, f"{POOL}[1].instanceTypes", ["p5.96xlarge"], (f"{POOL}[1].instanceTypes[0] = 'p5.96xlarge'", "[rule: instance-type-known]")),
    "reserved capacity with no reservation": (STACK, f"{POOL}[1].capacityReservations", [], (
        f'{POOL}[1].capacityTypes = ["reserved"]: it allows only reserved capacity, and its EC2NodeClass selects no capacity reservation',
        "[rule: karpenter-reserved-has-reservations]")),
    "reservations on an on-demand pool": (STACK, f"{POOL}[1].capacityTypes", ["on-demand"], ("capacityReservations are launched into only with capacityTypes reserved", "[rule: karpenter-pool-reservations]")),
    "an EFA pool in two zones": (STACK, f"{POOL}[1].zones", ["us-east-1a", "us-east-1b"], (
        f'{POOL}[1].zones = ["us-east-1a", "us-east-1b"]: EFA node groups must be in one availability zone; the pool\'s zones are us-east-1a, us-east-1b',
        "[rule: eks-efa-single-az]")),
    "a zone outside the VPC": (STACK, f"{POOL}[1].zones", ["us-east-1c"], (f"{POOL}[1].zones[0] = 'us-east-1c': not one of the created VPC's zones", "[rule: node-group-zones]")),
    "EFA on types without it": (STACK, f"{POOL}[0].efa", {}, (f"{POOL}[0].efa = {{}}: g5.", "does not support EFA (EC2 NetworkInfo.EfaSupported is false)", "[rule: eks-efa-supported]")),
    "gpu and neuron together": (STACK, f"{POOL}[0].neuron", {}, ("give gpu or neuron (exactly one)", "[rule: karpenter-pool-accelerator]")),
    "an unpinned AMI": (STACK, f"{POOL}[0].amiVersion", "latest", (f"{POOL}[0].amiVersion = 'latest'",)),
    "a workload on a pool that does not exist": (STACK, "gpufleet:eks.workloads[0].nodePool", "serve", (
        "no node group or NodePool of that name (have: inference, train)", "[rule: node-pool-exists]")),
    "a GPU no type has, by model and count": (STACK, f"{POOL}[0]", {"name": "inference", "gpu": {"names": ["h100"], "count": 3}, "maxNodes": 1, "amiVersion": "v20260724"}, (
        f'{POOL}[0].gpu = {{"names": ["h100"], "count": 3}}: its requirements admit no instance type', "[rule: karpenter-nodepool-admits-a-type]")),
    "a Neuron device no type has": (STACK, f"{POOL}[0]", {"name": "inference", "neuron": {"names": ["inferentia9"]}, "maxNodes": 1, "amiVersion": "v20260724"}, (
        f'{POOL}[0].neuron = {{"names": ["inferentia9"]}}: its requirements admit no instance type', "[rule: karpenter-nodepool-admits-a-type]")),
    "a label the kubelet may not set": (STACK, f"{POOL}[0].labels", {"kubernetes.io/team": "ml"}, (f"{POOL}[0].labels", "[rule: k8s-node-labels]")),
    # Refused first, as the API server (the CRD's CEL rules) and Karpenter's controller (Go's
    # time.ParseDuration into an int64) would refuse them, though each fits the CRD's pattern.
    "a label the NodePool CRD reserves": (STACK, f"{POOL}[0].labels", {"karpenter.sh/nodepool": "other"}, (
        f"{POOL}[0].labels.karpenter.sh/nodepool = 'karpenter.sh/nodepool': label \"karpenter.sh/nodepool\" is restricted: the API server refuses the NodePool",
        "[rule: karpenter-crd-schema]")),
    "the hostname label": (STACK, f"{POOL}[0].labels", {"kubernetes.io/hostname": "n1"}, (
        'label "kubernetes.io/hostname" is restricted', "[rule: karpenter-crd-schema]")),
    "a consolidateAfter past Go's time.Duration": (STACK, f"{POOL}[0].consolidateAfter", "2562048h", (
        f"{POOL}[0].consolidateAfter = '2562048h': '2562048h' is no duration Go's time.ParseDuration reads", "[rule: karpenter-values-in-range]")),
    "an expireAfter past Go's time.Duration": (STACK, f"{POOL}[1].expireAfter", "99999999999999999999s", (
        f"{POOL}[1].expireAfter = '99999999999999999999s'", "an int64 of nanoseconds", "[rule: karpenter-values-in-range]")),
    "more training pods than the reservation holds": (STACK, "gpufleet:eks.workloads[1].replicas", 3, (
        "Job default/finetune: 1 of 3 Pending",
        "NodePool train: held back by its capacity reservations: all 2 reserved instances are launched", "[rule: k8s-pods-schedulable]")),
    "more services than the pool's limits hold": (STACK, f"{POOL}[0].maxNodes", 2, (
        "Deployment default/llm-serve: 1 of 3 Pending", "NodePool inference: held back by its limits (cpu 128, nvidia.com/gpu 2)", "[rule: k8s-pods-schedulable]")),
})


def test_the_controller_s_second_replica_needs_a_second_system_node(stack_variant):
    """Karpenter's chart keeps one controller per node (its hostname anti-affinity): one system node
    leaves a replica Pending, in kube-scheduler's words."""
    def one_node(c):
        c["gpufleet:eks"]["systemNodeGroup"] = {"minSize": 1, "desiredSize": 1, "maxSize": 1}

    err = spec_errors(stack_variant(one_node, STACK))
    assert "Deployment kube-system/karpenter (karpenter 1.14.1): 1 of 2 Pending" in err
    assert "node(s) didn't match pod anti-affinity rules" in err


def test_pools_need_a_created_cluster(stack_variant):
    def existing(c):
        c["gpufleet:eks"]["cluster"] = {"name": "karp-gpu", "securityGroupId": "sg-0123456789abcdef0"}

    err = spec_errors(stack_variant(existing, STACK))
    assert "Karpenter is installed on a cluster gpufleet creates" in err and "[rule: karpenter-cluster]" in err


def test_a_pool_whose_types_no_zone_offers(stack_variant):
    """us-east-1e offers no g6e and no g5 (moto's DescribeInstanceTypeOfferings): the pool's zone, or
    with none named the VPC's, is where Karpenter looks for an offering."""
    def in_1e(c):
        c["gpufleet:eks"]["network"]["create"]["zones"] = ["us-east-1a", "us-east-1b", "us-east-1e"]
        c["gpufleet:eks"]["nodePools"][0]["zones"] = ["us-east-1e"]

    err = spec_errors(stack_variant(in_1e, STACK))
    assert f'{POOL}[0].zones = ["us-east-1e"]: none of the 10 instance types its requirements admit is offered in us-east-1 (us-east-1e)' in err
    assert "[rule: karpenter-nodepool-offered]" in err


def test_a_neuron_pool_under_auto_mode_names_its_families(stack_variant):
    def neuron(c):
        c["gpufleet:eks"]["nodePools"][0] = {"name": "inf", "neuron": {}, "maxNodes": 1}

    err = spec_errors(stack_variant(neuron, "eks-auto-gpu"))
    assert f"{POOL}[0].instanceFamilies = null: a Neuron pool under Auto Mode names its families or types" in err
    assert "[rule: eks-auto-mode-node-class]" in err


def test_an_efa_pool_s_types_lay_out_their_interfaces_alike(stack_variant):
    def mixed(c):
        pool = c["gpufleet:eks"]["nodePools"][1]
        pool["gpu"] = {"count": 8}
        pool["instanceTypes"] = ["p5.48xlarge", "p4d.24xlarge"]
        pool["efa"] = {"placementGroup": False}

    err = spec_errors(stack_variant(mixed, STACK))
    assert f'{POOL}[1].efa = {{"placementGroup": false}}: the admitted types lay out EFA differently (p4d.24xlarge, p5.48xlarge)' in err
    assert "[rule: eks-efa-layout]" in err


def test_karpenter_s_node_role_name_fits_iam(stack_variant):
    """The getting-started template names the nodes' role KarpenterNodeRole-<cluster>; IAM takes 64
    characters (its API model), an EKS cluster name 100."""
    err = spec_errors(stack_variant(lambda c: c["gpufleet:eks"]["cluster"].__setitem__("name", "k" * 47), STACK))
    assert f"gpufleet:eks.cluster.name = '{'k' * 47}': Karpenter's node role is named KarpenterNodeRole-{'k' * 47}: at most 64 characters (iam API, CreateRoleRequest.RoleName)" in err
    assert "[rule: aws-api-model]" in err


def test_a_huge_replica_count_is_counted_in_bulk_at_the_spec_door(monkeypatch):
    """The stack's provisioning check launches NodeClaims as the plan side does, identical ones
    counted in bulk (simulate/karpenter.py): 10^5 replicas of one GPU each on a pool of maxNodes
    100000 fill as many claims as 10 replicas do. Bounded by work, not time: before the bulk count,
    each replica filled its own claims (2003 for 1000 replicas, some 10 minutes for 10^5), and a
    regression raises here at the budget rather than hang."""
    fill, filled = karpenter._add, [0]

    def counted(*args, **kwargs):
        filled[0] += 1
        assert filled[0] < 100, "NodeClaims are filled replica by replica at the spec door"
        return fill(*args, **kwargs)

    monkeypatch.setattr(karpenter, "_add", counted)
    config = decode_config(files.load(ROOT / "stacks" / f"Pulumi.{STACK}.yaml").pulumi_config())
    config["eks"]["nodePools"][0]["maxNodes"] = 100_000
    work = {}
    for replicas in (10, 100_000):
        config["eks"]["workloads"][0]["replicas"] = replicas
        filled[0] = 0
        load_spec(config)  # valid: every replica gets a node
        work[replicas] = filled[0]
    assert work[100_000] == work[10] > 0
