"""What every PostgreSQL schema of the server is made of: versioned migrations, and the
error a server raises when the database is older than it (schemas.py applies them)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import asyncpg
import asyncpg.pool

from statekeeper.core.errors import (
    StatekeeperError,
)

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    Connection = (
        asyncpg.Connection[asyncpg.Record] | asyncpg.pool.PoolConnectionProxy[asyncpg.Record]
    )


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


class SchemaOutOfDateError(StatekeeperError):
    """The database schema is older than this server needs."""

    code = "FAILED_PRECONDITION"
    reason = "FAILED_PRECONDITION"


async def apply_migrations(
    conn: Connection,
    table: str,
    lock_key: int,
    migrations: Sequence[Migration],
    migrate: bool = True,
) -> AppliedMigrations:
    """The one migration runner of every PostgreSQL schema: applies the
    missing `migrations` (when `migrate`; otherwise only reads what is
    applied) in one transaction under the advisory lock `lock_key`, recording
    them in `table`. Concurrent callers (replicas starting together) wait on
    the lock and find them applied, so each migration runs once."""
    applied_now: list[int] = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", lock_key)
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (version integer PRIMARY KEY,"
            " description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        applied = {row["version"] for row in await conn.fetch(f"SELECT version FROM {table}")}
        for migration in migrations:
            if migration.version in applied or not migrate:
                continue
            for statement in migration.statements:
                await conn.execute(statement)
            await conn.execute(
                f"INSERT INTO {table} (version, description) VALUES ($1, $2)",
                migration.version,
                migration.description,
            )
            applied.add(migration.version)
            applied_now.append(migration.version)
    if applied_now:
        log.info("applied schema migrations", extra={"table": table, "versions": applied_now})
    return AppliedMigrations(applied_now, max(applied, default=0))


@dataclass(frozen=True)
class AppliedMigrations:
    """What a run of `apply_migrations` did: the versions it applied, and the
    schema version it found or reached."""

    applied_now: list[int]
    version: int
