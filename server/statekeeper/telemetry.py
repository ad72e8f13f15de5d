"""Prometheus metrics at /metrics (`--metrics-listen HOST:PORT`).

RPC metrics carry the names and labels of go-grpc-prometheus, so existing
dashboards and alerts apply: grpc_server_started_total,
grpc_server_handled_total{grpc_code}, grpc_server_handling_seconds (a
histogram), grpc_server_msg_received_total / _sent_total, all labelled
grpc_type, grpc_service, grpc_method. Beside them: calls in flight (open
streams stay in flight as long as they are open), and the state of the
process read at scrape time (PostgreSQL pool size and connections in use,
vector indexes loading / loaded and whether the startup load finished,
their vectors and tombstones, open blackboard watches), the latency of
every store call (statekeeper_store_seconds{store, method}, measured
around the store objects the domain calls), PostgreSQL and Redis errors
(counted where the stores catch them), the lag of the blackboard feed
between replicas (commit on one, delivery on another), the age of each
sweeper's last run, and the message bus queue depths by state (sampled
from the store every metrics_sample_interval_seconds, not at scrape time:
a scrape never queries the database).

Each server process serves its own registry on its own port: with
`--workers N`, worker i listens on the metrics port + i (Prometheus scrapes
each as a target; sum by job for the whole box). prometheus_client's
multiprocess mode would merge them behind one port, but it keeps files
per process in a shared directory and cannot read the pool or index state
of another process; separate targets keep every worker's state visible.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
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
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import Collector

from statekeeper import __version__
from statekeeper.core import observations

if TYPE_CHECKING:
    from statekeeper.config import Settings
    from statekeeper.core.tenancy import Authenticator
    from statekeeper.storage.interfaces import Storage

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


class HookCollector(Collector):
    """What the hooks counted, at scrape time."""

    def collect(self) -> Iterator[Any]:
        errors, lags, sweeps = observations.snapshot()
        failed = CounterMetricFamily(
            "statekeeper_store_errors",
            "Failed calls to PostgreSQL or Redis (Redis ones fall back to PostgreSQL).",
            labels=("system", "error"),
        )
        for (system, error), count in sorted(errors.items()):
            failed.add_metric((system, error), count)
        yield failed
        lag = HistogramMetricFamily(
            "statekeeper_feed_lag_seconds",
            "From a commit on another replica to its delivery here.",
            labels=("feed",),
        )
        for feed, (buckets, total) in sorted(lags.items()):
            lag.add_metric((feed,), buckets, total)
        yield lag
        age = GaugeMetricFamily(
            "statekeeper_sweeper_last_run_age_seconds",
            "Seconds since each background sweeper last finished a run.",
            labels=("sweeper",),
        )
        now = time.time()
        for sweeper, when in sorted(sweeps.items()):
            age.add_metric((sweeper,), now - when)
        yield age
        yield from _archive_families()


def _archive_families() -> Iterator[Any]:
    moves, failures = observations.archive_snapshot()
    units = CounterMetricFamily(
        "statekeeper_archive_units",
        "Units (a session, a checkpoint history, a user's episodes, ...) the archive tier"
        " moved out of the database (archived) or back (restored).",
        labels=("capability", "direction"),
    )
    rows = CounterMetricFamily(
        "statekeeper_archive_rows",
        "Database rows in those units.",
        labels=("capability", "direction"),
    )
    for (capability, direction), (unit_count, row_count) in sorted(moves.items()):
        units.add_metric((capability, direction), unit_count)
        rows.add_metric((capability, direction), row_count)
    yield units
    yield rows
    yield CounterMetricFamily(
        "statekeeper_archive_failed_passes",
        "Archiver passes stopped by an error (each resumes at the next interval).",
        value=failures,
    )


# ----- sources read from the server's own objects ---------------------------------


@dataclass
class Sources:
    """What the state collector and the store timer read: the store objects
    the domain calls, and callables returning the open blackboard watches,
    the vector index sizes and the bus depths."""

    stores: dict[str, object] = field(default_factory=dict)
    watchers: Callable[[], int] | None = None
    index_sizes: Sequence[Callable[[], tuple[int, int, int]]] = ()
    bus_depths: Callable[[], Awaitable[dict[str, int]]] | None = None
    # Refusals by (tenant, quota), failed authentications, and each tenant's
    # stored bytes (measured only while a stored-bytes quota is set).
    quota_refusals: Callable[[], dict[tuple[str, str], int]] | None = None
    auth_failures: Callable[[], int] | None = None
    stored_bytes: Callable[[], dict[str, int]] | None = None


def sources_of(storage: Storage, capabilities: Sequence[object]) -> Sources:
    """Finds the sources in the assembled server (duck-typed: the
    capabilities are statekeeper.capabilities' classes)."""
    stores: dict[str, object] = {"sessions": storage.sessions, "audit": storage.audit}
    found = Sources(stores)
    for capability in capabilities:
        for attribute, name in (
            ("checkpoint_store", "checkpoints"),
            ("workflow_store", "workflows"),
        ):
            if (store := getattr(capability, attribute, None)) is not None:
                stores[name] = store
        store = getattr(capability, "store", None)
        if hasattr(capability, "blackboard"):
            stores["blackboard"] = store
            found.watchers = functools.partial(_watchers, capability.blackboard.hub)
        elif hasattr(capability, "bus"):
            stores["bus"] = store
        elif hasattr(capability, "items"):
            stores["items"] = store
        app = getattr(capability, "app", None)
        if app is not None:
            stores["memory"] = app.store
            found.index_sizes = (*found.index_sizes, functools.partial(_index_sizes, app.indexes))
    found.bus_depths = functools.partial(_bus_depths, storage)
    return found


def _watchers(hub: Any) -> int:
    # A counter the event loop keeps (core/blackboard/watch.py): this runs on
    # the metrics HTTP thread, which must not iterate the hub's dicts while
    # the loop resizes them ("dictionary changed size during iteration").
    return int(hub.open_watches)


def _index_sizes(indexes: Any) -> tuple[int, int, int]:
    """(indexes loaded, vectors, tombstones) over every loaded index."""
    loaded = vectors = tombstones = 0
    for tenant, user_id in list(indexes._slots):
        stats = indexes.stats(tenant, user_id)
        if stats is not None and stats.vector_count + stats.tombstone_count:
            loaded += 1
            vectors += stats.vector_count
            tombstones += stats.tombstone_count
    return loaded, vectors, tombstones


_BUS_STATES = {0: "ready", 1: "acked", 2: "dead"}
_BUS_DEPTH_SQL = (
    "SELECT state, visible_time > {now} AS invisible, count(*) FROM mb_messages"
    " GROUP BY state, visible_time > {now}"
)


async def _bus_depths(storage: Storage) -> dict[str, int]:
    """Messages by state, READY split into ready (deliverable now) and
    in_flight (delivered or delayed, invisible until their visible_time).

    Cost, kept on purpose: one GROUP BY over all of mb_messages (a scan of
    the bus table, acked and dead rows included until their retention ends)
    per sample, every `metrics_sample_interval_seconds` (default 15 s), in
    every process that serves /metrics (each worker of `--workers N`, each
    replica). Each worker reports the same cluster-wide figures, so a scraper
    should take one worker's value (max, not sum). A deployment whose bus
    table is large raises `metrics_sample_interval_seconds`."""
    now = time.time()
    rows: list[tuple[int, bool, int]]
    durable = getattr(storage, "durable", None)
    if durable is not None:
        async with durable.connection("bus depth metrics") as conn:
            records = await conn.fetch(_BUS_DEPTH_SQL.format(now="$1"), now)
        rows = [(r[0], bool(r[1]), r[2]) for r in records]
    else:
        sql = _BUS_DEPTH_SQL.format(now="?")

        def read(db: Any) -> list[tuple[int, bool, int]]:
            return [(r[0], bool(r[1]), r[2]) for r in db.execute(sql, (now, now)).fetchall()]

        rows = await storage.read(read)  # type: ignore[attr-defined]
    depths = {"ready": 0, "in_flight": 0, "acked": 0, "dead": 0}
    for state, invisible, count in rows:
        name = _BUS_STATES.get(state, "ready")
        if name == "ready" and invisible:
            name = "in_flight"
        depths[name] += int(count)
    return depths


class StoreTimer:
    """statekeeper_store_seconds{store, method}: every coroutine method of
    the store objects, timed where the domain calls it (instance attributes
    shadow the class's methods: nothing changes for other instances)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._seconds = Histogram(
            "statekeeper_store_seconds",
            "Time of each store call as the domain sees it (cache, pool wait and commit included).",
            ("store", "method"),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )

    def instrument(self, stores: dict[str, object]) -> None:
        for store_name, store in stores.items():
            if store is None:
                continue
            for name, method in inspect.getmembers(store, inspect.iscoroutinefunction):
                if name.startswith("_") or name in ("start", "close"):
                    continue
                setattr(store, name, self._timed(store_name, name, method))

    def _timed(
        self, store: str, name: str, method: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        observe = self._seconds.labels(store, name).observe

        @functools.wraps(method)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await method(*args, **kwargs)
            finally:
                observe(time.perf_counter() - started)

        return timed


class BusSampler:
    """Reads the bus depths every `interval` seconds on the event loop."""

    def __init__(self, read: Callable[[], Awaitable[dict[str, int]]], interval: float) -> None:
        self._read = read
        self._interval = interval
        self.depths: dict[str, int] | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._forever(), name="bus-depths")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _forever(self) -> None:
        while True:
            try:
                self.depths = await self._read()
            except Exception as exc:  # the store is down: keep the last sample
                log.debug("bus depth sample failed: %s", exc)
            await asyncio.sleep(self._interval)


class SourcesCollector(Collector):
    def __init__(self, sources: Sources, sampler: BusSampler | None) -> None:
        self._sources = sources
        self._sampler = sampler

    def _security(self) -> Iterator[Any]:
        sources = self._sources
        if sources.quota_refusals is not None:
            refused = CounterMetricFamily(
                "statekeeper_quota_refusals",
                "Requests refused RESOURCE_EXHAUSTED by a tenant quota, by tenant and quota.",
                labels=("tenant", "quota"),
            )
            for (tenant, quota), count in sorted(sources.quota_refusals().items()):
                refused.add_metric((tenant, quota), count)
            yield refused
        if sources.auth_failures is not None:
            yield CounterMetricFamily(
                "statekeeper_auth_failures",
                "Calls refused UNAUTHENTICATED (no, unknown or revoked credentials).",
                value=sources.auth_failures(),
            )
        if sources.stored_bytes is not None:
            stored = GaugeMetricFamily(
                "statekeeper_tenant_stored_bytes",
                "Each tenant's stored bytes, as last measured (stored-bytes quotas only).",
                labels=("tenant",),
            )
            for tenant, size in sorted(sources.stored_bytes().items()):
                stored.add_metric((tenant,), size)
            yield stored

    def collect(self) -> Iterator[Any]:
        yield from self._security()
        if self._sources.watchers is not None:
            yield _gauge(
                "statekeeper_blackboard_watchers",
                "Blackboard watches open on this process.",
                self._sources.watchers(),
            )
        if self._sources.index_sizes:
            totals = [0, 0, 0]
            for read in self._sources.index_sizes:
                for i, value in enumerate(read()):
                    totals[i] += value
            yield _gauge(
                "statekeeper_vector_index_vectors",
                "Live vectors in the loaded vector indexes.",
                totals[1],
            )
            yield _gauge(
                "statekeeper_vector_index_tombstones",
                "Deleted vectors still in the loaded indexes (until a rebuild).",
                totals[2],
            )
        depths = self._sampler.depths if self._sampler is not None else None
        if depths is not None:
            family = GaugeMetricFamily(
                "statekeeper_bus_messages",
                "Messages in the bus by state (sampled): ready to deliver, in flight"
                " (delivered or delayed), acknowledged (kept a while), dead letters.",
                labels=("state",),
            )
            for state, count in sorted(depths.items()):
                family.add_metric((state,), count)
            yield family


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
    sampler: BusSampler | None = None

    @property
    def interceptors(self) -> list[grpc.aio.ServerInterceptor]:
        return [self.interceptor] if self.interceptor is not None else []

    def start(self) -> None:
        """Serves /metrics; on the event loop: starts the bus sampler."""
        if self.endpoint is not None:
            self.endpoint.start()
        if self.sampler is not None:
            self.sampler.start()

    def stop(self) -> None:
        if self.sampler is not None:
            self.sampler.stop()
        if self.endpoint is not None:
            self.endpoint.stop()


def build(
    settings: Settings,
    authenticator: Authenticator,
    serving: Callable[[], bool],
    pool: PoolSource | None,
    indexes: Sequence[Callable[[], IndexState]],
    sources: Sources | None = None,
) -> Telemetry:
    from statekeeper.api.access_log import AccessLog, TelemetryInterceptor

    access_log = None
    if settings.access_log:
        access_log = AccessLog(authenticator, settings.access_log_sample_rate)
    metrics = endpoint = sampler = None
    if settings.metrics_listen:
        registry = CollectorRegistry()
        metrics = RpcMetrics(registry)
        registry.register(StateCollector(serving, pool, indexes))
        registry.register(HookCollector())
        if sources is not None:
            StoreTimer(registry).instrument(sources.stores)
            if sources.bus_depths is not None:
                sampler = BusSampler(sources.bus_depths, settings.metrics_sample_interval_seconds)
            registry.register(SourcesCollector(sources, sampler))
        Info("statekeeper_build", "The server's version and storage tier.", registry=registry).info(
            {"version": __version__, "tier": "production" if settings.production else "embedded"}
        )
        endpoint = MetricsEndpoint(settings.metrics_listen, registry)
    if access_log is None and metrics is None:
        return Telemetry(None, None)
    return Telemetry(TelemetryInterceptor(access_log, metrics), endpoint, sampler)


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
