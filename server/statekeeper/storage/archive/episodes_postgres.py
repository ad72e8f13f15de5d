"""Archiving a user's episodes on PostgreSQL: the chunk is read in one
REPEATABLE READ transaction; the compare-and-delete and the restore are
one transaction each, under the user's insert lock (the one recording
takes for its dimension check), and log their vector changes in the
memory change log, so every replica's index drops and regains the
vectors (storage/postgres/memory_feed.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from statekeeper.admin import transfer
from statekeeper.admin.postgres import PostgresSource, pooled_snapshot
from statekeeper.core.archive.episodes import (
    CAPABILITY,
    EPISODE_IDS,
    GUARD,
    HotDelete,
    IdleUser,
    guard_of,
)
from statekeeper.core.archive.store import ExportedUnit
from statekeeper.core.audit.models import AuditRecord
from statekeeper.storage.archive import episodes as archived
from statekeeper.storage.archive.chunks import TablesOf
from statekeeper.storage.archive.fences import consume_postgres, lock_restore_postgres
from statekeeper.storage.postgres.memory import OP_ADD, OP_REMOVE, PostgresMemoryStore
from statekeeper.storage.postgres.memory_episodes import established_dimensions
from statekeeper.storage.postgres.memory_facts import write_audit
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.sql import postgres_mark

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection


_GUARD = archived.dialect(archived.GUARD_QUERY, postgres_mark)
_HASHES = archived.dialect(archived.HASHES_QUERY, postgres_mark)


async def _lock_user(conn: Connection, tenant: str, user_id: str) -> None:
    """The user's insert lock (recording an embedded episode takes it for
    its dimension check), held to commit: no such insert interleaves."""
    await established_dimensions(conn, tenant, [user_id])


class PostgresEpisodeArchive:
    def __init__(self, durable: PostgresStorage, store: PostgresMemoryStore) -> None:
        self._durable = durable
        self._store = store

    async def users(self, after: tuple[str, str] | None, limit: int) -> list[IdleUser]:
        start = after or ("", "")
        async with self._durable.connection("archive episode candidates") as conn:
            rows = await conn.fetch(
                archived.dialect(archived.USERS_QUERY, postgres_mark), *start, limit
            )
        return [IdleUser(row[0], row[1], float(row[2])) for row in rows]

    async def export_user(self, tenant: str, user_id: str, path: Path) -> ExportedUnit | None:
        async with pooled_snapshot(self._durable, "archive episodes export") as conn:
            rows = await conn.fetch(_GUARD, tenant, user_id)
            if not rows:
                return None
            # The user's episodes alone (the other tables of a user export are empty).
            source = TablesOf(PostgresSource(conn), archived.is_unit_table)
            summary = await transfer.export(source, path, tenant, user_id)
        extra = {
            EPISODE_IDS: [row[4] for row in rows],
            GUARD: guard_of([tuple(row)[:4] for row in rows]),
        }
        return ExportedUnit(path, user_id, len(rows), summary.counts, summary.sha256, extra)

    async def delete_user(
        self, tenant: str, user_id: str, guard: str, audit: AuditRecord
    ) -> HotDelete:
        async with self._durable.transaction("archive episodes delete") as conn:
            await _lock_user(conn, tenant, user_id)
            rows = await conn.fetch(_GUARD, tenant, user_id)
            if not rows:
                return HotDelete(False)
            if guard_of([tuple(row)[:4] for row in rows]) != guard:
                return HotDelete(None)
            # By key: an episode without a vector recorded meanwhile (its
            # insert takes no lock) is not the archive's to delete.
            await conn.execute(
                "DELETE FROM memory_episodes WHERE tenant = $1 AND user_id = $2"
                " AND vector_key = ANY($3::bigint[])",
                tenant,
                user_id,
                [int(row[0]) for row in rows],
            )
            await write_audit(
                conn, tenant, audit, audit.entity_type, [row[4] for row in rows], audit.summary
            )
            keys = [int(row[0]) for row in rows if row[5] > 0]
            if keys:
                await self._store.log_vector_change(conn, tenant, user_id, OP_REMOVE, keys)
        return HotDelete(True, tuple(keys))

    async def restore_user(
        self, tenant: str, user_id: str, chunk: Path, episode_ids: list[str], fence: str = ""
    ) -> list[int] | None:
        unit = await archived.read_chunk_episodes(chunk, tenant, user_id)
        async with self._durable.transaction("archive episodes restore") as conn:
            # Two replicas restoring the user at once insert the rows once.
            await lock_restore_postgres(conn, CAPABILITY, tenant, user_id)
            await _lock_user(conn, tenant, user_id)
            if await _any_hot(conn, tenant, episode_ids):
                return None
            await consume_postgres(conn, tenant, fence)
            hot = await conn.fetch(_HASHES, tenant, user_id)
            fresh = unit.absent(row[0] for row in hot)
            if fresh:
                marks = ", ".join(f"${i + 1}" for i in range(len(unit.columns)))
                await conn.executemany(
                    f"INSERT INTO memory_episodes ({', '.join(unit.columns)})"
                    f" OVERRIDING SYSTEM VALUE VALUES ({marks}) ON CONFLICT DO NOTHING",
                    fresh,
                )
            keys = unit.vector_keys(fresh)
            if keys:
                await self._store.log_vector_change(conn, tenant, user_id, OP_ADD, keys)
        return keys

    async def any_hot(self, tenant: str, episode_ids: list[str]) -> bool:
        async with self._durable.connection("archive episodes check") as conn:
            return await _any_hot(conn, tenant, episode_ids)


async def _any_hot(conn: Connection, tenant: str, episode_ids: list[str]) -> bool:
    found = await conn.fetchval(
        "SELECT 1 FROM memory_episodes WHERE tenant = $1 AND episode_id = ANY($2::text[]) LIMIT 1",
        tenant,
        episode_ids,
    )
    return found is not None
