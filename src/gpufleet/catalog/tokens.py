"""The Pulumi type tokens gpufleet reads or writes, declared once: what the rules, the plan's shape
checks, the reviewer's diff and the engine match resources and provider functions by."""

# How the engine marks a value known only after apply (pulumi.runtime.rpc.UNKNOWN).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

# Resources
ASG = "aws:autoscaling/group:Group"
EC2_INSTANCE = "aws:ec2/instance:Instance"
LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
SECURITY_GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
SECURITY_GROUP_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
SUBNET = "aws:ec2/subnet:Subnet"
VPC = "aws:ec2/vpc:Vpc"
ECS_CLUSTER = "aws:ecs/cluster:Cluster"
ECS_CLUSTER_CAPACITY_PROVIDERS = "aws:ecs/clusterCapacityProviders:ClusterCapacityProviders"
ECS_CAPACITY_PROVIDER = "aws:ecs/capacityProvider:CapacityProvider"
ECS_SERVICE = "aws:ecs/service:Service"
ECS_TASK_DEFINITION = "aws:ecs/taskDefinition:TaskDefinition"
EKS_ADDON = "aws:eks/addon:Addon"
EKS_FARGATE_PROFILE = "aws:eks/fargateProfile:FargateProfile"
# pulumi-eks's components (their provider builds the resources: curated libraries.pulumiEks).
PULUMI_EKS_CLUSTER = "eks:index:Cluster"
PULUMI_EKS_NODE_GROUP = "eks:index:NodeGroup"  # deprecated: a launch configuration, the same node defaults as V2
PULUMI_EKS_NODE_GROUP_V2 = "eks:index:NodeGroupV2"
PULUMI_EKS_MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
AWSX_VPC = "awsx:ec2:Vpc"
AWSX_FARGATE_SERVICE = "awsx:ecs:FargateService"
AWSX_EC2_SERVICE = "awsx:ecs:EC2Service"
AWSX_FARGATE_TASK_DEFINITION = "awsx:ecs:FargateTaskDefinition"
AWSX_EC2_TASK_DEFINITION = "awsx:ecs:EC2TaskDefinition"
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
KARPENTER_NODE_OVERLAY = "kubernetes:karpenter.sh/v1alpha1:NodeOverlay"
KARPENTER_EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
IAM_ROLE = "aws:iam/role:Role"
IAM_ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
IAM_INSTANCE_PROFILE = "aws:iam/instanceProfile:InstanceProfile"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
RUNTIME_CLASS = "kubernetes:node.k8s.io/v1:RuntimeClass"
# Rendered by the provider at preview: the plan holds its inputs, not the objects.
HELM_CHART_V4 = "kubernetes:helm.sh/v4:Chart"
K8S_CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
K8S_CONFIG_FILE_V1 = "kubernetes:yaml:ConfigFile"
# yaml/v2 components are expanded by the provider, not in the program: a plan holds their inputs only.
K8S_CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
MPIJOB = "kubernetes:kubeflow.org/v2beta1:MPIJob"
K8S_DEPLOYMENT = "kubernetes:apps/v1:Deployment"
K8S_JOB = "kubernetes:batch/v1:Job"
# The NVIDIA DRA driver's ComputeDomain (its chart's CRD, crds/resource.nvidia.com_computedomains.yaml @v0.4.1).
DRA_COMPUTE_DOMAIN = "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain"
ACK_CLUSTER = "alicloud:cs/managedKubernetes:ManagedKubernetes"
ACK_NODE_POOL = "alicloud:cs/nodePool:NodePool"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
AKS_NODE_POOL = "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool"
AKS_CLUSTER = "azure:containerservice/kubernetesCluster:KubernetesCluster"
# azure-native's AKS: a cluster with its agentPoolProfiles, and pools of their own.
AKS_NATIVE_CLUSTER = "azure-native:containerservice:ManagedCluster"
AKS_NATIVE_AGENT_POOL = "azure-native:containerservice:AgentPool"
STACK = "pulumi:pulumi:Stack"
# The engine's built-in resources and functions (pulumi/pulumi pkg/resource/deploy/builtins.go).
STACK_REFERENCE = "pulumi:pulumi:StackReference"
GET_RESOURCE = "pulumi:pulumi:getResource"
READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"
READ_STACK_RESOURCE_OUTPUTS = "pulumi:pulumi:readStackResourceOutputs"
STASH = "pulumi:index:Stash"
PROVIDERS = "pulumi:providers:"  # a provider resource's type: this, then its package
AWS_PROVIDER = "pulumi:providers:aws"
GCP_PROVIDER = "pulumi:providers:gcp"

# Provider functions (invokes) the offline engine answers
GET_AVAILABILITY_ZONES = "aws:index/getAvailabilityZones:getAvailabilityZones"
GET_PARTITION = "aws:index/getPartition:getPartition"
GET_REGION = "aws:index/getRegion:getRegion"
GET_CALLER_IDENTITY = "aws:index/getCallerIdentity:getCallerIdentity"
GET_VPC = "aws:ec2/getVpc:getVpc"
GET_SUBNETS = "aws:ec2/getSubnets:getSubnets"
GET_AMI = "aws:ec2/getAmi:getAmi"
GET_SSM_PARAMETER = "aws:ssm/getParameter:getParameter"
GET_ENGINE_VERSIONS = "gcp:container/getEngineVersions:getEngineVersions"

# A plan that creates one of these holds its cluster's node groups (the placement and the taint rule).
CLUSTERS = (EKS_CLUSTER, GKE_CLUSTER, AKS_CLUSTER, AKS_NATIVE_CLUSTER, ACK_CLUSTER, PULUMI_EKS_CLUSTER)
