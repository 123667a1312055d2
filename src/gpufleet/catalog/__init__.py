"""Facts only: the EC2 records generated from moto's snapshot (or live AWS), the curated facts each
with its source, the pinned charts' values, the Pulumi type tokens and the wording of counts.
`generate/` regenerates the data; the policy pack never imports it."""
