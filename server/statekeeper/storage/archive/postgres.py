"""The archive on PostgreSQL: a chunk is read in one REPEATABLE READ
transaction, a restore inserts every row of the unit in one transaction
(under a transaction-scoped advisory lock on the unit, so two replicas
restoring the same session at once insert it once)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import asyncpg

from statekeeper.admin import transfer
from statekeeper.admin.postgres import PostgresSource, pooled_snapshot
from statekeeper.admin.tables import Table
from statekeeper.admin.transfer import Selection
from statekeeper.core.archive.store import ExportedUnit, SessionCandidate
from statekeeper.storage.archive.chunks import SESSION_TABLES, tenant_chunk_rows, unit_filter
from statekeeper.storage.archive.fences import (
    consume_postgres,
    lock_restore_postgres,
    mark_postgres,
    used_up_postgres,
)
from statekeeper.storage.codec import record_from_json
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.sql import postgres_mark

# pg_try_advisory_lock key of the archiver: one pass at a time across replicas.
ARCHIVER_LOCK = 0x5354_4B41_5243_4856  # "STKARCHV"


class _UnitSource(PostgresSource):
    def __init__(self, conn: asyncpg.Connection, session_id: str) -> None:
        super().__init__(conn)
        self._session_id = session_id

    def selection(self, table: Table, tenant: str, user: str | None) -> Selection | None:
        where = unit_filter(table, postgres_mark)
        if where is None:
            return None
        return Selection(where, (tenant, user, self._session_id), ", ".join(table.order))


class PostgresArchiveDatabase:
    backend = "postgres"

    def __init__(self, durable: PostgresStorage) -> None:
        self._durable = durable

    async def session_candidates(
        self, created_before: float, after: tuple[float, str, str] | None, limit: int
    ) -> list[SessionCandidate]:
        start = after or (float("-inf"), "", "")
        async with self._durable.connection("archive candidates") as conn:
            rows = await conn.fetch(
                "SELECT tenant, session_id, user_id, create_time, state FROM sessions"
                " WHERE expire_time IS NULL AND create_time < $1"
                " AND (create_time, tenant, session_id) > ($2, $3, $4)"
                " ORDER BY create_time, tenant, session_id LIMIT $5",
                created_before,
                *start,
                limit,
            )
        return [
            SessionCandidate(
                row["tenant"],
                row["session_id"],
                row["user_id"],
                row["create_time"],
                record_from_json(row["state"]).update_time,
            )
            for row in rows
        ]

    async def export_session(self, tenant: str, session_id: str, path: Path) -> ExportedUnit | None:
        async with pooled_snapshot(self._durable, "archive export") as conn:
            row = await conn.fetchrow(
                "SELECT user_id, version FROM sessions WHERE tenant = $1 AND session_id = $2",
                tenant,
                session_id,
            )
            if row is None:
                return None
            user_id, version = str(row["user_id"]), int(row["version"])
            source = _UnitSource(conn, session_id)
            summary = await transfer.export(source, path, tenant, user_id)
        return ExportedUnit(path, user_id, version, summary.counts, summary.sha256)

    async def restore_session(
        self, tenant: str, session_id: str, chunk: Path, fence: str = ""
    ) -> bool:
        rows = await tenant_chunk_rows(chunk, tenant)
        async with self._durable.connection("archive restore") as conn, conn.transaction():
            await lock_restore_postgres(conn, "sessions", tenant, session_id)
            if await conn.fetchval(
                "SELECT 1 FROM sessions WHERE tenant = $1 AND session_id = $2",
                tenant,
                session_id,
            ):
                return False
            await consume_postgres(conn, tenant, fence)
            for name in SESSION_TABLES:
                if name not in rows:
                    continue
                columns, values = rows[name]
                marks = ", ".join(f"${i + 1}" for i in range(len(columns)))
                # Receipts are keyed by (tenant, request_id) alone: a later
                # append in another session may have reused one meanwhile;
                # that one keeps it (a unique violation here would fail every
                # read of this session). Other tables are keyed by session.
                tail = " ON CONFLICT DO NOTHING" if name == "append_receipts" else ""
                await conn.executemany(
                    f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({marks}){tail}", values
                )
        return True

    async def used_up(self, tenant: str, chunks: Sequence[str]) -> set[str]:
        async with self._durable.connection("archive used up") as conn:
            return await used_up_postgres(conn, tenant, chunks)

    async def mark_used_up(self, tenant: str, chunks: Sequence[str]) -> None:
        async with self._durable.transaction("archive mark used up") as conn:
            await mark_postgres(conn, tenant, chunks)

    async def session_version(self, tenant: str, session_id: str) -> int | None:
        async with self._durable.connection("archive check") as conn:
            value = await conn.fetchval(
                "SELECT version FROM sessions WHERE tenant = $1 AND session_id = $2",
                tenant,
                session_id,
            )
        return None if value is None else int(value)

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[bool]:
        """True while this process holds the archiver lock (one archiver
        pass at a time across replicas); False if another one has it."""
        async with self._durable.connection("archive lock") as conn:
            held = bool(await conn.fetchval("SELECT pg_try_advisory_lock($1)", ARCHIVER_LOCK))
            try:
                yield held
            finally:
                if held:
                    await conn.execute("SELECT pg_advisory_unlock($1)", ARCHIVER_LOCK)
