"""Per-RPC telemetry: the access log and the RPC metrics, from one
interceptor outside the domain interceptor (api/interceptor.py), so that
it sees every call as the client does: its final status code (including
the refusals of authentication and validation), its latency and its bytes.

Access log: one INFO line per call in the `statekeeper.access_log` logger,
with tenant, method, code, latency in ms, request and response bytes and
the peer. `--access-log-sample-rate` keeps a share of the successful calls;
a failed call is always logged. Health checks are not logged (a load
balancer probes every few seconds); metrics count them.

Bytes are the serialized sizes: the request deserializer and the response
serializer of each call run in the call's own task, so they add to context
variables the behaviour reads when the call ends; a unary response, which
is serialized after the behaviour returns, is measured with ByteSize().
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import random
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import grpc

from statekeeper.api.interceptor import WrappedHandlers, certificate_names, presented_key
from statekeeper.core.errors import StatekeeperError
from statekeeper.core.tenancy import Authenticator
from statekeeper.telemetry import CallRecord, RpcMetrics

log = logging.getLogger("statekeeper.access_log")

_NOT_LOGGED_PREFIXES = ("/grpc.health.v1.",)
_bytes_in: contextvars.ContextVar[int] = contextvars.ContextVar("rpc_bytes_in", default=0)
_bytes_out: contextvars.ContextVar[int] = contextvars.ContextVar("rpc_bytes_out", default=0)

UNARY, CLIENT_STREAM, SERVER_STREAM, BIDI_STREAM = (
    "unary",
    "client_stream",
    "server_stream",
    "bidi_stream",
)


# Codes a caller can provoke as fast as it can send (a bad key, a tenant over
# its quota): one line per second per method and code, carrying how many calls
# it stands for, so a flood cannot flood the log (the interceptor's own
# rate-limited warnings and the metrics keep the exact counts).
FLOOD_CODES = frozenset({"UNAUTHENTICATED", "RESOURCE_EXHAUSTED", "PERMISSION_DENIED"})
FLOOD_INTERVAL_SECONDS = 1.0
_MAX_FLOOD_KEYS = 1024


class AccessLog:
    """Writes sampled CallRecords as structured INFO lines."""

    def __init__(
        self,
        authenticator: Authenticator,
        sample_rate: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._authenticator = authenticator
        self._sample_rate = sample_rate
        self._clock = clock
        # (method, code) -> (time of the last line, calls not logged since).
        self._floods: dict[tuple[str, str], tuple[float, int]] = {}

    def wants(self, method: str) -> bool:
        return not method.startswith(_NOT_LOGGED_PREFIXES) and log.isEnabledFor(logging.INFO)

    def write(
        self, record: CallRecord, context: grpc.aio.ServicerContext, peer: str | None = None
    ) -> None:
        """Logs the call; `peer` is the one read as it started (a stream the
        client left has none by its end), else it is read now."""
        if record.code == "OK" and random.random() >= self._sample_rate:
            return
        calls = 1
        if record.code in FLOOD_CODES:
            held = self._held_back(record)
            if held is None:
                return
            calls += held
        extra = {
            "tenant": self._tenant(context),
            "rpc_method": record.method,
            "grpc_code": record.code,
            "latency_ms": round(record.seconds * 1000, 3),
            "bytes_in": record.bytes_in,
            "bytes_out": record.bytes_out,
            "peer": peer or context.peer() or "",
        }
        if calls > 1:
            extra["calls"] = calls
        log.info("%s %s %.1fms", record.method, record.code, record.seconds * 1000, extra=extra)

    def _held_back(self, record: CallRecord) -> int | None:
        """None if this refusal is not logged (one was, less than a second
        ago); else how many were held back since the last line."""
        key = (record.method, record.code)
        now = self._clock()
        last, held = self._floods.get(key, (float("-inf"), 0))
        if now - last < FLOOD_INTERVAL_SECONDS:
            self._floods[key] = (last, held + 1)
            return None
        if key not in self._floods and len(self._floods) >= _MAX_FLOOD_KEYS:
            self._floods.clear()  # bounded: a method-name spray forgets old keys
        self._floods[key] = (now, 0)
        return held

    def _tenant(self, context: grpc.aio.ServicerContext) -> str:
        """The caller's tenant, resolved again only for calls that are
        logged (the domain interceptor's identity ends with the call)."""
        try:
            return self._authenticator.authenticate(
                presented_key(context), certificate_names(context)
            ).tenant
        except StatekeeperError:
            return "-"  # unauthenticated: the code says so


class TelemetryInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Measures every call for the access log and the metrics (either may be
    off; with both off the server does not install this interceptor)."""

    def __init__(self, access_log: AccessLog | None, metrics: RpcMetrics | None) -> None:
        self._access_log = access_log
        self._metrics = metrics
        self._wrapped = WrappedHandlers()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        return self._wrapped.wrap(method, handler, self._wrap)

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        deserializer = _counting(handler.request_deserializer, _bytes_in)
        serializer = _counting(handler.response_serializer, _bytes_out)
        kinds = (
            (handler.unary_unary, UNARY, grpc.unary_unary_rpc_method_handler),
            (handler.unary_stream, SERVER_STREAM, grpc.unary_stream_rpc_method_handler),
            (handler.stream_unary, CLIENT_STREAM, grpc.stream_unary_rpc_method_handler),
            (handler.stream_stream, BIDI_STREAM, grpc.stream_stream_rpc_method_handler),
        )
        for inner, kind, make in kinds:
            if inner is not None:
                return make(self._measured(method, kind, inner), deserializer, serializer)
        return handler

    def _measured(self, method: str, kind: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        async def behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = self._start(method, kind)
            # Read at the start of a stream: once its client has left, the
            # call's peer reads empty. (A unary call's still reads at its end.)
            peer = context.peer() if kind != UNARY else None
            code = "UNKNOWN"
            response = None
            try:
                response = await run_behavior(inner(request, context), context)
                code = ending_code(context, "OK")
                return response
            except BaseException as exc:
                code = ending_code(context, exception_code(exc))
                raise
            finally:
                # A single response is serialized after this returns: its size
                # is read here; streamed ones were counted as they were written.
                single = int(response.ByteSize()) if response is not None else 0
                self._finish(context, method, kind, code, started, _bytes_out.get() + single, peer)

        return behavior

    def _start(self, method: str, kind: str) -> float:
        if self._metrics is not None:
            self._metrics.started(method, kind)
        return time.perf_counter()

    def _finish(
        self,
        context: grpc.aio.ServicerContext,
        method: str,
        kind: str,
        code: str,
        started: float,
        bytes_out: int,
        peer: str | None,
    ) -> None:
        record = CallRecord(
            method, kind, code, time.perf_counter() - started, _bytes_in.get(), bytes_out
        )
        if self._metrics is not None:
            self._metrics.handled(record)
        if self._access_log is not None and self._access_log.wants(method):
            self._access_log.write(record, context, peer)


def _counting(
    inner: Callable[[Any], Any] | None, counter: contextvars.ContextVar[int]
) -> Callable[[Any], Any] | None:
    """`inner` (a (de)serializer) adding the size of each message's bytes to
    `counter` in the calling task's context."""
    if inner is None:
        return None
    if counter is _bytes_in:

        def deserialize(data: bytes) -> Any:
            counter.set(counter.get() + len(data))
            return inner(data)

        return deserialize

    def serialize(message: Any) -> Any:
        data = inner(message)
        counter.set(counter.get() + len(data))
        return data

    return serialize


async def run_behavior(result: Any, context: grpc.aio.ServicerContext) -> Any:
    """Runs a behaviour's result: a coroutine (returning the response, or
    writing a stream through the context itself) or an async generator,
    whose responses are written here."""
    if not hasattr(result, "__aiter__"):
        return await result
    stream: AsyncGenerator[Any, None] = result
    try:
        async for response in stream:
            await context.write(response)
    finally:
        await stream.aclose()
    return None


def ending_code(context: grpc.aio.ServicerContext, fallback: str) -> str:
    """The code the call ends with: the one its handler set or aborted
    with, else `fallback`."""
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return str(code.name)
    if isinstance(code, int) and code != 0:
        return str(_CODE_NAMES.get(code, "UNKNOWN"))
    return fallback


def exception_code(exc: BaseException) -> str:
    if isinstance(exc, asyncio.CancelledError):
        return "CANCELLED"
    if isinstance(exc, StatekeeperError):
        return exc.code
    return "UNKNOWN"  # what grpc answers for an exception it did not expect


_CODE_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}
