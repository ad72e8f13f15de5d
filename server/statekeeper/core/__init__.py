"""Domain logic: no gRPC, no SQL. Each module owns one capability."""
