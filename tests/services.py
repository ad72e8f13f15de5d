"""The real Redis and PostgreSQL servers that tests use.

`scripts/services.sh start DIR` starts them (as `make test` does) and writes
DIR/env with their addresses; tests read these variables. When they are not
set or the servers do not answer, tests that need them are skipped with the
reason printed, unless STATEKEEPER_REQUIRE_SERVICES=1 (set by scripts/test.sh,
so CI can never skip them silently), in which case they fail.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
import redis.asyncio as redis_asyncio

POSTGRES_ENV = "STATEKEEPER_TEST_POSTGRES_DSN"
REDIS_ENV = "STATEKEEPER_TEST_REDIS_URL"
DIR_ENV = "STATEKEEPER_TEST_SERVICES_DIR"
SCRIPT_ENV = "STATEKEEPER_TEST_SERVICES_SCRIPT"
REQUIRE_ENV = "STATEKEEPER_REQUIRE_SERVICES"
HOW = "start them with `scripts/services.sh start DIR && . DIR/env` (make test does)"


@dataclass(frozen=True)
class Services:
    postgres_dsn: str
    redis_url: str
    directory: str
    script: str

    def control(self, action: str) -> None:
        """Runs `scripts/services.sh ACTION DIR`, e.g. stop-postgres."""
        subprocess.run([self.script, action, self.directory], check=True, timeout=120)


def unavailable(reason: str) -> None:
    """Skips the test (printing why), or fails it when services are required."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1)")
    pytest.skip(f"{reason}; {HOW}")


def configured() -> Services:
    dsn, url = os.environ.get(POSTGRES_ENV), os.environ.get(REDIS_ENV)
    if not dsn or not url:
        unavailable(f"Redis and PostgreSQL are not configured ({POSTGRES_ENV}, {REDIS_ENV})")
    assert dsn and url
    return Services(dsn, url, os.environ.get(DIR_ENV, ""), os.environ.get(SCRIPT_ENV, ""))


async def reachable(services: Services) -> None:
    """Skips or fails unless both servers answer within a few seconds."""
    try:
        conn = await asyncpg.connect(services.postgres_dsn, timeout=3)
        await conn.close()
    except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
        unavailable(f"PostgreSQL at {services.postgres_dsn} does not answer: {exc}")
    client = redis_asyncio.from_url(services.redis_url, socket_connect_timeout=3)
    try:
        await client.ping()
    except (OSError, redis_asyncio.RedisError) as exc:
        unavailable(f"Redis at {services.redis_url} does not answer: {exc}")
    finally:
        await client.aclose()


def with_database(dsn: str, database: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path="/" + database))


async def create_database(services: Services) -> str:
    """A new, empty database on the test server; returns its DSN."""
    name = f"sk_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(services.postgres_dsn)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
    finally:
        await admin.close()
    return with_database(services.postgres_dsn, name)


async def drop_database(services: Services, dsn: str) -> None:
    name = urlsplit(dsn).path.lstrip("/")
    admin = await asyncpg.connect(services.postgres_dsn)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()


@asynccontextmanager
async def fresh_database(services: Services) -> AsyncIterator[str]:
    """A new, empty database on the test server; dropped afterwards."""
    dsn = await create_database(services)
    try:
        yield dsn
    finally:
        await drop_database(services, dsn)
