"""gRPC transport: servicers translate proto <-> domain and nothing else."""
