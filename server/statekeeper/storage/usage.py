"""Stored bytes per tenant, measured from either backend.

What is counted: every row of every table that has a `tenant` column
(sessions, messages, versions, memory, checkpoints, workflows, blackboard
and its history, bus messages, items, audit records, ...), by the size of
its values: on SQLite the byte length of each value (text as UTF-8, numbers
as their text form), on PostgreSQL `pg_column_size` of the row (its size
as stored: large values compressed by TOAST count compressed). Not
counted: indexes, free pages, SQLite's FTS tables and other derived state
(vector index snapshots on local disk), and tables without a tenant. So
it is a measure of what a tenant keeps, comparable between tenants, not of
the files' size.

Cost: one scan of each tenant table, on a reader connection (SQLite) or one
pooled connection (PostgreSQL), every `usage_interval_seconds` (60 s by
default) and only while some tenant has a stored-bytes quota. With
`--workers N` each worker measures on its own.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from statekeeper.core.errors import StorageUnavailableError
from statekeeper.core.tasks import cancel_and_wait
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.production import ProductionStorage

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection

log = logging.getLogger("statekeeper.usage")

TENANT_COLUMN = "tenant"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sqlite_usage(db: sqlite3.Connection) -> dict[str, int]:
    """Bytes per tenant in an SQLite database (ordinary tables only)."""
    totals: dict[str, int] = {}
    tables = [
        row[0]
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            " AND sql NOT LIKE 'CREATE VIRTUAL%'"
        )
    ]
    for table in tables:
        columns = [row[1] for row in db.execute(f"PRAGMA table_info({_quoted(table)})")]
        if TENANT_COLUMN not in columns:
            continue
        sizes = " + ".join(f"COALESCE(length(CAST({_quoted(c)} AS BLOB)), 0)" for c in columns)
        query = f"SELECT tenant, SUM({sizes}) FROM {_quoted(table)} GROUP BY tenant"
        for tenant, size in db.execute(query):
            if tenant is not None:
                totals[str(tenant)] = totals.get(str(tenant), 0) + int(size or 0)
    return totals


_POSTGRES_TABLES = """
SELECT c.table_schema, c.table_name
FROM information_schema.columns c
JOIN information_schema.tables t USING (table_schema, table_name)
WHERE c.column_name = 'tenant' AND t.table_type = 'BASE TABLE'
  AND c.table_schema = ANY (current_schemas(false))
"""


async def postgres_usage(conn: Connection) -> dict[str, int]:
    """Bytes per tenant in the PostgreSQL schemas on the search path."""
    totals: dict[str, int] = {}
    for schema, table in await conn.fetch(_POSTGRES_TABLES):
        name = f"{_quoted(schema)}.{_quoted(table)}"
        rows = await conn.fetch(
            f"SELECT tenant, SUM(pg_column_size(t.*))::bigint FROM {name} AS t GROUP BY tenant"
        )
        for tenant, size in rows:
            if tenant is not None:
                totals[str(tenant)] = totals.get(str(tenant), 0) + int(size or 0)
    return totals


async def measure(storage: Storage) -> dict[str, int]:
    """Stored bytes per tenant in `storage` (either backend)."""
    if isinstance(storage, EmbeddedStorage):
        return await storage.read(sqlite_usage)
    if isinstance(storage, ProductionStorage):
        async with storage.durable.connection("usage measurement") as conn:
            return await postgres_usage(conn)
    raise TypeError(f"cannot measure the usage of {storage.description}")


class UsageMonitor:
    """Measures the store every `interval` seconds and hands each result to
    `publish` (a failed measurement keeps the last one, with a warning)."""

    def __init__(
        self,
        storage: Storage,
        interval: float,
        publish: Callable[[Mapping[str, int]], None],
    ) -> None:
        self._storage = storage
        self._interval = interval
        self._publish = publish
        self._task: asyncio.Task[None] | None = None
        self.measured = asyncio.Event()

    async def measure_once(self) -> None:
        try:
            usage = await measure(self._storage)
        except StorageUnavailableError as exc:
            log.warning("stored bytes not measured (kept the last figures): %s", exc.message)
            return
        self._publish(usage)
        self.measured.set()
        log.debug("stored bytes measured", extra={"tenants": len(usage)})

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="usage-monitor")

    async def _run(self) -> None:
        while True:
            try:
                await self.measure_once()
            except Exception:
                log.exception("stored bytes measurement failed; will retry")
            await asyncio.sleep(self._interval)

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait([task])
