"""src/gpufleet/policies/eks.py: each rule with a violating and a clean fixture, judged by the pack over gRPC."""

from __future__ import annotations

import dataclasses

from gpufleet.catalog import catalog
from gpufleet.rules.efa import efa_layout
from tests.policy_helpers import findings, resource

SG = "aws:ec2/securityGroup:SecurityGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
NG = "aws:eks/nodeGroup:NodeGroup"
SUBNET = "aws:ec2/subnet:Subnet"
SELF_ALL = {"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}


def _group(name: str, ingress=(SELF_ALL,), egress=(SELF_ALL,)) -> dict:
    return resource(SG, name, {"ingress": list(ingress), "egress": list(egress)})


def _template(name: str, instance_type: str, sg: dict, layout=None, **extra) -> dict:
    layout = layout if layout is not None else efa_layout(catalog.load().get(instance_type))
    interfaces = [
        {"deviceIndex": i.device_index, "networkCardIndex": i.network_card_index, "interfaceType": i.interface_type, "securityGroups": ["sg"]}
        for i in layout
    ]
    inputs = {"networkInterfaces": interfaces, "placement": {"groupName": "pg"}, **extra}
    return resource(LT, name, inputs, networkInterfaces=[sg])


def _node_group(name: str, instance_type: str, template: dict, subnets: list[dict], taints=None) -> dict:
    inputs = {"instanceTypes": [instance_type], "subnetIds": ["x"] * len(subnets), "taints": taints or []}
    return resource(NG, name, inputs, launchTemplate=[template], subnetIds=subnets)


def _subnet(name: str, zone: str) -> dict:
    return resource(SUBNET, name, {"availabilityZone": zone, "cidrBlock": "10.0.0.0/24"})


def test_efa_interfaces(judge):
    sg, a = _group("sg"), _subnet("a", "us-east-1b")
    it = catalog.load().get("p5.48xlarge")
    good = _template("good", "p5.48xlarge", sg)
    # eksctl issue 7520: device indexes 0, 1, 2, ... past each p5 card's two interfaces
    counted = _template("counted", "p5.48xlarge", sg, [dataclasses.replace(i, device_index=k) for k, i in enumerate(efa_layout(it, "efa-primary"))])
    result = judge([sg, a, good, counted, _node_group("ng-good", "p5.48xlarge", good, [a]), _node_group("ng-counted", "p5.48xlarge", counted, [a])])
    assert findings(result, "eks-efa-interfaces", "good") == []
    messages = findings(result, "eks-efa-interfaces", "counted")
    assert len(messages) == it.max_efa_interfaces - 2
    assert (
        "node group 'ng-counted''s launch template 'counted' (p5.48xlarge): device index 2 on network card 2: the card of "
        "p5.48xlarge takes 2 interfaces, device indexes 0..1"
    ) in messages[0]


def test_fewer_efa_interfaces_are_advisory(judge):
    sg = _group("sg")
    it = catalog.load().get("p5.48xlarge")
    half = _template("half", "p5.48xlarge", sg, efa_layout(it, count=16), instanceType="p5.48xlarge")
    result = judge([sg, half, _template("all", "p5.48xlarge", sg, instanceType="p5.48xlarge")])
    assert findings(result, "eks-efa-interfaces", "half") == [] and findings(result, "eks-efa-bandwidth", "all") == []
    [message] = findings(result, "eks-efa-bandwidth", "half")
    assert "16 of the 32 EFA interfaces p5.48xlarge takes" in message
    assert {f.level for f in result.findings if f.policy == "eks-efa-bandwidth"} == {"advisory"}


def test_efa_interfaces_use_the_templates_own_type_without_a_node_group(judge):
    sg = _group("sg")
    b300 = catalog.load().get("p6-b300.48xlarge")
    per_card = [dataclasses.replace(i, interface_type="efa") for i in efa_layout(b300)]  # efa on card 0 too
    result = judge([sg, _template("b300", "p6-b300.48xlarge", sg, per_card, instanceType="p6-b300.48xlarge")])
    messages = findings(result, "eks-efa-interfaces", "b300")
    assert any("17 EFA interfaces but p6-b300.48xlarge takes at most 16" in m for m in messages)
    assert any("network card 0 of p6-b300.48xlarge does not support efa" in m for m in messages)


def test_efa_security_group(judge):
    good_sg, open_egress = _group("self"), _group("cidr-egress", egress=({"protocol": "-1", "fromPort": 0, "toPort": 0, "cidrBlocks": ["0.0.0.0/0"]},))
    result = judge([good_sg, open_egress, _template("good", "trn1.32xlarge", good_sg), _template("bad", "trn1.32xlarge", open_egress)])
    assert findings(result, "eks-efa-security-group", "good") == []
    [message] = findings(result, "eks-efa-security-group", "bad")
    assert "cidr-egress (ingress yes, egress no)" in message


def test_efa_single_az(judge):
    sg, b, c = _group("sg"), _subnet("b", "us-east-1b"), _subnet("c", "us-east-1c")
    t1, t2 = _template("t1", "trn1.32xlarge", sg), _template("t2", "trn1.32xlarge", sg)
    result = judge([sg, b, c, t1, t2, _node_group("one-zone", "trn1.32xlarge", t1, [b]), _node_group("two-zones", "trn1.32xlarge", t2, [b, c])])
    assert findings(result, "eks-efa-single-az", "one-zone") == []
    [message] = findings(result, "eks-efa-single-az", "two-zones")
    assert "the subnets span us-east-1b, us-east-1c" in message


def test_efa_placement(judge):
    sg = _group("sg")
    reservation = {"capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}}
    result = judge(
        [
            sg,
            _template("placed", "trn1.32xlarge", sg),
            _template("reserved", "trn1.32xlarge", sg, placement=None, capacityReservationSpecification=reservation),
            _template("nowhere", "trn1.32xlarge", sg, placement=None),
            _template("both", "trn1.32xlarge", sg, capacityReservationSpecification=reservation),
        ]
    )
    assert findings(result, "eks-efa-placement", "placed") == [] and findings(result, "eks-efa-placement", "reserved") == []
    [message] = findings(result, "eks-efa-placement", "nowhere")
    assert "need a cluster placement group" in message
    [message] = findings(result, "eks-efa-placement", "both")
    assert "carries its own placement" in message


def test_taint_effect_enum(judge):
    sg, a = _group("sg"), _subnet("a", "us-east-1b")
    t = _template("t", "trn1.32xlarge", sg)
    result = judge(
        [
            sg, a, t,
            _node_group("api", "trn1.32xlarge", t, [a], [{"key": "aws.amazon.com/neuron", "effect": "NO_SCHEDULE"}]),
            _node_group("k8s", "trn1.32xlarge", t, [a], [{"key": "aws.amazon.com/neuron", "effect": "NoSchedule"}]),
        ]
    )
    assert findings(result, "eks-taint-effect-enum", "api") == []
    [message] = findings(result, "eks-taint-effect-enum", "k8s")
    assert "'NoSchedule' is the Kubernetes spelling; the EKS API takes 'NO_SCHEDULE'" in message


def test_one_driver_per_nvidia_node_group_with_the_gpu_operator(judge):
    """The accelerated NVIDIA AMI ships a driver: beside the GPU Operator's own driver that is two;
    a custom AMI with the operator's driver off is none. CPU groups and stacks without the operator
    are not judged."""
    chart = catalog.load().facts.charts.gpu_operator.chart

    def operator(driver: bool | None) -> dict:
        values = {} if driver is None else {"driver": {"enabled": driver}}
        return resource("kubernetes:helm.sh/v3:Release", "gpu-operator", {"chart": chart, "values": values})

    cpu = resource(NG, "cpu", {"instanceTypes": ["m5.large"]})
    nvidia_ami = resource(NG, "gpu", {"instanceTypes": ["g5.xlarge"]})  # no amiType: EKS picks the NVIDIA AMI
    custom = resource(NG, "custom", {"instanceTypes": ["g5.xlarge"], "amiType": "CUSTOM"})
    policy = "eks-gpu-driver"

    def by_group(result) -> dict[str, str]:
        return {f.urn.rsplit("::", 1)[-1]: f.message.splitlines()[-1] for f in result.findings if f.policy == policy}

    two = by_group(judge([operator(None), cpu, nvidia_ami]))
    ami = catalog.load().facts.eks
    default = next(n for n, f in ami.accelerated_ami_types.items() if f.default and f.accelerator == "nvidia" and "x86_64" in f.architectures)
    assert two == {"gpu": f"node group 'gpu': the EKS AMI type {default} installs the driver (amiType {default}) and so does the GPU Operator: two drivers; turn one of them off"}
    none = by_group(judge([operator(False), cpu, nvidia_ami, custom]))
    assert list(none) == ["custom"] and none["custom"].startswith("node group 'custom': amiType CUSTOM leaves the nodes without a GPU driver")
    assert by_group(judge([operator(True), custom])) == {}
    assert by_group(judge([cpu, nvidia_ami, custom])) == {}  # no operator in the stack
    result = judge([operator(None), nvidia_ami])
    assert {f.level for f in result.findings if f.policy == policy} == {"mandatory"}


def test_only_launch_templates_with_efa_are_efa_templates(judge):
    plain = resource(LT, "plain", {"instanceType": "m5.large", "networkInterfaces": [{"deviceIndex": 0}]})
    assert findings(judge([plain]), "eks-efa-security-group") == [] and findings(judge([plain]), "eks-efa-placement") == []


def test_every_efa_template_is_judged_past_one_that_cannot_be(judge):
    """A template of no known type, one whose group has no subnets of this stack, or whose subnets'
    zones are unknown is passed over; the next one is still judged."""
    sg, b, c = _group("sg"), _subnet("b", "us-east-1b"), _subnet("c", "us-east-1c")
    unknown_zone = resource(SUBNET, "later", {"cidrBlock": "10.0.9.0/24"})  # its zone is known only after apply
    typeless = _template("typeless", "p5.48xlarge", sg, instanceType=None)
    outside, unknown, spread = (_template(n, "trn1.32xlarge", sg) for n in ("outside", "unknown", "spread"))
    counted = _template("counted", "p5.48xlarge", sg, [dataclasses.replace(i, device_index=k) for k, i in enumerate(efa_layout(catalog.load().get("p5.48xlarge"), "efa-primary"))], instanceType="p5.48xlarge")
    result = judge([
        sg, b, c, unknown_zone, typeless, outside, unknown, spread, counted,
        resource(NG, "outside", {"instanceTypes": ["trn1.32xlarge"], "subnetIds": ["subnet-elsewhere"]}, launchTemplate=[outside]),
        _node_group("unknown", "trn1.32xlarge", unknown, [b, unknown_zone]),
        _node_group("spread", "trn1.32xlarge", spread, [b, c]),
    ])
    assert findings(result, "eks-efa-single-az", "outside") == [] and findings(result, "eks-efa-single-az", "unknown") == []
    for name in ("outside", "unknown"):  # said, not passed in silence
        [message] = findings(result, "rules-not-judged", name)
        assert f"eks-efa-single-az was not judged: node group {name!r}: its subnets are outside this stack or their zones are not known before apply" in message
    assert findings(result, "rules-not-judged", "spread") == []
    [message] = findings(result, "eks-efa-single-az", "spread")
    assert "the subnets span us-east-1b, us-east-1c" in message
    assert findings(result, "eks-efa-interfaces", "typeless") == [] and findings(result, "eks-efa-interfaces", "counted") != []


def test_a_device_plugin_release_is_not_the_gpu_operator(judge):
    plugin = resource("kubernetes:helm.sh/v3:Release", "nvdp", {"chart": catalog.load().facts.charts.nvidia_device_plugin.chart, "values": {}})
    custom = resource(NG, "custom", {"instanceTypes": ["g5.xlarge"], "amiType": "CUSTOM"})
    assert findings(judge([plugin, custom]), "eks-gpu-driver") == []


def test_efa_security_group_rules_beside_others_spelt_all_or_in_a_second_group(judge):
    """One self rule among others is enough, protocol "all" is -1's other spelling, and one group of
    several that allows all self traffic is enough."""
    https = {"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["10.0.0.0/8"]}
    spelt = {"protocol": "all", "fromPort": 0, "toPort": 0, "self": True}
    mixed = _group("mixed", ingress=(https, SELF_ALL), egress=(SELF_ALL, https))
    worded = _group("worded", ingress=(spelt,), egress=(spelt,))
    plain = _group("plain", ingress=(https,), egress=(https,))
    two = resource(LT, "two", _template("two", "trn1.32xlarge", plain)["inputs"], networkInterfaces=[plain, worded])
    result = judge([mixed, worded, plain, _template("mixed-lt", "trn1.32xlarge", mixed), _template("worded-lt", "trn1.32xlarge", worded), two])
    assert findings(result, "eks-efa-security-group") == []


def _auto_cluster(name: str, compute=True, storage=True, balancing=True, bootstrap=False) -> dict:
    inputs = {"roleArn": "arn:aws:iam::123456789012:role/eks", "vpcConfig": {"subnetIds": ["subnet-1", "subnet-2"]},
              "computeConfig": {"enabled": compute, "nodePools": ["general-purpose", "system"], "nodeRoleArn": "arn:aws:iam::123456789012:role/node"},
              "storageConfig": {"blockStorage": {"enabled": storage}}, "kubernetesNetworkConfig": {"elasticLoadBalancing": {"enabled": balancing}}}
    if bootstrap is not None:
        inputs["bootstrapSelfManagedAddons"] = bootstrap
    return resource("aws:eks/cluster:Cluster", name, inputs)


def test_auto_mode_s_capabilities_go_together(judge):
    result = judge([_auto_cluster("all"), _auto_cluster("compute-only", storage=False, balancing=False), _auto_cluster("bootstrapped", bootstrap=None),
                    _auto_cluster("off", compute=False, storage=False, balancing=False, bootstrap=None)])
    said = lambda name: [m.split("\n", 1)[1] for m in findings(result, "eks-auto-mode-capabilities", name)]  # noqa: E731
    assert said("all") == said("off") == []
    assert said("compute-only") == ["EKS cluster 'compute-only' enables computeConfig.enabled but not storageConfig.blockStorage.enabled, "
                                    "kubernetesNetworkConfig.elasticLoadBalancing.enabled: EKS takes Auto Mode's three capabilities on together or not at all"]
    assert said("bootstrapped") == ["EKS cluster 'bootstrapped' enables Auto Mode with bootstrapSelfManagedAddons unset or true (its default): Auto Mode needs it false"]


def test_auto_mode_brings_its_own_device_plugins(judge):
    plugin = resource("kubernetes:helm.sh/v3:Release", "nvdp", {"chart": catalog.load().facts.charts.nvidia_device_plugin.chart, "values": {}})
    [message] = findings(judge([_auto_cluster("auto"), plugin]), "eks-auto-mode-one-device-plugin", "nvdp")
    chart = catalog.load().facts.charts.nvidia_device_plugin.chart
    assert f"Helm release 'nvdp' installs {chart} on a cluster that runs EKS Auto Mode, which brings the accelerators' device plugins itself" in message
    assert findings(judge([_auto_cluster("plain", compute=False, storage=False, balancing=False, bootstrap=None), plugin]), "eks-auto-mode-one-device-plugin") == []
    # A pulumi-eks Cluster whose autoMode is on is an Auto Mode cluster too (its provider turns it on).
    library = resource("eks:index:Cluster", "lib", {"autoMode": {"enabled": True}})
    assert findings(judge([library, plugin]), "eks-auto-mode-one-device-plugin", "nvdp")
    library["inputs"] = {"autoMode": {"enabled": False}}
    assert findings(judge([library, plugin]), "eks-auto-mode-one-device-plugin") == []
