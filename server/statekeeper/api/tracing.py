"""OpenTelemetry tracing (`--otlp-endpoint`, or OTEL_EXPORTER_OTLP_ENDPOINT /
STATEKEEPER_OTLP_ENDPOINT): a server span per RPC, child spans for the
PostgreSQL and Redis calls it makes, exported over OTLP/gRPC.

Off by default, and then free: nothing of the SDK is imported and no
interceptor is installed (`build` returns None). On:

* the trace context comes from the call's metadata (W3C `traceparent` /
  `tracestate`, as gRPC clients instrumented with OpenTelemetry send it),
  so the server span joins the caller's trace; without it, a new trace;
* the span is named after the method (`statekeeper.v1.SessionService/
  GetSession`), SERVER kind, with the rpc.* attributes of the semantic
  conventions (rpc.system, rpc.service, rpc.method,
  rpc.grpc.status_code) and ERROR status for a code other than OK; it
  lasts as long as the call (a stream: until it ends);
* PostgreSQL statements are spans of the asyncpg instrumentation, Redis
  commands of the redis instrumentation (the official OpenTelemetry
  packages), children of the RPC's span since they run in its task;
* the embedded store's reads and write commits run on its own threads,
  where the caller's context does not follow: each `read` and `write`
  call is a client span `sqlite read` / `sqlite write` opened on the
  caller's side (it covers the wait for the thread and, for a write, the
  group commit it joined).

Spans are batched (BatchSpanProcessor) and flushed when the server stops.
The exporter talks plaintext gRPC unless the endpoint is https://.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc

from statekeeper.api.access_log import ending_code, exception_code, run_behavior

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

log = logging.getLogger(__name__)

ENDPOINT_ENV = ("STATEKEEPER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
SERVICE_NAME = "statekeeper"


def endpoint(configured: str) -> str:
    """The OTLP endpoint: the setting, else the environment, else ''."""
    if configured:
        return configured
    for name in ENDPOINT_ENV:
        if value := os.environ.get(name, ""):
            return value
    return ""


@dataclass
class Tracing:
    """The tracer provider of this process and its interceptor."""

    provider: TracerProvider
    interceptor: grpc.aio.ServerInterceptor
    _uninstrument: list[Callable[[], None]]

    def shutdown(self) -> None:
        """Flushes the spans still batched and stops the instrumentations."""
        for undo in self._uninstrument:
            undo()
        self.provider.shutdown()


def build(configured_endpoint: str, service_version: str) -> Tracing | None:
    """None (nothing loaded) unless an endpoint is configured."""
    target = endpoint(configured_endpoint)
    if not target:
        return None
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create(
        {"service.name": os.environ.get("OTEL_SERVICE_NAME", SERVICE_NAME)}
        | {"service.version": service_version}
    )
    provider = TracerProvider(resource=resource)
    insecure = not target.startswith("https://")
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=target, insecure=insecure))
    )
    undo = [_instrument_asyncpg(provider), _instrument_redis(provider)]
    undo.append(_instrument_sqlite(provider.get_tracer("statekeeper.storage.embedded")))
    log.info("tracing: OTLP spans to %s", target)
    tracer = provider.get_tracer("statekeeper.api", service_version)
    return Tracing(provider, TracingInterceptor(tracer), undo)


def _instrument_asyncpg(provider: TracerProvider) -> Callable[[], None]:
    from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor

    instrumentor = AsyncPGInstrumentor()  # type: ignore[no-untyped-call]
    instrumentor.instrument(tracer_provider=provider)
    undo: Callable[[], None] = instrumentor.uninstrument
    return undo


def _instrument_redis(provider: TracerProvider) -> Callable[[], None]:
    from opentelemetry.instrumentation.redis import RedisInstrumentor

    instrumentor = RedisInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    undo: Callable[[], None] = instrumentor.uninstrument
    return undo


def _instrument_sqlite(tracer: Tracer) -> Callable[[], None]:
    """Wraps EmbeddedStorage.read and .write in client spans."""
    from opentelemetry.trace import SpanKind

    from statekeeper.storage.embedded.sessions import EmbeddedStorage

    originals = {name: getattr(EmbeddedStorage, name) for name in ("read", "write")}

    def traced(name: str, inner: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        @functools.wraps(inner)
        async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            with tracer.start_as_current_span(
                f"sqlite {name}",
                kind=SpanKind.CLIENT,
                attributes={"db.system": "sqlite", "db.operation": name},
            ):
                return await inner(self, *args, **kwargs)

        return call

    for name, inner in originals.items():
        setattr(EmbeddedStorage, name, traced(name, inner))

    def undo() -> None:
        for name, inner in originals.items():
            setattr(EmbeddedStorage, name, inner)

    return undo


class TracingInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """One SERVER span per call, parented on the caller's trace context."""

    def __init__(self, tracer: Tracer) -> None:
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self._tracer = tracer
        self._propagator = TraceContextTextMapPropagator()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        carrier = {
            key: value
            for key, value in (handler_call_details.invocation_metadata or ())
            if isinstance(value, str)
        }
        parent = self._propagator.extract(carrier)
        method = handler_call_details.method
        kinds = (
            (handler.unary_unary, grpc.unary_unary_rpc_method_handler),
            (handler.unary_stream, grpc.unary_stream_rpc_method_handler),
            (handler.stream_unary, grpc.stream_unary_rpc_method_handler),
            (handler.stream_stream, grpc.stream_stream_rpc_method_handler),
        )
        for inner, make in kinds:
            if inner is not None:
                return make(
                    self._traced(method, parent, inner),
                    handler.request_deserializer,
                    handler.response_serializer,
                )
        return handler

    def _traced(self, method: str, parent: Any, inner: Callable[..., Any]) -> Callable[..., Any]:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        service, _, name = method.lstrip("/").rpartition("/")
        attributes = {"rpc.system": "grpc", "rpc.service": service, "rpc.method": name}

        async def behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
            with self._tracer.start_as_current_span(
                f"{service}/{name}",
                context=parent,
                kind=SpanKind.SERVER,
                attributes=attributes,
                record_exception=False,
                set_status_on_exception=False,
            ) as span:
                code = "UNKNOWN"
                try:
                    response = await run_behavior(inner(request, context), context)
                    code = ending_code(context, "OK")
                    return response
                except BaseException as exc:
                    code = ending_code(context, exception_code(exc))
                    raise
                finally:
                    status = grpc.StatusCode[code] if code in grpc.StatusCode.__members__ else None
                    number = status.value[0] if status is not None else 2
                    span.set_attribute("rpc.grpc.status_code", number)
                    if code != "OK":
                        span.set_status(Status(StatusCode.ERROR, code))

        return behavior
