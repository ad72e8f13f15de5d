"""Archived blackboard history on both backends (core/archive/blackboard.py):
which tenants are due, a unit's rows as one chunk (an export file of
bb_versions and bb_log rows, admin/transfer.py), the compare-and-compact,
and the chunk parsing and rewriting both share."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import asyncpg

from statekeeper.admin import transfer
from statekeeper.admin.embedded import EmbeddedSource, read_snapshot
from statekeeper.admin.postgres import PostgresSource, pooled_snapshot
from statekeeper.admin.tables import Table
from statekeeper.admin.transfer import Selection
from statekeeper.core.archive.blackboard import (
    ArchivedHistoryEraser,
    ArchivedHistoryReader,
    BlackboardHistoryUnits,
    DueHistory,
)
from statekeeper.core.archive.damage import count_as_damage
from statekeeper.core.archive.service import Archive
from statekeeper.core.archive.store import ExportedUnit
from statekeeper.core.blackboard.models import Entry, Header, Value
from statekeeper.core.blackboard.service import Blackboard
from statekeeper.core.privacy.service import Participant
from statekeeper.storage.embedded.blackboard import compact_history as compact_embedded
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.postgres.blackboard import compact_history as compact_postgres
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.production import ProductionStorage
from statekeeper.storage.sealing import Sealer

T = TypeVar("T")
VERSIONS = "bb_versions"
LOG = "bb_log"
# The unit's rows: history below high + 1 (the range and, below low, the
# base compaction keeps; {1} tenant, {2} high), log rows of the range ({1}
# tenant, {2} low, {3} high).
_FILTERS = {
    VERSIONS: "tenant = {1} AND revision <= {2}",
    LOG: "tenant = {1} AND revision >= {2} AND revision <= {3}",
}


# Per revision of a range: its history rows and the bytes of their values
# (placeholders tenant, low, high, limit; the backend's byte length function).
_SIZES = (
    "SELECT revision, count(*), coalesce(sum({4}(data)), 0) FROM bb_versions"
    " WHERE tenant = {0} AND revision >= {1} AND revision <= {2}"
    " GROUP BY revision ORDER BY revision LIMIT {3}"
)
# Rows the export thread takes from the event loop at a time.
_BATCH_ROWS = 500


def _range_selection(table: Table, mark: str, tenant: str, low: int, high: int) -> Selection | None:
    """The table's rows of revisions [low, high] of `tenant` (its filter
    with `mark` placeholders), in the table's order."""
    template = _FILTERS.get(table.name)
    if template is None:
        return None
    where = template.format(*(mark.format(n) for n in range(4)))
    revisions = (high,) if table.name == VERSIONS else (low, high)
    return Selection(where, (tenant, *revisions), ", ".join(table.order))


def _exported(summary: transfer.ExportSummary) -> ExportedUnit:
    # The version guarding the compaction: how many history rows the unit has.
    return ExportedUnit(
        summary.path, "", summary.counts.get(VERSIONS, 0), summary.counts, summary.sha256
    )


# ----- embedded -------------------------------------------------------------------------


class _EmbeddedRange(EmbeddedSource):
    def __init__(self, db: sqlite3.Connection, data_dir: Path, low: int, high: int) -> None:
        super().__init__(db, data_dir)
        self._range = (low, high)

    def selection(self, table: Table, tenant: str, user: str | None) -> Selection | None:
        return _range_selection(table, "?{}", tenant, *self._range)


def _export_embedded(
    data_dir: Path, tenant: str, low: int, high: int, path: Path
) -> ExportedUnit | None:
    with read_snapshot(data_dir) as db:
        row = db.execute(
            "SELECT oldest_revision FROM bb_tenants WHERE tenant = ?", (tenant,)
        ).fetchone()
        if row is None or int(row[0]) != low:
            return None
        source = _EmbeddedRange(db, data_dir, low, high)
        summary = asyncio.run(transfer.export(source, path, tenant, None))
    return _exported(summary)


class EmbeddedHistoryDatabase:
    def __init__(self, storage: EmbeddedStorage, data_dir: Path) -> None:
        self._storage = storage
        self._data_dir = data_dir

    async def due(
        self, cutoff: float, max_revisions: int, after: str, limit: int, only: str = ""
    ) -> list[DueHistory]:
        def work(db: sqlite3.Connection) -> list[DueHistory]:
            found: list[DueHistory] = []
            rows = db.execute(
                "SELECT tenant, revision, oldest_revision FROM bb_tenants"
                " WHERE tenant > ? AND (? = '' OR tenant = ?) AND oldest_revision < revision"
                " ORDER BY tenant",
                (after, only, only),
            )
            for tenant, revision, oldest in rows.fetchall():
                first_kept = db.execute(
                    "SELECT revision FROM bb_log WHERE tenant = ? AND revision >= ?"
                    " AND commit_time > ? ORDER BY revision LIMIT 1",
                    (tenant, oldest, cutoff),
                ).fetchone()
                target = _target(first_kept[0] if first_kept else None, revision, max_revisions)
                if target > oldest:
                    found.append(DueHistory(tenant, oldest, target))
                    if len(found) >= limit:
                        break
            return found

        return await self._storage.read(work)

    async def header(self, tenant: str) -> Header:
        def work(db: sqlite3.Connection) -> Header:
            row = db.execute(
                "SELECT revision, oldest_revision FROM bb_tenants WHERE tenant = ?", (tenant,)
            ).fetchone()
            return Header(0, 1) if row is None else Header(int(row[0]), int(row[1]))

        return await self._storage.read(work)

    async def export_range(
        self, tenant: str, low: int, high: int, path: Path
    ) -> ExportedUnit | None:
        return await asyncio.to_thread(_export_embedded, self._data_dir, tenant, low, high, path)

    async def revision_sizes(
        self, tenant: str, low: int, high: int, limit: int
    ) -> list[tuple[int, int, int]]:
        def work(db: sqlite3.Connection) -> list[tuple[int, int, int]]:
            sql = _SIZES.format("?", "?", "?", "?", "length")
            rows = db.execute(sql, (tenant, low, high, limit)).fetchall()
            return [(int(r[0]), int(r[1]), int(r[2])) for r in rows]

        return await self._storage.read(work)

    async def compact_range(self, tenant: str, low: int, high: int, version: int) -> bool | None:
        def work(db: sqlite3.Connection) -> bool | None:
            row = db.execute(
                "SELECT oldest_revision FROM bb_tenants WHERE tenant = ?", (tenant,)
            ).fetchone()
            if row is None or int(row[0]) > high:
                return False
            count = db.execute(
                "SELECT count(*) FROM bb_versions WHERE tenant = ? AND revision <= ?",
                (tenant, high),
            ).fetchone()[0]
            if int(row[0]) != low or int(count) != version:
                return None
            compact_embedded(db, tenant, high + 1)
            return True

        return await self._storage.write(work)


# ----- PostgreSQL -----------------------------------------------------------------------


class _PostgresRange(PostgresSource):
    def __init__(self, conn: asyncpg.Connection, low: int, high: int) -> None:
        super().__init__(conn)
        self._range = (low, high)

    # Read as the base PostgresSource reads: streamed by a cursor (the export
    # runs in a read-only transaction), never the whole range at once.
    def selection(self, table: Table, tenant: str, user: str | None) -> Selection | None:
        return _range_selection(table, "${}", tenant, *self._range)


class _ThreadedSource:
    """An export source on the event loop, read from a worker thread: each
    call runs on `loop` (where the connection lives) and the thread waits
    for it; rows cross in batches."""

    def __init__(self, source: _PostgresRange, loop: asyncio.AbstractEventLoop) -> None:
        self.backend = source.backend
        self._source = source
        self._loop = loop

    def _on_loop(self, call: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(call, self._loop).result()

    async def schema_versions(self) -> dict[str, int]:
        return self._on_loop(self._source.schema_versions())

    async def columns(self, table: Table) -> list[str]:
        return self._on_loop(self._source.columns(table))

    async def count(self, table: Table, tenant: str, user: str | None) -> int:
        return self._on_loop(self._source.count(table, tenant, user))

    async def rows(
        self, table: Table, columns: Sequence[str], tenant: str, user: str | None
    ) -> AsyncIterator[Sequence[Any]]:
        stream = cast(
            AsyncGenerator[Sequence[Any], None], self._source.rows(table, columns, tenant, user)
        )
        try:
            while batch := self._on_loop(_take(stream, _BATCH_ROWS)):
                for row in batch:
                    yield row
        finally:
            self._on_loop(stream.aclose())


async def _take(stream: AsyncIterator[Sequence[Any]], count: int) -> list[Sequence[Any]]:
    batch: list[Sequence[Any]] = []
    async for row in stream:
        batch.append(row)
        if len(batch) >= count:
            break
    return batch


def _export_in_thread(source: _ThreadedSource, path: Path, tenant: str) -> transfer.ExportSummary:
    return asyncio.run(transfer.export(source, path, tenant, None))


class PostgresHistoryDatabase:
    def __init__(self, durable: PostgresStorage) -> None:
        self._durable = durable

    async def due(
        self, cutoff: float, max_revisions: int, after: str, limit: int, only: str = ""
    ) -> list[DueHistory]:
        async with self._durable.connection("blackboard archive candidates") as conn:
            rows = await conn.fetch(
                "SELECT t.tenant, t.revision, t.oldest_revision,"
                " (SELECT l.revision FROM bb_log l WHERE l.tenant = t.tenant"
                "  AND l.revision >= t.oldest_revision AND l.commit_time > $2"
                "  ORDER BY l.revision LIMIT 1) AS first_kept"
                " FROM bb_tenants t WHERE t.tenant > $1 AND ($3 = '' OR t.tenant = $3)"
                " AND t.oldest_revision < t.revision ORDER BY t.tenant",
                after,
                cutoff,
                only,
            )
        found: list[DueHistory] = []
        for row in rows:
            target = _target(row["first_kept"], row["revision"], max_revisions)
            if target > row["oldest_revision"]:
                found.append(DueHistory(row["tenant"], row["oldest_revision"], target))
                if len(found) >= limit:
                    break
        return found

    async def header(self, tenant: str) -> Header:
        async with self._durable.connection("blackboard archive header") as conn:
            row = await conn.fetchrow(
                "SELECT revision, oldest_revision FROM bb_tenants WHERE tenant = $1", tenant
            )
        return Header(0, 1) if row is None else Header(int(row[0]), int(row[1]))

    async def export_range(
        self, tenant: str, low: int, high: int, path: Path
    ) -> ExportedUnit | None:
        async with pooled_snapshot(self._durable, "blackboard archive export") as conn:
            oldest = await conn.fetchval(
                "SELECT oldest_revision FROM bb_tenants WHERE tenant = $1", tenant
            )
            if oldest is None or int(oldest) != low:
                return None
            source = _PostgresRange(conn, low, high)
            # The rows are read here, on the event loop (asyncpg); the JSON
            # and zstd encoding runs in a worker thread (_ThreadedSource).
            loop = asyncio.get_running_loop()
            summary = await asyncio.to_thread(
                _export_in_thread, _ThreadedSource(source, loop), path, tenant
            )
        return _exported(summary)

    async def revision_sizes(
        self, tenant: str, low: int, high: int, limit: int
    ) -> list[tuple[int, int, int]]:
        async with self._durable.connection("blackboard archive unit size") as conn:
            rows = await conn.fetch(
                _SIZES.format("$1", "$2", "$3", "$4", "octet_length"), tenant, low, high, limit
            )
        return [(int(r[0]), int(r[1]), int(r[2])) for r in rows]

    async def compact_range(self, tenant: str, low: int, high: int, version: int) -> bool | None:
        async with (
            self._durable.connection("blackboard archive compaction") as conn,
            conn.transaction(),
        ):
            oldest = await conn.fetchval(
                "SELECT oldest_revision FROM bb_tenants WHERE tenant = $1 FOR UPDATE", tenant
            )
            if oldest is None or int(oldest) > high:
                return False
            count = await conn.fetchval(
                "SELECT count(*) FROM bb_versions WHERE tenant = $1 AND revision <= $2",
                tenant,
                high,
            )
            if int(oldest) != low or int(count) != version:
                return None
            await compact_postgres(conn, tenant, high + 1)
            return True


def _target(first_kept: int | None, revision: int, max_revisions: int) -> int:
    """Retention's oldest revision to keep (as the stores compute it)."""
    target = first_kept if first_kept is not None else revision
    target = max(target, revision - max_revisions + 1)
    return int(min(target, revision))


# ----- chunks -------------------------------------------------------------------------------

# A chunk that is not this tenant's history answers UNAVAILABLE, not INTERNAL.
count_as_damage(transfer.TransferError)


def _read(path: Path, tenant: str) -> tuple[transfer.Header, dict[str, list[list[Any]]]]:
    """The chunk's header (checksum and tenant verified) and its raw rows
    per table."""
    header = transfer.read_header(path)
    if header.tenant != tenant:
        raise transfer.TransferError(f"{path} belongs to another tenant")
    rows: dict[str, list[list[Any]]] = {}
    with transfer.open_lines(path) as stream:
        for line in stream:
            if not line.startswith(b'{"t":'):
                continue
            record = json.loads(line)
            if record["t"] not in _FILTERS:
                raise transfer.TransferError(f"{path}: table {record['t']!r} is not history")
            rows.setdefault(record["t"], []).append([transfer.decode_value(v) for v in record["r"]])
    return header, rows


def load_versions(path: Path, tenant: str) -> list[dict[str, Any]]:
    """The bb_versions rows of a chunk of `tenant`, by column name."""
    header, rows = _read(path, tenant)
    columns = {name: cols for name, cols, _ in header.tables}[VERSIONS]
    return [dict(zip(columns, row, strict=True)) for row in rows.get(VERSIONS, [])]


class _ChunkSource:
    """A chunk's rows (minus some) as an export source, to rewrite it."""

    def __init__(self, header: transfer.Header, rows: dict[str, list[list[Any]]]) -> None:
        self.backend = header.backend
        self._header = header
        self._columns = {name: cols for name, cols, _ in header.tables}
        self._rows = rows

    async def schema_versions(self) -> dict[str, int]:
        return self._header.schemas

    async def columns(self, table: Table) -> list[str]:
        return self._columns.get(table.name, ["tenant"])

    async def count(self, table: Table, tenant: str, user: str | None) -> int:
        return len(self._rows.get(table.name, []))

    async def rows(
        self, table: Table, columns: Sequence[str], tenant: str, user: str | None
    ) -> AsyncIterator[Sequence[Any]]:
        for row in self._rows.get(table.name, []):
            yield row


def rewrite_chunk(
    chunk: Path, tenant: str, target: Path, prefixes: tuple[str, ...]
) -> tuple[ExportedUnit, int]:
    """`chunk` (of `tenant`) without the history rows whose key begins with
    one of `prefixes`, written to `target`; and how many rows were dropped."""
    header, rows = _read(chunk, tenant)
    columns = {name: cols for name, cols, _ in header.tables}[VERSIONS]
    key_at = columns.index("key")
    kept = [row for row in rows.get(VERSIONS, []) if not str(row[key_at]).startswith(prefixes)]
    dropped = len(rows.get(VERSIONS, [])) - len(kept)
    rows[VERSIONS] = kept
    summary = asyncio.run(transfer.export(_ChunkSource(header, rows), target, header.tenant, None))
    return _exported(summary), dropped


# ----- wiring -------------------------------------------------------------------------------


def attach_history_archive(
    blackboard: Blackboard,
    storage: EmbeddedStorage | ProductionStorage,
    archive: Archive,
    data_dir: Path,
    enabled: bool,
    sealer: Sealer | None,
) -> Participant:
    """Adds the blackboard history kind to `archive` (always, so archived
    history stays readable when the option is later turned off), gives the
    blackboard its read-through (and, when `enabled`, the archiving
    compaction), and returns EraseUser's participant for archived history."""
    database: EmbeddedHistoryDatabase | PostgresHistoryDatabase
    if isinstance(storage, EmbeddedStorage):
        database = EmbeddedHistoryDatabase(storage, data_dir)
    else:
        database = PostgresHistoryDatabase(storage.durable)
    limits = blackboard.limits
    kind = BlackboardHistoryUnits(
        database, limits.history_retention_seconds, limits.history_max_revisions, enabled
    )
    kind.archive = archive
    archive.add_kind(kind)
    reader = ArchivedHistoryReader(archive, load_versions, entry_opener(sealer))
    blackboard.attach_archived_history(reader, kind if enabled else None)
    return Participant("blackboard", ArchivedHistoryEraser(archive, rewrite_chunk))


def entry_opener(sealer: Sealer | None) -> Callable[[str, Entry], Entry]:
    """Opens an archived entry's value as the sealed store does (chunks
    keep the values as stored: sealed for sensitive tenants)."""

    def opened(tenant: str, entry: Entry) -> Entry:
        value = entry.value
        if sealer is None or value is None:
            return entry
        data = sealer.open_bytes(tenant, "blackboard.value", (entry.board, entry.key), value.data)
        return dataclasses.replace(
            entry, value=Value(value.kind, data, value.content_type, value.schema_version)
        )

    return opened
