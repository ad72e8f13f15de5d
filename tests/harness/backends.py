"""The backends a test server runs on, and the resources each needs.

* embedded:   nothing to prepare; the server's data directory holds it all;
* production: a fresh PostgreSQL database on the test server (dropped
  afterwards) and a Redis key prefix of its own, so tests never share state.

The production backend needs the services of tests/services.py; without
them it skips with the reason (or fails under STATEKEEPER_REQUIRE_SERVICES=1).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.services import Services, configured, create_database, drop_database, reachable

EMBEDDED = "embedded"
PRODUCTION = "production"
BACKENDS = (EMBEDDED, PRODUCTION)


@dataclass(frozen=True)
class Production:
    """Where production replicas keep their state; replicas given the same
    Production share it, as replicas of one deployment do."""

    postgres_dsn: str
    redis_url: str
    redis_prefix: str

    def serve_args(self) -> list[str]:
        """`statekeeper serve` flags for this backend."""
        return production_args(self.postgres_dsn, self.redis_url, self.redis_prefix)


def production_args(dsn: str, redis_url: str, prefix: str) -> list[str]:
    """`statekeeper serve` flags for PostgreSQL at `dsn` and Redis at
    `redis_url` under `prefix`, migrating on start, probing health often."""
    return [
        "--postgres-dsn",
        dsn,
        "--redis-url",
        redis_url,
        "--redis-key-prefix",
        prefix,
        "--migrate-on-start",
        "--health-interval-seconds",
        "0.2",
        "--log-format",
        "text",
    ]


def running_services() -> Services:
    """The test Redis and PostgreSQL, checked to answer (else skip or fail)."""
    services = configured()
    asyncio.run(reachable(services))
    return services


@contextmanager
def fresh_database(services: Services) -> Iterator[str]:
    """The DSN of a new, empty database, dropped afterwards (sync callers;
    tests.services.fresh_database is the async one)."""
    dsn = asyncio.run(create_database(services))
    try:
        yield dsn
    finally:
        asyncio.run(drop_database(services, dsn))


def redis_prefix(kind: str = "t") -> str:
    return f"{kind}-{uuid.uuid4().hex[:8]}"


@contextmanager
def production(kind: str = "t") -> Iterator[Production]:
    """A fresh Production: its own database and Redis prefix."""
    services = running_services()
    with fresh_database(services) as dsn:
        yield Production(dsn, services.redis_url, redis_prefix(kind))


@contextmanager
def backend(name: str, kind: str = "t") -> Iterator[Production | None]:
    """None for the embedded backend, else a fresh Production."""
    if name == EMBEDDED:
        yield None
        return
    if name != PRODUCTION:
        raise ValueError(f"unknown backend {name!r}; one of {BACKENDS}")
    with production(kind) as where:
        yield where
