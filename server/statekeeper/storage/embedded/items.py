"""Items on the embedded SQLite store (tables `items`, versioned by
`items_schema`), every transaction on the shared database thread."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from statekeeper.core.items.models import ItemRecord, namespace_of, namespace_path
from statekeeper.core.items.store import ItemName, ItemStore
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.storage.embedded.erasure import run_steps
from statekeeper.storage.embedded.migrations import apply_migrations
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.shared.erasure import item_steps
from statekeeper.storage.shared.items import (
    ITEM_COLUMNS,
    LIVE,
    NEWEST_FIRST,
    SWEEP_BATCH,
    item_values,
    record_from_row,
    under,
)

# Append only; never edit a released entry.
SCHEMA: list[tuple[int, list[str]]] = [
    (
        1,
        [
            # path: the namespace labels each followed by U+001E (core/items/service.py);
            # times in seconds; vectors as JSON [[field, [numbers]], ...].
            """CREATE TABLE items (
                tenant TEXT NOT NULL,
                path TEXT NOT NULL,
                key TEXT NOT NULL,
                value_json TEXT NOT NULL,
                create_time REAL NOT NULL,
                update_time REAL NOT NULL,
                expire_time REAL,
                ttl_seconds REAL,
                vectors TEXT NOT NULL,
                PRIMARY KEY (tenant, path, key)
            )""",
            "CREATE INDEX items_by_expiry ON items (expire_time) WHERE expire_time IS NOT NULL",
        ],
    ),
]
_COLUMNS = ITEM_COLUMNS
_LIVE = LIVE.format(now="?")
_ONE = "tenant=? AND path=? AND key=?"


class EmbeddedItemStore(ItemStore):
    def __init__(self, storage: EmbeddedStorage) -> None:
        self._storage = storage

    async def start(self) -> None:
        await self._storage.run(_migrate)

    async def put(self, tenant: str, record: ItemRecord, now: float) -> ItemRecord:
        def work(db: sqlite3.Connection) -> ItemRecord:
            with db:
                _sweep(db, tenant, now)
                row = db.execute(
                    f"SELECT create_time FROM items WHERE {_ONE} AND {_LIVE}",
                    (tenant, record.path, record.key, now),
                ).fetchone()
                stored = record if row is None else _with_create_time(record, row[0])
                db.execute(
                    f"INSERT OR REPLACE INTO items (tenant, {_COLUMNS})"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (tenant, *item_values(stored)),
                )
                return stored

        return await self._storage.run(work)

    async def get(
        self, tenant: str, namespace: tuple[str, ...], key: str, now: float
    ) -> ItemRecord | None:
        path = namespace_path(namespace)

        def work(db: sqlite3.Connection) -> ItemRecord | None:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM items WHERE tenant=? AND path=? AND key=? AND {_LIVE}",
                (tenant, path, key, now),
            ).fetchone()
            return None if row is None else record_from_row(row)

        return await self._storage.run(work)

    async def delete(self, tenant: str, namespace: tuple[str, ...], key: str, now: float) -> bool:
        path = namespace_path(namespace)

        def work(db: sqlite3.Connection) -> bool:
            with db:
                live = db.execute(
                    f"SELECT 1 FROM items WHERE tenant=? AND path=? AND key=? AND {_LIVE}",
                    (tenant, path, key, now),
                ).fetchone()
                db.execute(
                    "DELETE FROM items WHERE tenant=? AND path=? AND key=?", (tenant, path, key)
                )
                return live is not None

        return await self._storage.run(work)

    async def scan(
        self, tenant: str, prefix: tuple[str, ...], now: float, newest: int | None = None
    ) -> list[ItemRecord]:
        where, params = _under(tenant, prefix, now)
        if newest is not None:
            where += f" {NEWEST_FIRST} LIMIT ?"
            params.append(newest)

        def work(db: sqlite3.Connection) -> list[ItemRecord]:
            rows = db.execute(f"SELECT {_COLUMNS} FROM items WHERE {where}", params)
            return [record_from_row(row) for row in rows]

        return await self._storage.run(work)

    async def refresh(self, tenant: str, names: Sequence[ItemName], now: float) -> None:
        rows = [(now, tenant, namespace_path(ns), key) for ns, key in names]

        def work(db: sqlite3.Connection) -> None:
            with db:
                db.executemany(
                    "UPDATE items SET expire_time = ? + ttl_seconds"
                    " WHERE tenant=? AND path=? AND key=? AND ttl_seconds IS NOT NULL",
                    rows,
                )

        await self._storage.run(work)

    async def namespaces(
        self, tenant: str, prefix: tuple[str, ...], now: float
    ) -> list[tuple[str, ...]]:
        where, params = _under(tenant, prefix, now)

        def work(db: sqlite3.Connection) -> list[tuple[str, ...]]:
            rows = db.execute(f"SELECT DISTINCT path FROM items WHERE {where}", params)
            return [namespace_of(row[0]) for row in rows]

        return await self._storage.run(work)

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        erasure = await run_steps(self._storage, item_steps(tenant, subject), dry_run)
        return erasure.counts


def _migrate(db: sqlite3.Connection) -> None:
    apply_migrations(db, "items_schema", SCHEMA)


def _sweep(db: sqlite3.Connection, tenant: str, now: float) -> None:
    db.execute(
        "DELETE FROM items WHERE rowid IN (SELECT rowid FROM items"
        " WHERE tenant=? AND expire_time IS NOT NULL AND expire_time <= ? LIMIT ?)",
        (tenant, now, SWEEP_BATCH),
    )


def _under(tenant: str, prefix: tuple[str, ...], now: float) -> tuple[str, list[Any]]:
    return under(tenant, prefix, now, lambda _: "?")


def _with_create_time(record: ItemRecord, create_time: float) -> ItemRecord:
    return replace(record, create_time=create_time)
