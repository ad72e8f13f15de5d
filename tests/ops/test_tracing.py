"""Tracing (issue 16): with --otlp-endpoint, `statekeeper serve` sends a
server span per RPC, in the caller's W3C trace, with child spans for its
database and Redis calls, to an OTLP/gRPC collector; without it, nothing
of the SDK is loaded and no interceptor is installed.

The collector is a real TraceService servicer (the opentelemetry-proto
package's generated service) on loopback, in this test process.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2

from statekeeper_client.v1 import session_pb2
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.harness.backends import production
from tests.harness.deadlines import scaled, wait_until
from tests.harness.processes import REPO
from tests.harness.servers import ServerProcess


class Collector(trace_service_pb2_grpc.TraceServiceServicer):  # type: ignore[misc]
    """Keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[trace_pb2.Span] = []
        self.resources: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: grpc.ServicerContext
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        with self._lock:
            for resource_spans in request.resource_spans:
                attributes = {
                    kv.key: kv.value.string_value for kv in resource_spans.resource.attributes
                }
                for scope in resource_spans.scope_spans:
                    self.spans.extend(scope.spans)
                    self.resources.extend(attributes for _ in scope.spans)
        return trace_service_pb2.ExportTraceServiceResponse()

    def of_trace(self, trace_id: bytes) -> list[trace_pb2.Span]:
        with self._lock:
            return [span for span in self.spans if span.trace_id == trace_id]


@pytest.fixture
def collector() -> Iterator[tuple[Collector, int]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    servicer = Collector()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield servicer, port
    finally:
        server.stop(grace=None)


def traced_server(data_dir: Path, port: int, *extra: str) -> ServerProcess:
    server = ServerProcess(
        data_dir,
        # Export each batch within 100 ms instead of the default 5 s.
        env={"OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_SERVICE_NAME": "statekeeper-test"},
        extra_args=["--otlp-endpoint", f"http://127.0.0.1:{port}", "--workers", "1", *extra],
    )
    server.start()
    return server


def call_in_trace(address: str) -> tuple[bytes, bytes]:
    """CreateSession, AppendMessages and GetSession as one caller's trace
    (traceparent in the metadata, as an instrumented client sends it)."""
    trace_id, parent_id = secrets.token_bytes(16), secrets.token_bytes(8)
    metadata = [("traceparent", f"00-{trace_id.hex()}-{parent_id.hex()}-01")]
    with grpc.insecure_channel(address) as channel:
        sessions = SessionServiceStub(channel)
        sessions.CreateSession(
            session_pb2.CreateSessionRequest(
                session_id="traced", session=session_pb2.Session(user_id="ada")
            ),
            metadata=metadata,
        )
        sessions.AppendMessages(
            session_pb2.AppendMessagesRequest(
                session_id="traced",
                messages=[session_pb2.SessionMessage(role=session_pb2.ROLE_USER, content="hi")],
            ),
            metadata=metadata,
        )
        sessions.GetSession(session_pb2.GetSessionRequest(session_id="traced"), metadata=metadata)
        with pytest.raises(grpc.RpcError):
            sessions.GetSession(
                session_pb2.GetSessionRequest(session_id="missing"), metadata=metadata
            )
    return trace_id, parent_id


def server_spans(spans: list[trace_pb2.Span]) -> dict[str, trace_pb2.Span]:
    return {
        span.name: span for span in spans if span.kind == trace_pb2.Span.SpanKind.SPAN_KIND_SERVER
    }


def descendants(spans: list[trace_pb2.Span], root: trace_pb2.Span) -> list[trace_pb2.Span]:
    found, frontier = [], {root.span_id}
    while frontier:
        children = [span for span in spans if span.parent_span_id in frontier]
        found.extend(children)
        frontier = {span.span_id for span in children}
    return found


def attribute(span: trace_pb2.Span, key: str) -> str | int | None:
    for kv in span.attributes:
        if kv.key == key:
            value = kv.value
            return value.int_value if value.HasField("int_value") else value.string_value
    return None


SESSION_SERVICE = "statekeeper.v1.SessionService"
EXPECTED = {f"{SESSION_SERVICE}/{name}" for name in ("CreateSession", "AppendMessages")}


def wait_for_spans(collector: Collector, trace_id: bytes) -> list[trace_pb2.Span]:
    def complete() -> list[trace_pb2.Span] | None:
        spans = collector.of_trace(trace_id)
        names = [s.name for s in server_spans(spans).values()]
        gets = [s for s in spans if s.name == f"{SESSION_SERVICE}/GetSession"]
        return spans if set(names) >= EXPECTED and len(gets) == 2 else None

    return wait_until(complete, scaled(30), "the spans of the traced calls")


def check_server_spans(spans: list[trace_pb2.Span], parent_id: bytes) -> None:
    by_name = server_spans(spans)
    for name in EXPECTED:
        span = by_name[name]
        # Joined to the caller's span, not a new trace.
        assert span.parent_span_id == parent_id, name
        assert attribute(span, "rpc.system") == "grpc"
        assert attribute(span, "rpc.service") == SESSION_SERVICE
        assert attribute(span, "rpc.grpc.status_code") == 0
        assert span.status.code != trace_pb2.Status.StatusCode.STATUS_CODE_ERROR
    gets = [s for s in spans if s.name == f"{SESSION_SERVICE}/GetSession"]
    codes = sorted(attribute(s, "rpc.grpc.status_code") or 0 for s in gets)  # type: ignore[type-var]
    assert codes == [0, grpc.StatusCode.NOT_FOUND.value[0]]
    failed = next(s for s in gets if attribute(s, "rpc.grpc.status_code") != 0)
    assert failed.status.code == trace_pb2.Status.StatusCode.STATUS_CODE_ERROR


def test_production_rpc_spans_with_postgres_and_redis_children(
    tmp_path: Path, collector: tuple[Collector, int]
) -> None:
    received, port = collector
    with production("trace") as where:
        assert where is not None
        server = traced_server(
            tmp_path,
            port,
            "--postgres-dsn",
            where.postgres_dsn,
            "--redis-url",
            where.redis_url,
            "--redis-key-prefix",
            where.redis_prefix,
            "--migrate-on-start",
        )
        try:
            trace_id, parent_id = call_in_trace(server.address)
            spans = wait_for_spans(received, trace_id)
        finally:
            server.stop()
    check_server_spans(spans, parent_id)
    by_name = server_spans(spans)
    create = by_name[f"{SESSION_SERVICE}/CreateSession"]
    database = [s for s in descendants(spans, create) if attribute(s, "db.system") == "postgresql"]
    assert database, [s.name for s in spans]
    assert all(s.kind == trace_pb2.Span.SpanKind.SPAN_KIND_CLIENT for s in database)
    append = by_name[f"{SESSION_SERVICE}/AppendMessages"]
    systems = {attribute(s, "db.system") for s in descendants(spans, append)}
    assert {"postgresql", "redis"} <= systems, systems
    assert received.resources[0]["service.name"] == "statekeeper-test"


def test_embedded_rpc_spans_with_sqlite_children(
    tmp_path: Path, collector: tuple[Collector, int]
) -> None:
    received, port = collector
    server = traced_server(tmp_path, port)
    try:
        trace_id, parent_id = call_in_trace(server.address)
        spans = wait_for_spans(received, trace_id)
    finally:
        server.stop()
    check_server_spans(spans, parent_id)
    create = server_spans(spans)[f"{SESSION_SERVICE}/CreateSession"]
    children = descendants(spans, create)
    assert [s.name for s in children if attribute(s, "db.system") == "sqlite"] == ["sqlite write"]


def test_a_call_without_trace_context_starts_a_trace(
    tmp_path: Path, collector: tuple[Collector, int]
) -> None:
    received, port = collector
    server = traced_server(tmp_path, port)
    try:
        with grpc.insecure_channel(server.address) as channel:
            SessionServiceStub(channel).ListSessions(session_pb2.ListSessionsRequest())

        def listed() -> trace_pb2.Span | None:
            with received._lock:
                return next((s for s in received.spans if s.name.endswith("/ListSessions")), None)

        span = wait_until(listed, scaled(30), "the ListSessions span")
    finally:
        server.stop()
    assert span.parent_span_id == b""
    assert len(span.trace_id) == 16 and span.trace_id != bytes(16)


def test_off_by_default_loads_nothing_of_the_sdk(tmp_path: Path) -> None:
    """A server built without an endpoint (and without the environment
    variables) has no tracing interceptor and never imports the trace SDK,
    the exporter or an instrumentation. (The redis client itself imports
    opentelemetry.sdk.metrics for its own optional metrics; not ours.)"""
    script = (
        "import sys\n"
        "from statekeeper import config\n"
        "from statekeeper.server import StatekeeperServer\n"
        f"settings = config.Settings(data_dir={str(tmp_path)!r})\n"
        "server = StatekeeperServer(settings)\n"
        "assert server.tracing is None\n"
        "loaded = [m for m in sys.modules if m.startswith(('opentelemetry.sdk.trace',"
        " 'opentelemetry.exporter', 'opentelemetry.instrumentation'))]\n"
        "assert not loaded, loaded\n"
        "print('off')\n"
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("OTEL_EXPORTER_OTLP_ENDPOINT", "STATEKEEPER_OTLP_ENDPOINT")
    }
    env["PYTHONPATH"] = str(REPO)
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        cwd=REPO,
        env=env,
    )
    assert result.returncode == 0 and result.stdout.strip() == "off", result.stderr
