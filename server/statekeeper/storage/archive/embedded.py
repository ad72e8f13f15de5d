"""The archive on the embedded store: chunks read on a connection of their
own (one read transaction, in a worker thread, so the event loop never
waits on it), restores written through the store's group commit (one
transaction with every row of the unit)."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from statekeeper.admin import transfer
from statekeeper.admin.embedded import EmbeddedSource, read_snapshot
from statekeeper.admin.tables import Table
from statekeeper.admin.transfer import Selection
from statekeeper.core.archive.store import ExportedUnit, SessionCandidate
from statekeeper.storage.archive.chunks import SESSION_TABLES, tenant_chunk_rows, unit_filter
from statekeeper.storage.archive.fences import consume_sqlite, mark_sqlite, used_up_sqlite
from statekeeper.storage.codec import record_from_json
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.sql import sqlite_numbered_mark


class _UnitSource(EmbeddedSource):
    def __init__(self, db: sqlite3.Connection, data_dir: Path, session_id: str) -> None:
        super().__init__(db, data_dir)
        self._session_id = session_id

    def selection(self, table: Table, tenant: str, user: str | None) -> Selection | None:
        where = unit_filter(table, sqlite_numbered_mark)
        if where is None:
            return None
        return Selection(where, (tenant, user, self._session_id), "rowid")


def _export(data_dir: Path, tenant: str, session_id: str, path: Path) -> ExportedUnit | None:
    with read_snapshot(data_dir) as db:
        row = db.execute(
            "SELECT user_id, version FROM sessions WHERE tenant = ? AND session_id = ?",
            (tenant, session_id),
        ).fetchone()
        if row is None:
            return None
        user_id, version = str(row[0]), int(row[1])
        source = _UnitSource(db, data_dir, session_id)
        summary = asyncio.run(transfer.export(source, path, tenant, user_id))
    return ExportedUnit(path, user_id, version, summary.counts, summary.sha256)


class EmbeddedArchiveDatabase:
    backend = "embedded"

    def __init__(self, storage: EmbeddedStorage, data_dir: Path) -> None:
        self._storage = storage
        self._data_dir = data_dir
        self._exclusive = asyncio.Lock()

    async def session_candidates(
        self, created_before: float, after: tuple[float, str, str] | None, limit: int
    ) -> list[SessionCandidate]:
        start = after or (float("-inf"), "", "")

        def work(db: sqlite3.Connection) -> list[SessionCandidate]:
            rows = db.execute(
                "SELECT tenant, session_id, user_id, create_time, state FROM sessions"
                " WHERE expire_time IS NULL AND create_time < ?"
                " AND (create_time, tenant, session_id) > (?, ?, ?)"
                " ORDER BY create_time, tenant, session_id LIMIT ?",
                (created_before, *start, limit),
            ).fetchall()
            return [
                SessionCandidate(
                    row[0], row[1], row[2], row[3], record_from_json(row[4]).update_time
                )
                for row in rows
            ]

        return await self._storage.read(work)

    async def export_session(self, tenant: str, session_id: str, path: Path) -> ExportedUnit | None:
        return await asyncio.to_thread(_export, self._data_dir, tenant, session_id, path)

    async def restore_session(
        self, tenant: str, session_id: str, chunk: Path, fence: str = ""
    ) -> bool:
        rows = await tenant_chunk_rows(chunk, tenant)

        def work(db: sqlite3.Connection) -> bool:
            if db.execute(
                "SELECT 1 FROM sessions WHERE tenant = ? AND session_id = ?", (tenant, session_id)
            ).fetchone():
                return False
            consume_sqlite(db, tenant, fence)
            for name in SESSION_TABLES:
                if name not in rows:
                    continue
                columns, values = rows[name]
                marks = ", ".join("?" for _ in columns)
                # Receipts are keyed by (tenant, request_id) alone: a later
                # append in another session may have reused one meanwhile;
                # that one keeps it (an INSERT failing here would fail every
                # read of this session). Other tables are keyed by session.
                verb = "INSERT OR IGNORE" if name == "append_receipts" else "INSERT"
                db.executemany(
                    f"{verb} INTO {name} ({', '.join(columns)}) VALUES ({marks})", values
                )
            return True

        return await self._storage.write(work)

    async def used_up(self, tenant: str, chunks: Sequence[str]) -> set[str]:
        return await self._storage.read(lambda db: used_up_sqlite(db, tenant, chunks))

    async def mark_used_up(self, tenant: str, chunks: Sequence[str]) -> None:
        await self._storage.write(lambda db: mark_sqlite(db, tenant, chunks))

    async def session_version(self, tenant: str, session_id: str) -> int | None:
        def work(db: sqlite3.Connection) -> int | None:
            row = db.execute(
                "SELECT version FROM sessions WHERE tenant = ? AND session_id = ?",
                (tenant, session_id),
            ).fetchone()
            return None if row is None else int(row[0])

        return await self._storage.read(work)

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[bool]:
        """One process owns the SQLite file, so its tasks are the only
        archive writers: a pass, a repair, a blackboard compaction or an
        erasure's chunk rewrite hold this in turn (False while another
        does, as PostgreSQL's advisory lock answers)."""
        if self._exclusive.locked():
            yield False
            return
        async with self._exclusive:
            yield True
