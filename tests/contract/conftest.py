"""One contract suite, every backend.

Each backend registers a factory in BACKENDS; every test in this folder runs
once per backend:

* embedded:   SQLite (WAL) plus the in-process hot cache;
* postgres:   the durable tier alone (no cache);
* production: PostgreSQL behind the Redis hot tier, as `serve --postgres-dsn
  --redis-url` runs it.

A backend whose services are not running is skipped with the reason printed
(tests/services.py); `make test` starts them and sets
STATEKEEPER_REQUIRE_SERVICES=1, so CI runs every backend or fails.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.production import ProductionStorage
from statekeeper.storage.redis.cache import SessionCache
from tests.services import configured, reachable

BackendFactory = Callable[[Path], Awaitable[Storage]]


async def _embedded(tmp_path: Path) -> Storage:
    return EmbeddedStorage(tmp_path)


async def _postgres(tmp_path: Path) -> Storage:
    services = configured()
    await reachable(services)
    return PostgresStorage(services.postgres_dsn, pool_size=4, migrate_on_start=True)


async def _production(tmp_path: Path) -> Storage:
    services = configured()
    await reachable(services)
    return ProductionStorage(
        PostgresStorage(services.postgres_dsn, pool_size=4, migrate_on_start=True),
        SessionCache(services.redis_url, prefix=f"contract-{tmp_path.name}"),
    )


BACKENDS: dict[str, BackendFactory] = {
    "embedded": _embedded,
    "postgres": _postgres,
    "production": _production,
}


@pytest.fixture(params=sorted(BACKENDS))
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    backend = await BACKENDS[request.param](tmp_path)
    await backend.start()
    yield backend
    await backend.close()
