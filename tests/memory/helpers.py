"""Shared builders for memory tests: a MemoryApp on a real embedded store,
optionally served by a real grpc.aio server on 127.0.0.1 with the real
interceptor."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import grpc

from statekeeper.api.interceptor import DomainInterceptor
from statekeeper.core.limits import Limits
from statekeeper.core.memory_config import MemoryConfig
from statekeeper.core.sessions import SessionManager
from statekeeper.core.summarizer import ExtractiveSummarizer
from statekeeper.core.tenancy import Authenticator
from statekeeper.core.tokens import TokenCounter
from statekeeper.core.vector_index import ChangeFeed
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from statekeeper.storage.embedded import EmbeddedStorage
from statekeeper_client.v1 import memory_pb2_grpc, session_pb2_grpc

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
        **extra,  # type: ignore[arg-type]
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
        from statekeeper.api.session_servicer import SessionServicer

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


def auth(key: str = "key-alpha") -> list[tuple[str, str]]:
    return [("x-api-key", key)]
