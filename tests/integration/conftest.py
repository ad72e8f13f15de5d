"""Integration tests: real server processes on a real PostgreSQL and a real
Redis (started by `make test` through scripts/services.sh; see
tests/services.py for when these tests skip or fail)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.harness import backends
from tests.harness.backends import production_args
from tests.harness.servers import ServerProcess
from tests.services import Services, configured, create_database, drop_database, reachable

ServerFactory = Callable[..., ServerProcess]
__all__ = ["ServerFactory", "production_args"]


@pytest.fixture(scope="session")
def services() -> Services:
    found = configured()
    asyncio.run(reachable(found))
    return found


@pytest.fixture
def database(services: Services) -> Iterator[str]:
    """DSN of a fresh, empty database, dropped after the test."""
    dsn = asyncio.run(create_database(services))
    try:
        yield dsn
    finally:
        asyncio.run(drop_database(services, dsn))


@pytest.fixture
def redis_prefix() -> str:
    """A Redis key prefix of the test's own, so tests never share entries."""
    return backends.redis_prefix("it")


@pytest.fixture
def production_server(
    tmp_path: Path, services: Services, database: str, redis_prefix: str
) -> Iterator[ServerFactory]:
    """Starts production replicas sharing the test's database and prefix."""
    started: list[ServerProcess] = []

    def start(*extra: str) -> ServerProcess:
        directory = tmp_path / f"replica-{len(started)}"
        directory.mkdir()
        args = production_args(database, services.redis_url, redis_prefix)
        server = ServerProcess(directory, extra_args=[*args, *extra])
        server.start()
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.kill()
