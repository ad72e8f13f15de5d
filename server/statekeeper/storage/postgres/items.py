"""Items on PostgreSQL (table `items`, versioned by `items_schema_migrations`
and applied under an advisory lock). Paths are `text COLLATE "C"`, so the
prefix range of core/items/service.py is in byte order, as on the embedded store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from statekeeper.core.items.models import ItemRecord, namespace_of, namespace_path
from statekeeper.core.items.store import ItemName, ItemStore
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.storage.postgres.erasure import run_steps
from statekeeper.storage.postgres.migrations import (
    Migration,
    SchemaOutOfDateError,
    apply_migrations,
)
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.shared import items as shared
from statekeeper.storage.shared.erasure import item_steps

# Append only; never edit a released entry.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "items",
        (
            """CREATE TABLE items (
                tenant text COLLATE "C" NOT NULL,
                path text COLLATE "C" NOT NULL,
                key text COLLATE "C" NOT NULL,
                value_json text NOT NULL,
                create_time double precision NOT NULL,
                update_time double precision NOT NULL,
                expire_time double precision,
                ttl_seconds double precision,
                vectors text NOT NULL,
                PRIMARY KEY (tenant, path, key)
            )""",
            "CREATE INDEX items_by_expiry ON items (tenant, expire_time)"
            " WHERE expire_time IS NOT NULL",
        ),
    ),
)
LATEST_SCHEMA = MIGRATIONS[-1].version
# pg_advisory_xact_lock key of these migrations ("items:m").
MIGRATION_LOCK_KEY = 0x6974656D733A6D
SCHEMA_TABLE = "items_schema_migrations"

_COLUMNS = shared.ITEM_COLUMNS
_LIVE = shared.LIVE


class PostgresItemStore(ItemStore):
    def __init__(self, db: PostgresStorage, migrate: bool = True) -> None:
        self._db = db
        self._migrate = migrate

    async def start(self) -> None:
        async with self._db.connection("items schema") as conn:
            applied = await apply_migrations(
                conn, SCHEMA_TABLE, MIGRATION_LOCK_KEY, MIGRATIONS, self._migrate
            )
            version = applied.version
        if version < LATEST_SCHEMA:
            raise SchemaOutOfDateError(
                f"the items schema is at version {version}, this server needs"
                f" {LATEST_SCHEMA}: start with --migrate-on-start"
            )

    async def put(self, tenant: str, record: ItemRecord, now: float) -> ItemRecord:
        async with self._db.connection("put item") as conn, conn.transaction():
            await conn.execute(
                # SKIP LOCKED: rows another put is sweeping (or replacing) are
                # left to it, so two puts never wait on each other's sweep.
                "DELETE FROM items WHERE ctid IN (SELECT ctid FROM items WHERE tenant = $1"
                " AND expire_time IS NOT NULL AND expire_time <= $2 LIMIT $3"
                " FOR UPDATE SKIP LOCKED)",
                tenant,
                now,
                shared.SWEEP_BATCH,
            )
            # A replaced live item keeps its create_time; an expired one is new.
            row = await conn.fetchrow(
                f"INSERT INTO items (tenant, {_COLUMNS})"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
                " ON CONFLICT (tenant, path, key) DO UPDATE SET"
                " value_json = EXCLUDED.value_json,"
                " create_time = CASE WHEN items.expire_time IS NULL OR items.expire_time > $10"
                " THEN items.create_time ELSE EXCLUDED.create_time END,"
                " update_time = EXCLUDED.update_time, expire_time = EXCLUDED.expire_time,"
                " ttl_seconds = EXCLUDED.ttl_seconds, vectors = EXCLUDED.vectors"
                " RETURNING create_time",
                tenant,
                *shared.item_values(record),
                now,
            )
        assert row is not None  # INSERT ... RETURNING yields its row
        return replace(record, create_time=row[0])

    async def get(
        self, tenant: str, namespace: tuple[str, ...], key: str, now: float
    ) -> ItemRecord | None:
        async with self._db.connection("get item") as conn:
            row = await conn.fetchrow(
                f"SELECT {_COLUMNS} FROM items WHERE tenant = $1 AND path = $2 AND key = $3"
                f" AND {_LIVE.format(now='$4')}",
                tenant,
                namespace_path(namespace),
                key,
                now,
            )
        return None if row is None else shared.record_from_row(row)

    async def delete(self, tenant: str, namespace: tuple[str, ...], key: str, now: float) -> bool:
        async with self._db.connection("delete item") as conn:
            row = await conn.fetchrow(
                "DELETE FROM items WHERE tenant = $1 AND path = $2 AND key = $3"
                " RETURNING expire_time",
                tenant,
                namespace_path(namespace),
                key,
            )
        return row is not None and (row[0] is None or row[0] > now)

    async def scan(
        self, tenant: str, prefix: tuple[str, ...], now: float, newest: int | None = None
    ) -> list[ItemRecord]:
        where, params = _under(tenant, prefix, now)
        if newest is not None:
            params.append(newest)
            where += f" {shared.NEWEST_FIRST} LIMIT ${len(params)}"
        async with self._db.connection("search items") as conn:
            rows = await conn.fetch(f"SELECT {_COLUMNS} FROM items WHERE {where}", *params)
        return [shared.record_from_row(row) for row in rows]

    async def refresh(self, tenant: str, names: Sequence[ItemName], now: float) -> None:
        async with self._db.connection("refresh items") as conn:
            await conn.executemany(
                "UPDATE items SET expire_time = $1 + ttl_seconds"
                " WHERE tenant = $2 AND path = $3 AND key = $4 AND ttl_seconds IS NOT NULL",
                [(now, tenant, namespace_path(ns), key) for ns, key in names],
            )

    async def namespaces(
        self, tenant: str, prefix: tuple[str, ...], now: float
    ) -> list[tuple[str, ...]]:
        where, params = _under(tenant, prefix, now)
        async with self._db.connection("list item namespaces") as conn:
            rows = await conn.fetch(f"SELECT DISTINCT path FROM items WHERE {where}", *params)
        return [namespace_of(row[0]) for row in rows]

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        erasure = await run_steps(self._db, item_steps(tenant, subject), dry_run)
        return erasure.counts


def _under(tenant: str, prefix: tuple[str, ...], now: float) -> tuple[str, list[Any]]:
    return shared.under(tenant, prefix, now, lambda n: f"${n}")
