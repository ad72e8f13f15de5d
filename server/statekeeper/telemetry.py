"""Prometheus metrics at /metrics (`--metrics-listen HOST:PORT`).

RPC metrics carry the names and labels of go-grpc-prometheus, so existing
dashboards and alerts apply: grpc_server_started_total,
grpc_server_handled_total{grpc_code}, grpc_server_handling_seconds (a
histogram), grpc_server_msg_received_total / _sent_total, all labelled
grpc_type, grpc_service, grpc_method. Beside them: calls in flight (open
streams stay in flight as long as they are open), and the state of the
process read at scrape time (PostgreSQL pool size and connections in use,
vector indexes loading / loaded and whether the startup load finished).

Each server process serves its own registry on its own port: with
`--workers N`, worker i listens on the metrics port + i (Prometheus scrapes
each as a target; sum by job for the whole box). prometheus_client's
multiprocess mode would merge them behind one port, but it keeps files
per process in a shared directory and cannot read the pool or index state
of another process; separate targets keep every worker's state visible.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from wsgiref.simple_server import WSGIServer

import grpc
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from statekeeper import __version__

if TYPE_CHECKING:
    from statekeeper.config import Settings
    from statekeeper.core.tenancy import Authenticator

log = logging.getLogger(__name__)

RPC_LABELS = ("grpc_type", "grpc_service", "grpc_method")
# Seconds: from a cache hit (sub-millisecond) to a long-poll receive.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
_CLIENT_SENDS_MANY = ("client_stream", "bidi_stream")
_SERVER_SENDS_MANY = ("server_stream", "bidi_stream")


class RpcMetrics:
    """The RPC counters, histogram and in-flight gauge of one process."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._started = Counter(
            "grpc_server_started_total",
            "RPCs started on the server.",
            RPC_LABELS,
            registry=registry,
        )
        self._handled = Counter(
            "grpc_server_handled_total",
            "RPCs completed on the server, by status code.",
            (*RPC_LABELS, "grpc_code"),
            registry=registry,
        )
        self._seconds = Histogram(
            "grpc_server_handling_seconds",
            "Time from the start of an RPC to its end (a stream: while it is open).",
            RPC_LABELS,
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self._in_flight = Gauge(
            "grpc_server_in_flight",
            "RPCs started and not finished yet (open streams included).",
            RPC_LABELS,
            registry=registry,
        )
        self._bytes_received = Counter(
            "statekeeper_rpc_received_bytes_total",
            "Serialized request bytes received.",
            RPC_LABELS,
            registry=registry,
        )
        self._bytes_sent = Counter(
            "statekeeper_rpc_sent_bytes_total",
            "Serialized response bytes sent.",
            RPC_LABELS,
            registry=registry,
        )

    def started(self, method: str, kind: str) -> None:
        labels = _labels(method, kind)
        self._started.labels(*labels).inc()
        self._in_flight.labels(*labels).inc()

    def handled(self, record: CallRecord) -> None:
        labels = _labels(record.method, record.kind)
        self._in_flight.labels(*labels).dec()
        self._handled.labels(*labels, record.code).inc()
        self._seconds.labels(*labels).observe(record.seconds)
        self._bytes_received.labels(*labels).inc(record.bytes_in)
        self._bytes_sent.labels(*labels).inc(record.bytes_out)


def _labels(method: str, kind: str) -> tuple[str, str, str]:
    service, _, name = method.lstrip("/").rpartition("/")
    return kind, service, name


class PoolSource(Protocol):
    def pool_stats(self) -> tuple[int, int, int] | None:
        """(connections open, idle, maximum), or None before start."""


class IndexState(Protocol):
    """What memory_app.MemoryApp.index_loading() returns."""

    @property
    def loading(self) -> int: ...

    @property
    def loaded(self) -> int: ...

    @property
    def startup_done(self) -> bool: ...


class StateCollector(Collector):
    """Gauges read from the live process at each scrape."""

    def __init__(
        self,
        serving: Callable[[], bool],
        pool: PoolSource | None,
        indexes: Sequence[Callable[[], IndexState]],
    ) -> None:
        self._serving = serving
        self._pool = pool
        self._indexes = indexes

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield _gauge(
            "statekeeper_serving",
            "1 while health is SERVING (the durable tier answers), else 0.",
            1 if self._serving() else 0,
        )
        stats = self._pool.pool_stats() if self._pool is not None else None
        if stats is not None:
            size, idle, maximum = stats
            yield _gauge("statekeeper_postgres_pool_size", "PostgreSQL connections open.", size)
            yield _gauge(
                "statekeeper_postgres_pool_in_use",
                "PostgreSQL connections lent to a call now.",
                size - idle,
            )
            yield _gauge(
                "statekeeper_postgres_pool_max", "PostgreSQL connections allowed.", maximum
            )
        for read in self._indexes:
            state = read()
            yield _gauge(
                "statekeeper_vector_indexes_loading", "Vector indexes loading now.", state.loading
            )
            yield _gauge(
                "statekeeper_vector_indexes_loaded", "Vector indexes loaded.", state.loaded
            )
            yield _gauge(
                "statekeeper_vector_indexes_startup_done",
                "1 once every index present at start is loaded.",
                1 if state.startup_done else 0,
            )


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


class MetricsEndpoint:
    """The HTTP server of /metrics, on a thread of its own (a scrape never
    waits for the event loop)."""

    def __init__(self, listen: str, registry: CollectorRegistry) -> None:
        self.listen = listen
        self.registry = registry
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def start(self) -> int:
        host, _, port = self.listen.rpartition(":")
        try:
            server, thread = start_http_server(int(port), host.strip("[]"), self.registry)
        except OSError as exc:
            raise OSError(
                exc.errno, f"cannot serve metrics on {self.listen}: {exc.strerror}"
            ) from exc
        self._server, self._thread = server, thread
        self.port = int(server.server_address[1])
        log.info("metrics at http://%s:%d/metrics", host, self.port)
        return self.port

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()


@dataclass
class Telemetry:
    """The interceptor to install first (None when both the access log and
    the metrics are off: no cost per call) and the /metrics endpoint."""

    interceptor: grpc.aio.ServerInterceptor | None
    endpoint: MetricsEndpoint | None

    @property
    def interceptors(self) -> list[grpc.aio.ServerInterceptor]:
        return [self.interceptor] if self.interceptor is not None else []

    def start(self) -> None:
        if self.endpoint is not None:
            self.endpoint.start()

    def stop(self) -> None:
        if self.endpoint is not None:
            self.endpoint.stop()


def build(
    settings: Settings,
    authenticator: Authenticator,
    serving: Callable[[], bool],
    pool: PoolSource | None,
    indexes: Sequence[Callable[[], IndexState]],
) -> Telemetry:
    from statekeeper.api.access_log import AccessLog, TelemetryInterceptor

    access_log = None
    if settings.access_log:
        access_log = AccessLog(authenticator, settings.access_log_sample_rate)
    metrics = endpoint = None
    if settings.metrics_listen:
        registry = CollectorRegistry()
        metrics = RpcMetrics(registry)
        registry.register(StateCollector(serving, pool, indexes))
        Info("statekeeper_build", "The server's version and storage tier.", registry=registry).info(
            {"version": __version__, "tier": "production" if settings.production else "embedded"}
        )
        endpoint = MetricsEndpoint(settings.metrics_listen, registry)
    if access_log is None and metrics is None:
        return Telemetry(None, None)
    return Telemetry(TelemetryInterceptor(access_log, metrics), endpoint)


def worker_metrics_listen(listen: str, index: int) -> str:
    """The metrics address of worker `index` of a group: the port + index
    (port 0, any free port, stays 0)."""
    if not listen:
        return ""
    host, _, port = listen.rpartition(":")
    return f"{host}:{int(port) + index if int(port) else 0}"


@dataclass(frozen=True)
class CallRecord:
    """One finished RPC, as the access log and the metrics see it."""

    method: str  # /package.Service/Method
    kind: str
    code: str  # canonical status code name, e.g. OK, NOT_FOUND
    seconds: float
    bytes_in: int
    bytes_out: int

    @property
    def service(self) -> str:
        return self.method.lstrip("/").rpartition("/")[0]

    @property
    def name(self) -> str:
        return self.method.rpartition("/")[2]
