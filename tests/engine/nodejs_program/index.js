// A small Node.js program for gpufleet's hosted engine test: one Deployment whose name Kubernetes
// auto-names, its replicas from the stack's config.
const pulumi = require("@pulumi/pulumi");
const config = new pulumi.Config();
if (config.get("fail")) {
    // One frame: the runner prints the error with util.inspect(err, { colors: true })
    // (@pulumi/pulumi cmd/run/error.js defaultErrorMessage), and node with nodejs/node#59446 but not
    // #64022 (20.20.2 here) loops on its source-mapped frame ".../node_modules/@pulumi/resource.ts:L:C"
    // until a RangeError (nodejs/node#64011): a minute or two and gigabytes, then the same message,
    // which is all the test reads.
    Error.stackTraceLimit = 1;
    throw new Error(`asked to fail: ${config.get("fail")}`);
}
const web = new pulumi.CustomResource("kubernetes:apps/v1:Deployment", "web", {
    spec: { replicas: config.requireNumber("replicas"), template: { spec: { containers: [{ name: "web", image: "nginx:1.27" }] } } },
});
exports.urn = web.urn;
