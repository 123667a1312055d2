// bench/cdk.py's peer: the fleet of bench/fleets.py's cdk_peer_fleet(groups), written with the AWS
// CDK as its users write it (L2 constructs), in plain JavaScript so the measured `cdk synth` runs
// no TypeScript compile. One env-agnostic stack: synth needs no account and makes no lookup.
//
//   npm ci && npx cdk synth --quiet -c groups=20
const cdk = require("aws-cdk-lib");
const ec2 = require("aws-cdk-lib/aws-ec2");
const ecs = require("aws-cdk-lib/aws-ecs");
const eks = require("aws-cdk-lib/aws-eks");
const autoscaling = require("aws-cdk-lib/aws-autoscaling");
const { KubectlV35Layer } = require("@aws-cdk/lambda-layer-kubectl-v35");

// bench/fleets.py ECS_TYPES, the same rotation.
const TYPES = ["g5.xlarge", "g5.12xlarge", "g6.xlarge", "g4dn.xlarge", "g6e.xlarge", "p4d.24xlarge"];
const ZONES = ["us-east-1a", "us-east-1b"];
const IMAGE = "public.ecr.aws/example/app:1";

function launchTemplate(scope, id, props) {
  // gpufleet's defaults: encrypted gp3 root volume, IMDSv2 with a hop limit of 1.
  return new ec2.LaunchTemplate(scope, id, {
    ...props,
    requireImdsv2: true,
    httpPutResponseHopLimit: 1,
    blockDevices: [{ deviceName: "/dev/xvda", volume: ec2.BlockDeviceVolume.ebs(props.rootGiB, { encrypted: true, volumeType: ec2.EbsDeviceVolumeType.GP3 }) }],
  });
}

function ecsCluster(stack, groups) {
  // The ECS fleet runs on existing subnets (bench/fleets.py ecs_fleet), as gpufleet's does.
  const vpc = ec2.Vpc.fromVpcAttributes(stack, "EcsVpc", {
    vpcId: "vpc-0123456789abcdef0",
    availabilityZones: ZONES,
    privateSubnetIds: ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
  });
  const cluster = new ecs.Cluster(stack, "Ecs", { clusterName: "bench", vpc, containerInsightsV2: ecs.ContainerInsights.ENABLED });
  for (let i = 0; i < groups; i++) {
    const template = launchTemplate(stack, `cp${i}-lt`, {
      instanceType: new ec2.InstanceType(TYPES[i % TYPES.length]),
      machineImage: ecs.EcsOptimizedImage.amazonLinux2023(ecs.AmiHardwareType.GPU),
      role: new cdk.aws_iam.Role(stack, `cp${i}-role`, { assumedBy: new cdk.aws_iam.ServicePrincipal("ec2.amazonaws.com") }),
      userData: ec2.UserData.forLinux(),
      securityGroup: new ec2.SecurityGroup(stack, `cp${i}-sg`, { vpc }),
      rootGiB: 100,
    });
    const group = new autoscaling.AutoScalingGroup(stack, `cp${i}-asg`, { vpc, launchTemplate: template, minCapacity: 0, desiredCapacity: 0, maxCapacity: 1 });
    const provider = new ecs.AsgCapacityProvider(stack, `cp${i}`, { capacityProviderName: `bench-cp${i}`, autoScalingGroup: group, targetCapacityPercent: 100 });
    cluster.addAsgCapacityProvider(provider);
    const task = new ecs.Ec2TaskDefinition(stack, `wl${i}`, { family: `wl${i}` });
    task.addContainer("main", { image: ecs.ContainerImage.fromRegistry(IMAGE), memoryLimitMiB: 4096, gpuCount: 1 });
    new ecs.Ec2Service(stack, `wl${i}-service`, { cluster, taskDefinition: task, desiredCount: 1, capacityProviderStrategies: [{ capacityProvider: provider.capacityProviderName, weight: 1 }] });
  }
}

function eksCluster(stack, groups) {
  // The stack's one VPC: two zones, a private and a public subnet each, one NAT gateway.
  const vpc = new ec2.Vpc(stack, "Vpc", {
    ipAddresses: ec2.IpAddresses.cidr("10.60.0.0/16"),
    availabilityZones: ZONES,
    natGateways: 1,
  });
  const cluster = new eks.Cluster(stack, "Eks", {
    clusterName: "bench",
    version: eks.KubernetesVersion.V1_35,
    kubectlLayer: new KubectlV35Layer(stack, "kubectl"),
    vpc,
    vpcSubnets: [{ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }],
    defaultCapacity: 0,
  });
  cluster.addNodegroupCapacity("system", {
    instanceTypes: [new ec2.InstanceType("m6i.large")],
    amiType: eks.NodegroupAmiType.AL2023_X86_64_STANDARD,
    minSize: 2, desiredSize: 2, maxSize: 3,
    labels: { "gpufleet.io/node-role": "system" },
    launchTemplateSpec: spec(launchTemplate(stack, "system-lt", { rootGiB: 50 })),
  });
  new eks.CfnAddon(stack, "node-monitoring", { clusterName: cluster.clusterName, addonName: "eks-node-monitoring-agent" });
  for (let i = 0; i < groups; i++) {
    cluster.addNodegroupCapacity(`ng${i}`, {
      nodegroupName: `ng${i}`,
      instanceTypes: [new ec2.InstanceType(TYPES[i % TYPES.length])],
      amiType: eks.NodegroupAmiType.AL2023_X86_64_NVIDIA,
      minSize: 0, desiredSize: 1, maxSize: 2,
      labels: { "nvidia.com/gpu.present": "true" },
      taints: [{ key: "nvidia.com/gpu", value: "true", effect: eks.TaintEffect.NO_SCHEDULE }],
      launchTemplateSpec: spec(launchTemplate(stack, `ng${i}-lt`, { rootGiB: 200 })),
      enableNodeAutoRepair: true,
    });
    cluster.addManifest(`wl${i}`, deployment(`wl${i}`, `ng${i}`));
  }
  cluster.addHelmChart("nvidia-device-plugin", {
    chart: "nvidia-device-plugin",
    repository: "https://nvidia.github.io/k8s-device-plugin",
    version: "0.20.0",
    namespace: "nvidia-device-plugin",
    createNamespace: true,
    values: { tolerations: [{ key: "CriticalAddonsOnly", operator: "Exists" }, { key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }] },
  });
}

function spec(template) {
  return { id: template.launchTemplateId, version: template.latestVersionNumber };
}

function deployment(name, nodeGroup) {
  const labels = { app: name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "default" },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { "eks.amazonaws.com/nodegroup": nodeGroup },
          tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
          containers: [{ name: "main", image: IMAGE, resources: { limits: { "nvidia.com/gpu": 1 } } }],
        },
      },
    },
  };
}

const app = new cdk.App();
const groups = Number(app.node.tryGetContext("groups") ?? 1);
const stack = new cdk.Stack(app, `cdk-${groups}`);
ecsCluster(stack, groups);
eksCluster(stack, groups);
