"""The shape of the curated facts file (data/curated.yaml), checked when the catalog loads: a key
misspelt, missing or of the wrong type fails there, naming it, instead of deep inside a rule. Every
fact group carries its source.

Free-form parts are what they stand for: a chart's values, a Kubernetes pod spec, an EKS add-on's
manifest excerpt (mappings passed through to Helm or to the scheduler simulation).
"""

from __future__ import annotations

import threading
import types
import typing
from typing import Any, ForwardRef, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from gpufleet.errors import GpufleetError


class _Facts(BaseModel):
    # defer_build: a class's validator is built when it first validates, not when this module is
    # imported (the ~100 classes' schemas: about 40 ms of CPU); the policy pack, which reads the
    # shipped file by `trusted`, never builds them.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, alias_generator=to_camel, defer_build=True)

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        cls = type(self)
        if not cls.__pydantic_complete__:
            # A deferred class is built on its first use, and two threads building classes at once
            # can fail (pydantic 2.11, the floors: "BaseModel cannot be instantiated directly"): the
            # pack serves Analyze from several threads, over facts it loaded without building them.
            with _BUILDING:
                cls.model_rebuild()
        return super().model_dump(**kwargs)


_BUILDING = threading.Lock()


class Sourced(_Facts):
    source: str = Field(min_length=1)


class Values(Sourced):
    values: list[str]


class Value(Sourced):
    value: str


# --- ECS ------------------------------------------------------------------------------------------


class EcsAmiVariant(Sourced):
    title: str
    ssm_parameter: str = Field(pattern=r"^/aws/service/ecs/optimized-ami/")
    architectures: list[str]
    yum_ipv4_fix: bool = False


class NeuronDevices(Sourced):
    path_prefix: str
    permissions: list[str]
    capabilities: list[str]


class AgentFlags(Sourced):
    gpu: str
    neuron: str


class Reasoned(Sourced):
    reason: str


class AmiReleaseBound(Sourced):
    minimum: str | None = Field(None, pattern=r"^\d{8}$")
    before: str | None = Field(None, pattern=r"^\d{8}$")


class Note(Sourced):
    note: str


class EcsGpuSharing(Sourced):
    """GPU sharing on ECS: NVIDIA MPS (`sharingStrategy.nvidiaMps`) and the fractional G6f values."""

    mps_agent_minimum: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    mps_capability: str
    mps_unsupported_compatibilities: list[str]
    fractional_values: list[str]


class EcsFacts(_Facts):
    gpu_ami_variants: dict[str, EcsAmiVariant]
    neuron_ami_variants: dict[str, EcsAmiVariant]
    neuron_ami_regions: Values
    neuron_devices: NeuronDevices
    agent_flags: AgentFlags
    gpu_manufacturers: Values
    root_device_name: Value
    families_without_gpu_ami: dict[str, Reasoned]
    ami_release_bounds: dict[str, AmiReleaseBound]
    notes: dict[str, Note]
    driver_capabilities: Values
    gpu_sharing: EcsGpuSharing


# --- EKS ------------------------------------------------------------------------------------------


class AcceleratedAmiType(_Facts):
    accelerator: str
    architectures: list[str]
    default: bool
    root_device_name: str
    data_device_name: str | None = None


class StandardAmiType(_Facts):
    architectures: list[str]
    root_device_name: str


class MaxPods(_Facts):
    per_eni_addresses_less: int
    plus: int
    fallback: int


class KubeReservedMemory(_Facts):
    per_pod: int
    base: int


class CpuReserveBand(_Facts):
    from_millicores: int
    to_millicores: int | None = None
    reserve: int


class Kubelet(Sourced):
    max_pods: MaxPods
    kube_reserved_memory_mib: KubeReservedMemory = Field(alias="kubeReservedMemoryMiB")
    kube_reserved_cpu_per10000: list[CpuReserveBand] = Field(alias="kubeReservedCpuPer10000")
    eviction_hard_memory_mib: int = Field(alias="evictionHardMemoryMiB")
    ami_types: list[str]


class Hugepages(Sourced):
    pages: int


class WellKnownLabels(Sourced):
    hostname: str
    os: str
    arch: str
    instance_type: str
    zone: str
    region: str
    kubelet_deprecated: dict[str, str]  # GA name -> the deprecated spelling the kubelet sets beside it
    cloud_deprecated: dict[str, str]  # GA name -> the deprecated spelling k8s.io/cloud-provider's node controller sets
    node_group: str
    capacity_type: str
    architectures: dict[str, str]


class Addon(Sourced):
    kind: str
    namespace: str
    replicas: int | None = None
    spec: dict[str, Any]  # a Kubernetes pod spec


class AcceleratorTaint(_Facts):
    """One accelerator kind's conventional taint (its source is AcceleratorTaints', for both kinds)."""

    key: str
    effect: str
    value: str | None = None


class AcceleratorTaints(Sourced):
    nvidia: AcceleratorTaint
    neuron: AcceleratorTaint

    def of(self, kind: str | None) -> dict | None:
        """The conventional taint of an accelerator kind (Kubernetes spelling), or None."""
        taint = getattr(self, kind, None) if kind in ("nvidia", "neuron") else None
        return taint.model_dump(exclude_none=True) if taint is not None else None


class AcceleratorLabels(Sourced):
    nvidia: dict[str, str]

    def of(self, kind: str | None) -> dict[str, str]:
        """The labels nodes of an accelerator kind carry (none for kinds without any)."""
        return dict(self.nvidia) if kind == "nvidia" else {}


class AcceleratorResources(_Facts):
    nvidia: str
    neuron: str

    def by_kind(self) -> dict[str, str]:
        return {"nvidia": self.nvidia, "neuron": self.neuron}


class TaintEffects(Sourced):
    no_schedule: str = Field(alias="NoSchedule")
    no_execute: str = Field(alias="NoExecute")
    prefer_no_schedule: str = Field(alias="PreferNoSchedule")

    def by_kubernetes_name(self) -> dict[str, str]:
        """Kubernetes' spelling of each effect -> the EKS API's (NoSchedule -> NO_SCHEDULE)."""
        return {"NoSchedule": self.no_schedule, "NoExecute": self.no_execute, "PreferNoSchedule": self.prefer_no_schedule}


class BuiltInPool(_Facts):
    requirements: list[dict[str, Any]]
    taints: list[dict[str, str]] = []


class AutoMode(Sourced):
    capabilities: list[list[str]]  # input paths of the cluster that go on and off together
    bootstrap_self_managed_addons: bool  # what it must be with Auto Mode on
    built_in_plugins: list[str]  # chart keys of the device plugins Auto Mode brings
    node_class_group: str
    label_domain: str
    max_pods: int
    built_in_pools: dict[str, BuiltInPool]
    build: AutoModeBuild


class AutoModeBuild(Sourced):
    """What a cluster gpufleet creates with Auto Mode needs: its roles' AWS managed policies and the
    cluster role's trust, and what a NodeClass (eks.amazonaws.com/v1) takes."""

    cluster_policies: list[str]
    cluster_trust_actions: list[str]
    node_policies: list[str]
    node_class_kind: str
    node_class_version: str
    node_class_fields: list[str]
    labels_not_given: list[str]  # Karpenter's instance labels Auto Mode's nodes do not carry


class NodeHealth(Sourced):
    """EKS's node monitoring agent add-on (its DaemonSets' pods, and where its configuration takes the
    DCGM server's tolerations) and what a managed node group's repair does."""

    monitoring_addon: str
    values_keys: dict[str, str]  # DaemonSet name -> the configuration key of its values
    pods: dict[str, Addon]
    repair: str  # what a managed group's repair does, in the summary's words
    auto_mode_repair: str


class EksFacts(_Facts):
    accelerated_ami_types: dict[str, AcceleratedAmiType]
    ami_types_source: str
    node_policies: Values
    cluster_policies: Values
    standard_ami_types: dict[str, StandardAmiType]
    node_group_default_instance_type: Value
    system_node_families: Values
    kubelet: Kubelet
    hugepages2_mi: Hugepages = Field(alias="hugepages2Mi")
    well_known_labels: WellKnownLabels
    default_addons: dict[str, Addon]
    accelerator_taints: AcceleratorTaints
    accelerator_labels: AcceleratorLabels
    accelerator_resources: AcceleratorResources
    neuron_core_resource: str
    efa_resource: str
    resources_source: str
    taint_effects: TaintEffects
    auto_mode: AutoMode
    node_health: NodeHealth


# --- charts ---------------------------------------------------------------------------------------


class Toleration(_Facts):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None


class ChartController(Sourced):
    """A Deployment a chart runs besides its node agents (an operator's controller): where its
    values are, the chart's own defaults for them when its values.yaml lacks them (a subchart's),
    the value paths that switch it off, and its replicas when the template fixes them."""

    name: str  # the Deployment's name, or with `subchart` what follows the subchart's fullname
    subchart: str | None = None  # the subchart (its chart name) whose Deployment it is
    values_path: list[str]
    enabled_paths: list[list[str]] = []
    defaults: dict[str, Any] = {}
    replicas: int | None = None  # None: the values' replicaCount


class ChartObject(Sourced):
    """An object a chart's templates render whose name is built from the chart's fullname: the
    fullname, then `suffix`; `cut`: the template cuts that to 63 characters and trims one trailing
    dash (else only the fullname is cut). It renders only where every value at `enabled_paths` is
    set (the chart's own values.yaml gives the default). A DaemonSet's selector is `selector` (its
    values formatted as the chart's names) plus, with `selector_labels`, the chart's selector labels;
    `node_selector` is what its pod template selects before the values' nodeSelector."""

    kind: str
    suffix: str = ""
    cut: bool = True
    enabled_paths: list[list[str]] = []
    cluster_scoped: bool = False
    namespace: str | None = None  # a namespace the template fixes (else the chart's: its override or the release's)
    selector: dict[str, str] = {}
    selector_labels: bool = False
    node_selector: dict[str, str] = {}


class ChartNames(Sourced):
    """How a chart names its objects (its _helpers.tpl): `.Chart.Name`, where its nameOverride,
    fullnameOverride, namespaceOverride and selectorLabelsOverride values live (`values_path`), its
    common labels and template labels (formatted with {name}, {fullname}, {release}, {chart},
    {version}, {app_version}; helm.sh/chart cut as the helper cuts it), and the objects whose names
    depend on the release."""

    chart_name: str
    app_version: str
    values_path: list[str] = []
    labels: dict[str, str] = {}
    template_labels: dict[str, str] = {}
    objects: list[ChartObject]


class Chart(Sourced):
    chart: str
    version: str
    repository: str | None = None
    namespace: str
    serves: str
    tolerations_path: list[str]
    values_file: str
    mig_strategies: list[str] | None = None
    always_tolerations: list[Toleration] | None = None
    values: dict[str, Any] | None = None  # values gpufleet sets beyond the chart's defaults
    controllers: list[ChartController] = []
    names: ChartNames | None = None  # how its templates name its objects (None: not read)


class ManifestObject(Sourced):
    kind: str
    name: str
    namespace: str
    replicas: int
    spec: dict[str, Any]


class MpiOperator(Sourced):
    version: str
    manifest: str
    operator: ManifestObject


class EfaGate(Sourced):
    net: str  # NCCL_NET
    devices: str  # the directory of the devices each worker counts
    device_name: str  # their names' prefix
    marker: str  # what starts each worker's line


class NcclTests(Sourced):
    run_policy: dict[str, Any]
    mpirun: list[str]
    mpirun_tail: list[str]
    hugepages2_mi: str = Field(alias="hugepages2Mi")
    memory: str
    path: str
    ld_library_path: str
    efa_gate: EfaGate


class Charts(_Facts):
    nvidia_device_plugin: Chart
    efa_device_plugin: Chart
    neuron_helm_chart: Chart
    mpi_operator: MpiOperator
    nccl_tests: NcclTests
    gpu_operator: Chart
    dra_driver_nvidia_gpu: Chart

    def plugins(self) -> dict[str, Chart]:
        """The device-plugin charts by their key in the facts file (nvidiaDevicePlugin, ...)."""
        return {
            "nvidiaDevicePlugin": self.nvidia_device_plugin,
            "efaDevicePlugin": self.efa_device_plugin,
            "neuronHelmChart": self.neuron_helm_chart,
        }


# --- Dynamic Resource Allocation -------------------------------------------------------------------


class DraApi(Sourced):
    api_version: str
    min_kubernetes: str = Field(pattern=r"^1\.\d+$")


class DraDeviceClasses(Sourced):
    gpu: str
    mig: str


class NodeLabel(Sourced):
    key: str
    value: str


class DraProvisioner(Sourced):
    """A node provisioner that launches nodes for DRA claims from a version on: Karpenter by its
    own version, EKS Auto Mode by the cluster's Kubernetes."""

    named: str
    since: str = Field(pattern=r"^\d+\.\d+$")


# --- the rest -------------------------------------------------------------------------------------


class DocumentedMemory(Sourced):
    installed_mib: int = Field(alias="installedMiB")
    registered_mib: int = Field(alias="registeredMiB")


class EstimatePercent(Sourced):
    value: float


class MemoryOverhead(_Facts):
    documented: DocumentedMemory
    estimate_percent: EstimatePercent


class SharingMode(_Facts):
    isolation: str
    compute_percentage: bool


class ComputePercentage(Sourced):
    minimum: int
    maximum: int
    multiple_of: int


class AckPrerequisites(Sourced):
    minimum_kubernetes: str
    minimum_sharing_chart: str
    minimum_cgpu: str
    scheduler_versions: dict[str, str]


class AckGpuFamily(_Facts):
    model: str
    memory_mib: int = Field(alias="memoryMiB")


class AckFacts(_Facts):
    sharing_regions: Values
    schedule_label: str
    placement_label: str
    sharing_modes: dict[str, SharingMode]
    placements: list[str]
    modes_source: str
    memory_resource: str
    compute_resource: str
    compute_percentage: ComputePercentage
    prerequisites: AckPrerequisites
    sharing_chart: str
    gpu_families: dict[str, AckGpuFamily]
    gpu_instance_types: dict[str, int]
    gpu_types_source: str


# --- GKE ------------------------------------------------------------------------------------------


class Labels(Sourced):
    values: dict[str, str]


class GpuModel(_Facts):
    """A GPU model as a cloud lists it: name and memory."""

    model: str
    memory_gib: int = Field(alias="memoryGiB")


class GkeMachineType(_Facts):
    accelerator: str
    count: int


class Taint(Sourced):
    key: str
    value: str
    effect: str


class GkeLabels(Sourced):
    accelerator: str
    partition_size: str
    sharing_strategy: str
    max_shared_clients: str
    node_pool: str


class ChartValues(Sourced):
    """Helm values a platform sets over a chart's, with where they come from."""

    values: dict[str, Any]


class GkeDra(_Facts):
    """What GKE's DRA guide asks of a GPU pool whose GPUs the NVIDIA DRA driver serves."""

    node_labels: Labels
    driver: Value  # the pool's gpuDriverVersion
    sharing_refused: Value  # why GKE's own GPU sharing is refused on such a pool
    driver_installer: Value  # the NVIDIA driver installer's manifest, under catalog/data
    chart_values: ChartValues  # the DRA driver's values on GKE, over the chart's


class GkeFacts(_Facts):
    node_repair: Value
    accelerators: dict[str, GpuModel]
    accelerators_source: str
    price_names: dict[str, str]  # accelerator type -> the price snapshot's GPU name
    price_names_source: str
    machine_types: dict[str, GkeMachineType]
    machine_types_source: str
    default_machine_type: Value
    n1_attachable: dict[str, list[int]]
    n1_source: str
    zones: dict[str, dict[str, list[str]]]  # machine series -> region -> zones
    zones_source: str
    mig_partitions: dict[str, dict[str, int]]  # accelerator -> partition size -> partitions per GPU
    mig_source: str
    gpu_taint: Taint
    labels: GkeLabels
    driver_installed_by: dict[str, str]  # gpuDriverVersion -> gke | none
    sharing_strategies: dict[str, str]  # gpuSharingStrategy -> node label value
    shared_request_max: int
    sharing_source: str
    operator_node_labels: Labels
    dra: GkeDra

    @model_validator(mode="after")
    def _accelerators_known(self) -> GkeFacts:
        named = [*(m.accelerator for m in self.machine_types.values()), *self.n1_attachable, *self.mig_partitions]
        unknown = sorted(set(named) - set(self.accelerators))
        if unknown:
            raise ValueError(f"accelerators named but not listed under gke.accelerators: {', '.join(unknown)}")
        return self


# --- AKS ------------------------------------------------------------------------------------------


class AksVmSize(_Facts):
    gpu: str
    count: int


class Supported(Sourced):
    supported: bool


class AksFacts(_Facts):
    node_repair: Value
    gpus: dict[str, GpuModel]
    vm_sizes: dict[str, AksVmSize]
    vm_sizes_source: str
    mig_profiles: dict[str, dict[str, int]]  # GPU -> gpuInstanceProfile -> instances per GPU
    mig_source: str
    gpu_taint: Taint
    driver_installed_by: dict[str, str]  # gpuProfile.driver -> aks | none
    driver_source: str
    time_sharing: Supported
    pool_label: str
    pool_label_source: str
    deprecated_node_labels: Supported  # does its cloud-node-manager set eks.wellKnownLabels.cloudDeprecated
    critical_addons_taint: Taint  # what onlyCriticalAddonsEnabled puts on a cluster's default pool
    dra: Value  # why a pool is not given to the DRA driver

    @model_validator(mode="after")
    def _gpus_known(self) -> AksFacts:
        unknown = sorted({*(s.gpu for s in self.vm_sizes.values()), *self.mig_profiles} - set(self.gpus))
        if unknown:
            raise ValueError(f"GPUs named but not listed under aks.gpus: {', '.join(unknown)}")
        return self


class IncompleteRecord(Reasoned):
    missing: str


class Replacement(Sourced):
    replaces: list[str]
    rolls: list[str] = []


class RefusedDelete(Sourced):
    held_by: list[str]
    rule: str


class Quota(Sourced):
    value: int
    adjustable: bool


class QualifiedName(_Facts):
    name_pattern: str
    name_max: int
    prefix_pattern: str
    prefix_max: int


class KubeletLabels(Sourced):
    restricted_namespaces: list[str]
    allowed_namespaces: list[str]
    allowed_keys: list[str]


class SchedulerMessage(Sourced):
    since: str
    message: str
    before: str


class KubernetesFacts(_Facts):
    qualified_name: QualifiedName
    label_value_max: int
    syntax_source: str
    kubelet_labels: KubeletLabels
    untolerated_taint: SchedulerMessage


class AmiEnd(_Facts):
    end_of_support: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    last_kubernetes: str | None = None
    instead: str


class EksAmiEnds(Sourced):
    types: dict[str, AmiEnd]


class EcsAmiEnds(Sourced):
    variants: dict[str, AmiEnd]  # "<accelerator>/<variant>"


class VersionWindow(_Facts):
    end_of_standard_support: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    end_of_extended_support: str | None = Field(None, pattern=r"^\d{4}-\d{2}-\d{2}$")


class VersionCalendar(Sourced):
    """A cloud's Kubernetes minor versions: the end of standard support, and of the cloud's longer
    support (its name); whether the cloud refuses the version after that."""

    extended_support: str
    refused_after_extended_support: bool
    versions: dict[str, VersionWindow]


class KubernetesCalendars(_Facts):
    eks: VersionCalendar
    gke: VersionCalendar
    aks: VersionCalendar


class Lifecycle(_Facts):
    eks_ami_types: EksAmiEnds
    ecs_ami_variants: EcsAmiEnds
    kubernetes: KubernetesCalendars


# --- component libraries -------------------------------------------------------------------------


class EksLibraryNodeGroup(Sourced):
    """What pulumi-eks's node group code makes when the program leaves a setting out."""

    instance_type: str
    desired_capacity: int
    min_size: int
    max_size: int
    ami_types: dict[str, str]  # standard | gpu -> EKS AMI type (AL2023, the default OS, on x86_64)


class PulumiEksAutoMode(Sourced):
    """What a pulumi-eks Cluster's `autoMode` makes of its EKS cluster: the built-in NodePools its
    compute configuration turns on unless the program's `computeConfig` names others."""

    node_pools: list[str]


class ComponentChild(_Facts):
    """A resource a component's code always makes, whatever the program's arguments: its type and its
    name, `{name}` standing for the component's own; its parent is the component."""

    type: str
    name: str = Field(pattern=r"\{name\}")


class ComponentResourceOutputs(Sourced):
    """A component's outputs that are such resources: its provider's Construct answers each as a
    resource reference, whose URN a preview knows while the resource's properties are not known yet."""

    outputs: dict[str, ComponentChild]


class PulumiEks(Sourced):
    """pulumi-eks's components, whose provider builds their resources (not run offline)."""

    version: str
    default_node_group: EksLibraryNodeGroup
    managed_scaling: EksLibraryNodeGroup
    auto_mode: PulumiEksAutoMode
    resource_outputs: dict[str, ComponentResourceOutputs]  # component type token -> its resource outputs


class AwsxVpc(Sourced):
    """What awsx's Vpc makes when the program leaves its layout out (subnetStrategy Legacy, no subnetSpecs)."""

    cidr_block: str
    availability_zones: int
    subnet_types: list[str]  # per zone, in the order awsx lays them out
    nat_gateways: str


class AwsxService(Sourced):
    """An awsx ECS service: the aws.ecs.Service it makes and the task definition component it builds from taskDefinitionArgs."""

    launch_type: str
    desired_count: int | None = None  # None: awsx sets none (the AWS provider's default applies)
    task_definition: str


class AwsxTaskDefinition(Sourced):
    """An awsx ECS task definition: the aws.ecs.TaskDefinition it makes of its containers."""

    network_mode: str
    network_mode_fixed: bool  # set after the program's arguments, so a given networkMode is overridden
    requires_compatibilities: list[str]


class AwsxFargateSize(_Facts):
    """One vCPU figure of awsx's own Fargate table and the memory (GB) it pairs with it: listed, or
    every whole GB from the first to the last of `memory_gb_range`."""

    vcpu: float
    memory_gb: list[float] = Field(default=[], alias="memoryGB")
    memory_gb_range: list[int] = Field(default=[], alias="memoryGBRange")

    def memories(self) -> list[float]:
        if self.memory_gb_range:
            low, high = self.memory_gb_range
            return [float(m) for m in range(low, high + 1)]
        return list(self.memory_gb)


class AwsxFargateSizes(Sourced):
    """How awsx's FargateTaskDefinition sizes a task whose arguments give no cpu or memory: from its
    containers' sums, the first of its table (in the order its module leaves it) that covers them."""

    sizes: list[AwsxFargateSize]


class Awsx(Sourced):
    """awsx's components, whose provider builds their resources (not run offline)."""

    version: str
    vpc: AwsxVpc
    services: dict[str, AwsxService]
    task_definitions: dict[str, AwsxTaskDefinition]
    fargate_sizes: AwsxFargateSizes


class Libraries(_Facts):
    pulumi_eks: PulumiEks
    awsx: Awsx


class AutoNameRule(_Facts):
    max_length: int
    separator: str
    property: str = "name"
    unless_given: str | None = None  # an input whose presence makes the provider compute the name instead
    lowercase: bool = False


class Autonaming(Sourced):
    random_length: int
    bridged: dict[str, AutoNameRule]  # provider package -> the rule for its inputs named `name`
    overrides: dict[str, AutoNameRule]  # resource type -> its own rule
    prefix_inputs: list[str]  # inputs from which the provider computes the name (unknown in a preview)
    kubernetes_random_length: int


class NcclPublicRun(Sourced):
    """A public all_reduce_perf run over EFA across several nodes, healthy by its own account: the
    out-of-place busbw of its row at `message_bytes`. The NCCL gate derives each type's floor from
    these and the type's EFA bandwidth (verify/nccl_floors.py)."""

    instance_type: str
    nodes: int = Field(ge=2)
    message_bytes: int = Field(gt=0)
    busbw_gbps: float = Field(alias="busbwGBps", gt=0)


class NcclBandwidth(_Facts):
    runs: list[NcclPublicRun]
    margin: float = Field(gt=0, le=1)  # a run passes at busbw >= floor; the floor carries this margin
    margin_source: str = Field(min_length=1)
    not_used: str  # the published figures considered and left out, and why


# --- AWS Fargate -----------------------------------------------------------------------------------


class FargateSize(_Facts):
    """One CPU figure Fargate runs and the memory it pairs with it: listed, or from the first to the
    last of `memory_range_mib` in steps of its third value."""

    cpu: int  # CPU units, 1024 a vCPU
    memory_mib: list[int] = Field(default=[], alias="memoryMiB")
    memory_range_mib: list[int] = Field(default=[], alias="memoryRangeMiB")
    operating_systems: list[str]  # LINUX, WINDOWS
    linux_platform: str | None = None  # the Linux platform version it needs at least (ECS)

    def memories(self) -> list[int]:
        if self.memory_range_mib:
            low, high, step = self.memory_range_mib
            return list(range(low, high + 1, step))
        return list(self.memory_mib)


class FargatePods(Sourced):
    """How EKS sizes a pod it runs on Fargate (each on a node of its own)."""

    memory_overhead_mib: int = Field(alias="memoryOverheadMiB")  # added to each pod for the kubelet, kube-proxy and containerd
    pods_per_node: int
    gpus: bool  # whether a Fargate node offers GPUs
    profile_label: str  # the pod label that names the one profile to match when several do


class FargateTasks(Sourced):
    """What an ECS task definition cannot ask of Fargate."""

    not_valid: list[str]  # task definition parameters Fargate refuses that the placement reads (gpu, linuxParameters.devices)


class Fargate(Sourced):
    """The task sizes AWS Fargate runs, ECS tasks and EKS pods alike."""

    sizes: list[FargateSize]
    pods: FargatePods
    tasks: FargateTasks


DraSwitch = Literal["gpus", "computeDomains"]  # the chart's resources.<switch>.enabled values


class DraDeviceClass(Sourced):
    """A DeviceClass a DRA driver chart installs: its one CEL selector, under the values switch
    (`resources.<when>.enabled`) that renders it."""

    name: str
    selector: str
    when: DraSwitch


class DraDriverContainer(_Facts):
    """A container of a DRA driver workload: its requests at `resources_path` of the values,
    rendered only under `resources.<when>.enabled` where `when` is given."""

    name: str
    when: DraSwitch | None = None
    resources_path: list[str]


class DraDriverPod(Sourced):
    """A workload a DRA driver chart renders: a DaemonSet or a Deployment named after the chart's
    name helper and `suffix`, whose nodeSelector, affinity and tolerations are those under
    `values_path`; rendered where any `when` switch (`resources.<when>.enabled`) or the value at
    `enabled_path` is on; its replicas fixed or at `replicas_path`. The one that `publishes` is
    the kubelet plugin: the nodes it runs on publish the driver's devices."""

    kind: Literal["DaemonSet", "Deployment"]
    suffix: str
    values_path: list[str]
    when: list[DraSwitch] = []
    enabled_path: list[str] | None = None
    replicas: int | None = None
    replicas_path: list[str] | None = None
    publishes: bool = False
    containers: list[DraDriverContainer]


class DraDriverChart(Sourced):
    """An NVIDIA DRA driver chart line: the version whose values.yaml gpufleet holds, the
    DeviceClasses and workloads its templates render, and the value without which Helm refuses
    to render GPU allocation."""

    chart: str
    version: str
    values_file: str
    device_classes: list[DraDeviceClass]
    pods: list[DraDriverPod]
    gpus_override: Value


class MigLayout(Sourced):
    """The MIG devices one GPU holds under a mig-parted configuration, by the GPU EC2 names."""

    gpu_model: str
    memory_mib: int
    devices: dict[str, int]


class DraFacts(_Facts):
    driver: str  # the driver name the GPU kubelet plugin publishes slices under
    driver_source: str
    charts: list[DraDriverChart]
    mig_config_label: str
    mig_layouts: dict[str, list[MigLayout]]  # mig-parted configuration name -> per GPU model
    runtime_attributes: Values  # attributes only NVML gives on the node: never published offline
    karpenter: Value  # Karpenter's refusal of a pod with resourceClaims (ignore-dra-requests on)
    unmodelled_drivers: Values  # drivers whose devices gpufleet does not publish: claims on them are not judged
    # What gpufleet writes on a node group with `allocation: dra`: the API version and the cluster
    # version that serves it, the classes its claims name, the label that keeps the device plugin
    # off, and the MIG profile names a claim may select.
    api: DraApi
    device_classes: DraDeviceClasses
    device_plugin_off: NodeLabel
    mig_profiles: dict[str, list[str]]  # "<EC2 GPU name>-<MiB>" -> profile names
    mig_profiles_source: str
    provisioners: dict[Literal["karpenter", "auto-mode"], DraProvisioner]
    compute_domain_families: Values  # instance families whose GPUs need a ComputeDomain


class CuratedFacts(_Facts):
    """Everything the curated facts file holds, by group."""

    ecs: EcsFacts
    eks: EksFacts
    charts: Charts
    memory_overhead: MemoryOverhead
    mig_capable_gpu_models: Values
    ack: AckFacts
    gke: GkeFacts
    aks: AksFacts
    retired_families: dict[str, Reasoned]
    incomplete_records: dict[str, IncompleteRecord]
    replacement: dict[str, Replacement]
    refused_deletes: dict[str, RefusedDelete]
    quotas: dict[str, Quota]
    kubernetes: KubernetesFacts
    lifecycle: Lifecycle
    libraries: Libraries
    autonaming: Autonaming
    karpenter: Karpenter
    nccl_bandwidth: NcclBandwidth
    fargate: Fargate
    dra: DraFacts


class KarpenterAllocatable(Sourced):
    """What Karpenter subtracts from a type's EC2 record to estimate a node it has not launched."""

    vm_memory_overhead_percent: float
    arm64_reserved_mib: int = Field(alias="arm64ReservedMiB")
    kube_reserved_memory_mib: KubeReservedMemory = Field(alias="kubeReservedMemoryMiB")
    kube_reserved_cpu_per10000: list[CpuReserveBand] = Field(alias="kubeReservedCpuPer10000")
    eviction_hard_memory_mib: int = Field(alias="evictionHardMemoryMiB")
    pods_per_interface_addresses_less: int
    pods_plus: int


class KarpenterLabels(Sourced):
    domain: str
    node_pool: str
    capacity_type: str
    capacity_types: list[str]
    not_in_catalog: list[str]
    # The manufacturer label values of the accelerators gpufleet builds pools for: EC2's NVIDIA as
    # Karpenter writes it (lower case), and the value it writes for every Neuron device.
    manufacturers: dict[str, str]


class KarpenterRequirementLabels(Sourced):
    """The keys Karpenter's requirement algebra knows: the well-known ones (core's, the provider's
    additions) and the aliases it reads a key as (core's, the provider's)."""

    well_known: list[str]
    provider_well_known: list[str]
    aliases: dict[str, str]
    provider_aliases: dict[str, str]


class KarpenterChart(Sourced):
    chart: str
    version: str
    names: ChartNames | None = None


class KarpenterInstall(Sourced):
    """How Karpenter is installed: its namespace and service account (the Pod Identity association's),
    the controller's resources, the Pod Identity trust, the agent add-on, the nodes' access entry type."""

    namespace: str
    service_account: str
    controller_resources: dict[str, str]
    pod_identity_principal: str
    pod_identity_actions: list[str]
    pod_identity_agent_addon: str
    node_access_entry_type: str
    discovery_tag: str  # the tag key its EC2NodeClass selects subnets by (the value: the cluster's name)


class KarpenterVolumes(Sourced):
    """The volumes of an EC2NodeClass's AMI family: its root device, and Bottlerocket's data device
    beside its small control volume (Karpenter's own default size for it)."""

    root_device: dict[str, str]  # alias family -> device
    data_device: dict[str, str]  # alias family -> device where images and pods' data live
    control_volume_gib: dict[str, int]  # alias family -> its OS volume's size, where the data is elsewhere


class KarpenterController(Sourced):
    """The chart's controller Deployment as the scheduler reads it: the values.yaml defaults of what
    scheduling reads, and what of them the simulation does not model."""

    name: str
    defaults: dict[str, Any]  # replicas, nodeSelector, affinity, tolerations, controller.resources
    not_simulated: list[str]


class NodeOverlayFacts(Sourced):
    feature_gate: list[str]  # the chart value that turns NodeOverlay on
    enabled_by_default: bool


class KarpenterUnmodelled(Sourced):
    """What the provider gives a node that the simulation does not (a plan needing it is named)."""

    capacity: list[str]  # resources the provider computes per type that the simulation gives no type
    windows_families: list[str]  # AMI families whose nodes run Windows
    instance_store_policy: str  # the policy that makes the instance store the node's ephemeral storage


class AmiVariants(Sourced):
    families: dict[str, dict[str, list[str]]]  # alias family -> architecture -> accelerators with a variant


class Drift(Sourced):
    node_pool: list[str]  # input paths of a NodePool whose change drifts its nodes
    resolved: list[str]  # of those, the ones that drift only the nodes the new value no longer admits
    node_class: list[str]  # input paths of an EC2NodeClass whose change drifts the nodes of its pools


class Consolidation(Sourced):
    default_policy: str
    moves_running_pods: list[str]  # the policies that move pods off nodes that are not empty
    do_not_disrupt: dict[str, str]  # the pod annotation (key, value) that keeps them
    batch_kinds: list[str]  # workload kinds whose pods lose their work when moved


class ReservedCapacity(Sourced):
    capacity_type: str
    selector: str  # the EC2NodeClass field that selects the reservations


class Karpenter(_Facts):
    version: str
    allocatable: KarpenterAllocatable
    labels: KarpenterLabels
    requirement_labels: KarpenterRequirementLabels
    node_pool_order: Sourced
    ami_variants: AmiVariants
    drift: Drift
    consolidation: Consolidation
    reserved_capacity: ReservedCapacity
    chart: KarpenterChart
    install: KarpenterInstall
    controller: KarpenterController
    volumes: KarpenterVolumes
    node_overlay: NodeOverlayFacts
    unmodelled: KarpenterUnmodelled


class CuratedFactsError(GpufleetError, ValueError):
    """The curated facts file does not have the shape the rules read."""


def trusted(document: dict) -> CuratedFacts:
    """The curated facts of a file already known to pass `checked` (the one gpufleet ships, which
    tests/catalog holds to it): the same models with the same values, built without validating.
    The policy pack starts with it: validating would build the validators that defer_build spared."""
    return _constructed(CuratedFacts, document)


def _constructed(model: type[BaseModel], data: dict) -> Any:
    # The alias the generator gives: pydantic 2.11 (the floors) fills FieldInfo.alias from it only
    # when the model is built, which defer_build postpones; the pinned pydantic fills it earlier.
    by_alias = {(info.alias or to_camel(name)): name for name, info in model.model_fields.items()}
    values = {by_alias[key]: _value(model.model_fields[by_alias[key]].annotation, item) for key, item in data.items()}
    return model.model_construct(**values)


def _value(annotation: Any, data: Any) -> Any:
    """`data` as strict validation makes it for `annotation`: nested models built, containers copied,
    an integer for a float field a float; anything else as it is."""
    if isinstance(annotation, ForwardRef):  # a class defined further down this module
        annotation = globals()[annotation.__forward_arg__]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if data is None:
        return None
    if origin in (types.UnionType, typing.Union):  # `X | None`: only the None arm is ever another type
        [annotation] = [arg for arg in args if arg is not type(None)]
        return _value(annotation, data)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _constructed(annotation, data)
    if origin is dict:
        return {key: _value(args[1], item) for key, item in data.items()}
    if origin is list:
        return [_value(args[0], item) for item in data]
    if annotation is float and isinstance(data, int):
        return float(data)
    return data


def checked(document: object, where: str) -> CuratedFacts:
    """The curated facts, checked; a problem names the key path and what is wrong."""
    try:
        return CuratedFacts.model_validate(document)
    except ValidationError as err:
        lines = [f"{where}: {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors(include_url=False)[:10]]
        raise CuratedFactsError("\n".join(lines)) from None
