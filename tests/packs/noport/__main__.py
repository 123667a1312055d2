"""Not a policy pack at all: it prints a greeting where the gRPC port belongs."""

print("hello from a script")
