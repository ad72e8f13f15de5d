"""Checkpoint histories in the archive, on PostgreSQL: a history is read in
one REPEATABLE READ transaction; deleted and restored each in one
transaction that follows the checkpoint store's locking protocol
(storage/postgres/checkpoints.py: the tenant's value lock, then the
execution's row): the delete holds the value lock exclusively (it collects
values), a restore shared (it adds references), under a transaction-scoped
advisory lock on the unit so that two replicas restoring it at once insert
it once."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import asyncpg

from statekeeper.admin import transfer
from statekeeper.admin.postgres import PostgresSource, pooled_snapshot
from statekeeper.admin.tables import Table
from statekeeper.admin.transfer import Selection
from statekeeper.core.archive.checkpoints import CAPABILITY
from statekeeper.core.archive.store import FENCE, ExportedUnit
from statekeeper.core.audit.models import AuditRecord
from statekeeper.storage.archive import checkpoints as history
from statekeeper.storage.archive.fences import (
    consume_postgres,
    lock_restore_postgres,
    used_up_postgres,
)
from statekeeper.storage.postgres.checkpoints import insert_audit
from statekeeper.storage.postgres.checkpoints_schema import VALUE_LOCK_CLASS
from statekeeper.storage.postgres.sessions import PostgresStorage

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection

# "(namespace, checkpoint_id) is one of the keys", bound as two arrays.
_KEYS = "(namespace, checkpoint_id) IN (SELECT * FROM unnest($3::text[], $4::text[]))"
_FILTER = {
    table.name: history.unit_filter(table, "$1", "$2", _KEYS) for table in history.history_tables()
}
_BY_NAME = {table.name: table for table in history.history_tables()}


def _key_arrays(keys: Sequence[history.Key]) -> tuple[list[str], list[str]]:
    return [key[0] for key in keys], [key[1] for key in keys]


def _select(table: str, columns: Sequence[str]) -> str:
    order = history.ORDER[table]
    return f"SELECT {', '.join(columns)} FROM {table} WHERE {_FILTER[table]} ORDER BY {order}"


class _HistorySource(PostgresSource):
    """The history's rows, fingerprinted as they are read."""

    def __init__(
        self, conn: asyncpg.Connection, execution: str, keys: Sequence[history.Key]
    ) -> None:
        super().__init__(conn)
        self._unit = (execution, *_key_arrays(keys))
        self.fingerprint = history.Fingerprint()

    def selection(self, table: Table, tenant: str, user: str | None) -> Selection | None:
        where = _FILTER.get(table.name)
        if table.name not in history.HISTORY_TABLES or where is None:
            return None
        return Selection(where, (tenant, *self._unit), history.ORDER[table.name])

    def rows(
        self, table: Table, columns: Sequence[str], tenant: str, user: str | None
    ) -> AsyncIterator[Sequence[Any]]:
        return history.fingerprinted(
            super().rows(table, columns, tenant, user), table.name, self.fingerprint
        )


async def _history_keys(conn: Connection, tenant: str, execution_id: str) -> list[history.Key]:
    sql = history.HISTORY_KEYS.format(tenant="$1", execution="$2")
    return [(str(row[0]), str(row[1])) for row in await conn.fetch(sql, tenant, execution_id)]


async def _fingerprint(conn: Connection, params: Sequence[Any]) -> str:
    fingerprint = history.Fingerprint()
    source = PostgresSource(cast(asyncpg.Connection, conn))
    for table in history.FINGERPRINTED:
        columns = await source.columns(_BY_NAME[table])
        for record in await conn.fetch(_select(table, columns), *params):
            fingerprint.add(table, tuple(record.values()))
    return fingerprint.hexdigest()


async def _lock(conn: Connection, tenant: str, execution_id: str, exclusive: bool) -> None:
    """The checkpoint store's locks, in its order: the tenant's value lock,
    then the execution's row."""
    lock = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
    await conn.execute(f"SELECT {lock}($1, hashtext($2))", VALUE_LOCK_CLASS, tenant)
    await conn.execute(
        "SELECT 1 FROM cp_executions WHERE tenant = $1 AND execution_id = $2 FOR UPDATE",
        tenant,
        execution_id,
    )


async def _hot_count(
    conn: Connection, tenant: str, execution_id: str, keys: Sequence[history.Key]
) -> int:
    sql = f"SELECT count(*) FROM cp_checkpoints WHERE {_FILTER['cp_checkpoints']}"
    return int(await conn.fetchval(sql, tenant, execution_id, *_key_arrays(keys)))


class PostgresHistoryDatabase:
    backend = "postgres"

    def __init__(self, durable: PostgresStorage) -> None:
        self._durable = durable

    async def history_candidates(
        self, cutoff_ns: int, after: tuple[str, str] | None, limit: int
    ) -> list[tuple[str, str]]:
        sql, params = history.candidates_query(("$1", "$2", "$3", "$4"), after, cutoff_ns, limit)
        async with self._durable.connection("archive checkpoint candidates") as conn:
            return history.candidate_keys(await conn.fetch(sql, *params))

    async def export_history(
        self, tenant: str, execution_id: str, path: Path
    ) -> ExportedUnit | None:
        async with pooled_snapshot(self._durable, "archive checkpoint export") as conn:
            keys = await _history_keys(conn, tenant, execution_id)
            if not keys:
                return None
            source = _HistorySource(conn, execution_id, keys)
            summary = await transfer.export(source, path, tenant, None)
            params = (tenant, execution_id, *_key_arrays(keys))
            checkpoints = await conn.fetch(
                _select("cp_checkpoints", ["run_id", "metadata"]), *params
            )
            hashes = [
                row[0]
                for row in await conn.fetch(_select("cp_channels", ["content_hash"]), *params)
            ]
            # The user of the whole execution (its newest checkpoints too).
            metadata = await conn.fetch(
                "SELECT metadata FROM cp_checkpoints WHERE tenant = $1 AND execution_id = $2",
                tenant,
                execution_id,
            )
        run_ids = (row[0] for row in checkpoints)
        fingerprint = source.fingerprint.hexdigest()
        users = (row[0] for row in metadata)
        return history.exported_history(path, keys, run_ids, hashes, fingerprint, users, summary)

    async def delete_history(
        self, tenant: str, execution_id: str, extra: dict[str, Any], audit: AuditRecord
    ) -> bool | None:
        keys = history.keys_of(extra)
        params = (tenant, execution_id, *_key_arrays(keys))
        async with self._durable.transaction("archive checkpoint delete") as conn:
            await _lock(conn, tenant, execution_id, exclusive=True)
            fence = str(extra.get(FENCE, ""))
            if fence and await used_up_postgres(conn, tenant, [fence]):
                return None  # a restore wanted the whole history meanwhile
            if await _fingerprint(conn, params) != extra.get("fingerprint"):
                return None if await _hot_count(conn, tenant, execution_id, keys) else False
            released = await conn.fetch(
                f"DELETE FROM cp_channels WHERE {_FILTER['cp_channels']} RETURNING content_hash",
                *params,
            )
            for table in ("cp_writes", "cp_checkpoints"):
                await conn.execute(f"DELETE FROM {table} WHERE {_FILTER[table]}", *params)
            # Values still referenced hot (by the newest checkpoints, other
            # executions) stay: they are shared.
            await conn.execute(
                "DELETE FROM cp_blobs b WHERE b.tenant = $1 AND b.content_hash = ANY($2::text[])"
                " AND NOT EXISTS (SELECT 1 FROM cp_channels x WHERE x.tenant = $1"
                " AND x.content_hash = b.content_hash)",
                tenant,
                sorted({row[0] for row in released}),
            )
            last = await conn.fetchval(
                "SELECT last_sequence FROM cp_executions WHERE tenant = $1 AND execution_id = $2",
                tenant,
                execution_id,
            )
            await insert_audit(conn, tenant, audit, int(last or 0))
        return True

    async def restore_history(
        self, tenant: str, execution_id: str, chunk: Path, fence: str = ""
    ) -> bool:
        rows = await history.tenant_chunk_rows(chunk, tenant)
        keys = history.chunk_keys(rows)
        async with self._durable.transaction("archive checkpoint restore") as conn:
            await lock_restore_postgres(conn, CAPABILITY, tenant, execution_id)
            await _lock(conn, tenant, execution_id, exclusive=False)
            # Used up even when every checkpoint is hot (see the embedded
            # store's _restore: the archiver's delete then refuses).
            await consume_postgres(conn, tenant, fence)
            hot = {
                (str(row[0]), str(row[1]))
                for row in await conn.fetch(
                    _select("cp_checkpoints", ["namespace", "checkpoint_id"]),
                    tenant,
                    execution_id,
                    *_key_arrays(keys),
                )
            }
            if len(hot) == len(keys):
                return False
            for name, (columns, values) in history.absent_rows(rows, hot).items():
                await _insert(conn, name, columns, values)
        return True

    async def hot_checkpoints(
        self, tenant: str, execution_id: str, keys: Sequence[tuple[str, str]]
    ) -> int:
        async with self._durable.connection("archive checkpoint check") as conn:
            return await _hot_count(conn, tenant, execution_id, keys)


async def _insert(
    conn: Connection, table: str, columns: Sequence[str], values: Sequence[Sequence[Any]]
) -> None:
    if not values:
        return
    marks = ", ".join(f"${i + 1}" for i in range(len(columns)))
    # cp_channels.saved (an identity) keeps its value: the rows keep their
    # order of saving, which resolving a channel by version relies on.
    overriding = " OVERRIDING SYSTEM VALUE" if "saved" in columns else ""
    # Values are shared: one stored meanwhile by another save is the same.
    tail = " ON CONFLICT DO NOTHING" if table == "cp_blobs" else ""
    await conn.executemany(
        f"INSERT INTO {table} ({', '.join(columns)}){overriding} VALUES ({marks}){tail}", values
    )
