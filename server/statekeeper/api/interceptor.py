"""The one interceptor: authentication, error mapping and the access log.

Servicers raise domain errors; this module turns each into its canonical
status code with a `google.rpc.ErrorInfo` (and a `google.rpc.BadRequest` for
invalid fields). A request whose bytes do not parse is answered with
INVALID_ARGUMENT instead of grpc's INTERNAL. Anything unexpected is logged
with its traceback and answered INTERNAL without leaking details.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from statekeeper.core.audit import Actor
from statekeeper.core.errors import (
    InvalidArgumentError,
    StatekeeperError,
)
from statekeeper.core.tenancy import Authenticator, Principal

log = logging.getLogger("statekeeper.access")

ERROR_DOMAIN = "statekeeper.dev"
_OPEN_PREFIXES = ("/grpc.health.v1.", "/grpc.reflection.")

_actor: contextvars.ContextVar[Actor] = contextvars.ContextVar("actor")


def current_actor() -> Actor:
    """The caller of the RPC being served and the RPC itself (set by the
    interceptor): what mutations hand to the domain for the audit trail."""
    return _actor.get()


def current_principal() -> Principal:
    """The caller of the RPC being served (set by the interceptor)."""
    return _actor.get().principal


def current_tenant() -> str:
    return _actor.get().tenant


def actor_for(principal: Principal, method: str) -> Actor:
    """`method` is the gRPC path, "/package.Service/Method"."""
    service, _, name = method.lstrip("/").rpartition("/")
    return Actor(principal, service, name)


class _Malformed:
    """Stands in for a request whose bytes failed to parse."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _safe_deserializer(inner: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if inner is None:
        return None

    def deserialize(data: bytes) -> Any:
        try:
            return inner(data)
        except (DecodeError, ValueError) as exc:
            return _Malformed(exc)

    return deserialize


def to_grpc_status(error: StatekeeperError) -> grpc.Status:
    """The rich status (AIP-193) for a domain error."""
    code = getattr(code_pb2, error.code)
    info = error_details_pb2.ErrorInfo(
        reason=error.reason, domain=ERROR_DOMAIN, metadata=error.metadata
    )
    details = [_pack(info)]
    if isinstance(error, InvalidArgumentError):
        violation = error_details_pb2.BadRequest.FieldViolation(
            field=error.field, description=error.message
        )
        details.append(_pack(error_details_pb2.BadRequest(field_violations=[violation])))
    return rpc_status.to_status(
        status_pb2.Status(code=code, message=error.message, details=details)
    )


def _pack(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def _presented_key(context: grpc.aio.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "x-api-key" and isinstance(value, str):
            return value
        if key == "authorization" and isinstance(value, str):
            scheme, _, credential = value.partition(" ")
            if scheme.lower() == "bearer":
                return credential.strip()
    return None


class DomainInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Authenticates every statekeeper call and maps its errors."""

    def __init__(self, authenticator: Authenticator) -> None:
        self._authenticator = authenticator

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or method.startswith(_OPEN_PREFIXES):
            return handler
        deserializer = _safe_deserializer(handler.request_deserializer)
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(method, handler.unary_unary),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(method, handler.unary_stream),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # client streaming is not part of the contract

    def _enter(
        self, method: str, request: Any, context: grpc.aio.ServicerContext
    ) -> contextvars.Token[Actor]:
        principal = self._authenticator.authenticate(_presented_key(context))
        token = _actor.set(actor_for(principal, method))
        if isinstance(request, _Malformed):
            raise InvalidArgumentError("request", f"cannot be parsed: {request.error}")
        return token

    def _wrap_unary(self, method: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        async def behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            outcome = "OK"
            try:
                token = self._enter(method, request, context)
                try:
                    return await inner(request, context)
                finally:
                    _actor.reset(token)
            except Exception as exc:  # every path below aborts the call
                outcome = _outcome(exc)
                await _abort(method, exc, context)
            finally:
                _log_call(method, outcome, started)

        return behavior

    def _wrap_stream(self, method: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        async def behavior(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            started = time.perf_counter()
            outcome = "OK"
            try:
                token = self._enter(method, request, context)
                try:
                    async for item in inner(request, context):
                        yield item
                finally:
                    _actor.reset(token)
            except Exception as exc:
                outcome = _outcome(exc)
                await _abort(method, exc, context)
            finally:
                _log_call(method, outcome, started)

        return behavior


def _outcome(exc: Exception) -> str:
    if isinstance(exc, StatekeeperError):
        return exc.code
    if isinstance(exc, grpc.aio.AbortError):
        return "ABORTED_BY_SERVICER"
    return "INTERNAL"


async def _abort(method: str, exc: Exception, context: grpc.aio.ServicerContext) -> None:
    """Aborts the call for `exc` (always raises)."""
    if isinstance(exc, grpc.aio.AbortError):
        raise exc  # the servicer aborted on its own; grpc finishes the call
    if isinstance(exc, StatekeeperError):
        status = to_grpc_status(exc)
        await context.abort(status.code, status.details, status.trailing_metadata)
    log.exception("unexpected error in %s", method)
    status = to_grpc_status(StatekeeperError("internal error; see the server log"))
    await context.abort(status.code, status.details, status.trailing_metadata)


def _log_call(method: str, outcome: str, started: float) -> None:
    log.info(
        "rpc",
        extra={
            "rpc_method": method,
            "rpc_outcome": outcome,
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        },
    )
