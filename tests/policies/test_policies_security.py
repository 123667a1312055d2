"""src/gpufleet/policies/security.py: each rule with a violating and a clean fixture, judged by the pack over gRPC."""

from __future__ import annotations

from tests.policy_helpers import findings, launch_template, resource


def test_imdsv2_required(judge):
    result = judge(
        [
            launch_template("v2", "g5.xlarge"),
            launch_template("v1", "g5.xlarge", metadataOptions={"httpTokens": "optional"}),
            launch_template("unset", "m5.large", metadataOptions={}),
            resource("aws:ec2/instance:Instance", "box", {"instanceType": "m5.large", "metadataOptions": {"httpTokens": "required"}}),
        ]
    )
    assert findings(result, "ec2-imdsv2-required", "v2") == [] and findings(result, "ec2-imdsv2-required", "box") == []
    assert "httpTokens is optional" in findings(result, "ec2-imdsv2-required", "v1")[0]
    # CPU nodes too: a leaked instance role is no safer there.
    assert "httpTokens is not set" in findings(result, "ec2-imdsv2-required", "unset")[0]


def test_root_volume_encrypted(judge):
    plain = [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "false", "volumeSize": 100}}]
    resources = [
        launch_template("encrypted", "g5.xlarge"),
        launch_template("plain", "g5.xlarge", blockDeviceMappings=plain),
        launch_template("no-mapping", "g5.xlarge", blockDeviceMappings=[]),
        resource("aws:ec2/instance:Instance", "box", {"instanceType": "g5.xlarge", "rootBlockDevice": {"encrypted": True}}),
    ]
    result = judge(resources)
    assert findings(result, "ec2-root-volume-encrypted", "encrypted") == []
    assert findings(result, "ec2-root-volume-encrypted", "box") == []
    assert "/dev/xvda is not encrypted" in findings(result, "ec2-root-volume-encrypted", "plain")[0]
    assert "no block device mapping" in findings(result, "ec2-root-volume-encrypted", "no-mapping")[0]
    # The config schema's option accepts the account's EBS encryption by default, not an explicit "false".
    relaxed = judge(resources, {"ec2-root-volume-encrypted": {"allowAccountDefaultEncryption": True}})
    assert findings(relaxed, "ec2-root-volume-encrypted", "no-mapping") == []
    assert findings(relaxed, "ec2-root-volume-encrypted", "plain") != []


def test_no_public_ip_on_gpu_instances_is_advisory(judge):
    public = [{"deviceIndex": 0, "associatePublicIpAddress": "true"}]
    result = judge(
        [
            launch_template("private", "p4d.24xlarge"),
            launch_template("public", "p4d.24xlarge", networkInterfaces=public),
            launch_template("public-neuron", "inf2.xlarge", networkInterfaces=public),
            launch_template("public-cpu", "m5.large", networkInterfaces=public),
        ]
    )
    policy = "gpu-instance-no-public-ip"
    assert findings(result, policy, "private") == [] and findings(result, policy, "public-cpu") == []
    assert "p4d.24xlarge instances get a public IP" in findings(result, policy, "public")[0]
    assert "inf2.xlarge" in findings(result, policy, "public-neuron")[0]
    assert {f.level for f in result.findings if f.policy == policy} == {"advisory"}


def _group(name: str, ingress: list[dict] | None = None) -> dict:
    return resource("aws:ec2/securityGroup:SecurityGroup", name, {"ingress": ingress or [], "egress": []})


def test_no_open_ingress_to_gpu_nodes(judge):
    inline_open = _group("inline-open", [{"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]}])
    closed = _group("closed", [{"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["10.0.0.0/16"]}])
    rule_open = _group("rule-open")
    cpu_open = _group("cpu-open", [{"protocol": "-1", "fromPort": 0, "toPort": 0, "cidrBlocks": ["0.0.0.0/0"]}])
    rule = resource(
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        "ssh-v6",
        {"cidrIpv6": "::/0", "ipProtocol": "tcp", "fromPort": 22, "toPort": 22},
        securityGroupId=[rule_open],
    )
    result = judge(
        [
            inline_open, closed, rule_open, cpu_open, rule,
            *[
                resource(
                    "aws:ec2/launchTemplate:LaunchTemplate",
                    name,
                    launch_template(name, itype)["inputs"],
                    networkInterfaces=[group],
                )
                for name, itype, group in (
                    ("gpu-open", "g5.xlarge", inline_open),
                    ("gpu-closed", "g5.xlarge", closed),
                    ("gpu-rule", "g6.xlarge", rule_open),
                    ("cpu", "m5.large", cpu_open),
                )
            ],
        ]
    )
    policy = "gpu-node-no-open-ingress"
    assert "inline ingress tcp 22-22 from 0.0.0.0/0" in " ".join(findings(result, policy))
    assert any("rule 'ssh-v6' from ::/0" in m for m in findings(result, policy))
    by_group = {f.urn.rsplit("::", 1)[-1] for f in result.findings if f.policy == policy}
    assert by_group == {"inline-open", "rule-open"}  # not the closed group, not the CPU node's group


def test_no_open_ingress_reaches_eks_nodes_through_their_node_group(judge):
    """A managed node group's launch template names no instance type: the node group does."""
    open_sg = resource("aws:ec2/securityGroup:SecurityGroup", "open", {"ingress": [{"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]}]})
    template = resource("aws:ec2/launchTemplate:LaunchTemplate", "nodes", {"networkInterfaces": [{"deviceIndex": 0}]}, networkInterfaces=[open_sg])
    gpu = resource("aws:eks/nodeGroup:NodeGroup", "gpu", {"instanceTypes": ["p5.48xlarge"]}, launchTemplate=[template])
    result = judge([open_sg, template, gpu])
    [message] = findings(result, "gpu-node-no-open-ingress")
    assert "'nodes' (p5.48xlarge) uses security group 'open', which admits the internet" in message
    cpu = resource("aws:eks/nodeGroup:NodeGroup", "cpu", {"instanceTypes": ["m5.large"]}, launchTemplate=[template])
    assert findings(judge([open_sg, template, cpu]), "gpu-node-no-open-ingress") == []


def test_no_open_ingress_through_security_group_rules(judge):
    """aws:ec2/SecurityGroupRule: an open ingress rule counts, an open egress rule does not, whatever
    order the plan lists them in; a CPU node listed first does not end the search."""
    group = _group("nodes")
    egress = resource("aws:ec2/securityGroupRule:SecurityGroupRule", "all-out", {"type": "egress", "cidrBlocks": ["0.0.0.0/0"], "protocol": "-1", "fromPort": 0, "toPort": 0}, securityGroupId=[group])
    ingress = resource("aws:ec2/securityGroupRule:SecurityGroupRule", "https-in", {"type": "ingress", "cidrBlocks": ["10.0.0.0/8", "0.0.0.0/0"], "protocol": "tcp", "fromPort": 443, "toPort": 443}, securityGroupId=[group])
    nodes = [
        resource("aws:ec2/launchTemplate:LaunchTemplate", name, launch_template(name, itype)["inputs"], networkInterfaces=[group])
        for name, itype in (("cpu", "m5.large"), ("gpu", "g5.xlarge"))
    ]
    [message] = findings(judge([group, egress, ingress, *nodes]), "gpu-node-no-open-ingress")
    assert message.splitlines()[-1] == "'gpu' (g5.xlarge) uses security group 'nodes', which admits the internet: rule 'https-in' from 10.0.0.0/8, 0.0.0.0/0"
    assert findings(judge([group, egress, *nodes]), "gpu-node-no-open-ingress") == []


def test_unencrypted_instance_root_volume(judge):
    """An instance's root volume must say encrypted; the account-default option accepts it unsaid."""
    box = resource("aws:ec2/instance:Instance", "box", {"instanceType": "g5.xlarge", "rootBlockDevice": {"volumeSize": 100}})
    [message] = findings(judge([box]), "ec2-root-volume-encrypted")
    assert message.splitlines()[-1] == "rootBlockDevice.encrypted is not true: the root volume inherits the AMI snapshot's encryption"
    assert findings(judge([box], {"ec2-root-volume-encrypted": {"allowAccountDefaultEncryption": True}}), "ec2-root-volume-encrypted") == []


def test_instances_and_every_interface_and_cidr_are_judged(judge):
    """Slips the mutation tool's slips found unjudged (scripts/mutation_slips.py): an EC2 instance as
    well as a launch template, the second interface as well as the first, an IPv4 ingress rule as
    well as an IPv6 one, an open CIDR listed after a closed one."""
    open_v4 = _group("open-v4")
    rule = resource("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "ssh-v4", {"cidrIpv4": "0.0.0.0/0", "ipProtocol": "tcp", "fromPort": 22, "toPort": 22}, securityGroupId=[open_v4])
    mixed = _group("mixed", [{"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["10.0.0.0/8", "0.0.0.0/0"]}])
    second_public = [{"deviceIndex": 0, "associatePublicIpAddress": "false"}, {"deviceIndex": 1, "associatePublicIpAddress": "true"}]
    result = judge(
        [
            open_v4, rule, mixed,
            resource("aws:ec2/instance:Instance", "v1-box", {"instanceType": "g5.xlarge", "metadataOptions": {"httpTokens": "optional"}}),
            resource("aws:ec2/instance:Instance", "public-box", {"instanceType": "g5.xlarge", "associatePublicIpAddress": True, "metadataOptions": {"httpTokens": "required"}}),
            launch_template("second-public", "g5.xlarge", networkInterfaces=second_public),
            resource("aws:ec2/instance:Instance", "box-v4", {"instanceType": "g5.xlarge", "metadataOptions": {"httpTokens": "required"}}, vpcSecurityGroupIds=[open_v4]),
            resource("aws:ec2/launchTemplate:LaunchTemplate", "mixed-lt", launch_template("mixed-lt", "g5.xlarge")["inputs"], networkInterfaces=[mixed]),
        ]
    )
    assert "httpTokens is optional" in findings(result, "ec2-imdsv2-required", "v1-box")[0]
    assert "g5.xlarge instances get a public IP" in findings(result, "gpu-instance-no-public-ip", "public-box")[0]
    assert findings(result, "gpu-instance-no-public-ip", "second-public")
    messages = " ".join(findings(result, "gpu-node-no-open-ingress"))
    assert "'box-v4' (g5.xlarge) uses security group 'open-v4'" in messages and "rule 'ssh-v4' from 0.0.0.0/0" in messages
    assert "'mixed-lt' (g5.xlarge) uses security group 'mixed'" in messages and "from 10.0.0.0/8, 0.0.0.0/0" in messages


def test_inline_ipv6_open_ingress_counts(judge):
    """An inline rule open to the IPv6 internet admits it as surely as 0.0.0.0/0 does (issue 58: a
    reader that looked only at cidrBlocks passed every other test)."""
    v6 = _group("v6", [{"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": [], "ipv6CidrBlocks": ["::/0"]}])
    node = resource("aws:ec2/launchTemplate:LaunchTemplate", "gpu-v6", launch_template("gpu-v6", "g5.xlarge")["inputs"], networkInterfaces=[v6])
    [message] = findings(judge([v6, node]), "gpu-node-no-open-ingress")
    assert message.splitlines()[-1] == "'gpu-v6' (g5.xlarge) uses security group 'v6', which admits the internet: inline ingress tcp 22-22 from ::/0"


def test_volume_without_encrypted_key_is_unencrypted(judge):
    """EBS leaves a volume unencrypted when `encrypted` is unset (unless the account encrypts by
    default): an absent key is a violation, not only an explicit "false" (issue 58)."""
    unsaid = [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 100}}]
    [message] = findings(judge([launch_template("unsaid", "g5.xlarge", blockDeviceMappings=unsaid)]), "ec2-root-volume-encrypted", "unsaid")
    assert message.splitlines()[-1] == "the EBS volume /dev/xvda is not encrypted (ebs.encrypted: true)"
