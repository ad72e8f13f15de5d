"""Archiving audit records on PostgreSQL: a day is read in one REPEATABLE
READ transaction; its delete is one transaction that deletes the day's
rows and rolls back unless exactly the exported ones went (a record of
that day committed after the export stays hot, with nothing deleted)."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from statekeeper.admin import transfer
from statekeeper.admin.postgres import PostgresSource, pooled_snapshot
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
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.sql import postgres_mark

_DAY = day_filter(postgres_mark)


class _DaySource(PostgresSource):
    def __init__(self, conn: asyncpg.Connection, start: float, end: float) -> None:
        super().__init__(conn)
        self._bounds = (start, end)

    async def columns(self, table: Table) -> list[str]:
        return source_columns(table) or await super().columns(table)

    def selection(self, table: Table, tenant: str, user: str | None) -> transfer.Selection | None:
        return day_selection(table, _DAY, tenant, self._bounds)


class _ChangedError(Exception):
    """Rolls back a delete that did not find exactly the exported rows."""


class PostgresAuditArchive:
    def __init__(self, durable: PostgresStorage) -> None:
        self._durable = durable

    async def next_tenant(self, after: str | None) -> str | None:
        async with self._durable.connection("audit archive tenants") as conn:
            if after is None:
                value = await conn.fetchval(f"SELECT tenant FROM {TABLE} ORDER BY tenant LIMIT 1")
            else:
                value = await conn.fetchval(
                    f"SELECT tenant FROM {TABLE} WHERE tenant > $1 ORDER BY tenant LIMIT 1", after
                )
        return None if value is None else str(value)

    async def oldest_time(self, tenant: str, since: float) -> float | None:
        async with self._durable.connection("audit archive candidates") as conn:
            value = await conn.fetchval(
                f"SELECT time FROM {TABLE} WHERE tenant = $1 AND time >= $2 ORDER BY time LIMIT 1",
                tenant,
                since,
            )
        return None if value is None else float(value)

    async def export_day(
        self, tenant: str, start: float, end: float, path: Path
    ) -> ExportedUnit | None:
        async with pooled_snapshot(self._durable, "audit archive export") as conn:
            rows = await conn.fetch(
                f"SELECT audit_id FROM {TABLE} WHERE {_DAY}", tenant, start, end
            )
            if not rows:
                return None
            source = _DaySource(conn, start, end)
            summary = await transfer.export(source, path, tenant, None)
        return exported(path, summary, [int(row[0]) for row in rows])

    async def delete_day(
        self, tenant: str, start: float, end: float, records: int, id_sum: int
    ) -> bool | None:
        try:
            async with self._durable.transaction("audit archive delete") as conn:
                rows = await conn.fetch(
                    f"DELETE FROM {TABLE} WHERE {_DAY} RETURNING audit_id", tenant, start, end
                )
                ids = [int(row[0]) for row in rows]
                if ids and not same_rows(ids, records, id_sum):
                    raise _ChangedError
        except _ChangedError:
            return None
        return bool(ids)

    async def has_record(self, tenant: str, audit_id: int) -> bool:
        async with self._durable.connection("audit archive check") as conn:
            value = await conn.fetchval(
                f"SELECT 1 FROM {TABLE} WHERE tenant = $1 AND audit_id = $2", tenant, audit_id
            )
        return value is not None

    def read_chunk(self, path: Path, tenant: str) -> list[ArchivedAuditRecord]:
        return read_chunk(path, tenant)
