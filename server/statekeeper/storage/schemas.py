"""Every schema the server needs, on either backend: what `statekeeper
migrate` applies, and (on PostgreSQL) what `serve` checks before it starts.

Each capability versions its own tables (its migration list, its version
table, its advisory lock key); this module only lists them in the order
they apply (sessions first: the others write into its audit_log), so that
one command and one check cover them all. A server started without
--migrate-on-start refuses a database where any of them is behind, naming
each; with it, every schema is migrated before any store starts, and the
stores' own start-up migrations find nothing left to do.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statekeeper.storage.postgres.migrations import (
    Migration,
    SchemaOutOfDateError,
    apply_migrations,
)

if TYPE_CHECKING:
    from statekeeper.storage.embedded.sessions import EmbeddedStorage
    from statekeeper.storage.postgres.sessions import Connection

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PostgresSchema:
    """One capability's versioned PostgreSQL schema."""

    name: str
    table: str
    lock_key: int
    migrations: Sequence[Migration]

    @property
    def latest(self) -> int:
        return self.migrations[-1].version


@dataclass(frozen=True)
class SchemaState:
    name: str
    version: int
    latest: int

    @property
    def current(self) -> bool:
        return self.version >= self.latest


def postgres_schemas() -> tuple[PostgresSchema, ...]:
    """Every PostgreSQL schema, in the order they apply."""
    # Imported here: these modules import statekeeper.storage.postgres.sessions, which
    # imports this module when it starts.
    from statekeeper.storage.postgres import blackboard_schema as postgres_blackboard
    from statekeeper.storage.postgres import checkpoints_schema as postgres_checkpoints
    from statekeeper.storage.postgres import items as postgres_items
    from statekeeper.storage.postgres import memory_promotion as postgres_promotion
    from statekeeper.storage.postgres import memory_schema as postgres_memory
    from statekeeper.storage.postgres import messagebus as postgres_messagebus
    from statekeeper.storage.postgres import sessions_schema as postgres
    from statekeeper.storage.postgres import workflows as postgres_workflows

    return (
        PostgresSchema(
            "sessions", "schema_migrations", postgres.MIGRATION_LOCK_KEY, postgres.MIGRATIONS
        ),
        PostgresSchema(
            "memory",
            "memory_schema_migrations",
            postgres_memory.MEMORY_MIGRATION_LOCK_KEY,
            postgres_memory.MEMORY_MIGRATIONS,
        ),
        PostgresSchema(
            "checkpoints",
            postgres_checkpoints.SCHEMA_TABLE,
            postgres_checkpoints.MIGRATION_LOCK_KEY,
            postgres_checkpoints.MIGRATIONS,
        ),
        PostgresSchema(
            "workflows",
            postgres_workflows.SCHEMA_TABLE,
            postgres_workflows.MIGRATION_LOCK_KEY,
            postgres_workflows.MIGRATIONS,
        ),
        PostgresSchema(
            "blackboard",
            postgres_blackboard.SCHEMA_TABLE,
            postgres_blackboard.MIGRATION_LOCK_KEY,
            postgres_blackboard.MIGRATIONS,
        ),
        PostgresSchema(
            "bus",
            postgres_messagebus.SCHEMA_TABLE,
            postgres_messagebus.MIGRATION_LOCK_KEY,
            postgres_messagebus.MIGRATIONS,
        ),
        PostgresSchema(
            "items",
            postgres_items.SCHEMA_TABLE,
            postgres_items.MIGRATION_LOCK_KEY,
            postgres_items.MIGRATIONS,
        ),
        PostgresSchema(
            "memory promotion",
            "memory_promotion_schema_migrations",
            postgres_promotion.PROMOTION_LOCK_KEY,
            postgres_promotion.PROMOTION_MIGRATIONS,
        ),
    )


async def migrate_postgres(conn: Connection) -> dict[str, list[int]]:
    """Applies every missing migration of every schema (each in one
    transaction under its advisory lock, so concurrent runs apply each once);
    returns the versions applied, by schema name."""
    from statekeeper.storage.postgres.memory_schema import index_missing_terms

    applied: dict[str, list[int]] = {}
    for schema in postgres_schemas():
        applied[schema.name] = await _apply(conn, schema)
        if schema.name == "memory":
            # Data derived by memory migration 2 (lexical terms of old episodes).
            await index_missing_terms(conn)
    return applied


async def postgres_states(conn: Connection) -> list[SchemaState]:
    """Each schema's applied version against the one this server needs."""
    states = []
    for schema in postgres_schemas():
        exists = await conn.fetchval("SELECT to_regclass($1) IS NOT NULL", schema.table)
        version = 0
        if exists:
            version = await conn.fetchval(f"SELECT coalesce(max(version), 0) FROM {schema.table}")
        states.append(SchemaState(schema.name, int(version), schema.latest))
    return states


def refuse_out_of_date(states: Sequence[SchemaState], store: str = "PostgreSQL") -> None:
    """Raises SchemaOutOfDateError naming every schema of `store` that is
    behind."""
    behind = [state for state in states if not state.current]
    if behind:
        listed = ", ".join(f"{s.name} at {s.version} (needs {s.latest})" for s in behind)
        raise SchemaOutOfDateError(
            f"the {store} schema is out of date: {listed}; run `statekeeper migrate`"
            " or start with --migrate-on-start"
        )


async def _apply(conn: Connection, schema: PostgresSchema) -> list[int]:
    applied = await apply_migrations(conn, schema.table, schema.lock_key, schema.migrations)
    return applied.applied_now


async def migrate_embedded(storage: EmbeddedStorage) -> list[str]:
    """Applies every schema of the embedded store (the session schema when
    it opens, then each capability's); returns their names."""
    from statekeeper.storage.embedded.blackboard import EmbeddedBlackboardStore
    from statekeeper.storage.embedded.checkpoints import EmbeddedCheckpointStore
    from statekeeper.storage.embedded.items import EmbeddedItemStore
    from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
    from statekeeper.storage.embedded.memory_promotion import EmbeddedPromotionStore
    from statekeeper.storage.embedded.messagebus import EmbeddedMessageStore
    from statekeeper.storage.embedded.workflows import EmbeddedWorkflowStore

    await storage.start()
    await EmbeddedMemoryStore(storage).start()
    await EmbeddedCheckpointStore(storage).start()
    await EmbeddedWorkflowStore(storage).start()
    blackboard = EmbeddedBlackboardStore(storage)
    await blackboard.start()
    await blackboard.close()
    bus = EmbeddedMessageStore(storage)
    await bus.start()
    await bus.close()
    await EmbeddedItemStore(storage).start()
    await EmbeddedPromotionStore(storage).start()
    return [
        "sessions",
        "memory",
        "checkpoints",
        "workflows",
        "blackboard",
        "bus",
        "items",
        "memory promotion",
    ]


def embedded_states(database: Path) -> list[SchemaState]:
    """Each embedded schema's applied version against the one this server
    needs. Reads only, on an existing file (mode=rw never creates one); not
    mode=ro, which fails on a store whose process was killed: the first
    connection after a crash must recover the WAL index, and that writes."""
    from statekeeper.storage.embedded import blackboard as embedded_blackboard
    from statekeeper.storage.embedded import checkpoints_schema as embedded_checkpoints
    from statekeeper.storage.embedded import items as embedded_items
    from statekeeper.storage.embedded import memory_promotion as embedded_promotion
    from statekeeper.storage.embedded import memory_schema as embedded_memory
    from statekeeper.storage.embedded import messagebus as embedded_messagebus
    from statekeeper.storage.embedded import sessions_schema as embedded
    from statekeeper.storage.embedded import workflows as embedded_workflows

    tables: list[tuple[str, str, Sequence[tuple[int, Any]]]] = [
        ("sessions", "schema_migrations", embedded.MIGRATIONS),
        ("memory", "memory_schema_migrations", embedded_memory.MEMORY_MIGRATIONS),
        ("checkpoints", embedded_checkpoints.SCHEMA_TABLE, embedded_checkpoints.MIGRATIONS),
        ("workflows", embedded_workflows.SCHEMA_TABLE, embedded_workflows.MIGRATIONS),
        ("blackboard", "blackboard_schema", embedded_blackboard.SCHEMA),
        ("bus", "messagebus_schema", embedded_messagebus.SCHEMA),
        ("items", "items_schema", embedded_items.SCHEMA),
        (
            "memory promotion",
            "memory_promotion_schema_migrations",
            embedded_promotion.PROMOTION_MIGRATIONS,
        ),
    ]
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=rw", uri=True)) as db:
        existing = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        states = []
        for name, table, migrations in tables:
            version = 0
            if table in existing:
                version = db.execute(f"SELECT coalesce(max(version), 0) FROM {table}").fetchone()[0]
            latest = max(entry[0] for entry in migrations)
            states.append(SchemaState(name, int(version), latest))
    return states
