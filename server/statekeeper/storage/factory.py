"""The one place that picks a backend from the settings."""

from __future__ import annotations

from pathlib import Path

from statekeeper.config import Settings
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.production import ProductionStorage
from statekeeper.storage.redis.cache import SessionCache


def build_storage(settings: Settings) -> Storage:
    """The production tier when a PostgreSQL DSN is set, else the embedded
    store in `data_dir`."""
    if not settings.production:
        return EmbeddedStorage(Path(settings.data_dir))
    durable = PostgresStorage(
        settings.postgres_dsn,
        pool_size=settings.postgres_pool_size,
        migrate_on_start=settings.migrate_on_start,
    )
    cache = None
    if settings.redis_url:
        cache = SessionCache(
            settings.redis_url,
            prefix=settings.redis_key_prefix,
            ttl_seconds=settings.cache_ttl_seconds,
        )
    return ProductionStorage(durable, cache)
