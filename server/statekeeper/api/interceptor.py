"""The one interceptor: authentication, request checks, stream limits,
tenant quotas, error mapping and the access log.

Servicers raise domain errors; this module turns each into its canonical
status code with a `google.rpc.ErrorInfo` (and a `google.rpc.BadRequest` for
invalid fields). A request whose bytes do not parse is answered with
INVALID_ARGUMENT instead of grpc's INTERNAL, and every request passes the
checks of request_checks (durations, timestamps, NUL, non-finite numbers)
before a servicer sees it. Anything unexpected is logged with its traceback
and answered INTERNAL without leaking details.

A call over a tenant quota (core/quotas.py) is answered RESOURCE_EXHAUSTED
with a `google.rpc.RetryInfo` next to the ErrorInfo. Failed authentications
are logged at WARNING, at most one line a second per peer host, with the
number of failures it stands for and the presented key's id (a hash
prefix), never the key.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import DecodeError
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc._cython.cygrpc import ExecuteBatchError  # no public name for it
from grpc_status import rpc_status

from statekeeper.api.request_checks import check_request
from statekeeper.core.audit.service import Actor
from statekeeper.core.errors import (
    InvalidArgumentError,
    LimitExceededError,
    StatekeeperError,
    UnauthenticatedError,
)
from statekeeper.core.limits import Limits
from statekeeper.core.quotas import QuotaEnforcer, QuotaExceededError, Quotas
from statekeeper.core.tenancy import Authenticator, Principal, key_id

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

    def __init__(self, error: Exception, size: int) -> None:
        self.error = error
        self.size = size


def _safe_deserializer(inner: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if inner is None:
        return None

    def deserialize(data: bytes) -> Any:
        try:
            return inner(data)
        except (DecodeError, ValueError) as exc:
            return _Malformed(exc, len(data))

    return deserialize


def to_grpc_status(error: StatekeeperError) -> grpc.Status:
    """The rich status (AIP-193) for a domain error."""
    code = getattr(code_pb2, error.code)
    info = error_details_pb2.ErrorInfo(
        reason=error.reason, domain=ERROR_DOMAIN, metadata=error.metadata
    )
    details = [_pack(info)]
    if isinstance(error, QuotaExceededError):
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(max(1, round(error.retry_delay * 1e9)))
        details.append(_pack(error_details_pb2.RetryInfo(retry_delay=delay)))
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


def presented_key(context: grpc.aio.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "x-api-key" and isinstance(value, str):
            return value
        if key == "authorization" and isinstance(value, str):
            scheme, _, credential = value.partition(" ")
            if scheme.lower() == "bearer":
                return credential.strip()
    return None


def certificate_names(context: grpc.aio.ServicerContext) -> list[str]:
    """The subject CN and subject alternative names of the client
    certificate of the call's connection, as gRPC verified it against
    tls_client_ca (empty on plaintext, or TLS without client certificates).
    gRPC fills these auth context properties only after the chain verified."""
    auth = context.auth_context() or {}
    if auth.get("transport_security_type") != [b"ssl"]:
        return []
    names = [*auth.get("x509_common_name", ()), *auth.get("x509_subject_alternative_name", ())]
    return [name.decode(errors="replace") for name in names]


class WrappedHandlers:
    """An interceptor's wrapper of each method's handler, made once: a
    method's handler is the same object call after call, and wrapping it
    per call cost every call its closures."""

    def __init__(self) -> None:
        # Keyed by registered methods only (a bounded set): the handler, its wrapper.
        self._by_method: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def wrap(
        self,
        method: str,
        handler: grpc.RpcMethodHandler,
        make: Callable[[str, grpc.RpcMethodHandler], grpc.RpcMethodHandler],
    ) -> grpc.RpcMethodHandler:
        known = self._by_method.get(method)
        if known is None or known[0] is not handler:
            known = (handler, make(method, handler))
            self._by_method[method] = known
        return known[1]


class DomainInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Authenticates every statekeeper call, checks its requests, bounds its
    open streams and maps its errors.

    Every kind of handler is wrapped (unary or streaming on either side), so
    a new RPC cannot skip authentication by its shape; an unknown kind is
    refused. Each wrapper is a plain coroutine run in the call's own task:
    the caller identity is set and reset there, and a response stream is
    driven to the end (or closed) there too, never by an async generator
    finalizer in another task or context.
    """

    def __init__(
        self,
        authenticator: Authenticator,
        limits: Limits | None = None,
        quotas: QuotaEnforcer | None = None,
        failures: FailedAuthentications | None = None,
    ) -> None:
        self._authenticator = authenticator
        self._streams = StreamLimiter(limits or Limits())
        self._quotas = quotas or QuotaEnforcer(Quotas())
        self._failures = failures or FailedAuthentications()
        self._wrapped = WrappedHandlers()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or method.startswith(_OPEN_PREFIXES):
            return handler
        return self._wrapped.wrap(method, handler, self._wrap)

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        deserializer = _safe_deserializer(handler.request_deserializer)
        serializer = handler.response_serializer
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary_unary(method, handler.unary_unary), deserializer, serializer
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._unary_stream(method, handler.unary_stream), deserializer, serializer
            )
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                self._stream_unary(method, handler.stream_unary), deserializer, serializer
            )
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(
                self._stream_stream(method, handler.stream_stream), deserializer, serializer
            )
        raise TypeError(f"{method}: a handler of no known kind cannot be served safely")

    def _unary_unary(self, method: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        async def behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
            async def run() -> Any:
                self._admit(method, request)
                return await inner(request, context)

            return await self._serve(method, context, run)

        return behavior

    def _unary_stream(self, method: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        async def behavior(request: Any, context: grpc.aio.ServicerContext) -> None:
            async def run() -> None:
                self._admit(method, request)
                async with self._streams.open(method, context), self._tenant_stream(method):
                    await _drive(inner(request, context), context)

            await self._serve(method, context, run)

        return behavior

    def _stream_unary(self, method: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        async def behavior(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:
            async def run() -> Any:
                # aclosing: a servicer that stops reading early has the
                # stream closed here, not finalized by the GC in another context.
                async with (
                    self._streams.open(method, context),
                    self._tenant_stream(method),
                    contextlib.aclosing(self._admitted(method, requests)) as admitted,
                ):
                    return await inner(admitted, context)

            return await self._serve(method, context, run)

        return behavior

    def _stream_stream(self, method: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        async def behavior(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> None:
            async def run() -> None:
                async with (
                    self._streams.open(method, context),
                    self._tenant_stream(method),
                    contextlib.aclosing(self._admitted(method, requests)) as admitted,
                ):
                    await _drive(inner(admitted, context), context)

            await self._serve(method, context, run)

        return behavior

    async def _serve(
        self,
        method: str,
        context: grpc.aio.ServicerContext,
        run: Callable[[], Awaitable[Any]],
    ) -> Any:
        """Runs the call as its caller, mapping errors and logging it."""
        started = time.perf_counter()
        outcome = "OK"
        token: contextvars.Token[Actor] | None = None
        try:
            presented = presented_key(context)
            try:
                principal = self._authenticator.authenticate(
                    presented, self._certificate_names(presented, context)
                )
            except UnauthenticatedError as exc:
                self._failures.record(context.peer() or "unknown", method, presented, exc.message)
                raise
            token = _actor.set(actor_for(principal, method))
            return await run()
        except asyncio.CancelledError:
            outcome = "CANCELLED"
            raise
        except ExecuteBatchError as exc:
            # A write that gRPC's core failed: the client went away while it
            # was in flight (the call's task is cancelled only later, if at
            # all). There is no one to answer: the call ends as cancelled.
            outcome = "CANCELLED"
            raise asyncio.CancelledError from exc
        except Exception as exc:  # every path below aborts the call
            outcome = _outcome(exc)
            await _abort(method, exc, context)
        finally:
            if token is not None:
                _actor.reset(token)  # same task and context as the set above
            _log_call(method, outcome, started)

    def _certificate_names(
        self, presented: str | None, context: grpc.aio.ServicerContext
    ) -> list[str]:
        """The client certificate's names, read only when authentication
        can use them: not for a caller with a key, nor on a single-tenant
        server (reading the auth context costs every call)."""
        if presented or self._authenticator.single_tenant:
            return []
        return certificate_names(context)

    def _admit(self, method: str, request: Any) -> None:
        """The caller's quotas, then the request's checks: every request
        counts against the rates, a malformed or invalid one too (it cost
        the server its parsing)."""
        tenant = _actor.get().tenant
        size = 0
        if self._quotas.needs_size(tenant):
            size = request.size if isinstance(request, _Malformed) else request.ByteSize()
        self._quotas.admit(tenant, method, size)
        admit(request)

    async def _admitted(
        self, method: str, requests: AsyncIterator[Any]
    ) -> AsyncGenerator[Any, None]:
        """A client stream whose every message is admitted (checks and
        quotas) before the servicer sees it."""
        async for request in requests:
            self._admit(method, request)
            yield request

    @contextlib.asynccontextmanager
    async def _tenant_stream(self, method: str) -> AsyncIterator[None]:
        """Holds one of the caller's tenant stream slots (max_streams)."""
        with self._quotas.stream(_actor.get().tenant, method):
            yield


def admit(request: Any) -> None:
    """The checks of every request: it parsed, and its fields follow the
    rules of request_checks (durations, timestamps, text, numbers)."""
    if isinstance(request, _Malformed):
        raise InvalidArgumentError("request", f"cannot be parsed: {request.error}")
    check_request(request)


async def _drive(responses: Any, context: grpc.aio.ServicerContext) -> None:
    """Writes a servicer's responses, closing its generator in this task
    (so its cleanup runs here, whatever ends the call). A servicer that is a
    plain coroutine writes through the context itself."""
    if not hasattr(responses, "__aiter__"):
        await responses
        return
    async with contextlib.aclosing(responses) as stream:
        async for response in stream:
            await context.write(response)


class StreamLimiter:
    """Bounds the streaming calls open at once, per connection and in all.

    HTTP/2 itself queues streams over `grpc.max_concurrent_streams` at the
    client; this limit is what a client past it sees instead: an immediate
    RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) naming the limit, logged here.
    """

    def __init__(self, limits: Limits) -> None:
        self._per_connection = limits.max_streams_per_connection
        self._total = limits.max_open_streams
        self._open: dict[str, int] = {}
        self._open_total = 0
        self._refused: dict[str, int] = {}
        self._last_logged: dict[str, float] = {}

    @contextlib.asynccontextmanager
    async def open(self, method: str, context: grpc.aio.ServicerContext) -> AsyncIterator[None]:
        peer = context.peer() or "unknown"
        self._admit(method, peer)
        self._open[peer] = self._open.get(peer, 0) + 1
        self._open_total += 1
        try:
            yield
        finally:
            self._open_total -= 1
            remaining = self._open[peer] - 1
            if remaining:
                self._open[peer] = remaining
            else:
                del self._open[peer]

    def _admit(self, method: str, peer: str) -> None:
        if self._open.get(peer, 0) >= self._per_connection:
            self._refuse(method, peer, "max_streams_per_connection", self._per_connection)
        if self._open_total >= self._total:
            self._refuse(method, peer, "max_open_streams", self._total)

    def _refuse(self, method: str, peer: str, limit_name: str, limit: int) -> None:
        # One line per second and limit at most: a client retrying in a loop
        # must not flood the log; the line says how many refusals it stands for.
        refused = self._refused.get(limit_name, 0) + 1
        now = time.monotonic()
        if now - self._last_logged.get(limit_name, float("-inf")) < 1.0:
            self._refused[limit_name] = refused
        else:
            log.warning(
                "%d stream(s) refused, the last %s from %s: %s (%d) reached",
                refused,
                method,
                peer,
                limit_name,
                limit,
                extra={"rpc_method": method, "peer": peer, "limit": limit, "refused": refused},
            )
            self._refused[limit_name], self._last_logged[limit_name] = 0, now
        raise LimitExceededError(limit_name, limit, "too many streams open")


class FailedAuthentications:
    """Logs failed authentications: a WARNING at most once a second per
    peer host (the port changes with every connection) with the number of
    failures since its last line, the method, the reason and the id of the
    last key presented (a SHA-256 prefix, never the key). At most
    `max_hosts` hosts are tracked; past that the quietest are forgotten, and
    one line a second at most speaks for all untracked hosts."""

    def __init__(self, interval: float = 1.0, max_hosts: int = 1024) -> None:
        self._interval = interval
        self._max_hosts = max_hosts
        # host -> [failures not logged yet, time of the last line]
        self._hosts: dict[str, list[float]] = {}
        # Every failure since the start (for metrics).
        self.total = 0

    def record(self, peer: str, method: str, presented: str | None, reason: str) -> None:
        self.total += 1
        host = peer.rpartition(":")[0] or peer
        now = time.monotonic()
        if host not in self._hosts and len(self._hosts) >= self._max_hosts:
            self._forget(now)
            if len(self._hosts) >= self._max_hosts:
                host = "other hosts"
        entry = self._hosts.setdefault(host, [0, -float("inf")])
        entry[0] += 1
        if now - entry[1] < self._interval:
            return
        failures, entry[0], entry[1] = int(entry[0]), 0, now
        presented_id = key_id(presented) if presented else "none"
        log.warning(
            "%d failed authentication(s) from %s, the last %s: %s (key id %s)",
            failures,
            host,
            method,
            reason,
            presented_id,
            extra={
                "peer": host,
                "rpc_method": method,
                "failures": failures,
                "key_id": presented_id,
            },
        )

    def _forget(self, now: float) -> None:
        """Drops hosts whose last line is older than a minute (their
        unlogged count, if any, is lost: bounded memory first)."""
        for host, (_, last) in list(self._hosts.items()):
            if now - last > 60.0:
                del self._hosts[host]


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
    if not log.isEnabledFor(logging.INFO):
        return
    log.info(
        "rpc",
        extra={
            "rpc_method": method,
            "rpc_outcome": outcome,
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        },
    )
