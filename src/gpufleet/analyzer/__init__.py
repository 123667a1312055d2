"""The analyzer client: starts a CrossGuard policy pack as the Pulumi CLI does and speaks the
analyzer gRPC protocol to it (client), with the pack's config as the CLI reconciles it (policy_config)."""
