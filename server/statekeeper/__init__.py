"""statekeeper: a gRPC server that keeps the state of AI agents."""

__version__ = "0.1.0"
