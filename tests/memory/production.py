"""The production memory assembly for tests: sessions and memory on
PostgreSQL (PostgresStorage + PostgresMemoryStore), FAISS indexes kept in
sync between replicas by the LISTEN/NOTIFY change feed, wired in the order
server.py must use."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from statekeeper.core.limits import Limits
from statekeeper.core.memory_config import MemoryConfig
from statekeeper.core.sessions import SessionManager
from statekeeper.core.summarizer import ExtractiveSummarizer
from statekeeper.core.tokens import TokenCounter
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from statekeeper.storage.postgres import PostgresStorage
from statekeeper.storage.postgres_memory import PostgresMemoryStore
from statekeeper.storage.postgres_memory_feed import PostgresChangeFeed
from tests.memory.helpers import quiet_config


@asynccontextmanager
async def postgres_memory_app(
    dsn: str, config: MemoryConfig | None = None, **feed_options: Any
) -> AsyncIterator[tuple[MemoryApp, SessionManager, PostgresChangeFeed]]:
    """A started MemoryApp on PostgreSQL at `dsn` (migrated on start), with
    its indexes built; stopped and closed on exit."""
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
