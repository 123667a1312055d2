"""The offline engine: runs a Pulumi Python program under the SDK's mock runtime as `pulumi preview`
would (runtime), answers its provider functions from the offline fact source (answers), and turns
what it registered into the JSON plan (plan); preview runs it with the policy pack."""

# The Pulumi project of gpufleet's own program (Pulumi.yaml's name); here, so the CLI can name it to
# the policy pack it starts before importing the engine.
PROJECT = "gpufleet"
