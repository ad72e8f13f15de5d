"""Archiving audit records on the embedded store: a day is read on a
connection of its own (one read transaction, in a worker thread), and
deleted through the store's group commit (the single writer: the check
that the rows are still the exported ones and the delete are atomic)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from statekeeper.admin import transfer
from statekeeper.admin.embedded import EmbeddedSource, read_snapshot
from statekeeper.admin.tables import Table
from statekeeper.core.archive.audit import ArchivedAuditRecord
from statekeeper.core.archive.store import ExportedUnit
from statekeeper.storage.archive.audit import (
    TABLE,
    day_filter,
    day_selection,
    exported,
    read_chunk,
    same_rows,
    source_columns,
)
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.sql import sqlite_numbered_mark

_DAY = day_filter(sqlite_numbered_mark)


class _DaySource(EmbeddedSource):
    def __init__(self, db: sqlite3.Connection, data_dir: Path, start: float, end: float) -> None:
        super().__init__(db, data_dir)
        self._bounds = (start, end)

    async def columns(self, table: Table) -> list[str]:
        return source_columns(table) or await super().columns(table)

    def selection(self, table: Table, tenant: str, user: str | None) -> transfer.Selection | None:
        return day_selection(table, _DAY, tenant, self._bounds)


def _export(
    data_dir: Path, tenant: str, start: float, end: float, path: Path
) -> ExportedUnit | None:
    with read_snapshot(data_dir) as db:
        ids = [
            int(row[0])
            for row in db.execute(
                f"SELECT audit_id FROM {TABLE} WHERE {_DAY}", (tenant, start, end)
            )
        ]
        if not ids:
            return None
        source = _DaySource(db, data_dir, start, end)
        summary = asyncio.run(transfer.export(source, path, tenant, None))
    return exported(path, summary, ids)


class EmbeddedAuditArchive:
    def __init__(self, storage: EmbeddedStorage, data_dir: Path) -> None:
        self._storage = storage
        self._data_dir = data_dir

    async def next_tenant(self, after: str | None) -> str | None:
        where, params = ("", ()) if after is None else (" WHERE tenant > ?", (after,))

        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute(
                f"SELECT tenant FROM {TABLE}{where} ORDER BY tenant LIMIT 1", params
            ).fetchone()
            return None if row is None else str(row[0])

        return await self._storage.read(work)

    async def oldest_time(self, tenant: str, since: float) -> float | None:
        def work(db: sqlite3.Connection) -> float | None:
            row = db.execute(
                f"SELECT time FROM {TABLE} WHERE tenant = ? AND time >= ? ORDER BY time LIMIT 1",
                (tenant, since),
            ).fetchone()
            return None if row is None else float(row[0])

        return await self._storage.read(work)

    async def export_day(
        self, tenant: str, start: float, end: float, path: Path
    ) -> ExportedUnit | None:
        return await asyncio.to_thread(_export, self._data_dir, tenant, start, end, path)

    async def delete_day(
        self, tenant: str, start: float, end: float, records: int, id_sum: int
    ) -> bool | None:
        def work(db: sqlite3.Connection) -> bool | None:
            ids = [
                int(row[0])
                for row in db.execute(
                    f"SELECT audit_id FROM {TABLE} WHERE {_DAY}", (tenant, start, end)
                )
            ]
            if not ids:
                return False
            if not same_rows(ids, records, id_sum):
                return None
            db.execute(f"DELETE FROM {TABLE} WHERE {_DAY}", (tenant, start, end))
            return True

        return await self._storage.write(work)

    async def has_record(self, tenant: str, audit_id: int) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            row = db.execute(
                f"SELECT 1 FROM {TABLE} WHERE tenant = ? AND audit_id = ?", (tenant, audit_id)
            ).fetchone()
            return row is not None

        return await self._storage.read(work)

    def read_chunk(self, path: Path, tenant: str) -> list[ArchivedAuditRecord]:
        return read_chunk(path, tenant)
