// A small Node.js program for gpufleet's hosted engine test: one Deployment whose name Kubernetes
// auto-names, its replicas from the stack's config.
const pulumi = require("@pulumi/pulumi");
const config = new pulumi.Config();
if (config.get("fail")) {
    throw new Error(`asked to fail: ${config.get("fail")}`);
}
const web = new pulumi.CustomResource("kubernetes:apps/v1:Deployment", "web", {
    spec: { replicas: config.requireNumber("replicas"), template: { spec: { containers: [{ name: "web", image: "nginx:1.27" }] } } },
});
exports.urn = web.urn;
