"""What both backends share for the archive: which tables hold a session
unit, its filter, and the rows of a chunk (an export file, admin/transfer.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from statekeeper.admin import transfer
from statekeeper.admin.tables import Table, selected
from statekeeper.core.archive.damage import count_as_damage

# A chunk that is not what its manifest says (another tenant's, another
# kind's) answers UNAVAILABLE naming its key, never INTERNAL.
count_as_damage(transfer.TransferError)

# A chunk's rows per table, with their columns.
ChunkRows = dict[str, tuple[list[str], list[list[Any]]]]

# The tables of a session unit, in the order their rows are restored.
SESSION_TABLES = ("sessions", "messages", "session_versions", "append_receipts")


def session_tables() -> tuple[Table, ...]:
    by_name = {table.name: table for table in selected("any user")}
    return tuple(by_name[name] for name in SESSION_TABLES)


def unit_filter(table: Table, style: Callable[[int], str]) -> str | None:
    """The filter of one session's rows in `table` ({1} tenant, {2} user,
    {3} session), or None when the table holds nothing of a session."""
    if table.name not in SESSION_TABLES:
        return None
    where = transfer.placeholders(table.where(True), style)
    return f"{where} AND session_id = {style(3)}"


def chunk_rows(
    path: Path, tables: Collection[str] | None = SESSION_TABLES
) -> tuple[transfer.Header, ChunkRows]:
    """The chunk's header (after its checksum was verified) and its rows per
    table with their columns; a row of a table not in `tables` (None: any)
    fails it."""
    header = transfer.read_header(path)
    columns = {name: cols for name, cols, _ in header.tables}
    rows: ChunkRows = {}
    with transfer.open_lines(path) as stream:
        for line in stream:
            if not line.startswith(b'{"t":'):
                continue
            record = json.loads(line)
            name = record["t"]
            if tables is not None and name not in tables:
                raise transfer.TransferError(f"{path}: table {name!r} is not part of this unit")
            entry = rows.setdefault(name, (columns[name], []))
            entry[1].append([transfer.decode_value(v) for v in record["r"]])
    return header, rows


async def tenant_chunk_rows(
    chunk: Path, tenant: str, tables: Collection[str] | None = SESSION_TABLES
) -> ChunkRows:
    """The rows of a chunk of `tenant` (see `chunk_rows`), parsed in a
    thread (a large chunk must not stall the event loop); a chunk of
    another tenant fails."""
    header, rows = await asyncio.to_thread(chunk_rows, chunk, tables)
    if header.tenant != tenant:
        raise transfer.TransferError(f"{chunk} belongs to another tenant")
    return rows


class TablesOf:
    """An export source limited to the tables `wanted` picks (the others
    count 0 and yield nothing): one unit's tables out of a user's export,
    on either backend."""

    def __init__(self, source: transfer.Source, wanted: Callable[[Table], bool]) -> None:
        self._source = source
        self._wanted = wanted
        self.backend = source.backend

    async def schema_versions(self) -> dict[str, int]:
        return await self._source.schema_versions()

    async def columns(self, table: Table) -> list[str]:
        return await self._source.columns(table)

    async def count(self, table: Table, tenant: str, user: str | None) -> int:
        return await self._source.count(table, tenant, user) if self._wanted(table) else 0

    async def rows(
        self, table: Table, columns: Sequence[str], tenant: str, user: str | None
    ) -> AsyncIterator[Sequence[Any]]:
        if self._wanted(table):
            async for row in self._source.rows(table, columns, tenant, user):
                yield row
