"""In-process memory servers for tests, in the test's own event loop: a
MemoryApp on a real embedded store (`memory_app`), optionally served by a
real grpc.aio server on 127.0.0.1 with the real interceptor
(`served_memory`), or on PostgreSQL with the LISTEN/NOTIFY change feed
(`postgres_memory_app`, wired in the order capabilities.ProductionMemory
uses). Background jobs are off: tests run them on demand."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from statekeeper.api.interceptor import DomainInterceptor
from statekeeper.api.session_servicer import SessionServicer
from statekeeper.core.limits import Limits
from statekeeper.core.memory.config import MemoryConfig
from statekeeper.core.memory.vector_index import ChangeFeed
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tenancy import Authenticator
from statekeeper.core.tokens import TokenCounter
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.postgres.memory import PostgresMemoryStore
from statekeeper.storage.postgres.memory_feed import PostgresChangeFeed
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper_client.v1 import memory_pb2_grpc, session_pb2_grpc
from tests.services import configured, fresh_database, reachable

API_KEYS = {"key-alpha": "alpha", "key-beta": "beta"}
NO_JOBS = dict(
    forgetting_interval_seconds=0.0,
    consolidation_interval_seconds=0.0,
    index_maintenance_interval_seconds=0.0,
)


def quiet_config(**changes: object) -> MemoryConfig:
    """A config whose background jobs are off (tests run them on demand)."""
    return dataclasses.replace(MemoryConfig(), **{**NO_JOBS, **changes})  # type: ignore[arg-type]


@dataclasses.dataclass
class Served:
    app: MemoryApp
    sessions: SessionManager
    memory: memory_pb2_grpc.MemoryServiceStub
    session_stub: session_pb2_grpc.SessionServiceStub
    address: str


@asynccontextmanager
async def memory_app(
    data_dir: Path,
    config: MemoryConfig | None = None,
    endpoints: ModelEndpoints | None = None,
    feed: ChangeFeed | None = None,
    clock: Callable[[], float] | None = None,
) -> AsyncIterator[tuple[MemoryApp, SessionManager]]:
    storage = EmbeddedStorage(data_dir)
    await storage.start()
    counter = TokenCounter()
    extra = {} if clock is None else {"clock": clock}
    sessions = SessionManager(
        storage.sessions,
        counter,
        ExtractiveSummarizer(counter),
        Limits(),
        **extra,
    )
    app = MemoryApp(
        storage,
        sessions,
        counter,
        None,
        Limits(),
        config or quiet_config(),
        endpoints or ModelEndpoints(),
        feed=feed,
        **extra,  # type: ignore[arg-type]
    )
    await app.start(wait_for_indexes=True)
    try:
        yield app, sessions
    finally:
        await app.stop()
        await storage.close()


@asynccontextmanager
async def served_memory(
    data_dir: Path,
    config: MemoryConfig | None = None,
    endpoints: ModelEndpoints | None = None,
    feed: ChangeFeed | None = None,
) -> AsyncIterator[Served]:
    async with memory_app(data_dir, config, endpoints, feed) as (app, sessions):
        server = grpc.aio.server(interceptors=[DomainInterceptor(Authenticator(API_KEYS))])
        app.register(server)
        session_pb2_grpc.add_SessionServiceServicer_to_server(SessionServicer(sessions), server)  # type: ignore[no-untyped-call]
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        address = f"127.0.0.1:{port}"
        channel = grpc.aio.insecure_channel(address)
        try:
            yield Served(
                app,
                sessions,
                memory_pb2_grpc.MemoryServiceStub(channel),  # type: ignore[no-untyped-call]
                session_pb2_grpc.SessionServiceStub(channel),  # type: ignore[no-untyped-call]
                address,
            )
        finally:
            await channel.close()
            await server.stop(0)


@asynccontextmanager
async def postgres_memory_app(
    dsn: str,
    config: MemoryConfig | None = None,
    clock: Callable[[], float] | None = None,
    **feed_options: Any,
) -> AsyncIterator[tuple[MemoryApp, SessionManager, PostgresChangeFeed]]:
    """A started MemoryApp on PostgreSQL at `dsn` (migrated on start), with
    its indexes built (and `clock` for its time, if given); stopped and
    closed on exit."""
    extra = {} if clock is None else {"clock": clock}
    storage = PostgresStorage(dsn, pool_size=4, migrate_on_start=True)
    await storage.start()
    store = PostgresMemoryStore(storage)
    feed = PostgresChangeFeed(store, dsn, **feed_options)
    try:
        counter = TokenCounter()
        sessions = SessionManager(
            storage.sessions, counter, ExtractiveSummarizer(counter), Limits()
        )
        app = MemoryApp(
            storage,
            sessions,
            counter,
            None,
            Limits(),
            config or quiet_config(),
            ModelEndpoints(),
            feed=feed,
            store=store,
            **extra,
        )
        feed.attach(app.indexes)
        await feed.start()  # migrates the store; listening before any index is built
        await app.start(wait_for_indexes=True)
        try:
            yield app, sessions, feed
        finally:
            await app.stop()
    finally:
        await feed.close()
        await store.close()
        await storage.close()


def auth(key: str = "key-alpha") -> list[tuple[str, str]]:
    return [("x-api-key", key)]


# A MemoryService client and the app behind it, on either backend (the
# `backend` fixture of tests/memory/conftest.py).
@dataclass
class Backend:
    memory: memory_pb2_grpc.MemoryServiceStub
    app: MemoryApp


@asynccontextmanager
async def serving(app: MemoryApp) -> AsyncIterator[memory_pb2_grpc.MemoryServiceStub]:
    """`app`'s MemoryService on a gRPC server of its own (loopback, the test
    API keys), and a client of it; both closed on exit."""
    server = grpc.aio.server(interceptors=[DomainInterceptor(Authenticator(API_KEYS))])
    app.register(server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
    finally:
        await channel.close()
        await server.stop(0)


@asynccontextmanager
async def served_postgres() -> AsyncIterator[Backend]:
    services = configured()
    await reachable(services)
    async with (
        fresh_database(services) as dsn,
        postgres_memory_app(dsn) as (app, _, _),
        serving(app) as memory,
    ):
        yield Backend(memory, app)
