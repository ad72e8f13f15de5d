"""Generated protobuf and gRPC stubs of statekeeper.v1 (do not edit; see scripts/generate.sh)."""
