"""Archiving a user's episodes on the embedded store: the chunk is read on a
connection of its own (one read transaction, in a worker thread); the
compare-and-delete and the restore run through the store's group commit,
each in one transaction (the FTS5 lexical rows go with the episodes: a
trigger deletes them, the restore writes them as an import does)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from statekeeper.admin import transfer
from statekeeper.admin.embedded import EmbeddedSource, index_episodes, read_snapshot
from statekeeper.core.archive.episodes import (
    EPISODE_IDS,
    GUARD,
    HotDelete,
    IdleUser,
    guard_of,
)
from statekeeper.core.archive.store import ExportedUnit
from statekeeper.core.audit.models import AuditRecord
from statekeeper.storage.archive.chunks import TablesOf
from statekeeper.storage.archive.episodes import (
    GUARD_QUERY,
    HASHES_QUERY,
    USERS_QUERY,
    dialect,
    is_unit_table,
    read_chunk_episodes,
)
from statekeeper.storage.archive.fences import consume_sqlite
from statekeeper.storage.embedded.memory_facts import write_audit
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.sql import sqlite_numbered_mark

# Ids per IN (...) list (SQLite's default limit on variables is 32766).
_IN_CHUNK = 500


_GUARD = dialect(GUARD_QUERY, sqlite_numbered_mark)


def _export(data_dir: Path, tenant: str, user_id: str, path: Path) -> ExportedUnit | None:
    with read_snapshot(data_dir) as db:
        rows = db.execute(_GUARD, (tenant, user_id)).fetchall()
        if not rows:
            return None
        # The user's episodes alone (the other tables of a user export are empty).
        source = TablesOf(EmbeddedSource(db, data_dir), is_unit_table)
        summary = asyncio.run(transfer.export(source, path, tenant, user_id))
    extra = {EPISODE_IDS: [row[4] for row in rows], GUARD: guard_of([row[:4] for row in rows])}
    return ExportedUnit(path, user_id, len(rows), summary.counts, summary.sha256, extra)


class EmbeddedEpisodeArchive:
    def __init__(self, storage: EmbeddedStorage, data_dir: Path) -> None:
        self._storage = storage
        self._data_dir = data_dir

    async def users(self, after: tuple[str, str] | None, limit: int) -> list[IdleUser]:
        start = after or ("", "")

        def work(db: sqlite3.Connection) -> list[IdleUser]:
            query = dialect(USERS_QUERY, sqlite_numbered_mark)
            rows = db.execute(query, (*start, limit)).fetchall()
            return [IdleUser(row[0], row[1], float(row[2])) for row in rows]

        return await self._storage.read(work)

    async def export_user(self, tenant: str, user_id: str, path: Path) -> ExportedUnit | None:
        return await asyncio.to_thread(_export, self._data_dir, tenant, user_id, path)

    async def delete_user(
        self, tenant: str, user_id: str, guard: str, audit: AuditRecord
    ) -> HotDelete:
        def work(db: sqlite3.Connection) -> HotDelete:
            rows = db.execute(_GUARD, (tenant, user_id)).fetchall()
            if not rows:
                return HotDelete(False)
            if guard_of([row[:4] for row in rows]) != guard:
                return HotDelete(None)
            db.execute(
                "DELETE FROM memory_episodes WHERE tenant = ? AND user_id = ?", (tenant, user_id)
            )
            for row in rows:
                write_audit(db, tenant, audit, audit.entity_type, row[4], audit.summary)
            return HotDelete(True, tuple(int(row[0]) for row in rows if row[5] > 0))

        return await self._storage.write(work)

    async def restore_user(
        self, tenant: str, user_id: str, chunk: Path, episode_ids: list[str], fence: str = ""
    ) -> list[int] | None:
        unit = await read_chunk_episodes(chunk, tenant, user_id)
        hashes_query = dialect(HASHES_QUERY, sqlite_numbered_mark)

        def work(db: sqlite3.Connection) -> list[int] | None:
            if _any_hot(db, tenant, episode_ids):
                return None
            consume_sqlite(db, tenant, fence)
            fresh = unit.absent(row[0] for row in db.execute(hashes_query, (tenant, user_id)))
            if fresh:
                marks = ", ".join("?" for _ in unit.columns)
                db.executemany(
                    f"INSERT INTO memory_episodes ({', '.join(unit.columns)}) VALUES ({marks})",
                    fresh,
                )
                index_episodes(db, unit.columns, fresh)
            return unit.vector_keys(fresh)

        return await self._storage.write(work)

    async def any_hot(self, tenant: str, episode_ids: list[str]) -> bool:
        return await self._storage.read(lambda db: _any_hot(db, tenant, episode_ids))


def _any_hot(db: sqlite3.Connection, tenant: str, episode_ids: list[str]) -> bool:
    for start in range(0, len(episode_ids), _IN_CHUNK):
        chunk = episode_ids[start : start + _IN_CHUNK]
        marks = ", ".join("?" for _ in chunk)
        if db.execute(
            f"SELECT 1 FROM memory_episodes WHERE tenant = ? AND episode_id IN ({marks}) LIMIT 1",
            (tenant, *chunk),
        ).fetchone():
            return True
    return False
