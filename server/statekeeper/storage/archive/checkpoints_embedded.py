"""Checkpoint histories in the archive, on the embedded store: a history is
read on a connection of its own (one read transaction, in a worker
thread), deleted and restored on the store's database thread, each in one
transaction."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from statekeeper.admin import transfer
from statekeeper.admin.embedded import EmbeddedSource, read_snapshot
from statekeeper.admin.tables import Table
from statekeeper.admin.transfer import Selection
from statekeeper.core.archive.store import FENCE, ExportedUnit
from statekeeper.core.audit.models import AuditRecord
from statekeeper.storage.archive.checkpoints import (
    FINGERPRINTED,
    HISTORY_KEYS,
    HISTORY_TABLES,
    ORDER,
    Fingerprint,
    Key,
    absent_rows,
    candidate_keys,
    candidates_query,
    chunk_keys,
    exported_history,
    fingerprinted,
    history_tables,
    keys_of,
    tenant_chunk_rows,
    unit_filter,
)
from statekeeper.storage.archive.fences import consume_sqlite, used_up_sqlite
from statekeeper.storage.embedded.checkpoints import insert_audit
from statekeeper.storage.embedded.sessions import EmbeddedStorage

# "(namespace, checkpoint_id) is one of the keys", the keys a JSON array of
# pairs bound as ?3 (one parameter however long the history).
_KEYS = (
    "(namespace, checkpoint_id) IN (SELECT json_extract(value, '$[0]'),"
    " json_extract(value, '$[1]') FROM json_each(?3))"
)
_FILTER = {table.name: unit_filter(table, "?1", "?2", _KEYS) for table in history_tables()}


def _keys_json(keys: Sequence[Key]) -> str:
    return json.dumps([list(key) for key in keys])


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def _select(
    db: sqlite3.Connection, table: str, columns: Sequence[str], params: tuple[Any, ...]
) -> sqlite3.Cursor:
    return db.execute(
        f"SELECT {', '.join(columns)} FROM {table} WHERE {_FILTER[table]} ORDER BY {ORDER[table]}",
        params,
    )


class _HistorySource(EmbeddedSource):
    """The history's rows, fingerprinted as they are read."""

    def __init__(self, db: sqlite3.Connection, data_dir: Path, execution: str, keys: str) -> None:
        super().__init__(db, data_dir)
        self._unit = (execution, keys)
        self.fingerprint = Fingerprint()

    def selection(self, table: Table, tenant: str, user: str | None) -> Selection | None:
        where = _FILTER.get(table.name)
        if table.name not in HISTORY_TABLES or where is None:
            return None
        return Selection(where, (tenant, *self._unit), ORDER[table.name])

    def rows(
        self, table: Table, columns: Sequence[str], tenant: str, user: str | None
    ) -> AsyncIterator[Sequence[Any]]:
        return fingerprinted(
            super().rows(table, columns, tenant, user), table.name, self.fingerprint
        )


def _export(data_dir: Path, tenant: str, execution_id: str, path: Path) -> ExportedUnit | None:
    with read_snapshot(data_dir) as db:
        keys = [
            (str(row[0]), str(row[1]))
            for row in db.execute(
                HISTORY_KEYS.format(tenant="?1", execution="?2"), (tenant, execution_id)
            )
        ]
        if not keys:
            return None
        params = (tenant, execution_id, _keys_json(keys))
        source = _HistorySource(db, data_dir, execution_id, params[2])
        summary = asyncio.run(transfer.export(source, path, tenant, None))
        checkpoints = _select(db, "cp_checkpoints", ["run_id", "metadata"], params).fetchall()
        hashes = [row[0] for row in _select(db, "cp_channels", ["content_hash"], params)]
        # The user of the whole execution (its newest checkpoints too).
        metadata = [
            row[0]
            for row in db.execute(
                "SELECT metadata FROM cp_checkpoints WHERE tenant = ? AND execution_id = ?",
                (tenant, execution_id),
            )
        ]
    run_ids = (row[0] for row in checkpoints)
    fingerprint = source.fingerprint.hexdigest()
    return exported_history(path, keys, run_ids, hashes, fingerprint, metadata, summary)


def _fingerprint(db: sqlite3.Connection, params: tuple[Any, ...]) -> str:
    fingerprint = Fingerprint()
    for table in FINGERPRINTED:
        for row in _select(db, table, _columns(db, table), params):
            fingerprint.add(table, row)
    return fingerprint.hexdigest()


def _hot_count(db: sqlite3.Connection, tenant: str, execution_id: str, keys: str) -> int:
    row = db.execute(
        f"SELECT count(*) FROM cp_checkpoints WHERE {_FILTER['cp_checkpoints']}",
        (tenant, execution_id, keys),
    ).fetchone()
    return int(row[0])


def _delete(
    db: sqlite3.Connection,
    tenant: str,
    execution_id: str,
    extra: dict[str, Any],
    audit: AuditRecord,
) -> bool | None:
    keys = _keys_json(keys_of(extra))
    params = (tenant, execution_id, keys)
    fence = str(extra.get(FENCE, ""))
    if fence and used_up_sqlite(db, tenant, [fence]):
        return None  # a restore wanted the whole history meanwhile: it stays hot
    if _fingerprint(db, params) != extra.get("fingerprint"):
        return None if _hot_count(db, tenant, execution_id, keys) else False
    hashes = {row[0] for row in _select(db, "cp_channels", ["content_hash"], params)}
    for table in ("cp_channels", "cp_writes", "cp_checkpoints"):
        db.execute(f"DELETE FROM {table} WHERE {_FILTER[table]}", params)
    # Values still referenced hot (by the newest checkpoints, other
    # executions) stay: they are shared.
    db.executemany(
        "DELETE FROM cp_blobs WHERE tenant = ?1 AND content_hash = ?2 AND NOT EXISTS"
        " (SELECT 1 FROM cp_channels WHERE tenant = ?1 AND content_hash = ?2)",
        [(tenant, content_hash) for content_hash in hashes],
    )
    row = db.execute(
        "SELECT last_sequence FROM cp_executions WHERE tenant = ? AND execution_id = ?",
        (tenant, execution_id),
    ).fetchone()
    insert_audit(db, tenant, audit, revision=int(row[0]) if row else 0)
    return True


def _restore(
    db: sqlite3.Connection,
    tenant: str,
    execution_id: str,
    rows: dict[str, tuple[list[str], list[list[Any]]]],
    fence: str,
) -> bool:
    # Used up even when every checkpoint is hot: the archiver's delete then
    # refuses (`_delete`), so an operation that restored before working on
    # the whole history (DeleteRuns, prune, copy) never loses part of it to
    # an archive that was about to complete.
    consume_sqlite(db, tenant, fence)
    keys = chunk_keys(rows)
    hot = {
        (str(row[0]), str(row[1]))
        for row in db.execute(
            f"SELECT namespace, checkpoint_id FROM cp_checkpoints"
            f" WHERE {_FILTER['cp_checkpoints']}",
            (tenant, execution_id, _keys_json(keys)),
        )
    }
    if len(hot) == len(keys):
        return False
    for name, (columns, values) in absent_rows(rows, hot).items():
        marks = ", ".join("?" for _ in columns)
        # Values are shared: one stored meanwhile by another save is the same.
        verb = "INSERT OR IGNORE" if name == "cp_blobs" else "INSERT"
        db.executemany(f"{verb} INTO {name} ({', '.join(columns)}) VALUES ({marks})", values)
    return True


class EmbeddedHistoryDatabase:
    backend = "embedded"

    def __init__(self, storage: EmbeddedStorage, data_dir: Path) -> None:
        self._storage = storage
        self._data_dir = data_dir

    async def history_candidates(
        self, cutoff_ns: int, after: tuple[str, str] | None, limit: int
    ) -> list[tuple[str, str]]:
        sql, params = candidates_query(("?1", "?2", "?3", "?4"), after, cutoff_ns, limit)

        def work(db: sqlite3.Connection) -> list[tuple[str, str]]:
            return candidate_keys(db.execute(sql, params).fetchall())

        return await self._storage.read(work)

    async def export_history(
        self, tenant: str, execution_id: str, path: Path
    ) -> ExportedUnit | None:
        return await asyncio.to_thread(_export, self._data_dir, tenant, execution_id, path)

    async def delete_history(
        self, tenant: str, execution_id: str, extra: dict[str, Any], audit: AuditRecord
    ) -> bool | None:
        def work(db: sqlite3.Connection) -> bool | None:
            with db:
                return _delete(db, tenant, execution_id, extra, audit)

        return await self._storage.run(work)

    async def restore_history(
        self, tenant: str, execution_id: str, chunk: Path, fence: str = ""
    ) -> bool:
        rows = await tenant_chunk_rows(chunk, tenant)

        def work(db: sqlite3.Connection) -> bool:
            with db:
                return _restore(db, tenant, execution_id, rows, fence)

        return await self._storage.run(work)

    async def hot_checkpoints(
        self, tenant: str, execution_id: str, keys: Sequence[tuple[str, str]]
    ) -> int:
        keys_json = _keys_json(keys)
        return await self._storage.read(lambda db: _hot_count(db, tenant, execution_id, keys_json))
