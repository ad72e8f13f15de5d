"""Servicers for contract services whose capability is not built yet.

Each RPC answers UNIMPLEMENTED with ErrorInfo reason NOT_IMPLEMENTED and a
message naming the missing capability, instead of grpc's bare default.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from google.protobuf.descriptor import ServiceDescriptor

from statekeeper.core.errors import CapabilityNotImplementedError


def unimplemented_servicer(base: type, service: ServiceDescriptor, capability: str) -> Any:
    """An instance of `base` whose every RPC raises
    CapabilityNotImplementedError(capability)."""
    methods: dict[str, Any] = {}
    for method in service.methods:
        name = f"{capability} ({service.full_name}.{method.name})"
        methods[method.name] = _streaming(name) if method.server_streaming else _unary(name)
    return type(f"Unimplemented{service.name}", (base,), methods)()


def _unary(capability: str) -> Any:
    async def rpc(self: Any, request: Any, context: Any) -> Any:
        raise CapabilityNotImplementedError(capability)

    return rpc


def _streaming(capability: str) -> Any:
    async def rpc(self: Any, request: Any, context: Any) -> AsyncIterator[Any]:
        raise CapabilityNotImplementedError(capability)
        yield  # unreachable; makes this an async generator like real streams

    return rpc
