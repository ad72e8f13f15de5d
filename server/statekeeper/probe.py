"""`statekeeper health`: asks the server at the configured listen address
(flag, env or config file, as `serve` reads it) for its standard gRPC health,
so a container's health check follows STATEKEEPER_LISTEN instead of a
hard-coded port."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

# Wildcard listen hosts: the server is reached on loopback.
_ANY_HOST = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]", "::": "[::1]", "": "127.0.0.1"}


def local_target(listen: str) -> str:
    """The address to dial for a server listening on `listen`."""
    host, _, port = listen.rpartition(":")
    return f"{_ANY_HOST.get(host, host)}:{port}"


def check(listen: str, service: str = "", timeout: float = 3.0) -> tuple[bool, str]:
    """(serving, what to print) for the server listening on `listen`."""
    target = local_target(listen)
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as exc:
            return False, f"{target}: {exc.code().name}: {exc.details()}"
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    return reply.status == health_pb2.HealthCheckResponse.SERVING, f"{target}: {status}"
