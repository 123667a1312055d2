"""Security rules for the instances that run accelerated workloads: instance metadata, root volume
encryption, public addresses and open ingress.

IMDSv2 and root volume encryption apply to every launch template and instance (a credential leak
or an unencrypted volume is no safer on a CPU node); public addresses and open ingress are judged on
GPU and Neuron types only, which the catalog recognises.
"""

from __future__ import annotations

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.policies.eks_nodes import template_types
from gpufleet.policies.inputs import depended_on, get, instance_type, items, text, truthy
from gpufleet.policies.registry import Policies
from gpufleet.rules import gpus as gpu_rules

POLICIES = Policies(__name__)

OPEN_CIDRS = ("0.0.0.0/0", "::/0")


@POLICIES.resource("ec2-imdsv2-required", only=(tokens.LAUNCH_TEMPLATE, tokens.EC2_INSTANCE))
def _validate_imdsv2(args: ResourceValidationArgs, report: ReportViolation) -> None:
    http_tokens = get(args.props, "metadataOptions", "httpTokens")
    if http_tokens != "required":
        report(
            f"metadataOptions.httpTokens is {http_tokens or 'not set'}: without IMDSv2 any process (or SSRF) on the node "
            "can read the instance role's credentials; set httpTokens: required",
            None,
        )


@POLICIES.resource("ec2-root-volume-encrypted", only=(tokens.EC2_INSTANCE, tokens.LAUNCH_TEMPLATE))
def _validate_root_encrypted(args: ResourceValidationArgs, report: ReportViolation) -> None:
    props = args.props
    allow_default = (args.get_config() or {}).get("allowAccountDefaultEncryption", False)
    if args.resource_type == tokens.EC2_INSTANCE:
        if not truthy(get(props, "rootBlockDevice", "encrypted")) and not allow_default:
            report("rootBlockDevice.encrypted is not true: the root volume inherits the AMI snapshot's encryption", None)
        return
    volumes = [m for m in items(get(props, "blockDeviceMappings")) if get(m, "ebs") is not None]
    for mapping in volumes:
        if not truthy(get(mapping, "ebs", "encrypted")):
            report(f"the EBS volume {get(mapping, 'deviceName') or '?'} is not encrypted (ebs.encrypted: true)", None)
    if not volumes and not allow_default:
        report(
            "no block device mapping encrypts the root volume: it inherits the AMI snapshot's encryption "
            "(set allowAccountDefaultEncryption when the account encrypts EBS by default)",
            None,
        )


def _accelerated(it) -> str | None:
    return it.name if it is not None and gpu_rules.accelerated(it) else None


def _accelerated_type(props, cat: Catalog) -> str | None:
    return _accelerated(instance_type(cat, get(props, "instanceType")))


@POLICIES.resource("gpu-instance-no-public-ip", only=(tokens.LAUNCH_TEMPLATE, tokens.EC2_INSTANCE))
def _validate_no_public_ip(args: ResourceValidationArgs, report: ReportViolation) -> None:
    name = _accelerated_type(args.props, catalog.load())
    if name is None:
        args.not_applicable("not a GPU or Neuron instance type")
        return
    if args.resource_type == tokens.EC2_INSTANCE:
        public = truthy(get(args.props, "associatePublicIpAddress"))
    else:
        public = any(truthy(get(ni, "associatePublicIpAddress")) for ni in items(get(args.props, "networkInterfaces")))
    if public:
        report(f"{name} instances get a public IP address; keep accelerated nodes in private subnets behind NAT", None)


def _open_ingress(group, resources) -> list[str]:
    """Why the security group admits the whole internet, one line per rule that does."""
    found = []
    for rule in items(get(group.props, "ingress")):
        cidrs = [c for key in ("cidrBlocks", "ipv6CidrBlocks") for c in items(get(rule, key))]
        if any(c in OPEN_CIDRS for c in cidrs):
            ports = f"{text(get(rule, 'fromPort'))}-{text(get(rule, 'toPort'))}"
            found.append(f"inline ingress {get(rule, 'protocol')} {ports} from {', '.join(cidrs)}")
    for r in resources:
        if r.resource_type == tokens.SECURITY_GROUP_INGRESS_RULE:
            cidrs = [get(r.props, "cidrIpv4"), get(r.props, "cidrIpv6")]
        elif r.resource_type == tokens.SECURITY_GROUP_RULE and get(r.props, "type") == "ingress":
            cidrs = [c for key in ("cidrBlocks", "ipv6CidrBlocks") for c in items(get(r.props, key))]
        else:
            continue
        if any(c in OPEN_CIDRS for c in cidrs) and group.urn in {d.urn for d in depended_on(r, tokens.SECURITY_GROUP)}:
            found.append(f"rule {r.name!r} from {', '.join(c for c in cidrs if c)}")
    return found


@POLICIES.stack("gpu-node-no-open-ingress")
def _validate_no_open_ingress(args: StackValidationArgs, report: ReportViolation) -> None:
    rules = [r for r in args.resources if r.resource_type in (tokens.SECURITY_GROUP_INGRESS_RULE, tokens.SECURITY_GROUP_RULE)]
    open_by_group: dict[str, list[str]] = {}  # one verdict per group, however many nodes share it
    cat = catalog.load()
    used_by = template_types(args.resources, cat)
    for node in args.resources:
        if node.resource_type not in (tokens.LAUNCH_TEMPLATE, tokens.EC2_INSTANCE):
            continue
        name = _accelerated_type(node.props, cat) or _accelerated(used_by.get(node.urn, (None, None))[1])
        if name is None:
            continue
        for group in depended_on(node, tokens.SECURITY_GROUP):
            if group.urn not in open_by_group:
                open_by_group[group.urn] = _open_ingress(group, rules)
            for why in open_by_group[group.urn]:
                report(f"{node.name!r} ({name}) uses security group {group.name!r}, which admits the internet: {why}", group.urn)
